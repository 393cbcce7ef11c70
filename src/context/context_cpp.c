/* context_cpp.c - a C++ return address of a traceback as a frame: the symbolizer's name, file and
   line, once per address. The splice needs to know two kinds of frames by name, as PyTorch does. */
#include <stdlib.h>
#include <string.h>

#include "context_int.h"
#include "mp_array.h"

void ctx_cpp_init(struct ctx_cpp *cpp, mp_target *t)
{
	memset(cpp, 0, sizeof *cpp);
	cpp->t = t;
}

void ctx_cpp_free(struct ctx_cpp *cpp)
{
	mp_symbolizer_free(cpp->sym);
	free(cpp->ips);
	mp_table_free(&cpp->ip_index);
	memset(cpp, 0, sizeof *cpp);
}

static enum ctx_cpp_kind kind_of(const char *name)
{
	static const char jit_run[] = "torch::jit::InterpreterStateImpl::run";

	if (strstr(name, "PyEval_EvalFrame") != NULL)
		return CTX_CPP_EVAL_FRAME;
	if (strncmp(name, jit_run, sizeof jit_run - 1) == 0)
		return CTX_CPP_JIT_RUN;
	return CTX_CPP_PLAIN;
}

mp_err ctx_cpp_frame(struct ctx_cpp *cpp, struct ctx_intern *in, uint64_t ip, uint32_t *frame, enum ctx_cpp_kind *kind)
{
	mp_table_probe p;
	mp_symbol_at at;
	uint32_t id;
	mp_err err;

	for (id = mp_table_find(&cpp->ip_index, mp_table_hash_u64(ip), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&cpp->ip_index, &p))
		if (cpp->ips[id].ip == ip) {
			*frame = cpp->ips[id].frame;
			*kind = cpp->ips[id].kind;
			return MP_OK;
		}
	if (cpp->sym == NULL && (err = mp_symbolizer_new(cpp->t, &cpp->sym, NULL)) != MP_OK)
		return err;
	mp_symbolize(cpp->sym, ip, &at);
	if (!at.has_symbol)
		cpp->unnamed++;
	else if (at.nearest)
		cpp->nearest++;
	if ((err = ctx_intern_frame(in, at.filename, at.name, at.line, frame)) != MP_OK ||
	    (err = mp_array_grow((void **)&cpp->ips, &cpp->ips_cap, cpp->nips + 1, sizeof *cpp->ips)) != MP_OK ||
	    (err = mp_table_add(&cpp->ip_index, &p, (uint32_t)cpp->nips)) != MP_OK)
		return err;
	*kind = kind_of(at.name);
	cpp->ips[cpp->nips++] = (struct ctx_ip){ ip, *frame, (uint8_t)*kind };
	return MP_OK;
}
