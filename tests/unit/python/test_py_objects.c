/* test_py_objects.c - the reader of CPython objects on hand-built memory (the callback target): str in each
   kind, a legacy str, bytes, a code object, and damage (a bad kind, an ASCII str of another kind, a length
   past the limit, a pointer into nothing, a code point past U+10FFFF). Live interpreters: objects.sh. */
#include <string.h>

#include "mp_py.h"

#define BASE 0x10000u
#define MEM_IMAGE_BASE BASE
#define MEM_IMAGE_SIZE 8192
#include "mem_image.h"

/* A compact str at ADDR of the 3.13 layout: LENGTH characters of KIND bytes each from DATA; ASCII when asked. */
static void make_str(uint64_t addr, const void *data, uint64_t length, unsigned kind, int ascii)
{
	put64(addr + 16, length);
	mem[addr - BASE + 32] = (unsigned char)(kind << 2 | 1 << 5 | ascii << 6);
	memcpy(mem + (addr - BASE) + (ascii ? 40 : 56), data, length * kind);
}

/* The target caches what it read: each read after MEM changed starts afresh. */
static mp_err str_at(mp_target *t, const mp_py_layout *l, uint64_t addr, char **out, mp_diag *diag)
{
	mp_target_flush(t);
	return mp_py_read_str(t, l, addr, out, diag);
}

static mp_err code_at(mp_target *t, const mp_py_layout *l, uint64_t addr, mp_py_code *out, mp_diag *diag)
{
	mp_target_flush(t);
	return mp_py_read_code(t, l, NULL, addr, out, diag);
}

static void test_strs(void)
{
	const mp_py_layout *l = mp_py_layout_for(3, 13);
	const uint16_t ucs2[] = { 'h', 0x20ac, 'l' };
	const uint32_t ucs4[] = { 'f', 0x1d523 };
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	char *s;

	memset(mem, 0, sizeof mem);
	make_str(BASE + 0, "plain", 5, 1, 1);
	make_str(BASE + 256, "h\xe9", 2, 1, 0);
	make_str(BASE + 512, ucs2, 3, 2, 0);
	make_str(BASE + 768, ucs4, 2, 4, 0);
	CU_ASSERT(str_at(t, l, BASE + 0, &s, &diag) == MP_OK && strcmp(s, "plain") == 0);
	free(s);
	CU_ASSERT(str_at(t, l, BASE + 256, &s, &diag) == MP_OK && strcmp(s, "h\xc3\xa9") == 0);
	free(s);
	CU_ASSERT(str_at(t, l, BASE + 512, &s, &diag) == MP_OK && strcmp(s, "h\xe2\x82\xacl") == 0);
	free(s);
	CU_ASSERT(str_at(t, l, BASE + 768, &s, &diag) == MP_OK && strcmp(s, "f\xf0\x9d\x94\xa3") == 0);
	free(s);
	/* a legacy str: not compact, its characters behind the data pointer */
	put64(BASE + 1024 + 16, 3);
	mem[1024 + 32] = 1 << 2;
	put64(BASE + 1024 + 56, BASE + 2048);
	memcpy(mem + 2048, "old", 3);
	CU_ASSERT(str_at(t, l, BASE + 1024, &s, &diag) == MP_OK && strcmp(s, "old") == 0);
	free(s);
	mp_target_close(t);
}

static void test_damage(void)
{
	const mp_py_layout *l = mp_py_layout_for(3, 13);
	const uint32_t bad[] = { 0x110000 };
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	char *s = (char *)"unset";

	memset(mem, 0, sizeof mem);
	make_str(BASE, "xyz", 1, 3, 0); /* kind 3 does not exist */
	CU_ASSERT_EQUAL(str_at(t, l, BASE, &s, &diag), MP_E_CORRUPT);
	CU_ASSERT_PTR_NULL(s);
	make_str(BASE, "xx", 1, 2, 1); /* ASCII but two bytes a character */
	CU_ASSERT_EQUAL(str_at(t, l, BASE, &s, &diag), MP_E_CORRUPT);
	make_str(BASE, "x", 1, 1, 1);
	put64(BASE + 16, (uint64_t)1 << 62); /* a length no name has: refused before any allocation */
	CU_ASSERT_EQUAL(str_at(t, l, BASE, &s, &diag), MP_E_LIMIT);
	make_str(BASE, bad, 1, 4, 0);
	CU_ASSERT_EQUAL(str_at(t, l, BASE, &s, &diag), MP_E_CORRUPT);
	CU_ASSERT_NOT_EQUAL(str_at(t, l, 0x10, &s, &diag), MP_OK); /* nothing mapped there */
	make_str(BASE + 8100, "abcdefgh", 8, 1, 1);
	put64(BASE + 8100 + 16, 100); /* the characters run past the memory */
	CU_ASSERT_NOT_EQUAL(str_at(t, l, BASE + 8100, &s, &diag), MP_OK);
	mp_target_close(t);
}

