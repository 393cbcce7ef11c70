/* replay_ops.c - the model's side of the differential test: replay an op script (tests/allocsim/OPS.md) through
   memprof's allocator model (src/allocsim/mp_sim.h) and print the log the real allocator's side prints.

   usage: replay_ops --release X.Y SCRIPT

   Exit status 0; 2 for a bad script; 3 when the model refuses to go on (after printing "unsupported"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_i64map.h"
#include "mp_sim.h"

#define MAX_STREAMS 16

typedef struct run {
	mp_sim *sim;
	uint64_t handle[MAX_STREAMS]; /* per SID; 0 the default stream */
	bool declared[MAX_STREAMS];
	mp_i64map live;               /* allocation ID -> its block */
} run;

static void die(const char *what, long line)
{
	fflush(stdout);
	fprintf(stderr, "replay_ops: line %ld: %s\n", line, what);
	exit(2);
}

static void remember(run *r, int64_t id, mp_sim_block *b)
{
	if (mp_i64map_put(&r->live, id, (int64_t)(intptr_t)b) != MP_OK)
		die("out of memory", 0);
}

static mp_sim_block *lookup(run *r, int64_t id, long line)
{
	int64_t b;

	if (!mp_i64map_get(&r->live, id, &b))
		die("no live allocation with that ID", line);
	return (mp_sim_block *)(intptr_t)b;
}

static uint64_t stream_of(const run *r, long sid, long line)
{
	if (sid < 0 || sid >= MAX_STREAMS || (sid > 0 && !r->declared[sid]))
		die("undeclared stream", line);
	return r->handle[sid];
}

static long sid_of(const run *r, uint64_t handle)
{
	for (long i = 0; i < MAX_STREAMS; i++)
		if ((i == 0 || r->declared[i]) && r->handle[i] == handle)
			return i;
	return -1;
}

static void print_addr(int64_t addr)
{
	if (addr >= MP_SIM_MALLOC_BASE)
		printf("m+0x%" PRIx64, (uint64_t)(addr - MP_SIM_MALLOC_BASE));
	else
		printf("r+0x%" PRIx64, (uint64_t)(addr - MP_SIM_RESERVE_BASE));
}

static void print_segment(void *ctx, const mp_sim_seg_info *g)
{
	printf("segment ");
	print_addr(g->addr);
	printf(" %" PRId64 " %ld %s %" PRId64 " %s\n", g->total_size, sid_of(ctx, g->stream), g->small ? "small" : "large",
	       g->pool_id[1], g->expandable ? "expandable" : "fixed");
}

static void print_block(void *ctx, const mp_sim_block_info *b)
{
	static const char *const states[] = { "active_allocated", "active_pending_free", "inactive" };

	(void)ctx;
	printf("block ");
	print_addr(b->addr);
	printf(" %" PRId64 " %" PRId64 " %s\n", b->size, b->requested, states[b->state]);
}

static void print_state(run *r, long opno)
{
	const mp_sim_stats *st = mp_sim_stats_of(r->sim);

	printf("state %ld\n", opno);
	printf("stats allocated=%" PRId64 " reserved=%" PRId64 " active=%" PRId64 " requested=%" PRId64
	       " inactive_split=%" PRId64 " inactive_split_bytes=%" PRId64 " segment=%" PRId64 " peak_allocated=%" PRId64
	       " peak_reserved=%" PRId64 " num_alloc_retries=%" PRId64 " num_ooms=%" PRId64 " num_device_alloc=%" PRId64
	       " num_device_free=%" PRId64 " oversize_allocations=%" PRId64 " oversize_segments=%" PRId64 "\n",
	       st->allocated_bytes.current, st->reserved_bytes.current, st->active_bytes.current,
	       st->requested_bytes.current, st->inactive_split.current, st->inactive_split_bytes.current,
	       st->segment.current, st->allocated_bytes.peak, st->reserved_bytes.peak, st->num_alloc_retries,
	       st->num_ooms, st->num_device_alloc, st->num_device_free, st->oversize_allocations.current,
	       st->oversize_segments.current);
	if (mp_sim_walk(r->sim, print_segment, print_block, r) != MP_OK)
		die("out of memory", 0);
	printf("end\n");
}

