/* context_reader.c - a GatheredContext pointer to frames: check that it is a torch::CapturedTraceback
   (its vptr is the exported vtable's address point), read its three vectors with bounds, decode the
   Python and C++ frames and splice them as torch::symbolize() does: each Python frame goes in front of
   the next C++ frame of a CPython evaluation loop, the ones left over at the end (allocator-facts §6.1).
   Each pointer is decoded once; sequences are interned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_int.h"
#include "mp_array.h"
#include "mp_elf.h"

/* torch::CapturedTraceback (allocator-facts §3.9): vptr, vector<PyFrame> frames_, vector<void*>
   cpp_frames_, vector<jit::StackEntry> script_frames_, Python *python_. */
enum {
	CT_FRAMES = 8,
	CT_CPP_FRAMES = 32,
	CT_SCRIPT_FRAMES = 56,
	CT_PYTHON = 80,
	CT_SIZE = 88,
	PYFRAME_SIZE = 16, /* {PyCodeObject *code; int lasti;} */
	SCRIPT_ENTRY_MIN = 8,
};

static const char vtable_symbol[] = "_ZTVN5torch17CapturedTracebackE";

struct mp_ctx_reader {
	mp_target *t;
	uint64_t vptr; /* a CapturedTraceback's vptr; 0: libtorch_cpu not found */
	char why_no_vptr[200];
	struct ctx_intern in;
	struct ctx_python py;
	struct ctx_cpp cpp;
	struct ctx_ptr {
		uint64_t ptr;
		uint32_t seq;
	} *ptrs;
	size_t nptrs, ptrs_cap;
	mp_table ptr_index;
	unsigned char *buf; /* a vector's bytes */
	size_t buf_cap;
	uint32_t *py_ids, *ids; /* scratch: the Python frames, the spliced sequence */
	size_t py_ids_cap, ids_cap;
	mp_ctx_stats stats;
	struct ctx_trouble damaged, script;
};

/* The address point of CapturedTraceback's vtable in libtorch_cpu (the vptr of every object) in *VPTR,
   or 0 and why not in WHY. */
static void find_vptr(mp_target *t, uint64_t *vptr, char *why, size_t why_size)
{
	const mp_mapping *maps;
	size_t n = mp_target_mappings(t, &maps);

	*vptr = 0;
	snprintf(why, why_size, "libtorch_cpu.so is not among the target's files");
	for (size_t i = 0; i < n; i++) {
		const char *base = maps[i].path != NULL ? strrchr(maps[i].path, '/') : NULL;
		mp_elf_sym sym;
		uint64_t bias;
		mp_elf *e;

		if (base == NULL || strncmp(base + 1, "libtorch_cpu.so", 15) != 0 || maps[i].file_offset != 0)
			continue;
		if (maps[i].local_path == NULL) {
			snprintf(why, why_size, "%s is not found here", maps[i].path);
			continue;
		}
		if (mp_elf_open(maps[i].local_path, &e, NULL) != MP_OK)
			continue;
		if (mp_elf_symbol(e, vtable_symbol, MP_ELF_DYNSYM | MP_ELF_SYMTAB, &sym, NULL) == MP_OK && sym.defined &&
		    mp_elf_load_bias(e, maps[i].start, 0, &bias, NULL) == MP_OK)
			*vptr = bias + sym.value + 16; /* past offset-to-top and typeinfo */
		else
			snprintf(why, why_size, "%s defines no %s", maps[i].path, vtable_symbol);
		mp_elf_close(e);
		if (*vptr != 0)
			return;
	}
}

mp_err ctx_reader_new(mp_target *t, uint64_t vptr, const char *why_no_vptr, const mp_py_interp *interp,
		      const char *why_no_python, mp_ctx_reader **out)
{
	mp_ctx_reader *r = calloc(1, sizeof *r);

	*out = NULL;
	if (r == NULL || ctx_intern_init(&r->in) != MP_OK) {
		free(r);
		return MP_E_NOMEM;
	}
	r->t = t;
	r->vptr = vptr;
	snprintf(r->why_no_vptr, sizeof r->why_no_vptr, "%s", vptr != 0 ? "" : why_no_vptr);
	ctx_python_init(&r->py, t, interp, why_no_python);
	ctx_cpp_init(&r->cpp, t);
	*out = r;
	return MP_OK;
}

mp_err mp_ctx_open(mp_target *t, mp_ctx_reader **out, mp_diag *diag)
{
	char why_no_vptr[sizeof(((mp_ctx_reader *)0)->why_no_vptr)];
	mp_diag pydiag = { 0 };
	mp_py_interp interp;
	uint64_t vptr;

	find_vptr(t, &vptr, why_no_vptr, sizeof why_no_vptr);
	if (mp_py_find(t, &interp, &pydiag) != MP_OK)
		interp.layout = NULL;
	if (ctx_reader_new(t, vptr, why_no_vptr, interp.layout != NULL ? &interp : NULL, pydiag.msg, out) != MP_OK)
		return mp_fail(diag, MP_E_NOMEM, "out of memory for the context reader");
	return MP_OK;
}

