/* torch_choose.c - which layout a target's tensors have: the one under which the most of a sample read and
   pass every check (the TensorImpl points back at its Python object, the storage is on a device, the shape
   multiplies out to numel, the strides stay in the storage). Releases are not told apart by name here: a
   wheel's libraries say nothing a stripped reader can trust that the objects themselves do not say better. */
#include <stdio.h>

#include "mp_torch.h"

const mp_torch_layout *mp_torch_choose(mp_target *t, const uint64_t *pyobjs, size_t n, int cxx11_abi,
				       mp_diag *diag)
{
	const mp_torch_layout *best = NULL;
	size_t best_ok = 0;
	char why[384] = "";
	size_t used = 0;

	for (size_t i = 0; i < mp_torch_nlayouts; i++) {
		const mp_torch_layout *l = &mp_torch_layouts[i];
		mp_diag first = { .msg = "" };
		size_t ok = 0;

		if (l->cxx11_abi >= 0 && cxx11_abi >= 0 && l->cxx11_abi != cxx11_abi)
			continue;
		for (size_t j = 0; j < n; j++) {
			mp_diag d = { .msg = "" };
			mp_tensor tensor;
			mp_err err = mp_torch_read_tensor(t, l, pyobjs[j], &tensor, &d);

			/* a tensor without storage is no evidence either way */
			if (err == MP_OK) {
				ok++;
				mp_tensor_release(&tensor);
			}
			else if (err != MP_E_UNSUPPORTED && first.msg[0] == '\0')
				snprintf(first.msg, sizeof first.msg, "%s", d.msg);
		}
		if (ok > best_ok) {
			best = l;
			best_ok = ok;
		}
		if (ok < n && used < sizeof why)
			used += (size_t)snprintf(why + used, sizeof why - used, "%s%s: %zu of %zu (%s)", used ? "; " : "",
						 l->name, ok, n, first.msg[0] ? first.msg : "no storage");
	}
	if (best != NULL && 2 * best_ok >= n)
		return best;
	mp_fail(diag, MP_E_UNSUPPORTED, "no tensor layout memprof knows reads this process's tensors: %s", why);
	return NULL;
}
