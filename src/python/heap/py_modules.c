/* py_modules.c - a module's dict by the module's name, from the main interpreter's sys.modules (the dict the
   import system keeps in the interpreter state: interp->modules before 3.12, interp->imports.modules on). */
#include "py_heap_int.h"

mp_err mp_py_module_dict(mp_py_heap *h, const char *name, uint64_t *dict, mp_diag *diag)
{
	const mp_py_type *ty;
	uint64_t modules, module, type;
	bool is_module = false;
	mp_err err;

	*dict = 0;
	if (h->l.interp_modules == 0)
		return mp_fail(diag, MP_E_UNSUPPORTED, "where CPython 3.%d keeps sys.modules is not known", h->l.minor);
	if ((err = mp_target_read_u64(h->t, h->rt->main_interp + h->l.interp_modules, &modules, diag)) != MP_OK)
		return err;
	if (modules == 0)
		return mp_fail(diag, MP_E_NOTFOUND, "the main interpreter has no sys.modules (yet, or any more)");
	if ((err = mp_py_dict_get_str(h, modules, name, &module, diag)) != MP_OK)
		return err;
	/* a module, or an instance of a module subclass (sys.modules may hold anything) */
	if ((err = mp_py_object_type(h, module, &type, diag)) != MP_OK)
		return err;
	if ((ty = mp_py_heap_type(h, type, diag)) != NULL)
		for (size_t i = 0; i < ty->nmro && !is_module; i++)
			is_module = ty->mro[i] == h->syms.module && h->syms.module != 0;
	if (!is_module)
		return mp_fail(diag, MP_E_TYPE, "sys.modules['%s'] at 0x%llx is not a module", name,
			       (unsigned long long)module);
	return mp_target_read_u64(h->t, module + h->l.module_dict, dict, diag);
}
