/* target_cache.c - a bounded LRU cache of 4 KiB pages in front of every target source, with
   negative entries for pages that cannot be read. */
#include "target_int.h"

#include <stdlib.h>

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

const struct cache_page *cache_get(mp_target *t, uint64_t addr)
{
	struct target_cache *c = &t->cache;
	size_t b = bucket_of(addr);
	struct cache_page *p;

	for (p = c->buckets[b]; p != NULL; p = p->hnext)
		if (p->addr == addr) {
			lru_unlink(c, p);
			lru_push(c, p);
			return p;
		}
	p = take_page(c);
	if (p == NULL)
		return NULL;
	p->addr = addr;
	/* The last page of the address space is never read: its end would wrap. */
	p->valid = addr > UINT64_MAX - TARGET_PAGE ? 0
		   : (uint32_t)t->ops->read(t, addr, p->data, TARGET_PAGE);
	p->hnext = c->buckets[b];
	c->buckets[b] = p;
	lru_push(c, p);
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
}
