/* py_objects.c - str, bytes and code objects read from a target: every length bounded, every kind checked,
   so a damaged object gives an error naming what is wrong, never a huge allocation or a crash. */
#include <stdlib.h>
#include <string.h>

#include "mp_py.h"

/* Offsets every version shares (64-bit): PyObject_HEAD is ob_refcnt, ob_type; a str's length and state, a
   bytes object's ob_size and characters. */
enum {
	OB_TYPE = 8,
	STR_LENGTH = 16,
	STR_STATE = 32,
	BYTES_SIZE = 16,
	BYTES_DATA = 32,
};

/* Append code point CP to OUT as UTF-8 (a lone surrogate as its three bytes, as CPython's
   surrogatepass would). */
static size_t put_utf8(unsigned char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 63));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | (cp >> 6 & 63));
		out[2] = (unsigned char)(0x80 | (cp & 63));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | (cp >> 12 & 63));
	out[2] = (unsigned char)(0x80 | (cp >> 6 & 63));
	out[3] = (unsigned char)(0x80 | (cp & 63));
	return 4;
}

mp_err mp_py_read_str(mp_target *t, const mp_py_layout *l, uint64_t addr, char **out, mp_diag *diag)
{
	uint64_t length, data;
	uint8_t state;
	unsigned kind;
	unsigned char *raw, *text;
	size_t n = 0;
	mp_err err;

	*out = NULL;
	if ((err = mp_target_read_u64(t, addr + STR_LENGTH, &length, diag)) != MP_OK ||
	    (err = mp_target_read_u8(t, addr + STR_STATE, &state, diag)) != MP_OK)
		return err;
	/* state: interned (2 bits), kind (3), compact, ascii */
	kind = state >> 2 & 7;
	if ((kind != 1 && kind != 2 && kind != 4) || ((state >> 6 & 1) && kind != 1))
		return mp_fail(diag, MP_E_CORRUPT, "0x%llx is not a str (state 0x%02x)", (unsigned long long)addr, state);
	if (length > MP_PY_MAX_STR)
		return mp_fail(diag, MP_E_LIMIT, "str at 0x%llx: %llu characters, more than a name has",
			       (unsigned long long)addr, (unsigned long long)length);
	if (state >> 5 & 1)
		data = addr + ((state >> 6 & 1) ? l->str_ascii_data : l->str_compact_data);
	else if ((err = mp_target_read_u64(t, addr + l->str_data_any, &data, diag)) != MP_OK)
		return err;
	if ((raw = malloc(length * kind + 1)) == NULL || (text = malloc(length * 4 + 1)) == NULL) {
		free(raw);
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	}
	if ((err = mp_target_read(t, data, raw, length * kind, diag)) != MP_OK) {
		free(raw);
		free(text);
		return err;
	}
	for (size_t i = 0; i < length; i++) {
		uint32_t cp = kind == 1 ? raw[i] : kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8)
							 : (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
								   (uint32_t)raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24;

		if (cp > 0x10ffff) {
			free(raw);
			free(text);
			return mp_fail(diag, MP_E_CORRUPT, "str at 0x%llx: U+%X is no character", (unsigned long long)addr,
				       (unsigned)cp);
		}
		n += put_utf8(text + n, cp);
	}
	text[n] = '\0';
	free(raw);
	*out = (char *)text;
	return MP_OK;
}

mp_err mp_py_read_bytes(mp_target *t, uint64_t addr, size_t max, unsigned char **out, size_t *len, mp_diag *diag)
{
	uint64_t size;
	mp_err err;

	*out = NULL;
	*len = 0;
	if ((err = mp_target_read_u64(t, addr + BYTES_SIZE, &size, diag)) != MP_OK)
		return err;
	if (size > max)
		return mp_fail(diag, MP_E_LIMIT, "bytes at 0x%llx: %llu bytes, more than %zu", (unsigned long long)addr,
			       (unsigned long long)size, max);
	if ((*out = malloc(size > 0 ? size : 1)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	if ((err = mp_target_read(t, addr + BYTES_DATA, *out, size, diag)) != MP_OK) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = size;
	return MP_OK;
}

/* Whether the object at ADDR is of the type at TYPE (0: not checked). */
static mp_err check_type(mp_target *t, uint64_t addr, uint64_t type, const char *what, mp_diag *diag)
{
	uint64_t ob_type;
	mp_err err;

	if (type == 0)
		return MP_OK;
	if ((err = mp_target_read_u64(t, addr + OB_TYPE, &ob_type, diag)) != MP_OK)
		return err;
	if (ob_type != type)
		return mp_fail(diag, MP_E_CORRUPT, "0x%llx is not a %s (its type is at 0x%llx, not 0x%llx)",
			       (unsigned long long)addr, what, (unsigned long long)ob_type, (unsigned long long)type);
	return MP_OK;
}

/* The str that the pointer at ADDR + OFF points to. */
static mp_err str_field(mp_target *t, const mp_py_layout *l, const mp_py_types *types, uint64_t addr, uint32_t off,
			char **out, mp_diag *diag)
{
	uint64_t p;
	mp_err err = mp_target_read_u64(t, addr + off, &p, diag);

	if (err == MP_OK)
		err = check_type(t, p, types != NULL ? types->str : 0, "str", diag);
	return err != MP_OK ? err : mp_py_read_str(t, l, p, out, diag);
}

mp_err mp_py_read_code(mp_target *t, const mp_py_layout *l, const mp_py_types *types, uint64_t addr, mp_py_code *out,
		       mp_diag *diag)
{
	uint64_t table;
	uint32_t first;
	mp_err err;

	memset(out, 0, sizeof *out);
	if ((err = check_type(t, addr, types != NULL ? types->code : 0, "code object", diag)) != MP_OK ||
	    (err = mp_target_read_u32(t, addr + l->code_firstlineno, &first, diag)) != MP_OK ||
	    (err = str_field(t, l, types, addr, l->code_filename, &out->filename, diag)) != MP_OK ||
	    (err = str_field(t, l, types, addr, l->code_name, &out->name, diag)) != MP_OK ||
	    (err = str_field(t, l, types, addr, l->code_qualname ? l->code_qualname : l->code_name, &out->qualname,
			     diag)) != MP_OK ||
	    (err = mp_target_read_u64(t, addr + l->code_linetable, &table, diag)) != MP_OK ||
	    (err = check_type(t, table, types != NULL ? types->bytes : 0, "bytes object", diag)) != MP_OK ||
	    (err = mp_py_read_bytes(t, table, MP_PY_MAX_LINETABLE, &out->linetable, &out->linetable_len, diag)) !=
		    MP_OK) {
		mp_py_code_free(out);
		return err;
	}
	/* Every function, class body and module has a name: an empty one (or one that starts with NUL) is
	   another version's str read with this version's layout. */
	if (out->name[0] == '\0') {
		mp_py_code_free(out);
		return mp_fail(diag, MP_E_CORRUPT, "code object at 0x%llx has an empty name (another CPython version?)",
			       (unsigned long long)addr);
	}
	out->firstlineno = (int32_t)first;
	return MP_OK;
}

void mp_py_code_free(mp_py_code *c)
{
	free(c->filename);
	free(c->name);
	free(c->qualname);
	free(c->linetable);
	memset(c, 0, sizeof *c);
}

int mp_py_code_line(const mp_py_layout *l, const mp_py_code *c, int lasti)
{
	return mp_py_addr2line(l->linetable, c->linetable, c->linetable_len, c->firstlineno, lasti);
}