int main(int argc, char **argv)
{
	mp_sim_release rel = { 2, 6 };
	mp_sim_conf conf;
	mp_diag diag = { 0 };
	char line[512], settings[400] = "-";
	int64_t capacity = -1;
	double fraction = -1;
	long lineno = 0, opno = 0;
	bool dumped = false; /* the last op printed the state already */
	run r = { 0 };
	FILE *f;

	if (argc != 4 || strcmp(argv[1], "--release") != 0 || sscanf(argv[2], "%d.%d", &rel.major, &rel.minor) != 2) {
		fprintf(stderr, "usage: replay_ops --release X.Y SCRIPT\n");
		return 2;
	}
	if (!mp_sim_release_known(rel)) {
		fprintf(stderr, "replay_ops: release %d.%d has no rules in the model\n", rel.major, rel.minor);
		return 2;
	}
	if ((f = fopen(argv[3], "r")) == NULL) {
		perror(argv[3]);
		return 2;
	}
	mp_sim_conf_default(&conf);
	while (fgets(line, sizeof line, f) != NULL) {
		char op[32];
		long a = 0, c = 0;
		long long b = 0;
		int words;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		words = sscanf(line, "%31s %ld %lld %ld", op, &a, &b, &c);
		if (strcmp(op, "settings") == 0) {
			if (r.sim != NULL || sscanf(line, "settings %399s", settings) != 1)
				die("settings out of place", lineno);
			if (strcmp(settings, "-") != 0 && mp_sim_conf_parse(&conf, settings, rel, &diag) != MP_OK)
				die(diag.msg, lineno);
			continue;
		}
		if (strcmp(op, "capacity") == 0) {
			capacity = a;
			if (sscanf(line, "capacity %" SCNd64, &capacity) != 1 || capacity <= 0)
				die("bad capacity", lineno);
			continue;
		}
		if (strcmp(op, "fraction") == 0) {
			if (sscanf(line, "fraction %lf", &fraction) != 1)
				die("bad fraction", lineno);
			continue;
		}
		if (strcmp(op, "stream") == 0) {
			unsigned long long h = 0;

			if (a <= 0 || a >= MAX_STREAMS || r.sim != NULL)
				die("bad stream line", lineno);
			r.declared[a] = true;
			r.handle[a] = sscanf(line, "stream %*d %llx", &h) == 1 ? h : (uint64_t)a << 12;
			continue;
		}
		if (r.sim == NULL) {
			if (capacity <= 0)
				die("no capacity before the first op", lineno);
			if ((r.sim = mp_sim_new(&conf, rel, capacity, 0)) == NULL)
				die("out of memory", lineno);
			if (fraction >= 0)
				mp_sim_set_fraction(r.sim, fraction);
			printf("streams");
			for (int i = 1; i < MAX_STREAMS; i++)
				if (r.declared[i])
					printf(" %d=0x%" PRIx64, i, r.handle[i]);
			printf("\n");
		}
		opno++;
		printf("%ld %s => ", opno, line);
		bool oom = false, dump = false;

		if (strcmp(op, "alloc") == 0 && words == 4) {
			mp_sim_block *blk;
			mp_err err = mp_sim_malloc(r.sim, b, stream_of(&r, c, lineno), &blk);

			if (err == MP_OK) {
				print_addr(mp_sim_block_addr(blk));
				remember(&r, a, blk);
			} else if (err == MP_E_NOMEM) {
				printf("oom");
				oom = true;
			} else {
				/* the real allocator raises an error of its own here (an internal assert, a driver error),
				   or behaves undefinedly (a private pool deleted under its blocks): the model goes no further */
				printf("unsupported\n");
				fflush(stdout); /* the log first: a runner may take both streams in one file */
				fprintf(stderr, "replay_ops: line %ld: the model refuses to go on (the allocator would raise an "
					"internal error or act undefinedly here, or host memory ran out)\n", lineno);
				exit(3);
			}
		} else if (strcmp(op, "free") == 0 && words == 2) {
			mp_sim_free(r.sim, lookup(&r, a, lineno));
			mp_i64map_del(&r.live, a);
			printf("ok");
		} else if (strcmp(op, "record") == 0 && words == 3) {
			mp_sim_record_stream(r.sim, lookup(&r, a, lineno), stream_of(&r, (long)b, lineno));
			printf("ok");
		} else if (strcmp(op, "sync") == 0 && words == 1) {
			mp_sim_sync(r.sim);
			printf("ok");
		} else if (strcmp(op, "sync_stream") == 0 && words == 2) {
			mp_sim_sync_stream(r.sim, stream_of(&r, a, lineno));
			printf("ok");
		} else if (strcmp(op, "empty_cache") == 0 && words == 1) {
			mp_sim_empty_cache(r.sim);
			printf("ok");
		} else if (strcmp(op, "pool_begin") == 0 && words == 3) {
			mp_sim_pool_begin(r.sim, 0, a, stream_of(&r, (long)b, lineno));
			printf("ok");
		} else if (strcmp(op, "pool_end") == 0 && words == 2) {
			mp_sim_pool_end(r.sim, 0, a);
			printf("ok");
		} else if (strcmp(op, "pool_release") == 0 && words == 2) {
			mp_sim_pool_release(r.sim, 0, a);
			printf("ok");
		} else if (strcmp(op, "state") == 0 && words == 1) {
			printf("ok");
			dump = true;
		} else {
			die("unknown op or wrong number of words", lineno);
		}
		printf(" reserved=%" PRId64 " allocated=%" PRId64 "\n", mp_sim_stats_of(r.sim)->reserved_bytes.current,
		       mp_sim_stats_of(r.sim)->allocated_bytes.current);
		if (oom || dump)
			print_state(&r, opno);
		dumped = oom || dump;
	}
	fclose(f);
	if (r.sim == NULL)
		die("no op", lineno);
	if (!dumped)
		print_state(&r, opno); /* after the last op, unless it printed one */
	mp_sim_free_all(r.sim);
	mp_i64map_fini(&r.live);
	return 0;
}
