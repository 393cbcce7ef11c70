/* mp_trace_text.c - `trace`: trace()'s Python-like listing of each device's trace ring.

   Deliberate deviations from PyTorch 2.6 and 2.14.1 (tests/oracle/TRACE-DEVIATIONS.md):
   1. "TOTAL MEM" is the net bytes of the ring, Σ alloc sizes − Σ free_completed
      sizes, not the loop index that PyTorch's enumerate() leaves in `count`.
   2. The "TOTAL MEM: ..." line ends with a newline.
   3. An alloc is placed in a snapshot segment by [address, address + total_size),
      not allocated_size.
   4. Only segments whose 'device' is the ring's index are searched (a segment
      without 'device' never matches); seg_{k} still numbers the whole list.
   Everything else follows PyTorch, 'annotate' entries as in 2.14.1
   ("# annotate {name}: {user_metadata}"; 2.6 printed their repr), and names
   are never recycled (PyTorch's recycling compares names with addresses and
   never fires). */
#include "mp_trace_text.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_format.h"
#include "mp_repr.h"
#include "mp_table.h"

/* ---- first-come interval cover: which earliest-added interval holds an address */

/* Disjoint pieces sorted by address; each names the first interval added that
   covers it, so a lookup is a binary search rather than a scan of every
   interval in insertion order (which is what PyTorch does, with the same answer). */
struct piece {
	mp_i128 lo, hi;
	size_t value;
};

struct cover {
	struct piece *p;
	size_t n, cap;
};

/* Index of the first piece that ends after X. */
static size_t cover_find(const struct cover *c, mp_i128 x)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->p[mid].hi <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool cover_lookup(const struct cover *c, mp_i128 x, size_t *value)
{
	size_t i = cover_find(c, x);

	if (i == c->n || c->p[i].lo > x)
		return false;
	*value = c->p[i].value;
	return true;
}

static bool cover_insert_at(struct cover *c, size_t i, struct piece pc)
{
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		struct piece *np = realloc(c->p, ncap * sizeof *np);

		if (np == NULL)
			return false;
		c->p = np;
		c->cap = ncap;
	}
	memmove(c->p + i + 1, c->p + i, (c->n - i) * sizeof *c->p);
	c->p[i] = pc;
	c->n++;
	return true;
}

/* Give VALUE to the parts of [LO, HI) that no earlier interval covers. */
static bool cover_add(struct cover *c, mp_i128 lo, mp_i128 hi, size_t value)
{
	size_t i = cover_find(c, lo);
	mp_i128 cur = lo;

	while (cur < hi) {
		mp_i128 gap_end;

		if (i < c->n && c->p[i].lo <= cur) {
			cur = c->p[i++].hi;
			continue;
		}
		gap_end = i < c->n && c->p[i].lo < hi ? c->p[i].lo : hi;
		if (!cover_insert_at(c, i++, (struct piece){ cur, gap_end, value }))
			return false;
		cur = gap_end;
	}
	return true;
}

/* ---- address -> name */

struct name_entry {
	int64_t addr;
	uint64_t name;
};

struct name_map {
	mp_table index; /* entries by address */
	struct name_entry *e;
	size_t n, cap;
};

static uint32_t name_map_find(const struct name_map *m, int64_t addr, mp_table_probe *p)
{
	return mp_table_find_u64(&m->index, (uint64_t)addr, m->e, sizeof *m->e, offsetof(struct name_entry, addr), p);
}

/* ADDR's name is now NAME (a later allocation at the same address replaces it). */
static bool name_map_put(struct name_map *m, int64_t addr, uint64_t name)
{
	mp_table_probe p;
	uint32_t id = name_map_find(m, addr, &p);

	if (id != MP_TABLE_NONE) {
		m->e[id].name = name;
		return true;
	}
	if (mp_array_grow((void **)&m->e, &m->cap, m->n + 1, sizeof *m->e) != MP_OK ||
	    mp_table_add(&m->index, &p, (uint32_t)m->n) != MP_OK)
		return false;
	m->e[m->n++] = (struct name_entry){ addr, name };
	return true;
}

static bool name_map_get(const struct name_map *m, int64_t addr, uint64_t *name)
{
	mp_table_probe p;
	uint32_t id = name_map_find(m, addr, &p);

	if (id == MP_TABLE_NONE)
		return false;
	*name = m->e[id].name;
	return true;
}

