/* target_guard.c - whether a running process moved while it was read: guard words read when a reader
   registers them and again at the end, straight from the process (never from the page cache). */
#include "target_int.h"

#include <stdlib.h>
#include <string.h>

#include "mp_array.h"

#define GUARD_MAX 4096u

void guards_clear(mp_target *t)
{
	for (size_t i = 0; i < t->nguards; i++)
		free(t->guards[i].bytes);
	free(t->guards);
	t->guards = NULL;
	t->nguards = t->capguards = 0;
	t->guard_lost = false;
	t->busy = false;
}

static bool registered(const mp_target *t, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < t->nguards; i++)
		if (t->guards[i].addr == addr && t->guards[i].len == len)
			return true;
	return false;
}

static bool all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/* A process held with a writer stopped inside: whether lock word [ADDR, ADDR+LEN) is taken. */
static bool taken(mp_target *t, uint64_t addr, size_t len)
{
	unsigned char buf[GUARD_MAX];

	return len <= GUARD_MAX && t->ops->read(t, addr, buf, len) == len && !all_zero(buf, len);
}

static void guard(mp_target *t, uint64_t addr, size_t len, bool idle)
{
	struct target_guard *g;

	if (idle && mp_target_live(t) == MP_LIVE_HELD && taken(t, addr, len))
		t->busy = true;
	if (len == 0 || mp_target_live(t) != MP_LIVE_RUNNING || registered(t, addr, len))
		return;
	if (mp_array_grow((void **)&t->guards, &t->capguards, t->nguards + 1, sizeof *t->guards) != MP_OK) {
		t->guard_lost = true;
		return;
	}
	g = &t->guards[t->nguards++];
	*g = (struct target_guard){ .addr = addr, .len = len, .bytes = len <= GUARD_MAX ? malloc(len) : NULL, .idle = idle };
	/* one that cannot be read whole now (or a lock taken) cannot vouch for the read: as if it moved */
	if (g->bytes == NULL || t->ops->read(t, addr, g->bytes, len) != len || (idle && !all_zero(g->bytes, len))) {
		free(g->bytes);
		g->bytes = NULL;
	}
	/* what was cached before may be older than the guard's value */
	cache_clear(&t->cache);
}

void mp_target_guard(mp_target *t, uint64_t addr, size_t len)
{
	guard(t, addr, len, false);
}

void mp_target_guard_idle(mp_target *t, uint64_t addr, size_t len)
{
	guard(t, addr, len, true);
}

bool mp_target_moved(mp_target *t)
{
	unsigned char buf[GUARD_MAX];

	if (t->guard_lost || t->busy)
		return true;
	for (size_t i = 0; i < t->nguards; i++) {
		const struct target_guard *g = &t->guards[i];

		if (g->bytes == NULL)
			return true;
		if (t->ops->read(t, g->addr, buf, g->len) != g->len)
			/* unreadable now: moved, unless the process has exited meanwhile (its reads say so) */
			return t->ops->live == NULL || t->ops->live(t) == MP_LIVE_RUNNING;
		if (g->idle ? !all_zero(buf, g->len) : memcmp(buf, g->bytes, g->len) != 0)
			return true;
	}
	return false;
}

size_t mp_target_guards(const mp_target *t)
{
	return t->nguards;
}
