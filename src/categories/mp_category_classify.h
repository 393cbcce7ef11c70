/* mp_category_classify.h - the block classifier of src/categories for the layers above it (the
   timeline): the category of a block or of a trace entry, and where it came from. */
#ifndef MEMPROF_CATEGORY_CLASSIFY_H
#define MEMPROF_CATEGORY_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_block_rows.h"
#include "mp_category.h"
#include "mp_err.h"
#include "mp_snapshot.h"

typedef struct mp_category_classifier mp_category_classifier;

/* A classifier of SNAP's blocks and trace entries by RULES (NULL: none) and the default rules,
   into *OUT (NULL on failure). DIAG is kept for its errors; MP_E_NOMEM only. */
mp_err mp_category_classifier_new(const mp_snapshot *snap, const mp_category_ruleset *rules, mp_diag *diag,
				  mp_category_classifier **out) MP_WUR;

/* Take owners O (src/owners, read from the target of C's snapshot; NULL: none) as the first source of a
   block's category, as `categories` does. MP_E_NOMEM only. */
mp_err mp_category_classifier_owners(mp_category_classifier *c, const mp_owners *o) MP_WUR;

/* The category C's owners give block R (its why), when they give one: a parameter, buffer,
   gradient, optimizer state or activation tensor holds it. */
bool mp_category_owned(const mp_category_classifier *c, const mp_block_ref *r, mp_category_why *why);

/* Free what mp_category_classifier_new made (NULL: nothing). */
void mp_category_classifier_free(mp_category_classifier *c);

/* R's category and where it came from. MP_E_NOMEM only. */
mp_err mp_category_classify(mp_category_classifier *c, const mp_block_ref *r, mp_category_why *why) MP_WUR;

/* The category of trace entry E of C's snapshot (the timeline's allocations): its 'category' key,
   else, when RULES, the first rule its frames, size and stream meet (see TIMELINE.md for state,
   pool and segment type), else UNKNOWN. MP_E_NOMEM only. */
mp_err mp_category_classify_entry(mp_category_classifier *c, const mp_trace_entry *e, bool rules,
				  mp_category_why *why) MP_WUR;

/* How many 'category' values C met so far that name no category (a caller warns about them). */
size_t mp_category_classifier_unreadable(const mp_category_classifier *c);

#endif
