/* target_cache.c - a bounded LRU cache of 4 KiB pages in front of every target source, with
   negative entries for pages that cannot be read, and read-ahead for runs of sequential misses. */
#include "target_int.h"

#include <stdlib.h>
#include <string.h>

/* Fibonacci hashing of the page number: one multiply on the path of every cached read, and the
   product's upper half (which mp_table indexes by) depends on all of the number's bits. */
static uint64_t page_hash(uint64_t addr)
{
	return (addr / TARGET_PAGE) * 0x9e3779b97f4a7c15ull >> 32;
}

static void lru_unlink(struct target_cache *c, struct cache_page *p)
{
	if (p->prev != NULL)
		p->prev->next = p->next;
	else
		c->head = p->next;
	if (p->next != NULL)
		p->next->prev = p->prev;
	else
		c->tail = p->prev;
	p->prev = p->next = NULL;
}

static void lru_push(struct target_cache *c, struct cache_page *p)
{
	p->prev = NULL;
	p->next = c->head;
	if (c->head != NULL)
		c->head->prev = p;
	c->head = p;
	if (c->tail == NULL)
		c->tail = p;
}

/* Take P out of the index, if it is there (see link_page). */
static void unindex(struct target_cache *c, const struct cache_page *p)
{
	mp_table_probe probe;

	for (uint32_t id = mp_table_find(&c->index, page_hash(p->addr), &probe); id != MP_TABLE_NONE;
	     id = mp_table_next(&c->index, &probe))
		if (&c->pool[id] == p) {
			mp_table_remove(&c->index, &probe);
			return;
		}
}

/* A page struct to fill: a new one while under the bound, else the least recently used. The pool
   is one allocation, so that a page's id is its index in it: a lookup goes from the table to the
   page without another load, and the pool's untouched pages never take memory. */
static struct cache_page *take_page(struct target_cache *c)
{
	struct cache_page *p;

	if (c->pool == NULL && (c->pool = calloc(TARGET_CACHE_PAGES, sizeof *c->pool)) == NULL)
		return NULL;
	if (c->npages < TARGET_CACHE_PAGES)
		return &c->pool[c->npages++];
	p = c->tail;
	if (p == NULL)
		return NULL;
	lru_unlink(c, p);
	unindex(c, p);
	return p;
}

/* The cached page at ADDR, or NULL; the LRU order is left as it is. */
static struct cache_page *find(const struct target_cache *c, uint64_t addr)
{
	mp_table_probe probe;

	for (uint32_t id = mp_table_find(&c->index, page_hash(addr), &probe); id != MP_TABLE_NONE;
	     id = mp_table_next(&c->index, &probe))
		if (c->pool[id].addr == addr)
			return &c->pool[id];
	return NULL;
}

/* Put P, filled, into the index as the most recent page. Out of memory for the index, P is
   still returned once but then forgotten: it gets an address that is no page's (not aligned),
   so that no lookup finds it and no second page at its address is ever shadowed by it. */
static void link_page(struct target_cache *c, struct cache_page *p)
{
	if (mp_table_insert(&c->index, page_hash(p->addr), (uint32_t)(p - c->pool)) != MP_OK)
		p->addr = UINT64_MAX;
	lru_push(c, p);
}

/* How many pages to read for a miss at ADDR: 1, or twice the last read of the run that ADDR
   continues (a miss at most that run's window past its end). */
static uint32_t readahead_window(struct target_cache *c, uint64_t addr)
{
	struct readahead_stream *s;

	if (addr > UINT64_MAX / 2) /* no user address: no run, and no wrap below */
		return 1;
	for (unsigned i = 0; i < TARGET_READAHEAD_STREAMS; i++) {
		s = &c->streams[i];
		if (s->window != 0 && addr >= s->end && addr - s->end <= (uint64_t)s->window * TARGET_PAGE) {
			s->window = s->window * 2 < TARGET_READAHEAD_MAX ? s->window * 2 : TARGET_READAHEAD_MAX;
			s->end = addr + (uint64_t)s->window * TARGET_PAGE;
			return s->window;
		}
	}
	s = &c->streams[c->next_stream++ % TARGET_READAHEAD_STREAMS];
	s->window = 1;
	s->end = addr + TARGET_PAGE;
	return 1;
}

/* Read N pages at ADDR with one read of the source and cache each whole one that is not cached
   yet. False when not even ADDR's page came whole (a source may refuse a range that runs into
   unreadable memory): the caller then reads that page alone, as without read-ahead. A page
   that came partly is left for a read of its own, so that no entry says less than a read of
   that page would. */
static bool read_extent(mp_target *t, uint64_t addr, uint32_t n)
{
	struct target_cache *c = &t->cache;
	size_t got;

	if (c->extent == NULL && (c->extent = malloc((size_t)TARGET_READAHEAD_MAX * TARGET_PAGE)) == NULL)
		return false;
	got = t->ops->read(t, addr, c->extent, (size_t)n * TARGET_PAGE) / TARGET_PAGE;
	/* Last page first: ADDR's ends up the most recent. */
	for (size_t i = got; i-- > 0;) {
		uint64_t a = addr + i * TARGET_PAGE;
		struct cache_page *p;

		if (find(c, a) != NULL)
			continue;
		if ((p = take_page(c)) == NULL)
			break;
		p->addr = a;
		p->valid = TARGET_PAGE;
		memcpy(p->data, c->extent + i * TARGET_PAGE, TARGET_PAGE);
		link_page(c, p);
	}
	return got > 0;
}

const struct cache_page *cache_get(mp_target *t, uint64_t addr)
{
	struct target_cache *c = &t->cache;
	struct cache_page *p = c->head;
	uint32_t window;

	/* Most reads are of the page just read: no hash, no relinking. */
	if (p != NULL && p->addr == addr)
		return p;
	if ((p = find(c, addr)) != NULL) {
		lru_unlink(c, p);
		lru_push(c, p);
		return p;
	}
	window = readahead_window(c, addr);
	if (window > 1 && read_extent(t, addr, window) && (p = find(c, addr)) != NULL)
		return p; /* pushed last, so it is the head */
	p = take_page(c);
	if (p == NULL)
		return NULL;
	p->addr = addr;
	/* The last page of the address space is never read: its end would wrap. */
	p->valid = addr > UINT64_MAX - TARGET_PAGE ? 0
		   : (uint32_t)t->ops->read(t, addr, p->data, TARGET_PAGE);
	link_page(c, p);
	return p;
}

void cache_clear(struct target_cache *c)
{
	mp_table_free(&c->index);
	free(c->pool);
	c->pool = NULL;
	c->head = c->tail = NULL;
	c->npages = 0;
	memset(c->streams, 0, sizeof c->streams);
	free(c->extent);
	c->extent = NULL;
}
