/* mp_segsum_hooks.h - segsum's page map with hooks, so that an analysis above src/analysis
   (categories --segsum) draws its own characters on exactly the pages _memory_viz segsum marks,
   with the same lines around them. */
#ifndef MEMPROF_SEGSUM_HOOKS_H
#define MEMPROF_SEGSUM_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"

typedef struct mp_segsum_hooks {
	const char *what; /* the analysis, first word of its errors ("stats") */
	void *ctx;
	/* Whether segment SEGI is summed up and drawn (NULL: every segment). */
	bool (*keep)(void *ctx, size_t segi);
	/* Segment SEGI's page map of NPAGES pages is about to be drawn. */
	mp_err (*begin)(void *ctx, size_t segi, size_t npages);
	/* The allocated range of block BLOCK (index in snap->blocks) covers BYTES of page PAGE
	   (BYTES is what segsum adds to the page's fill, times 20 MiB; it may be 0). */
	void (*touch)(void *ctx, size_t page, size_t block, int64_t bytes);
	/* Redraw segsum's page map MAP (' ' a free page) before the segment's line is written. */
	void (*paint)(void *ctx, char *map, size_t npages);
	/* Write the legend that ends the output (NULL: _memory_viz's). */
	void (*legend)(void *ctx, mp_out *out);
} mp_segsum_hooks;

/* mp_analysis_segsum with H's hooks (those NULL do nothing). */
mp_err mp_segsum_run(const mp_snapshot *snap, const mp_segsum_hooks *h, mp_out *out, mp_diag *diag) MP_WUR;

#endif
