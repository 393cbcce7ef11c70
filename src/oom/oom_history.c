/* oom_history.c - torch.cuda.empty_cache() without a replay of the job's requests. At the OOM itself it releases
   nothing the OOM's retry did not; an earlier call is claimed only on a replay (oom_replayed.c): judged from the
   trace's windows alone (when a segment split now was last free as a whole) it was right on 7 of 24 OOMs of the
   campaign's baseline, the layout after the call being the history's. With a skipped retry (2.6 inside a
   MemPool), empty_cache() before the request does what the retry would have done. */
#include <stdio.h>

#include "oom_int.h"

void oom_empty_cache_remedy(const oom_view *v, mp_oom *o)
{
	char a[32];

	if (o->retry_skipped) {
		oom_remedy_add(o, MP_OOM_R_EMPTY_CACHE, true, "torch.cuda.empty_cache() before the request, outside the "
			       "MemPool or capture", "it does what the skipped retry would have done: it waits for the "
			       "pending frees' events and releases the %s of segments left free as a whole, and the "
			       "allocation fits", oom_size_text(a, sizeof a, o->released_by_retry));
		return;
	}
	oom_remedy_add(o, MP_OOM_R_EMPTY_CACHE, false, "torch.cuda.empty_cache() at the OOM",
			   "at the OOM it releases what the OOM's retry released already; %s",
			   v->snap->ntrace == 0 ? "without a trace (memory history) an earlier call cannot be judged"
						: "an earlier call is judged only on a replay of the job's requests");
}
