/* mp_timeline.h - the category timeline: bytes per category over time, per device, from the
   snapshot's trace ring, written as torch.profiler's export_memory_timeline JSON, its raw form,
   a text summary, or a stacked area plot (SVG, or a self-contained HTML page). The semantics
   (what adds, what returns memory, what was there before the ring) are in TIMELINE.md. */
#ifndef MEMPROF_TIMELINE_H
#define MEMPROF_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_category.h"
#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* torch.profiler._memory_profiler.Action's values (the raw form writes them). The timeline
   has no tensor versions, so INCREMENT_VERSION (3) never occurs. */
enum mp_timeline_action {
	MP_TL_PREEXISTING = 1,
	MP_TL_CREATE = 2,
	MP_TL_DESTROY = 4,
};

/* One change of the memory: BYTES (>= 0) of CATEGORY come (PREEXISTING, CREATE) or go (DESTROY)
   at TIME_US; a PREEXISTING event has no time of its own (the profiler's -1). */
typedef struct mp_timeline_event {
	int64_t time_us;
	int64_t bytes;
	size_t seq; /* the order events were made in, which equal keys keep */
	uint8_t action;   /* enum mp_timeline_action */
	uint8_t category; /* enum mp_category */
} mp_timeline_event;

/* One device's timeline: its events in the profiler's order (by time, PREEXISTING first, then
   by action), and what the snapshot says they should end at. */
typedef struct mp_timeline_device {
	int64_t device;
	mp_timeline_event *events;
	size_t nevents;
	size_t ring;          /* entries in the device's trace ring */
	int64_t t_min;        /* the time PREEXISTING rows show at (the profiler's t_min) */
	mp_i128 active_bytes; /* the requested bytes of the snapshot's allocated + pending free blocks */
	mp_i128 end_bytes;    /* what the events add up to */
} mp_timeline_device;

typedef struct mp_timeline {
	mp_timeline_device *devices; /* by device number, only devices whose ring has entries */
	size_t ndevices;
} mp_timeline;

/* Build the timelines of SNAP: every device with a trace ring, or only DEVICE (>= 0). Allocations
   get their category from a 'category' key on their trace entry, else from RULES (may be NULL) and
   the default rules, else UNKNOWN; an allocation still live at the end whose block OWNERS (read
   from SNAP's target; NULL: none) name a parameter, buffer, gradient, optimizer state or activation
   takes the owner's category over its whole lifetime (a .grad is the backward's buffer that
   AccumulateGrad kept, made without a new allocation). Warns through DIAG where the ring and the
   blocks disagree. MP_E_NOTFOUND with DIAG when no device (or not DEVICE) has a trace ring;
   MP_E_NOMEM. */
mp_err mp_timeline_build(const mp_snapshot *snap, const mp_category_ruleset *rules, const mp_owners *owners,
			 int64_t device, mp_timeline **out, mp_diag *diag) MP_WUR;

void mp_timeline_free(mp_timeline *tl);

/* ---- rows: the profiler's _coalesce_timeline, one row at a time */

/* A row: bytes per category (enum mp_category) after every event at TIME. */
typedef struct mp_timeline_row {
	int64_t time;
	mp_i128 bytes[MP_CAT__COUNT];
} mp_timeline_row;

typedef struct mp_timeline_cursor {
	const mp_timeline_device *d;
	size_t next; /* the next event */
	mp_timeline_row row;
} mp_timeline_cursor;

void mp_timeline_cursor_init(mp_timeline_cursor *c, const mp_timeline_device *d);

/* Move to the next row (C->row); false after the last. */
bool mp_timeline_next(mp_timeline_cursor *c);

/* The total of a row: the sum of its bytes. */
mp_i128 mp_timeline_row_total(const mp_timeline_row *r);

/* The bytes of category row C of SCHEME (the categories SCHEME shows as C added up). */
mp_i128 mp_timeline_row_bytes(const mp_timeline_row *r, enum mp_category c, enum mp_category_scheme scheme);

/* The first row of D with the highest total into *PEAK, the last into *END, and the number of
   rows into *NROWS (all zero without events). */
void mp_timeline_peak(const mp_timeline_device *d, mp_timeline_row *peak, mp_timeline_row *end, size_t *nrows);

/* ---- writers */

/* torch.profiler's column of category C (its _CATEGORY_TO_INDEX: PARAMETER 0 ... UNKNOWN 7). */
int mp_timeline_profiler_index(enum mp_category c);

/* export_memory_timeline's JSON of D: [times, sizes], times in microseconds, each sizes row a
   leading 0 then the profiler's eight categories; json.dump's spelling. */
void mp_timeline_json(const mp_timeline_device *d, mp_out *out);

/* export_memory_timeline_raw's JSON of D: [[time, action, numbytes, category], ...] with times in
   nanoseconds (time_us * 1000, -1 for PREEXISTING) and frees negative. MP_E_RANGE with DIAG when
   a time does not fit in nanoseconds. */
mp_err mp_timeline_raw(const mp_timeline_device *d, mp_out *out, mp_diag *diag) MP_WUR;

/* How the plots and the summary show things. */
typedef struct mp_timeline_view {
	enum mp_category_scheme scheme;
	enum mp_units units; /* AUTO: by the peak */
} mp_timeline_view;

/* The colour C is drawn in (a CSS colour name): the profiler's _CATEGORY_TO_COLORS, and
   darkorange for MemTracker's Buffer, which the profiler lacks. */
const char *mp_timeline_colour(enum mp_category c);

/* The unit sizes are shown in: U, or for AUTO the largest that BYTES reaches (B at least). */
enum mp_units mp_timeline_units(enum mp_units u, mp_i128 bytes);

/* A text summary of every device of TL: time span, events, the peak and when, bytes per category
   at the peak and at the end, and whether the end matches the snapshot. */
void mp_timeline_summary(const mp_timeline *tl, const mp_timeline_view *v, mp_out *out);

/* D as a stacked area SVG image (a standalone file when STANDALONE, else for inlining in HTML).
   MP_E_NOMEM only. */
mp_err mp_timeline_svg(const mp_timeline_device *d, const mp_timeline_view *v, bool standalone, mp_out *out,
		       mp_diag *diag) MP_WUR;

/* Every device of TL as one self-contained HTML page: inline SVG plots and tables, no script. */
mp_err mp_timeline_html(const mp_timeline *tl, const mp_timeline_view *v, mp_out *out, mp_diag *diag) MP_WUR;

/* ---- the forms a front end offers */

enum mp_timeline_format { MP_TLF_SUMMARY, MP_TLF_JSON, MP_TLF_RAW, MP_TLF_HTML, MP_TLF_SVG };

/* Read "json", "raw", "html" or "svg". False for anything else. */
bool mp_timeline_format_parse(const char *name, enum mp_timeline_format *out);

/* The format a file name asks for, as the profiler's export_memory_timeline tells it: ".raw.json",
   ".json", ".html", ".svg". False for any other name. */
bool mp_timeline_format_of_path(const char *path, enum mp_timeline_format *out);

/* Write TL in F into OUT. JSON, RAW and SVG hold one device: MP_E_USAGE with DIAG when TL has
   several. */
mp_err mp_timeline_write(const mp_timeline *tl, enum mp_timeline_format f, const mp_timeline_view *v, mp_out *out,
			 mp_diag *diag) MP_WUR;

#endif