void mp_ctx_close(mp_ctx_reader *r)
{
	if (r == NULL)
		return;
	ctx_intern_free(&r->in);
	ctx_python_free(&r->py);
	ctx_cpp_free(&r->cpp);
	mp_table_free(&r->ptr_index);
	free(r->ptrs);
	free(r->buf);
	free(r->py_ids);
	free(r->ids);
	free(r);
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

/* The element count of the std::vector at P (ELEM bytes each), or why it is not one. */
static const char *vector_len(const unsigned char *p, size_t elem, size_t *n)
{
	uint64_t begin = u64_at(p), end = u64_at(p + 8), cap = u64_at(p + 16);

	if (begin > end || end > cap || (begin == 0 && cap != 0) || (end - begin) % elem != 0)
		return "a vector's pointers are out of order";
	if ((end - begin) / elem > CTX_MAX_FRAMES)
		return "more frames than memprof reads";
	*n = (size_t)((end - begin) / elem);
	return NULL;
}

/* Read N elements of ELEM bytes of the vector at P into r->buf. */
static mp_err vector_read(mp_ctx_reader *r, const unsigned char *p, size_t n, size_t elem, const char **why)
{
	mp_err err;

	if ((err = mp_array_grow((void **)&r->buf, &r->buf_cap, n * elem + 1, 1)) != MP_OK)
		return err;
	if (n > 0 && mp_target_read(r->t, u64_at(p), r->buf, n * elem, NULL) != MP_OK)
		*why = "its frames are not in the target's memory";
	return MP_OK;
}

static mp_err push(uint32_t **v, size_t *len, size_t *cap, uint32_t id)
{
	mp_err err = mp_array_grow((void **)v, cap, *len + 1, sizeof **v);

	if (err == MP_OK)
		(*v)[(*len)++] = id;
	return err;
}

/* Decode the CapturedTraceback whose header is HDR into r->ids (*N); *WHY when it is damaged. */
static mp_err decode(mp_ctx_reader *r, const unsigned char *hdr, size_t *n, const char **why)
{
	size_t npy, ncpp, nscript, nids = 0, used = 0;
	mp_err err;

	*n = 0;
	if ((*why = vector_len(hdr + CT_FRAMES, PYFRAME_SIZE, &npy)) != NULL ||
	    (*why = vector_len(hdr + CT_CPP_FRAMES, 8, &ncpp)) != NULL ||
	    (*why = vector_len(hdr + CT_SCRIPT_FRAMES, SCRIPT_ENTRY_MIN, &nscript)) != NULL)
		return MP_OK;
	/* Python frames come with the unwinder that gathered them; the unwinder may have found none (a
	   thread running no Python, such as autograd's). */
	if (npy > 0 && u64_at(hdr + CT_PYTHON) == 0) {
		*why = "it has Python frames but no Python unwinder";
		return MP_OK;
	}
	if (u64_at(hdr + CT_SCRIPT_FRAMES + 8) != u64_at(hdr + CT_SCRIPT_FRAMES)) {
		r->stats.script_frames++;
		ctx_trouble_add(&r->script, "TorchScript frames are not decoded (left out)");
	}
	/* Python frames, innermost first. */
	if ((err = vector_read(r, hdr + CT_FRAMES, npy, PYFRAME_SIZE, why)) != MP_OK || *why != NULL)
		return err;
	if ((err = mp_array_grow((void **)&r->py_ids, &r->py_ids_cap, npy + 1, sizeof *r->py_ids)) != MP_OK)
		return err;
	for (size_t i = 0; i < npy; i++) {
		int32_t lasti;

		memcpy(&lasti, r->buf + i * PYFRAME_SIZE + 8, sizeof lasti);
		if ((err = ctx_python_frame(&r->py, &r->in, u64_at(r->buf + i * PYFRAME_SIZE), lasti, &r->py_ids[i])) != MP_OK)
			return err;
	}
	r->stats.python_frames += npy;
	/* C++ frames, each evaluation loop preceded by the Python frame it ran. */
	if ((err = vector_read(r, hdr + CT_CPP_FRAMES, ncpp, 8, why)) != MP_OK || *why != NULL)
		return err;
	r->stats.cpp_frames += ncpp;
	for (size_t i = 0; i < ncpp; i++) {
		enum ctx_cpp_kind kind;
		uint32_t id;

		if ((err = ctx_cpp_frame(&r->cpp, &r->in, u64_at(r->buf + i * 8), &id, &kind)) != MP_OK)
			return err;
		if (kind == CTX_CPP_EVAL_FRAME && used < npy &&
		    (err = push(&r->ids, &nids, &r->ids_cap, r->py_ids[used++])) != MP_OK)
			return err;
		if ((err = push(&r->ids, &nids, &r->ids_cap, id)) != MP_OK)
			return err;
	}
	while (used < npy)
		if ((err = push(&r->ids, &nids, &r->ids_cap, r->py_ids[used++])) != MP_OK)
			return err;
	*n = nids;
	return MP_OK;
}

/* Decode the context at CTX into a sequence (the empty one when damaged, counted with its reason). */
static mp_err read_context(mp_ctx_reader *r, uint64_t ctx, uint32_t *seq)
{
	unsigned char hdr[CT_SIZE];
	const char *why = NULL;
	size_t n = 0;
	mp_err err = MP_OK;

	*seq = 0;
	if (r->vptr == 0)
		why = r->why_no_vptr;
	else if (mp_target_read(r->t, ctx, hdr, sizeof hdr, NULL) != MP_OK)
		why = "not in the target's memory";
	else if (u64_at(hdr) != r->vptr)
		why = "not a torch::CapturedTraceback (another vtable)";
	else
		err = decode(r, hdr, &n, &why);
	if (err != MP_OK)
		return err;
	if (why != NULL) {
		r->stats.damaged++;
		ctx_trouble_add(&r->damaged, "0x%llx: %s", (unsigned long long)ctx, why);
		return MP_OK;
	}
	return ctx_intern_seq(&r->in, r->ids, n, seq);
}

mp_err mp_ctx_get(mp_ctx_reader *r, uint64_t ctx, uint32_t *seq)
{
	mp_table_probe p;
	uint32_t id;
	mp_err err;

	*seq = 0;
	if (ctx == 0)
		return MP_OK;
	for (id = mp_table_find(&r->ptr_index, mp_table_hash_u64(ctx), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&r->ptr_index, &p))
		if (r->ptrs[id].ptr == ctx) {
			*seq = r->ptrs[id].seq;
			return MP_OK;
		}
	if ((err = read_context(r, ctx, seq)) != MP_OK ||
	    (err = mp_array_grow((void **)&r->ptrs, &r->ptrs_cap, r->nptrs + 1, sizeof *r->ptrs)) != MP_OK ||
	    (err = mp_table_add(&r->ptr_index, &p, (uint32_t)r->nptrs)) != MP_OK)
		return err;
	r->ptrs[r->nptrs++] = (struct ctx_ptr){ ctx, *seq };
	r->stats.contexts++;
	return MP_OK;
}

void mp_ctx_prefetch(mp_ctx_reader *r, uint64_t ctx)
{
	if (ctx == 0)
		return;
	mp_table_prefetch(&r->ptr_index, mp_table_hash_u64(ctx));
	if (r->vptr != 0)
		mp_target_prefetch(r->t, ctx, CT_SIZE);
}

size_t mp_ctx_nseqs(const mp_ctx_reader *r)
{
	return r->in.nseqs;
}

const uint32_t *mp_ctx_seq(const mp_ctx_reader *r, uint32_t seq, size_t *n)
{
	*n = r->in.seqs[seq].n;
	return r->in.pool + r->in.seqs[seq].off;
}

size_t mp_ctx_nframes(const mp_ctx_reader *r)
{
	return r->in.nframes;
}

const mp_ctx_frame *mp_ctx_frame_at(const mp_ctx_reader *r, uint32_t id)
{
	return &r->in.frames[id];
}

void mp_ctx_get_stats(const mp_ctx_reader *r, mp_ctx_stats *out)
{
	*out = r->stats;
	out->unreadable_code = r->py.unreadable.count;
	out->cpp_unnamed = r->cpp.unnamed;
	out->cpp_nearest = r->cpp.nearest;
}

void mp_ctx_report(const mp_ctx_reader *r, mp_diag *diag)
{
	if (r->damaged.count > 0)
		mp_warn_damage(diag, "%zu of %zu allocation contexts could not be decoded, their frames are left empty (first %s)",
			r->damaged.count, r->stats.contexts, r->damaged.first);
	if (r->py.unreadable.count > 0)
		mp_warn_damage(diag, "%zu Python frames name code objects memprof could not read, shown as "
			"'<unreadable code object>' (first: %s)", r->py.unreadable.count, r->py.unreadable.first);
	if (r->script.count > 0)
		mp_warn(diag, "%zu contexts hold TorchScript frames, which memprof does not decode: they are left out",
			r->script.count);
}
