/* mp_category.h - what a block's memory is (parameters, gradients, activations, optimizer
   state, ...): categories in the names of PyTorch's memory profiler or of MemTracker, where each
   block's category comes from (the data, a rule over its frames, or unknown), and the table of
   bytes per category. The default rules are documented in CATEGORY-RULES.md. */
#ifndef MEMPROF_CATEGORY_H
#define MEMPROF_CATEGORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_owners.h"
#include "mp_snapshot.h"

/* What memory is: the union of both schemes. The first seven and UNKNOWN are
   torch.profiler's Category in the order of its memory timeline; BUFFER is
   MemTracker's only one the profiler lacks. */
enum mp_category {
	MP_CAT_PARAMETER,
	MP_CAT_OPTIMIZER_STATE,
	MP_CAT_INPUT,
	MP_CAT_TEMPORARY,
	MP_CAT_ACTIVATION,
	MP_CAT_GRADIENT,
	MP_CAT_AUTOGRAD_DETAIL,
	MP_CAT_BUFFER,
	MP_CAT_UNKNOWN,
	MP_CAT__COUNT
};

/* Whose names a report uses. */
enum mp_category_scheme {
	MP_SCHEME_PROFILER, /* PARAMETER, OPTIMIZER_STATE, ..., UNKNOWN */
	MP_SCHEME_TRACKER,  /* Parameter, Buffer, Gradient, Activation, Temp, Optstate, Unknown */
};

/* The rows a report in SCHEME has, in order (UNKNOWN last), and their number. */
const enum mp_category *mp_category_rows(enum mp_category_scheme scheme, size_t *n);

/* The row C shows as in SCHEME: itself, or what SCHEME calls it (the
   tracker shows AUTOGRAD_DETAIL as Temp; categories a scheme has no name for
   show as UNKNOWN, see CATEGORY-RULES.md). */
enum mp_category mp_category_in(enum mp_category c, enum mp_category_scheme scheme);

/* The name of C in SCHEME (C one of its rows: "OPTIMIZER_STATE" / "Optstate"). */
const char *mp_category_name(enum mp_category c, enum mp_category_scheme scheme);

/* Read a category name of either scheme, any case ("gradient", "Optstate",
   "optimizer_state", "temp"), of LEN bytes. False when it names none. */
bool mp_category_parse(const char *name, size_t len, enum mp_category *out);

/* Read "profiler" or "tracker". False for anything else. */
bool mp_category_scheme_parse(const char *text, enum mp_category_scheme *out);

/* The letter C's memory shows as in `categories --segsum` (P, O, I, T, A, G, D, B, U). */
char mp_category_letter(enum mp_category c);

/* ---- rules */

/* A condition on one frame: FILE and FUNCTION are NULL-terminated lists of
   fnmatch(3) globs ('*' crosses '/'), one of which must match (NULL: any
   file, any function), both met by the same frame: any frame of the block's
   traceback, or only its innermost user frame (mp_frame_is_user). */
typedef struct mp_frame_cond {
	const char *const *file;
	const char *const *function;
	bool innermost_user;
} mp_frame_cond;

/* One rule: NAME, the CATEGORY it gives, and conditions that must all hold.
   A rule with no condition matches every active block. */
typedef struct mp_category_rule {
	const char *name;
	enum mp_category category;
	const mp_frame_cond *frames; /* each must be met (possibly by different frames) */
	size_t nframes;
	unsigned states; /* enum mp_block_states bits; 0: any */
	bool has_min_size, has_max_size, has_stream, has_pool;
	int64_t min_size, max_size; /* inclusive, of the block's size */
	int64_t stream;             /* the segment's */
	int64_t pool[2];            /* the segment's segment_pool_id */
	const char *segment_type;   /* "large" / "small"; NULL: any */
	unsigned phases;            /* enum mp_category_phase bits that must all hold; 0: any */
} mp_category_rule;

/* What the trace ring's order says about an allocation (category_phases.c, CATEGORY-RULES.md "Phases"). */
enum mp_category_phase {
	MP_PHASE_BACKWARD = 1u << 0,       /* made while a backward pass ran, by a thread with no Python frames */
	MP_PHASE_OUTLIVES_BACKWARD = 1u << 1, /* and still allocated when that pass ended */
	MP_PHASE_PARAMETER_SIZE = 1u << 2, /* of the size of a parameter (an allocation the rules call PARAMETER) */
	MP_PHASE_BEFORE_FORWARD = 1u << 3, /* made by the job's own code outside any module's forward, still
					      allocated when the next forward began (what a loop feeds the model) */
	MP_PHASE_WITHIN_OPERATOR = 1u << 4, /* made by an operator called inside another (C++ frames) and freed
					       before that outer call returned: an intermediate of one operator */
	MP_PHASE_BEFORE_BACKWARD = 1u << 5, /* made by Python outside any module's forward, after the last forward
					       and before the backward pass that followed it: the loss */
};

/* The name of phase bit BIT in a rules file ("backward", ...), NULL when BIT is none; and back: false when
   NAME (LEN bytes) names none. */
const char *mp_category_phase_name(unsigned bit);
bool mp_category_phase_parse(const char *name, size_t len, unsigned *bit);

/* The compiled-in rules for PyTorch training code (category_defaults.c). */
const mp_category_rule *mp_category_default_rules(size_t *n);

/* User rules read from a JSON file: {"rules": [ {...}, ... ]} (CATEGORY-RULES.md). */
typedef struct mp_category_ruleset mp_category_ruleset;

