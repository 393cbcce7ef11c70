/* category_modes_int.h - the outputs of `categories` that replace its table: --sites and --segsum
   (private to src/categories; --explain is category_int.h's). */
#ifndef MEMPROF_CATEGORY_MODES_INT_H
#define MEMPROF_CATEGORY_MODES_INT_H

#include "category_int.h"

/* --sites: per device, O->sites groups of active bytes by innermost user frame (O->by), the
   rest and the total (category_sites.c). MP_E_NOTFOUND when O->device has no blocks. */
mp_err category_sites(mp_category_classifier *c, const mp_category_opts *o, mp_out *out) MP_WUR;

/* --segsum: _memory_viz segsum's text with each page drawn as its category's letter
   (category_segsum.c). MP_E_NOTFOUND when O->device has no segments. */
mp_err category_segsum(mp_category_classifier *c, const mp_category_opts *o, mp_out *out) MP_WUR;

#endif