static void name_map_free(struct name_map *m)
{
	mp_table_free(&m->index);
	free(m->e);
}

/* ---- one ring */

/* A segment_alloc seen earlier in the ring. */
struct malloc_seen {
	uint64_t name;
	int64_t addr;
};

struct ring {
	mp_snapshot *snap;
	const mp_keys *k;
	mp_out *out;
	mp_diag *diag;
	size_t device, entry; /* for messages */
	struct cover snap_segs;   /* this device's snapshot segments, value = index in the list */
	struct cover mallocs;     /* segment_alloc intervals, value = index in seen */
	struct malloc_seen *seen;
	size_t nseen, seen_cap;
	struct name_map alloc_names, segment_names;
	uint64_t next_name;
	mp_i128 net;
};

static mp_err ring_nomem(struct ring *r)
{
	return mp_fail(r->diag, MP_E_NOMEM, "trace: out of memory");
}

static void ring_free(struct ring *r)
{
	free(r->snap_segs.p);
	free(r->mallocs.p);
	free(r->seen);
	name_map_free(&r->alloc_names);
	name_map_free(&r->segment_names);
}

static mp_err ring_init(struct ring *r, mp_snapshot *snap, size_t device, mp_out *out, mp_diag *diag)
{
	memset(r, 0, sizeof *r);
	r->snap = snap;
	r->k = mp_heap_keys(snap->heap);
	r->out = out;
	r->diag = diag;
	r->device = device;
	for (size_t i = 0; i < snap->nsegments; i++) {
		const mp_segment *seg = &snap->segments[i];

		if (!(seg->present & MP_F_SEG_DEVICE) || seg->device < 0 || (uint64_t)seg->device != device)
			continue;
		if (!cover_add(&r->snap_segs, seg->address, (mp_i128)seg->address + seg->total_size, i))
			return ring_nomem(r);
	}
	return MP_OK;
}

/* _name(): a..z, a1..z1, a2..; one counter for allocations and segments. */
static void put_name(mp_out *out, uint64_t name)
{
	mp_out_putc(out, (char)('a' + name % 26));
	if (name >= 26)
		mp_out_u64(out, name / 26);
}

/* The name given at ADDR, or the address itself. */
static void put_name_or_addr(mp_out *out, const struct name_map *m, int64_t addr)
{
	uint64_t name;

	if (name_map_get(m, addr, &name))
		put_name(out, name);
	else
		mp_out_i64(out, addr);
}

/* The keys each action reads (KeyError in Python when absent). */
static mp_err need(struct ring *r, const mp_trace_entry *e, uint32_t bits)
{
	static const struct {
		uint32_t bit;
		const char *key;
	} keys[] = {
		{ MP_F_TR_ADDR, "addr" },
		{ MP_F_TR_SIZE, "size" },
		{ MP_F_TR_DEVICE_FREE, "device_free" },
		{ MP_F_TR_USER_METADATA, "user_metadata" },
	};

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if ((bits & keys[i].bit) && !(e->present & keys[i].bit))
			return mp_fail(r->diag, MP_E_CORRUPT,
				       "trace: device_traces[%zu][%zu]: a '%s' entry needs '%s'", r->device,
				       r->entry, mp_heap_atom(r->snap->heap, e->action, NULL), keys[i].key);
	return MP_OK;
}

/* find_segment(addr): segment_allocs of this ring first, then the snapshot's. */
static void put_place(struct ring *r, int64_t addr)
{
	size_t v;
	int64_t base;

	if (cover_lookup(&r->mallocs, addr, &v)) {
		put_name(r->out, r->seen[v].name);
		base = r->seen[v].addr;
	} else if (cover_lookup(&r->snap_segs, addr, &v)) {
		mp_out_puts(r->out, "seg_");
		mp_out_u64(r->out, v);
		base = r->snap->segments[v].address;
	} else {
		mp_out_puts(r->out, "MEM[");
		mp_out_i64(r->out, addr);
		return;
	}
	mp_out_putc(r->out, '[');
	mp_format_i128(r->out, (mp_i128)addr - base);
}

