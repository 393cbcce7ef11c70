/* mp_pickle_ahead.c - a second thread that passes over the lists under skip keys ahead of the
   pickle machine, so that a projection (segsum's read without frames) spends the machine's time
   on the records only: a producer of skip ranges, nothing more.

   The thread reads the input from its start, opcode by opcode (opcode lengths do not depend on
   the machine's state, so it knows every opcode's place), counts memo puts as the machine will,
   and knows which memo indices hold a skip key's string. At an EMPTY_LIST right after such a key
   it runs its own skipper (mp_pickle_skip_run) and publishes the list's start and end and the
   count before and after it. The machine, at a list it would pass over, takes that range instead
   of reading the list, when the count it has there is the thread's.

   Sharing: the ring of results, HEAD and TAIL, and PAST (everything before it has been read), all
   under C11 atomics; nothing else. Whenever the two disagree on a list (the machine passes over
   one the thread did not, or counted otherwise, or the thread gives up or falls behind), the
   thread is stopped and the machine goes on alone: results never change, only the time. */
#include "pickle_int.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Inputs smaller than this are read by the machine alone: a thread costs more than it saves.
   MEMPROF_AHEAD_MIN=BYTES changes it (tests run the thread on small inputs); MEMPROF_THREADS=1
   turns the thread off. */
#define AHEAD_MIN_INPUT ((size_t)16 << 20)
#define RING 4096
/* The machine tells the thread how far it has taken results every this many (the thread only needs it
   when the ring looks full). */
#define TAIL_EVERY 256
#define MAX_KEYS 4
#define MAX_KEY_LEN 64
/* Memo entries holding a skip key; more than this and the thread gives up. */
#define MAX_KEY_ENTRIES 64
/* How long the machine waits for the thread when it has caught up with it and the thread does
   not move on, before stopping it and going on alone: on a busy machine the thread may not run
   for a while, and waiting for it would be slower than one thread. While the thread moves, the
   machine waits: the thread reads everything, the machine only the records, so the machine is
   often the one that waits. */
#define PATIENCE_NS 5000000L

struct result {
	size_t start, end, memo_before, memo_after;
};

/* The shared words each on a cache line of its own, and each side's copies of the other's on its own
   line: HEAD, TAIL and PAST on one line, read and written by both at every result, made the two
   threads together slower than the machine alone in some runs (3M blocks: up to 1.05 s against 0.66 s). */
#define LINE 64

struct mp_pickle_ahead {
	pthread_t thread;
	struct mp_skip_run run; /* the thread's own skipper state */
	char keys[MAX_KEYS][MAX_KEY_LEN];
	size_t key_len[MAX_KEYS], nkeys;
	size_t min_key_size; /* the size of the shortest key's SHORT_BINUNICODE opcode */
	size_t tail_seen;    /* the thread's copy of TAIL */
	struct result ring[RING];
	_Alignas(LINE) _Atomic size_t head; /* results published */
	_Alignas(LINE) _Atomic size_t tail; /* results the machine has taken or dropped */
	_Alignas(LINE) _Atomic size_t past; /* everything before this offset is done; SIZE_MAX: the thread ended */
	_Alignas(LINE) atomic_bool stop;
	_Alignas(LINE) size_t taken;        /* the machine's: results taken or dropped */
	size_t head_seen;                   /* the machine's copy of HEAD */
};

/* Whether the str opcode at P (token T) holds one of the skip keys. */
static bool text_is_key(const struct mp_pickle_ahead *a, const unsigned char *d, size_t p,
			const struct mp_pickle_tok *t)
{
	size_t lb = t->n, size = t->size;

	for (size_t i = 0; i < a->nkeys; i++)
		if (size - 1 - lb == a->key_len[i] && memcmp(d + p + 1 + lb, a->keys[i], a->key_len[i]) == 0)
			return true;
	return false;
}

/* Wait for room in the ring for result H (the machine is behind); false when told to stop. */
static bool wait_room(struct mp_pickle_ahead *a, size_t h)
{
	while (h - a->tail_seen >= RING &&
	       h - (a->tail_seen = atomic_load_explicit(&a->tail, memory_order_acquire)) >= RING) {
		if (atomic_load_explicit(&a->stop, memory_order_relaxed))
			return false;
		sched_yield();
	}
	return true;
}

static void *read_ahead(void *arg)
{
	struct mp_pickle_ahead *a = arg;
	struct mp_skip_run *r = &a->run;
	const unsigned char *d = r->data;
	size_t p = 0, key_entries[MAX_KEY_ENTRIES], nkey_entries = 0, ops = 0;
	bool key_on_top = false;

	while (p < r->len && !atomic_load_explicit(&a->stop, memory_order_relaxed)) {
		struct mp_pickle_tok t;
		size_t end, h, before = r->memo_len;
		unsigned flags;

		if (d[p] == MP_OP_EMPTY_LIST && key_on_top && mp_pickle_skip_run(r, p, &end)) {
			h = atomic_load_explicit(&a->head, memory_order_relaxed);
			if (!wait_room(a, h))
				break;
			a->ring[h % RING] = (struct result){ p, end, before, r->memo_len };
			atomic_store_explicit(&a->head, h + 1, memory_order_release);
			atomic_store_explicit(&a->past, end, memory_order_release);
			p = end;
			key_on_top = false;
			continue;
		}
		if (mp_pickle_next_op(d, p, r->len, &t) != MP_TOK_OK || ((flags = t.flags) & MP_OPF_STOP))
			break;
		if (flags & MP_OPF_PUT) {
			uint64_t index = t.op == MP_OP_MEMOIZE ? r->memo_len : t.arg;

			if (index > r->len)
				break;
			if (key_on_top) {
				if (nkey_entries == MAX_KEY_ENTRIES)
					break;
				key_entries[nkey_entries++] = (size_t)index;
			}
			if (index >= r->memo_len)
				r->memo_len = (size_t)index + 1;
		} else if (flags & MP_OPF_GET) {
			key_on_top = false;
			for (size_t i = 0; i < nkey_entries && !key_on_top; i++)
				key_on_top = key_entries[i] == t.arg;
		} else if (t.op != MP_OP_FRAME) {
			key_on_top = (flags & MP_OPF_STR) && t.size >= a->min_key_size && text_is_key(a, d, p, &t);
		}
		p += t.size;
		if (++ops % 4096 == 0)
			atomic_store_explicit(&a->past, p, memory_order_release);
	}
	atomic_store_explicit(&a->past, SIZE_MAX, memory_order_release);
	return NULL;
}

