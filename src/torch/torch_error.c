/* torch_error.c - the message of a c10::Error in a target's memory. */
#include <stdlib.h>
#include <string.h>

#include "mp_torch_error.h"

mp_err mp_torch_error_message(mp_target *t, uint64_t addr, char **out, mp_diag *diag)
{
	uint64_t data;
	size_t len;
	mp_err err;

	*out = NULL;
	if ((err = mp_target_read_u64(t, addr + 8, &data, diag)) != MP_OK)
		return err;
	if (data == 0)
		return mp_fail(diag, MP_E_CORRUPT, "c10::Error at 0x%llx has no message", (unsigned long long)addr);
	return mp_target_read_cstr(t, data, MP_TORCH_ERROR_MAX_MSG, out, &len, diag);
}

bool mp_torch_throws_oom(mp_torch_read_fn read, void *ctx, uint64_t type_info)
{
	static const char oom_type[] = "N3c1016OutOfMemoryErrorE";
	char name[sizeof oom_type + 1];
	uint64_t at;

	if (!read(ctx, type_info + 8, &at, sizeof at) || !read(ctx, at, name, sizeof name))
		return false;
	/* a leading '*' marks names compared by address; the name itself follows */
	return memcmp(name[0] == '*' ? name + 1 : name, oom_type, sizeof oom_type) == 0;
}
