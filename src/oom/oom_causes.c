/* oom_causes.c - why the reserved memory did not serve the request: every byte of the device's segments that
   is not live goes to exactly one cause, by the first of these that applies: it lies in a private pool, it
   waits for an event, it is in the other pool, it is cached for another stream, it lies in a large segment
   that small live blocks keep (oversize_split), else it is a free block of the request's own stream and pool
   too small for it (fragmentation). device_full and outside weigh the device itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom_int.h"
#include "mp_array.h"

static const char *const cause_names[MP_OOM__NCAUSES] = {
	"device_full", "outside", "private_pool", "pending_free", "other_pool", "other_stream", "oversize_split",
	"fragmentation",
};

const char *mp_oom_cause_name(enum mp_oom_cause_id id)
{
	return (unsigned)id < MP_OOM__NCAUSES ? cause_names[id] : "?";
}

typedef struct bucket {
	int64_t bytes, largest, blocks;
	int64_t stream_bytes[4], stream_largest[4], streams[4]; /* other_stream: the first streams seen */
	int nstreams;
} bucket;

static void add_stream(bucket *k, int64_t stream, int64_t size)
{
	int i = 0;

	for (; i < k->nstreams && k->streams[i] != stream; i++)
		;
	if (i == k->nstreams) {
		if (k->nstreams == 4)
			return;
		k->streams[k->nstreams++] = stream;
	}
	k->stream_bytes[i] += size;
	if (size > k->stream_largest[i])
		k->stream_largest[i] = size;
}

static enum mp_oom_cause_id bucket_of(const oom_view *v, const oom_seg *g, const mp_block *b, const mp_oom *o,
				      int64_t oversize_m)
{
	if (g->private_pool)
		return MP_OOM_PRIVATE_POOL;
	if (oom_block_pending(v, b))
		return MP_OOM_PENDING_FREE;
	if (g->small != o->small_pool)
		return MP_OOM_OTHER_POOL;
	if (g->stream != o->req.stream)
		return MP_OOM_OTHER_STREAM;
	if (oversize_m > 0 && oom_oversize_qualifies(v, g, o, oversize_m))
		return MP_OOM_OVERSIZE_SPLIT;
	return MP_OOM_FRAGMENTATION;
}

static mp_oom_cause *add_cause(mp_oom *o, enum mp_oom_cause_id id, int64_t bytes, int64_t largest)
{
	mp_oom_cause *c = &o->causes[o->ncauses++];
	int64_t free_now = o->room > 0 ? o->room : 0;

	*c = (mp_oom_cause){ .id = id, .bytes = bytes, .largest = largest,
			     .sufficient = bytes + free_now >= o->alloc_size };
	return c;
}

static const char *plural(int64_t n)
{
	return n == 1 ? "" : "s";
}

static void evidence_of(const bucket *k, enum mp_oom_cause_id id, const mp_oom *o, const oom_oversize *ov,
			char *e, size_t n)
{
	char a[32], b[32], c[32];
	const char *pool = o->small_pool ? "small" : "large";

	switch (id) {
	case MP_OOM_PRIVATE_POOL:
		snprintf(e, n, "%lld free block%s inside private pools (CUDA graphs, torch.cuda.MemPool), the largest %s; "
			 "only requests made into those pools can use them, and the retry releases a pool only once it "
			 "is no longer used", (long long)k->blocks, plural(k->blocks), oom_size_text(a, sizeof a, k->largest));
		break;
	case MP_OOM_PENDING_FREE:
		snprintf(e, n, "%lld freed block%s still in use by other streams' work (record_stream): they return "
			 "only when those events complete", (long long)k->blocks, plural(k->blocks));
		break;
	case MP_OOM_OTHER_POOL:
		snprintf(e, n, "%lld free block%s in the %s pool, the largest %s; a %s request is served only by the %s pool",
			 (long long)k->blocks, plural(k->blocks), o->small_pool ? "large" : "small", oom_size_text(a, sizeof a, k->largest),
			 o->small_pool ? "small" : "large", pool);
		break;
	case MP_OOM_OTHER_STREAM: {
		size_t len = (size_t)snprintf(e, n, "cached for other streams, which the request (stream %lld) cannot use:",
					      (long long)o->req.stream);

		for (int i = 0; i < k->nstreams && len < n; i++)
			len += (size_t)snprintf(e + len, n - len, "%s stream %lld %s free, largest %s%s", i ? ";" : "",
						(long long)k->streams[i], oom_size_text(a, sizeof a, k->stream_bytes[i]),
						oom_size_text(b, sizeof b, k->stream_largest[i]),
						k->stream_largest[i] >= o->rounded ? " (would fit)" : "");
		break;
	}
	case MP_OOM_OVERSIZE_SPLIT:
		snprintf(e, n, "%lld large segment%s of %s or more keep%s %s free behind live blocks smaller than %s; "
			 "while those live, the retry cannot release them", (long long)ov->nsegs, ov->nsegs == 1 ? "" : "s",
			 oom_size_text(a, sizeof a, ov->m), ov->nsegs == 1 ? "s" : "", oom_size_text(b, sizeof b, k->bytes),
			 oom_size_text(c, sizeof c, ov->m));
		break;
	default:
		snprintf(e, n, "%lld free block%s on stream %lld in the %s pool, the largest %s, %s smaller than the %s asked",
			 (long long)k->blocks, plural(k->blocks), (long long)o->req.stream, pool, oom_size_text(a, sizeof a, k->largest),
			 k->blocks == 1 ? "it" : "each", oom_size_text(b, sizeof b, o->rounded));
	}
}

