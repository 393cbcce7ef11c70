/* oom_activations.c - what can be done about activations (what the autograd graph saves for backward, and
   results of the forward no variable holds): no variable to delete, but a smaller batch (they grow with it),
   activation checkpointing of the repeated blocks they lie in, or 16-bit autocast. Each changes the job's own
   requests, which neither the allocator model nor an estimate on the live blocks was proven to weigh (the
   campaign, tests/oom/campaign, measured the estimates): they are listed to try (to_try) with their figures and
   claimed neither way. */
#include <stdio.h>
#include <string.h>

#include "oom_int.h"

/* Repeated blocks (items of one ModuleList) told apart. */
enum { MAX_BLOCKS = 256 };

struct acts {
	int64_t bytes, f32;   /* the activations' bytes, and of them float32 */
	int64_t bytes16;      /* and float16 or bfloat16 */
	int64_t live_other;   /* the other live bytes */
	char list[200];       /* the ModuleList whose items hold most of them ("model.transformer.h") */
	size_t list_len;
	struct item { int64_t index, bytes; } items[MAX_BLOCKS];
	size_t nitems;
};

/* The ModuleList item module M lies in: *LIST_LEN the list's path length, *INDEX the item's number; false
   when no component of M is a number. */
static bool item_of(const char *m, size_t *list_len, int64_t *index)
{
	for (const char *p = m; (p = strchr(p, '.')) != NULL; p++) {
		size_t n = strspn(p + 1, "0123456789");

		if (n > 0 && n < 10 && (p[1 + n] == '\0' || p[1 + n] == '.')) {
			*list_len = (size_t)(p - m);
			*index = 0;
			for (size_t i = 0; i < n; i++)
				*index = *index * 10 + (p[1 + i] - '0');
			return true;
		}
	}
	return false;
}

/* The items of the ModuleList the first activation with a module lies in (the others' lists: not counted). */
static void add_item(struct acts *a, const oom_member *m)
{
	size_t len, i;
	int64_t index;

	if (m->module == NULL || !item_of(m->module, &len, &index))
		return;
	if (a->list_len == 0 && len < sizeof a->list) {
		memcpy(a->list, m->module, len);
		a->list[len] = '\0';
		a->list_len = len;
	}
	if (len != a->list_len || strncmp(m->module, a->list, len) != 0)
		return;
	for (i = 0; i < a->nitems && a->items[i].index != index; i++)
		;
	if (i == a->nitems && a->nitems < MAX_BLOCKS)
		a->items[a->nitems++] = (struct item){ index, 0 };
	if (i < a->nitems)
		a->items[i].bytes += m->b->size;
}

static void count(const oom_groups *gr, const mp_oom *o, struct acts *a)
{
	*a = (struct acts){ 0 };
	for (size_t i = 0; i < gr->n; i++) {
		const oom_member *m = &gr->m[i];

		if (m->what != MP_OOM_H_ACTIVATIONS)
			continue;
		a->bytes += m->b->size;
		a->f32 += m->f32 ? m->b->size : 0;
		a->bytes16 += m->f16 ? m->b->size : 0;
		add_item(a, m);
	}
	a->live_other = o->live - a->bytes;
}

/* The remedy just added (if ADD could) about HOLDER, of KIND. */
static void about(mp_oom *o, int before, enum mp_oom_remedy_kind kind, const char *holder)
{
	if (o->nremedies > before) {
		o->remedies[before].kind = kind;
		snprintf(o->remedies[before].holder, sizeof o->remedies[before].holder, "%.*s",
			 (int)sizeof o->remedies[before].holder - 1, holder);
	}
}

/* Listed to try, not claimed: inputs, outputs and losses the job's variables hold grow with the batch too, and
   what the step allocates besides the live blocks is not in the state; the campaign found "at P% it fits"
   right 60% of the time. */