static mp_err on_alloc(struct ring *r, const mp_trace_entry *e)
{
	uint64_t name = r->next_name++;

	put_name(r->out, name);
	mp_out_puts(r->out, " = ");
	put_place(r, e->addr);
	mp_out_putc(r->out, ':');
	mp_format_bytes(r->out, e->size);
	mp_out_puts(r->out, "]\n");
	r->net += e->size;
	return name_map_put(&r->alloc_names, e->addr, name) ? MP_OK : ring_nomem(r);
}

static mp_err on_free_requested(struct ring *r, const mp_trace_entry *e)
{
	mp_out_puts(r->out, "del ");
	put_name_or_addr(r->out, &r->alloc_names, e->addr);
	mp_out_puts(r->out, " # ");
	mp_format_bytes(r->out, e->size);
	mp_out_putc(r->out, '\n');
	return MP_OK;
}

static mp_err on_free_completed(struct ring *r, const mp_trace_entry *e)
{
	mp_out_puts(r->out, "# free completed for ");
	put_name_or_addr(r->out, &r->alloc_names, e->addr);
	mp_out_putc(r->out, ' ');
	mp_format_bytes(r->out, e->size);
	mp_out_putc(r->out, '\n');
	r->net -= e->size;
	return MP_OK;
}

static mp_err on_segment_alloc(struct ring *r, const mp_trace_entry *e)
{
	uint64_t name = r->next_name++;

	put_name(r->out, name);
	mp_out_puts(r->out, " = cudaMalloc(");
	mp_out_i64(r->out, e->addr);
	mp_out_puts(r->out, ", ");
	mp_format_bytes(r->out, e->size);
	mp_out_puts(r->out, ")\n");
	if (r->nseen == r->seen_cap) {
		size_t ncap = r->seen_cap ? 2 * r->seen_cap : 64;
		struct malloc_seen *ns = realloc(r->seen, ncap * sizeof *ns);

		if (ns == NULL)
			return ring_nomem(r);
		r->seen = ns;
		r->seen_cap = ncap;
	}
	r->seen[r->nseen] = (struct malloc_seen){ name, e->addr };
	if (!cover_add(&r->mallocs, e->addr, (mp_i128)e->addr + e->size, r->nseen++) ||
	    !name_map_put(&r->segment_names, e->addr, name))
		return ring_nomem(r);
	return MP_OK;
}

static mp_err on_segment_free(struct ring *r, const mp_trace_entry *e)
{
	mp_out_puts(r->out, "cudaFree(");
	put_name_or_addr(r->out, &r->segment_names, e->addr);
	mp_out_puts(r->out, ") # ");
	mp_format_bytes(r->out, e->size);
	mp_out_putc(r->out, '\n');
	return MP_OK;
}

static mp_err on_oom(struct ring *r, const mp_trace_entry *e)
{
	/* The model keeps 'device_free' in addr. */
	mp_out_puts(r->out, "raise OutOfMemoryError # ");
	mp_format_bytes(r->out, e->size);
	mp_out_puts(r->out, " requested, ");
	mp_format_bytes(r->out, e->addr);
	mp_out_puts(r->out, " free in CUDA\n");
	return MP_OK;
}

/* 2.14.1: "# annotate {name}: {user_metadata}", the metadata as str() prints it. */
static mp_err on_annotate(struct ring *r, const mp_trace_entry *e)
{
	size_t len;
	const char *text;

	mp_out_puts(r->out, "# annotate ");
	put_name_or_addr(r->out, &r->alloc_names, e->addr);
	mp_out_puts(r->out, ": ");
	if (mp_val_type(e->user_metadata) == MP_T_STR) {
		text = mp_heap_atom(r->snap->heap, e->user_metadata, &len);
		mp_out_write(r->out, text, len);
	} else {
		mp_repr(r->snap->heap, e->user_metadata, r->out); /* str() is repr() for the rest */
	}
	mp_out_putc(r->out, '\n');
	return MP_OK;
}

/* Any other action: f"{e}", the repr of the entry dict in its key order. */
static mp_err on_other(struct ring *r, const mp_trace_entry *e)
{
	mp_val v;
	mp_err err = mp_trace_entry_to_value(r->snap, e, &v);

	if (err != MP_OK)
		return mp_fail(r->diag, err, "trace: device_traces[%zu][%zu]: cannot rebuild the entry: %s",
			       r->device, r->entry, mp_strerror(err));
	mp_repr(r->snap->heap, v, r->out);
	mp_out_putc(r->out, '\n');
	return MP_OK;
}

