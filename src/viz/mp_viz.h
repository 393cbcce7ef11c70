/* mp_viz.h - the pages of `python -m torch.cuda._memory_viz trace_plot` and `segment_plot`: PyTorch's
   interactive viewer (torch/utils/viz/MemoryViz.js) with a snapshot embedded as the pickle its unpickler reads.
   As PyTorch writes it, the page loads the viewer by URL (and the viewer its d3 from a CDN); offline, the viewer
   and a d3 from this machine are inlined, and the page needs no network. Neither file is in memprof. */
#ifndef MEMPROF_VIZ_H
#define MEMPROF_VIZ_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* The view the page opens with (its add_local_files() second argument). */
enum mp_viz_kind {
	MP_VIZ_ACTIVE_MEMORY, /* trace_plot */
	MP_VIZ_ACTIVE_CACHED, /* trace_plot --plot-segments (PyTorch's -s; see mp_viz_kind_name) */
	MP_VIZ_STATE_HISTORY, /* segment_plot */
};

/* The view's name as the viewer knows it ("Active Memory Timeline", ...): PyTorch's own names but for
   MP_VIZ_ACTIVE_CACHED's, where PyTorch's page asks for a view its viewer does not have. */
const char *mp_viz_kind_name(enum mp_viz_kind kind);

/* What an offline page inlines: the viewer's text (its d3 imports rewritten to the inlined d3) and d3's. */
typedef struct mp_viz_viewer {
	mp_out memoryviz; /* MemoryViz.js, imports rewritten */
	mp_out d3;        /* a d3 v5+ bundle that sets globalThis.d3 (UMD) */
	char memoryviz_path[1024];
	char d3_path[1024];
} mp_viz_viewer;

/* Where the viewer and d3 are looked for, first found wins. TORCH: a file (MemoryViz.js itself), or a directory
   holding torch/utils/viz/MemoryViz.js (a PyTorch source tree) or utils/viz/MemoryViz.js (a torch package); NULL:
   the torch package that `python3` finds (without importing it). D3: a file; NULL: Debian's node-d3. */
typedef struct mp_viz_sources {
	const char *torch;
	const char *d3;
} mp_viz_sources;

/* Read the viewer and d3 for an offline page into V (freed by mp_viz_viewer_free, also on failure). Fails with a
   one-line DIAG that names where it looked: MP_E_NOTFOUND when a file is not there (PyTorch's wheels and
   Debian's package do not install MemoryViz.js), MP_E_UNSUPPORTED when the viewer imports something other than
   d3, MP_E_LIMIT for a file over 64 MiB, MP_E_ERRNO, MP_E_NOMEM. */
mp_err mp_viz_viewer_load(const mp_viz_sources *src, mp_viz_viewer *v, mp_diag *diag) MP_WUR;
void mp_viz_viewer_free(mp_viz_viewer *v);

/* The entries of each device's trace ring that trace_plot --filter_freed (PyTorch 2.14) leaves out: an 'alloc'
   and its address's next 'free_requested', and a 'free_completed' whose address had a 'free_requested'. *DROP: a
   malloc'd flag per entry of SNAP's trace (the caller frees it), their number in *DROPPED. Each 'free_completed'
   without a 'free_requested' is named in WARNINGS (one line each, as PyTorch prints them; WARNINGS may be NULL).
   SNAP is not changed. MP_E_NOMEM (DIAG). */
mp_err mp_viz_freed_entries(const mp_snapshot *snap, bool **drop, size_t *dropped, mp_out *warnings,
			    mp_diag *diag) MP_WUR;

/* Append to OUT the page for SNAP opening on KIND: PyTorch's page, byte for byte around the embedded snapshot,
   with OFFLINE NULL; the viewer and d3 inlined with it. The embedded pickle loads to what PyTorch's CLI would
   embed for the same file (a bare list of segments as {'segments': list, 'traces': []}), without the trace
   entries DROP marks (mp_viz_freed_entries; NULL: none). SNAP's heap gains the values written, SNAP is otherwise
   unchanged. Fails as mp_snapshot_save does (a projected snapshot: MP_E_SKIPPED). */
mp_err mp_viz_page(mp_snapshot *snap, enum mp_viz_kind kind, const bool *drop, const mp_viz_viewer *offline,
		   mp_out *out, mp_diag *diag) MP_WUR;

#endif
