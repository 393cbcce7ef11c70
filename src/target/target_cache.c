/* target_cache.c - a bounded LRU cache of 4 KiB pages in front of every target source, with
   negative entries for pages that cannot be read, and read-ahead for runs of sequential misses. */
#include "target_int.h"

#include <stdlib.h>
#include <string.h>

static size_t bucket_of(uint64_t addr)
{
	uint64_t h = (addr / TARGET_PAGE) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) % TARGET_CACHE_BUCKETS;
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

static void bucket_remove(struct target_cache *c, struct cache_page *p)
{
	struct cache_page **pp = &c->buckets[bucket_of(p->addr)];

	while (*pp != NULL && *pp != p)
		pp = &(*pp)->hnext;
	if (*pp != NULL)
		*pp = p->hnext;
	p->hnext = NULL;
}

/* A page struct to fill: a new one while under the bound, else the least recently used. */
static struct cache_page *take_page(struct target_cache *c)
{
	struct cache_page *p;

	if (c->npages < TARGET_CACHE_PAGES && (p = calloc(1, sizeof *p)) != NULL) {
		c->npages++;
		return p;
	}
	p = c->tail;
	if (p == NULL)
		return NULL;
	lru_unlink(c, p);
	bucket_remove(c, p);
	return p;
}

/* The cached page at ADDR, or NULL; the LRU order is left as it is. */
static struct cache_page *find(const struct target_cache *c, uint64_t addr)
{
	struct cache_page *p;

	for (p = c->buckets[bucket_of(addr)]; p != NULL; p = p->hnext)
		if (p->addr == addr)
			return p;
	return NULL;
}

/* Put P, filled, into its bucket as the most recent page. */
static void link_page(struct target_cache *c, struct cache_page *p)
{
	size_t b = bucket_of(p->addr);

	p->hnext = c->buckets[b];
	c->buckets[b] = p;
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
	struct cache_page *p = c->head, *next;

	for (size_t i = 0; i < TARGET_CACHE_BUCKETS; i++)
		c->buckets[i] = NULL;
	for (; p != NULL; p = next) {
		next = p->next;
		free(p);
	}
	c->head = c->tail = NULL;
	c->npages = 0;
	memset(c->streams, 0, sizeof c->streams);
	free(c->extent);
	c->extent = NULL;
}