/* Parse the JSON TEXT (LEN bytes). MP_E_USAGE with a one-line DIAG naming the
   rule (index and name) and the problem: an unknown key, a bad category, a
   value of the wrong type, ...; MP_E_CORRUPT when TEXT is not JSON. */
mp_err mp_category_rules_parse(const char *text, size_t len, mp_category_ruleset **out, mp_diag *diag) MP_WUR;

/* Read and parse the rules file PATH; DIAG's line starts with PATH. */
mp_err mp_category_rules_load(const char *path, mp_category_ruleset **out, mp_diag *diag) MP_WUR;

/* The rules of SET, in file order. SET may be NULL (no rules). */
const mp_category_rule *mp_category_ruleset_rules(const mp_category_ruleset *set, size_t *n);

void mp_category_ruleset_free(mp_category_ruleset *set);

/* ---- classifying */

/* Where a block's category came from. */
enum mp_category_source {
	MP_CSRC_INACTIVE, /* a free block: not categorised */
	MP_CSRC_OWNER,    /* the Python heap: the tensor that owns the block (mp_owners.h) */
	MP_CSRC_BLOCK,    /* a 'category' key on the block */
	MP_CSRC_TRACE,    /* a 'category' key on the block's latest alloc trace entry */
	MP_CSRC_RULE,     /* a user or default rule */
	MP_CSRC_UNKNOWN,  /* nothing said */
};

/* A block's category and why. */
typedef struct mp_category_why {
	enum mp_category category;
	enum mp_category_source source;
	const mp_category_rule *rule; /* RULE: the rule that matched */
	bool user_rule;               /* RULE: from the user's file */
	size_t trace;                 /* TRACE: index in snap->trace */
	int64_t frame;                /* RULE: the frame the last frame condition met (-1: none) */
	const mp_owned *owner;        /* OWNER: the tensor the block went to */
} mp_category_why;

/* ---- the report */

/* The formats of the table and of --sites. */
enum mp_category_format { MP_CFMT_PLAIN, MP_CFMT_RST, MP_CFMT_JSON };

/* Read "plain", "rst" or "json". False for anything else. */
bool mp_category_format_parse(const char *text, enum mp_category_format *out);

/* What --sites groups active blocks by: the innermost user frame's function, file and line
   (a call site), its function and file, its file, or its file's Python module. */
enum mp_site_key { MP_SITES_BY_SITE, MP_SITES_BY_FUNCTION, MP_SITES_BY_FILE, MP_SITES_BY_MODULE };

/* Read "site", "function", "file" or "module". False for anything else. */
bool mp_category_by_parse(const char *text, enum mp_site_key *out);

/* The dotted Python module of source file FILE (LEN bytes), as --by module names it
   (CATEGORY-RULES.md): the path after the last site-packages/ or dist-packages/, else its
   last component, without ".py", '/' as '.', and a package's "__init__" dropped. */
void mp_category_module_name(const char *file, size_t len, mp_out *out);

/* What a categories report does. */
typedef struct mp_category_opts {
	enum mp_category_scheme scheme;
	const mp_category_ruleset *rules; /* user rules, tried before the defaults; NULL: none */
	/* The owners of the snapshot's blocks from the target's Python heap (NULL: none): a block a parameter,
	   buffer, gradient, optimizer state or activation owns gets that category before anything else. */
	const mp_owners *owners;
	enum mp_units units;              /* plain and rst tables */
	enum mp_category_format format;   /* the table and --sites */
	int64_t device;  /* -1: every device */
	bool blocks;     /* JSON: also list every active block with its category and source */
	/* At most one of these modes replaces the table. */
	bool explain;    /* explain the block at EXPLAIN_ADDR */
	uint64_t explain_addr;
	size_t sites;    /* the top SITES call sites of the active bytes (0: not this mode) */
	enum mp_site_key by;
	bool segsum;     /* _memory_viz segsum's page map with each page's category letter */
} mp_category_opts;

/* Defaults: profiler scheme, no user rules, auto units, plain, every device. */
void mp_category_opts_init(mp_category_opts *o);

/* --sites without a count. */
#define MP_CATEGORY_SITES_DEFAULT 10

/* The options of `categories` as a user typed them (NULL, false: not given). Both front ends
   (the CLI and the debugger session) read their words into this, so the values and the modes
   are checked in one place. */
typedef struct mp_category_args {
	const char *scheme, *format, *explain, *by;
	bool sites;              /* --sites */
	const char *sites_count; /* --sites N: N (NULL: MP_CATEGORY_SITES_DEFAULT) */
	bool segsum;
} mp_category_args;

/* Whether WORD, after --sites, is its count (all digits) rather than the next argument. */
bool mp_category_is_count(const char *word);

/* Check A and set the fields of *O it names (the others stay). MP_E_USAGE with a one-line
   DIAG ("categories: --format must be plain, rst or json, not 'xml'") for a bad value, for
   more than one of --explain, --sites and --segsum, or an option the chosen mode has no use for. */
mp_err mp_category_args_read(const mp_category_args *a, mp_category_opts *o, mp_diag *diag) MP_WUR;

/* The categories report of SNAP: per device, bytes and block counts per
   category (active blocks; inactive ones are counted as free), plain, rst
   or JSON; or, with EXPLAIN, which block holds the address, its category and
   where it came from; or, with SITES, the top call sites of the active bytes
   per device and their categories; or, with SEGSUM, segsum's page map in
   category letters. MP_E_NOTFOUND with DIAG when no block holds
   EXPLAIN_ADDR or the device has no segments; MP_E_USAGE for more than one mode. */
mp_err mp_analysis_categories(const mp_snapshot *snap, const mp_category_opts *opts, mp_out *out,
			      mp_diag *diag) MP_WUR;

#endif