static int by_weight(const void *pa, const void *pb)
{
	const mp_oom_cause *a = pa, *b = pb;

	/* device_full comes first: no placement of the memory could have served the request */
	if ((a->id == MP_OOM_DEVICE_FULL) != (b->id == MP_OOM_DEVICE_FULL))
		return a->id == MP_OOM_DEVICE_FULL ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return (int)a->id - (int)b->id;
}

static void device_causes(mp_oom *o)
{
	char a[32], b[32], c[32], d[32];
	const mp_oom_message *m = o->req.has_message ? &o->req.message : NULL;
	int64_t limit = o->usable;

	if (limit < 0 && m != NULL && m->capacity > 0)
		limit = m->capacity;
	/* the live tensors' own sizes: blocks a setting made larger (an unsplit oversize block) are no shortfall */
	if (limit >= 0 && o->live_needed + o->rounded > limit) {
		mp_oom_cause *k = add_cause(o, MP_OOM_DEVICE_FULL, o->live_needed + o->rounded - limit, 0);

		k->sufficient = false; /* a shortfall, not memory the request could have used */
		snprintf(k->evidence, sizeof k->evidence, "the live tensors %s + the request %s > %s %s: no placement of "
			 "the memory could serve it", oom_size_text(a, sizeof a, o->live_needed),
			 oom_size_text(b, sizeof b, o->rounded), o->usable >= 0 ? "reserved + free" : "the capacity",
			 oom_size_text(c, sizeof c, limit));
	}
	if (m != NULL && m->capacity > 0 && o->req.device_free >= 0) {
		int64_t outside = m->capacity - o->reserved - o->req.device_free;

		/* the message's sizes have two decimals: ignore what that rounding can explain */
		if (outside > m->capacity / 200 && outside > OOM_SMALL_BUFFER) {
			mp_oom_cause *k = add_cause(o, MP_OOM_OUTSIDE, outside, 0);

			k->sufficient = false;
			snprintf(k->evidence, sizeof k->evidence, "capacity %s − reserved %s − free %s: held by the CUDA "
				 "context, other libraries' allocations or other processes", oom_size_text(a, sizeof a, m->capacity),
				 oom_size_text(b, sizeof b, o->reserved), oom_size_text(d, sizeof d, o->req.device_free));
		}
	}
}

void oom_causes(const oom_view *v, mp_oom *o)
{
	bucket k[MP_OOM__NCAUSES] = { 0 };
	oom_oversize ov = oom_oversize_best(v, o, true);

	device_causes(o);
	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];

		for (size_t j = 0; j < g->s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, g->s)[j];

			if (oom_block_live(v, b))
				continue;
			enum mp_oom_cause_id id = bucket_of(v, g, b, o, ov.m);

			k[id].bytes += b->size;
			k[id].blocks++;
			if (b->size > k[id].largest && !oom_block_pending(v, b))
				k[id].largest = b->size;
			if (id == MP_OOM_OTHER_STREAM)
				add_stream(&k[id], g->stream, b->size);
		}
	}
	for (int id = MP_OOM_PRIVATE_POOL; id < MP_OOM__NCAUSES; id++) {
		if (k[id].bytes == 0)
			continue;
		mp_oom_cause *c = add_cause(o, (enum mp_oom_cause_id)id, k[id].bytes, k[id].largest);

		evidence_of(&k[id], (enum mp_oom_cause_id)id, o, &ov, c->evidence, sizeof c->evidence);
	}
	mp_sort(o->causes, (size_t)o->ncauses, sizeof o->causes[0], by_weight);
}
