/* sim_pools.c - which pool serves a request (get_pool): the default small pool up to 1 MiB and large pool
   above, unless a capture or a MemPool context routes the stream's allocations to a private pool; and the
   private pools' lives: created or shared by beginAllocateToPool (use count up), routing ended by
   endAllocateToPool, given up by releasePool (use count down: at zero the retry and empty_cache may release
   its free segments, and the pool itself once it holds none). */
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "sim_int.h"

sim_private *sim_private_find(const mp_sim *s, int64_t id0, int64_t id1)
{
	for (sim_private *p = s->graph_pools; p != NULL; p = p->next)
		if (p->id[0] == id0 && p->id[1] == id1)
			return p;
	return NULL;
}

sim_pool *sim_get_pool(mp_sim *s, int64_t size, uint64_t stream)
{
	for (size_t i = 0; i < s->ncaptures; i++) {
		sim_private *p;

		if (s->captures[i].stream != stream ||
		    (p = sim_private_find(s, s->captures[i].id[0], s->captures[i].id[1])) == NULL)
			continue;
		return size <= SIM_SMALL_SIZE ? &p->small : &p->large;
	}
	return size <= SIM_SMALL_SIZE ? &s->small_blocks : &s->large_blocks;
}

/* ensure_exists_and_incref_pool. */
static sim_private *incref(mp_sim *s, int64_t id0, int64_t id1)
{
	sim_private *p = sim_private_find(s, id0, id1), **link;

	if (p != NULL) {
		p->use_count++;
		return p;
	}
	if ((p = calloc(1, sizeof *p)) == NULL) {
		s->failed = true;
		return NULL;
	}
	p->id[0] = id0;
	p->id[1] = id1;
	p->use_count = 1;
	sim_pool_init(&p->large, false, p, s->rules.order);
	sim_pool_init(&p->small, true, p, s->rules.order);
	for (link = &s->graph_pools; *link != NULL; link = &(*link)->next)
		;
	*link = p;
	return p;
}

void mp_sim_pool_begin(mp_sim *s, int64_t id0, int64_t id1, uint64_t stream)
{
	if (incref(s, id0, id1) == NULL)
		return;
	if (mp_array_grow((void **)&s->captures, &s->cap_captures, s->ncaptures + 1, sizeof *s->captures) != MP_OK) {
		s->failed = true;
		return;
	}
	s->captures[s->ncaptures++] = (sim_capture){ .id = { id0, id1 }, .stream = stream };
}

void mp_sim_pool_end(mp_sim *s, int64_t id0, int64_t id1)
{
	for (size_t i = 0; i < s->ncaptures; i++)
		if (s->captures[i].id[0] == id0 && s->captures[i].id[1] == id1) {
			memmove(&s->captures[i], &s->captures[i + 1], (s->ncaptures - i - 1) * sizeof *s->captures);
			s->ncaptures--;
			return;
		}
}

void mp_sim_pool_release(mp_sim *s, int64_t id0, int64_t id1)
{
	sim_private *p = sim_private_find(s, id0, id1);

	if (p != NULL && --p->use_count == 0)
		p->freeable = true;
}
