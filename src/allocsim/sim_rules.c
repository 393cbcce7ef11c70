/* sim_rules.c - what changed in the caching allocator's decisions between PyTorch releases, as flags the model
   consults. Each flag is a fact of the release's CUDACachingAllocator.cpp, checked by tests/allocsim/ against
   that release's own libc10_cuda.so. */
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
		.max_non_split_rounding = at_least(r, 2, 5),
	};
}