static void smaller_batch(const struct acts *a, mp_oom *o)
{
	char x[32], y[32], z[32], w[32];
	int before = o->nremedies;
	mp_oom_remedy *r;

	r = oom_remedy_add(o, MP_OOM_R_FREE, false, "a smaller batch", "the activations (%s) grow with the batch; the "
	    "rest of the live memory is %s, the request %s, and the process can have %s",
	    oom_size_text(x, sizeof x, a->bytes), oom_size_text(y, sizeof y, a->live_other),
	    oom_size_text(z, sizeof z, o->alloc_size), oom_size_text(w, sizeof w, o->usable));
	if (r != NULL)
		r->untested = true;
	about(o, before, MP_OOM_K_SMALLER_BATCH, OOM_ACTIVATIONS);
}

/* Listed to try, not claimed: checkpointing recomputes each block in backward (new requests) and the
   campaign found the estimate "the largest block's activations at a time" wrong on generated jobs. */
static void checkpointing(const struct acts *a, mp_oom *o)
{
	char x[32], y[32], action[400], holder[240];
	int64_t sum = 0, largest = 0, lo = INT64_MAX, hi = 0;
	const char *name = strrchr(a->list, '.') != NULL ? strrchr(a->list, '.') + 1 : a->list;
	int before = o->nremedies;
	mp_oom_remedy *r;

	if (a->nitems < 2)
		return; /* one block recomputes all it saved: nothing saved at its backward */
	for (size_t i = 0; i < a->nitems; i++) {
		sum += a->items[i].bytes;
		largest = a->items[i].bytes > largest ? a->items[i].bytes : largest;
		lo = a->items[i].index < lo ? a->items[i].index : lo;
		hi = a->items[i].index > hi ? a->items[i].index : hi;
	}
	snprintf(action, sizeof action, "activation checkpointing: torch.utils.checkpoint around each block of %.100s "
		 "(%.30s.%lld to %.30s.%lld)", a->list, name, (long long)lo, name, (long long)hi);
	r = oom_remedy_add(o, MP_OOM_R_FREE, false, action, "the blocks hold %s of activations saved for backward (the "
	    "largest %s); checkpointed, each keeps its input and recomputes the rest in its backward",
	    oom_size_text(x, sizeof x, sum), oom_size_text(y, sizeof y, largest));
	if (r != NULL)
		r->untested = true;
	snprintf(holder, sizeof holder, "%s saved for backward in %.180s", OOM_ACTIVATIONS, a->list);
	about(o, before, MP_OOM_K_CHECKPOINT, holder);
}

/* Listed to try when the forward is float32, not claimed: autocast adds 16-bit copies of the weights and keeps
   some ops in float32, and the campaign found the estimate of what it saves wrong both ways. */
static void lower_precision(const struct acts *a, mp_oom *o)
{
	char x[32], y[32];
	int before = o->nremedies;
	mp_oom_remedy *r;

	/* a forward without autocast makes no 16-bit activations: a tenth of them says autocast is on */
	if (a->bytes16 * 10 >= a->bytes || a->f32 == 0)
		return;
	r = oom_remedy_add(o, MP_OOM_R_FREE, false, "autocast the forward to 16 bits: torch.autocast(\"cuda\", "
	    "dtype=torch.bfloat16)", "%s of the activations (%s) are float32", oom_size_text(x, sizeof x, a->f32),
	    oom_size_text(y, sizeof y, a->bytes));
	if (r != NULL)
		r->untested = true;
	about(o, before, MP_OOM_K_LOWER_PRECISION, OOM_ACTIVATIONS);
}

void oom_activation_remedies(mp_oom *o, const oom_groups *gr)
{
	struct acts a;

	count(gr, o, &a);
	if (a.bytes == 0 || o->usable < 0)
		return; /* no activations, or no figure of what the process can have */
	smaller_batch(&a, o);
	checkpointing(&a, o);
	lower_precision(&a, o);
}
