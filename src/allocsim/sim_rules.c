/* sim_rules.c - what changed in the caching allocator's decisions between PyTorch releases, as flags the model
   consults. Each flag is a fact of the release's CUDACachingAllocator.cpp (read in its source where there is
   one, in its wheel's libc10_cuda.so otherwise: the PR, the release and the evidence of each are in
   src/allocsim/RELEASES.md), checked by tests/allocsim/ against that release's own libc10_cuda.so. */
#include "sim_int.h"

bool mp_sim_release_known(mp_sim_release r)
{
	return r.major == 2 && r.minor >= 0 && r.minor <= 14;
}

static bool at_least(mp_sim_release r, int major, int minor)
{
	return r.major > major || (r.major == major && r.minor >= minor);
}

void sim_rules_for(mp_sim_release r, sim_rules *out)
{
	*out = (sim_rules){
		.expandable_segments = at_least(r, 2, 1),
		.expandable_in_private = at_least(r, 2, 5),
		.release_skips_expandable = at_least(r, 2, 5),
		.division_one_keeps = !at_least(r, 2, 4),
		.pool_scope_no_capture = at_least(r, 2, 13),
		.fraction_one_uncapped = at_least(r, 2, 10),
		.fraction_rounds = at_least(r, 2, 13),
		.order = at_least(r, 2, 13) ? SIM_ORDER_SEGMENT_ADDR : at_least(r, 2, 12) ? SIM_ORDER_BLOCK : SIM_ORDER_ADDR,
	};
}
