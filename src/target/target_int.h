/* target_int.h - the body of mp_target, its source table and page cache (not installed). */
#ifndef MEMPROF_TARGET_INT_H
#define MEMPROF_TARGET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_table.h"
#include "mp_target.h"

#define TARGET_PAGE 4096u
#define TARGET_CACHE_PAGES 1024u /* up to 4 MiB of cached memory */
#define TARGET_READAHEAD_MAX 64u  /* pages read at once by a run of sequential misses (256 KiB) */
#define TARGET_READAHEAD_STREAMS 4u

/* One source of memory: a core, a live process, a callback. */
struct target_ops {
	/* Copy the leading readable bytes of [ADDR, ADDR+LEN) into BUF and return how many.
	   Sources are page-granular: a byte that cannot be read makes the rest of its page
	   unreadable as far as the cache is concerned. */
	size_t (*read)(mp_target *t, uint64_t addr, void *buf, size_t len);
	/* A pointer to all LEN bytes at ADDR when the source already holds them in memory (a
	   mapped core), else NULL: such reads skip the cache. May be NULL. */
	const void *(*direct)(mp_target *t, uint64_t addr, size_t len);
	/* Say in MSG (N bytes) why ADDR cannot be read; may be NULL. */
	void (*explain)(mp_target *t, uint64_t addr, char *msg, size_t n);
	/* Free the source's state (T->src); may be NULL. */
	void (*close)(mp_target *t);
	/* Whether the source can change while it is read (mp_target_live); NULL: MP_LIVE_NONE. */
	enum mp_target_live (*live)(mp_target *t);
	/* How a process is held (mp_target_hold_info_get); NULL: not a process. */
	void (*hold_info)(const mp_target *t, mp_target_hold_info *out);
	/* Let a held process go on (mp_target_let_go); NULL: nothing to let go. */
	void (*let_go)(mp_target *t);
	/* Hold a process let go again (mp_target_again); NULL: nothing to do. */
	mp_err (*hold_again)(mp_target *t, mp_diag *diag);
};

/* A guard (mp_target_guard): the bytes at ADDR when it was registered (NULL: they could not be, or a lock
   word was taken: it cannot vouch for the read); or (IDLE, mp_target_guard_idle) bytes that must be zero. */
struct target_guard {
	uint64_t addr;
	size_t len;
	unsigned char *bytes;
	bool idle;
};

/* A cached page: DATA holds the VALID readable leading bytes of the page at ADDR
   (VALID == 0: a negative entry, the page is unreadable). */
struct cache_page {
	uint64_t addr;
	uint32_t valid;
	struct cache_page *prev, *next; /* in the LRU list, most recent first */
	unsigned char data[TARGET_PAGE];
};

/* A run of misses at increasing addresses (walking a tree or a table in address order): each
   miss just past the run's END reads twice as many pages at once as the last, up to
   TARGET_READAHEAD_MAX, which turns one read per page into a few large ones. */
struct readahead_stream {
	uint64_t end;    /* the address after the pages the run last read */
	uint32_t window; /* pages it last read at once */
};

struct target_cache {
	struct cache_page *pool;        /* TARGET_CACHE_PAGES pages, allocated at the first miss */
	size_t npages;                  /* of POOL in use */
	mp_table index;                 /* the pages by address; ids index POOL */
	struct cache_page *head, *tail; /* LRU list: every page in use */
	struct readahead_stream streams[TARGET_READAHEAD_STREAMS];
	unsigned next_stream;  /* the slot a new run takes (round robin) */
	unsigned char *extent; /* TARGET_READAHEAD_MAX pages, for reads of several pages */
};

struct mp_target {
	const struct target_ops *ops;
	void *src;
	mp_target_info info;
	char *origin, *exe, *cmdline; /* owned by the target; info points at them */
	mp_mapping *maps;             /* by address; paths owned by the target */
	bool *mismatch;               /* per mapping */
	size_t nmaps, capmaps;
	struct target_cache cache;
	struct target_guard *guards;
	size_t nguards, capguards;
	bool guard_lost; /* a guard could not be registered at all (no memory): the read cannot be vouched for */
	bool busy;       /* held, a lock word (mp_target_guard_idle) was found taken: caught mid-update */
	int live;        /* enum mp_target_live, -1 until asked after the last flush */
};

/* A new target of KIND over OPS with source state SRC, named ORIGIN (copied). */
mp_err target_new(enum mp_target_kind kind, const struct target_ops *ops, void *src,
		  const char *origin, mp_target **out, mp_diag *diag) MP_WUR;

/* Append a mapping (PATH and LOCAL_PATH copied; LOCAL_PATH may be NULL). */
mp_err target_add_mapping(mp_target *t, uint64_t start, uint64_t end, uint64_t file_offset,
			  const char *path, const char *local_path, mp_diag *diag) MP_WUR;

/* Sort the mappings by address (after the last target_add_mapping). */
void target_sort_mappings(mp_target *t);

/* The index of the mapping holding ADDR, or -1. */
ptrdiff_t target_find_mapping(const mp_target *t, uint64_t addr);

/* Set an owned string (copied; S may be NULL) into *SLOT, freeing the old one. */
mp_err target_set_string(char **slot, const char *s, mp_diag *diag) MP_WUR;

/* The page at ADDR (a multiple of TARGET_PAGE), from the cache or read from the source. */
const struct cache_page *cache_get(mp_target *t, uint64_t addr);

/* Forget (and free) every cached page. */
void cache_clear(struct target_cache *c);

/* Forget (and free) T's guards. */
void guards_clear(mp_target *t);

/* Where PATH (as the target named it) is here, under OPTS: a malloc'd path, or NULL when
   it is not found (or on out of memory). */
char *target_find_file(const char *path, const mp_target_opts *opts);

#endif