static void test_code(void)
{
	const mp_py_layout *l = mp_py_layout_for(3, 13);
	const unsigned char table[] = { 0xf8, 0x80, 0x00, 0xd8, 0x08, 0x0c }; /* lines from firstlineno: 7, 7, 8 */
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_py_code c;
	uint32_t first = 7;

	memset(mem, 0, sizeof mem);
	make_str(BASE + 1024, "f.py", 4, 1, 1);
	make_str(BASE + 1280, "fn", 2, 1, 1);
	make_str(BASE + 1536, "C.fn", 4, 1, 1);
	put64(BASE + 1792 + 16, sizeof table); /* bytes: ob_size, then the characters at 32 */
	memcpy(mem + 1792 + 32, table, sizeof table);
	memcpy(mem + l->code_firstlineno, &first, 4);
	put64(BASE + l->code_filename, BASE + 1024);
	put64(BASE + l->code_name, BASE + 1280);
	put64(BASE + l->code_qualname, BASE + 1536);
	put64(BASE + l->code_linetable, BASE + 1792);
	CU_ASSERT_EQUAL_FATAL(code_at(t, l, BASE, &c, &diag), MP_OK);
	CU_ASSERT_STRING_EQUAL(c.filename, "f.py");
	CU_ASSERT_STRING_EQUAL(c.name, "fn");
	CU_ASSERT_STRING_EQUAL(c.qualname, "C.fn");
	CU_ASSERT_EQUAL(c.firstlineno, 7);
	CU_ASSERT_EQUAL(mp_py_code_line(l, &c, -1), 7);
	mp_py_code_free(&c);
	/* with the interpreter's type objects known, each object must be of its type */
	{
		mp_py_types types = { .code = 0x7001, .str = 0x7002, .bytes = 0x7003 };

		put64(BASE + 8, types.code);
		put64(BASE + 1024 + 8, types.str);
		put64(BASE + 1280 + 8, types.str);
		put64(BASE + 1536 + 8, types.str);
		put64(BASE + 1792 + 8, types.bytes);
		mp_target_flush(t);
		CU_ASSERT_EQUAL(mp_py_read_code(t, l, &types, BASE, &c, &diag), MP_OK);
		mp_py_code_free(&c);
		put64(BASE + 1792 + 8, types.str); /* the line table is a str: not a code object of this layout */
		mp_target_flush(t);
		CU_ASSERT_EQUAL(mp_py_read_code(t, l, &types, BASE, &c, &diag), MP_E_CORRUPT);
		CU_ASSERT_PTR_NULL(c.filename);
		put64(BASE + 1792 + 8, types.bytes);
		put64(BASE + 8, types.str); /* the object itself is no code object */
		mp_target_flush(t);
		CU_ASSERT_EQUAL(mp_py_read_code(t, l, &types, BASE, &c, &diag), MP_E_CORRUPT);
		put64(BASE + 8, types.code);
	}
	/* a line table that claims a mebibyte and more: refused, nothing left allocated */
	put64(BASE + 1792 + 16, MP_PY_MAX_LINETABLE + 1);
	CU_ASSERT_EQUAL(code_at(t, l, BASE, &c, &diag), MP_E_LIMIT);
	CU_ASSERT_PTR_NULL(c.filename);
	/* the name pointer into nothing */
	put64(BASE + 1792 + 16, sizeof table);
	put64(BASE + l->code_name, 0x20);
	CU_ASSERT_NOT_EQUAL(code_at(t, l, BASE, &c, &diag), MP_OK);
	CU_ASSERT_PTR_NULL(c.name);
	mp_target_close(t);
}

static void test_layouts(void)
{
	CU_ASSERT_PTR_NULL(mp_py_layout_for(3, 9));
	CU_ASSERT_PTR_NULL(mp_py_layout_for(3, 15));
	CU_ASSERT_EQUAL(mp_py_layout_for(3, 10)->code_qualname, 0); /* 3.10 has no co_qualname */
	for (int minor = 10; minor <= 14; minor++)
		CU_ASSERT_PTR_NOT_NULL(mp_py_layout_for(3, minor));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "str in every kind", test_strs },
		{ "damaged str", test_damage },
		{ "a code object", test_code },
		{ "layouts by version", test_layouts },
	};

	return UNIT_RUN("py_objects", tests, NULL, NULL);
}