void mp_pickle_ahead_start(struct machine *m)
{
	struct mp_pickle_ahead *a;
	const char *env = getenv("MEMPROF_THREADS");
	const char *min = getenv("MEMPROF_AHEAD_MIN");

	m->ahead = NULL;
	/* (where the skip keys apply only in the trace ring, a small part, the thread would only
	   pass over blocks' lists the machine reads) */
	if (!mp_pickle_skips_in(m, MP_PICKLE_SKIP_IN_BLOCKS) || m->opts->nskip_keys > MAX_KEYS ||
	    m->opts->one_thread || (env != NULL && strcmp(env, "1") == 0) ||
	    m->len < (min != NULL ? strtoull(min, NULL, 10) : AHEAD_MIN_INPUT) ||
	    (min == NULL && sysconf(_SC_NPROCESSORS_ONLN) < 2))
		return;
	if ((a = calloc(1, sizeof *a)) == NULL)
		return;
	for (size_t i = 0; i < m->opts->nskip_keys; i++) {
		size_t n;
		const char *s = mp_heap_atom(m->heap, m->opts->skip_keys[i], &n);

		if (s == NULL || n > MAX_KEY_LEN) {
			free(a);
			return;
		}
		memcpy(a->keys[i], s, n);
		a->key_len[i] = n;
		if (i == 0 || 2 + n < a->min_key_size)
			a->min_key_size = 2 + n;
	}
	a->nkeys = m->opts->nskip_keys;
	a->run = (struct mp_skip_run){ .data = m->data, .len = m->len };
	if (pthread_create(&a->thread, NULL, read_ahead, a) != 0) {
		free(a);
		return;
	}
	m->ahead = a;
}

void mp_pickle_ahead_stop(struct machine *m)
{
	struct mp_pickle_ahead *a = m->ahead;

	if (a == NULL)
		return;
	atomic_store_explicit(&a->stop, true, memory_order_relaxed);
	pthread_join(a->thread, NULL);
	free(a->run.marks);
	free(a);
	m->ahead = NULL;
}

/* How long the machine has waited for the thread without it moving on. */
struct patience {
	struct timespec since; /* when the thread was last seen to move on */
	size_t past;           /* where it was then */
};

/* Whether the machine has waited long enough for the thread, which is now at PAST. */
static bool out_of_patience(struct patience *w, size_t past)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((w->since.tv_sec == 0 && w->since.tv_nsec == 0) || past != w->past) {
		w->since = now;
		w->past = past;
		return false;
	}
	return (now.tv_sec - w->since.tv_sec) * 1000000000L + (now.tv_nsec - w->since.tv_nsec) > PATIENCE_NS;
}

/* The next result the thread published, or NULL when there is none yet. */
static const struct result *next_result(struct mp_pickle_ahead *a)
{
	if (a->taken == a->head_seen)
		a->head_seen = atomic_load_explicit(&a->head, memory_order_acquire);
	return a->taken < a->head_seen ? &a->ring[a->taken % RING] : NULL;
}

/* Done with the next result. */
static void take_result(struct mp_pickle_ahead *a)
{
	if (++a->taken % TAIL_EVERY == 0)
		atomic_store_explicit(&a->tail, a->taken, memory_order_release);
}

bool mp_pickle_ahead_take(struct machine *m, size_t start, size_t memo_len, size_t *end, size_t *memo_after)
{
	struct mp_pickle_ahead *a = m->ahead;
	struct patience w = { { 0, 0 }, 0 };
	const struct result *r = NULL;

	while (a != NULL) {
		/* Where the thread is, read before its results: if it was past START then, a result for
		   START is among them or there is none. */
		size_t past = (r = next_result(a)) != NULL ? 0 : atomic_load_explicit(&a->past, memory_order_acquire);

		if (r == NULL && (r = next_result(a)) == NULL) {
			if (past > start || out_of_patience(&w, past))
				break; /* past it with no result (or ended), or not moving on */
			atomic_store_explicit(&a->tail, a->taken, memory_order_release); /* (room for it) */
			sched_yield();
			continue;
		}
		if (r->start < start) { /* a list the machine passed by (read within a value it built) */
			take_result(a);
			continue;
		}
		if (r->start != start || r->memo_before != memo_len)
			break; /* the thread passed this list by, or counted otherwise */
		*end = r->end;
		*memo_after = r->memo_after;
		take_result(a);
		return true;
	}
	mp_pickle_ahead_stop(m);
	return false;
}
