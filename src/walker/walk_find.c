/* walk_find.c - from libc10_cuda's exported pointer to the native allocator object and its
   per-device allocators, confirming the object's type by its RTTI name first. */
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"

/* The RTTI name of the object at OBJ: vptr at +0, typeinfo at vptr-8, its name at typeinfo+8. */
static mp_err rtti_name(struct walk *wk, uint64_t obj, char *name, size_t size)
{
	uint64_t vptr, ti, p;
	mp_err err;

	if ((err = wk_read_u64(wk, obj, &vptr)) != MP_OK || vptr < 8 ||
	    (err = wk_read_u64(wk, vptr - 8, &ti)) != MP_OK || (err = wk_read_u64(wk, ti + 8, &p)) != MP_OK)
		return err != MP_OK ? err : MP_E_CORRUPT;
	memset(name, 0, size);
	/* Read byte by byte up to the NUL: the name may end right at the end of a mapping. */
	for (size_t i = 0; i + 1 < size; i++) {
		if ((err = wk_read(wk, p + i, name + i, 1)) != MP_OK)
			return err;
		if (name[i] == '\0')
			return MP_OK;
	}
	return MP_E_LIMIT;
}

mp_err wk_find_allocator(struct walk *wk, const mp_c10 *c10, uint64_t *obj)
{
	char name[256];
	mp_err err;

	if (c10->allocator_ptr_addr == 0)
		return mp_fail(wk->diag, MP_E_NOTFOUND, "%s exports no CUDACachingAllocator::allocator",
			       c10->path);
	if ((err = wk_read_u64(wk, c10->allocator_ptr_addr, obj)) != MP_OK)
		return mp_fail(wk->diag, err, "cannot read the allocator pointer at 0x%llx (%s)",
			       (unsigned long long)c10->allocator_ptr_addr, c10->allocator_how);
	if (*obj == 0)
		return mp_fail(wk->diag, MP_E_NOTFOUND,
			       "CUDA's caching allocator is not initialised in this process (allocator pointer is NULL)");
	if ((err = rtti_name(wk, *obj, name, sizeof name)) != MP_OK)
		return mp_fail(wk->diag, MP_E_CORRUPT, "the allocator object at 0x%llx has no readable RTTI name",
			       (unsigned long long)*obj);
	if (strcmp(name, MP_NATIVE_ALLOCATOR_RTTI) != 0)
		return mp_fail(wk->diag, MP_E_NOTFOUND,
			       "the CUDA allocator backend is %s, not the native caching allocator: nothing to walk",
			       name);
	return MP_OK;
}

mp_err wk_device_allocators(struct walk *wk, uint64_t obj, uint64_t **das, size_t *n)
{
	uint64_t begin, *v;
	mp_err err;

	err = wk_vector(wk, obj + (uint64_t)OFF(wk, NCA_DEVICE_ALLOCATOR), 8, WK_MAX_DEVICES, &begin, n);
	if (err != MP_OK)
		return mp_fail(wk->diag, err, "device_allocator vector of the allocator at 0x%llx is %s",
			       (unsigned long long)obj,
			       err == MP_E_CORRUPT || err == MP_E_LIMIT ? "not sane" : "unreadable");
	if (*n == 0)
		return mp_fail(wk->diag, MP_E_NOTFOUND, "the caching allocator has no devices (not initialised)");
	v = calloc(*n, sizeof *v);
	if (v == NULL)
		return MP_E_NOMEM;
	if ((err = wk_read(wk, begin, v, *n * sizeof *v)) != MP_OK) {
		free(v);
		return mp_fail(wk->diag, err, "cannot read the device_allocator elements at 0x%llx",
			       (unsigned long long)begin);
	}
	for (size_t i = 0; i < *n; i++)
		if (v[i] == 0 || v[i] % 8 != 0) {
			free(v);
			return mp_fail(wk->diag, MP_E_CORRUPT, "device allocator %zu is a bad pointer", i);
		}
	*das = v;
	return MP_OK;
}
