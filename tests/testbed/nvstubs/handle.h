/* Shared by the hand-written stubs: opaque handles for the Create functions of NVIDIA's libraries. */
#ifndef NVSTUBS_HANDLE_H
#define NVSTUBS_HANDLE_H

#include <stdlib.h>

/* A fresh, distinct, non-null handle. Libraries treat handles as opaque, so zeroed memory will do; it is
   never freed (the Destroy stubs do nothing), a few bytes per handle. */
static inline void *nvstub_handle(void)
{
	return calloc(1, 64);
}

/* Stores a fresh handle in *out: 0 (success), or a non-zero status (an invalid value / allocation failure in
   every NVIDIA library's numbering has some non-zero code; callers only test for success). */
static inline long nvstub_create(void **out)
{
	if (!out)
		return 3;
	*out = nvstub_handle();
	return *out ? 0 : 3;
}
#define NVSTUB_CREATOR_BODY(out) nvstub_create(out)

/* name(T **out, ...): stores a fresh handle, returns success. Further arguments are not read. */
#define NVSTUB_CREATOR(name)			\
	long name(void **out);			\
	long name(void **out)			\
	{					\
		return nvstub_create(out);	\
	}

#endif