typedef mp_err (*entry_fn)(struct ring *r, const mp_trace_entry *e);

/* The handler of E's action and the keys it needs. */
static entry_fn handler_of(const struct ring *r, const mp_trace_entry *e, uint32_t *needs)
{
	const mp_keys *k = r->k;
	const uint32_t addr_size = MP_F_TR_ADDR | MP_F_TR_SIZE;
	mp_val a = e->action;

	*needs = addr_size;
	if (mp_val_is(a, k->alloc))
		return on_alloc;
	if (mp_val_is(a, k->free_requested))
		return on_free_requested;
	if (mp_val_is(a, k->free_completed))
		return on_free_completed;
	if (mp_val_is(a, k->segment_alloc))
		return on_segment_alloc;
	if (mp_val_is(a, k->segment_free))
		return on_segment_free;
	*needs = MP_F_TR_SIZE | MP_F_TR_DEVICE_FREE;
	if (mp_val_is(a, k->oom))
		return on_oom;
	*needs = MP_F_TR_ADDR | MP_F_TR_USER_METADATA;
	if (mp_val_is(a, k->annotate))
		return on_annotate;
	*needs = 0;
	return on_other;
}

/* Run entry I of the ring through its handler. */
static mp_err write_entry(struct ring *r, size_t i)
{
	const mp_trace_entry *e = &r->snap->trace[r->snap->device_traces[r->device].first + i];
	uint32_t needs;
	entry_fn fn = handler_of(r, e, &needs);
	mp_err err;

	r->entry = i;
	err = need(r, e, needs);
	return err == MP_OK ? fn(r, e) : err;
}

/* The ring of DEVICE, writing only its last LAST entries (0: all). The
   entries before are run all the same, into a scratch buffer emptied after
   each, so that names and TOTAL MEM come out as the whole ring has them. */
static mp_err write_ring(mp_snapshot *snap, size_t device, size_t last, mp_out *out, mp_diag *diag)
{
	const mp_trace_list *tl = &snap->device_traces[device];
	size_t skip = last > 0 && last < tl->n ? tl->n - last : 0;
	struct ring r;
	mp_out unseen;
	mp_err err = ring_init(&r, snap, device, out, diag);

	if (err != MP_OK) {
		ring_free(&r);
		return err;
	}
	mp_out_puts(out, "Device ");
	mp_out_u64(out, device);
	mp_out_puts(out, " ----------------\n");
	mp_out_u64(out, tl->n);
	mp_out_puts(out, " entries");
	if (skip > 0)
		mp_out_printf(out, ", the last %zu shown", last);
	mp_out_putc(out, '\n');
	mp_out_init(&unseen);
	r.out = &unseen;
	for (size_t i = 0; err == MP_OK && i < skip; i++) {
		err = write_entry(&r, i);
		unseen.len = 0;
	}
	mp_out_free(&unseen);
	r.out = out;
	for (size_t i = skip; err == MP_OK && i < tl->n; i++)
		err = write_entry(&r, i);
	if (err == MP_OK) {
		mp_out_puts(out, "TOTAL MEM: ");
		mp_format_bytes(out, r.net);
		mp_out_putc(out, '\n');
	}
	ring_free(&r);
	return err;
}

mp_err mp_analysis_trace_last(mp_snapshot *snap, size_t n, mp_out *out, mp_diag *diag)
{
	mp_err err = MP_OK;

	if (!(snap->present & MP_F_TOP_DEVICE_TRACES))
		return mp_fail(diag, MP_E_NOTFOUND, "trace: the snapshot has no 'device_traces'");
	for (size_t i = 0; err == MP_OK && i < snap->ndevice_traces; i++)
		if (snap->device_traces[i].n > 0)
			err = write_ring(snap, i, n, out, diag);
	if (err == MP_OK && out->err != MP_OK)
		err = mp_fail(diag, out->err, "trace: cannot write the output: %s", mp_strerror(out->err));
	return err;
}

mp_err mp_analysis_trace(mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	return mp_analysis_trace_last(snap, 0, out, diag);
}
