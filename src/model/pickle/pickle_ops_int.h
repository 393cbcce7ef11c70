/* pickle_ops_int.h - the pickle opcodes, declared once (private to src/model/pickle).

   Every pass over a pickle (the machine, the skipper, the thread reading ahead, the memo's
   rescan, the reads in one go, the writer) takes an opcode's byte, name, operand, stack effect
   and memo effect from MP_PICKLE_OPCODES, and its place and operand from mp_pickle_next_op. No
   opcode byte is written as a literal anywhere else: a new opcode is one row here and, if it
   makes a value of its own, one case in the machine.

   Protocols 0 to 5 are listed. Those marked REFUSED import, call or build objects (or are
   protocol 0's text forms of data): memprof executes nothing and reads none of them, but names
   them in its refusal. */
#ifndef MEMPROF_PICKLE_OPS_INT_H
#define MEMPROF_PICKLE_OPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The operand after the opcode byte. */
enum mp_pickle_arg {
	MP_ARG_NONE,    /* none */
	MP_ARG_FIXED,   /* N bytes, a little-endian unsigned number (BINFLOAT's: big-endian IEEE 754) */
	MP_ARG_COUNTED, /* an N-byte little-endian length, then that many bytes */
	MP_ARG_LINE,    /* text up to a newline (protocol 0; REFUSED opcodes only) */
};

/* Flags: what an opcode is and does. */
enum {
	MP_OPF_DATA = 1u << 0,    /* plain data: the machine runs it */
	MP_OPF_MARKS = 1u << 1,   /* pushes a mark */
	MP_OPF_TO_MARK = 1u << 2, /* takes the values above the topmost mark, and the mark */
	MP_OPF_KEEPS = 1u << 3,   /* the lowest value it takes is a container that stays, filled */
	MP_OPF_PAIRS = 1u << 4,   /* the values it takes come in key, value pairs */
	MP_OPF_STR = 1u << 5,     /* pushes a str read from its operand */
	MP_OPF_BYTES = 1u << 6,   /* pushes a bytes read from its operand */
	MP_OPF_PUT = 1u << 7,     /* memoizes the top of the stack (at its operand's index, or the next) */
	MP_OPF_GET = 1u << 8,     /* pushes the memo entry its operand names */
	MP_OPF_VALUE = 1u << 9,   /* may sit inside a value (the skipper passes over it); not PROTO or STOP */
	MP_OPF_STOP = 1u << 10,   /* ends the pickle */
};

/* Rows: X(NAME, BYTE, ARG, N, POPS, PUSHES, FLAGS). ARG and N: the operand (its length's bytes
   for a counted one). POPS: values taken from the stack (0 with TO_MARK: the mark says);
   PUSHES: values it leaves. */
#define MP_PICKLE_VALUE (MP_OPF_DATA | MP_OPF_VALUE)
#define MP_PICKLE_OPCODES(X)                                                                                 \
	/* framing */                                                                                        \
	X(PROTO, 0x80, FIXED, 1, 0, 0, MP_OPF_DATA)                                                           \
	X(FRAME, 0x95, FIXED, 8, 0, 0, MP_PICKLE_VALUE)                                                       \
	X(STOP, '.', NONE, 0, 1, 0, MP_OPF_DATA | MP_OPF_STOP)                                                \
	/* the stack */                                                                                      \
	X(MARK, '(', NONE, 0, 0, 0, MP_PICKLE_VALUE | MP_OPF_MARKS)                                           \
	X(POP, '0', NONE, 0, 1, 0, MP_PICKLE_VALUE)                                                           \
	X(POP_MARK, '1', NONE, 0, 0, 0, MP_PICKLE_VALUE | MP_OPF_TO_MARK)                                     \
	X(DUP, '2', NONE, 0, 1, 2, MP_PICKLE_VALUE | MP_OPF_KEEPS)                                            \
	/* containers */                                                                                     \
	X(EMPTY_DICT, '}', NONE, 0, 0, 1, MP_PICKLE_VALUE)                                                    \
	X(EMPTY_LIST, ']', NONE, 0, 0, 1, MP_PICKLE_VALUE)                                                    \
	X(EMPTY_TUPLE, ')', NONE, 0, 0, 1, MP_PICKLE_VALUE)                                                   \
	X(TUPLE1, 0x85, NONE, 0, 1, 1, MP_PICKLE_VALUE)                                                       \
	X(TUPLE2, 0x86, NONE, 0, 2, 1, MP_PICKLE_VALUE)                                                       \
	X(TUPLE3, 0x87, NONE, 0, 3, 1, MP_PICKLE_VALUE)                                                       \
	X(TUPLE, 't', NONE, 0, 0, 1, MP_PICKLE_VALUE | MP_OPF_TO_MARK)                                        \
	X(LIST, 'l', NONE, 0, 0, 1, MP_PICKLE_VALUE | MP_OPF_TO_MARK)                                         \
	X(DICT, 'd', NONE, 0, 0, 1, MP_PICKLE_VALUE | MP_OPF_TO_MARK | MP_OPF_PAIRS)                          \
	X(APPEND, 'a', NONE, 0, 2, 1, MP_PICKLE_VALUE | MP_OPF_KEEPS)                                         \
	X(APPENDS, 'e', NONE, 0, 0, 0, MP_PICKLE_VALUE | MP_OPF_TO_MARK)                                      \
	X(SETITEM, 's', NONE, 0, 3, 1, MP_PICKLE_VALUE | MP_OPF_KEEPS | MP_OPF_PAIRS)                         \
	X(SETITEMS, 'u', NONE, 0, 0, 0, MP_PICKLE_VALUE | MP_OPF_TO_MARK | MP_OPF_PAIRS)                      \
	/* atoms */                                                                                          \
	X(BININT, 'J', FIXED, 4, 0, 1, MP_PICKLE_VALUE)                                                       \
	X(BININT1, 'K', FIXED, 1, 0, 1, MP_PICKLE_VALUE)                                                      \
	X(BININT2, 'M', FIXED, 2, 0, 1, MP_PICKLE_VALUE)                                                      \
	X(LONG1, 0x8a, COUNTED, 1, 0, 1, MP_PICKLE_VALUE)                                                     \
	X(LONG4, 0x8b, COUNTED, 4, 0, 1, MP_PICKLE_VALUE)                                                     \
	X(NONE, 'N', NONE, 0, 0, 1, MP_PICKLE_VALUE)                                                          \
	X(NEWTRUE, 0x88, NONE, 0, 0, 1, MP_PICKLE_VALUE)                                                      \
	X(NEWFALSE, 0x89, NONE, 0, 0, 1, MP_PICKLE_VALUE)                                                     \
	X(BINFLOAT, 'G', FIXED, 8, 0, 1, MP_PICKLE_VALUE)                                                     \
	X(SHORT_BINUNICODE, 0x8c, COUNTED, 1, 0, 1, MP_PICKLE_VALUE | MP_OPF_STR)                             \
	X(BINUNICODE, 'X', COUNTED, 4, 0, 1, MP_PICKLE_VALUE | MP_OPF_STR)                                    \
	X(BINUNICODE8, 0x8d, COUNTED, 8, 0, 1, MP_PICKLE_VALUE | MP_OPF_STR)                                  \
	X(SHORT_BINBYTES, 'C', COUNTED, 1, 0, 1, MP_PICKLE_VALUE | MP_OPF_BYTES)                              \
	X(BINBYTES, 'B', COUNTED, 4, 0, 1, MP_PICKLE_VALUE | MP_OPF_BYTES)                                    \
	X(BINBYTES8, 0x8e, COUNTED, 8, 0, 1, MP_PICKLE_VALUE | MP_OPF_BYTES)                                  \
	/* the memo */                                                                                       \
	X(MEMOIZE, 0x94, NONE, 0, 1, 1, MP_PICKLE_VALUE | MP_OPF_KEEPS | MP_OPF_PUT)                          \
	X(BINPUT, 'q', FIXED, 1, 1, 1, MP_PICKLE_VALUE | MP_OPF_KEEPS | MP_OPF_PUT)                           \
	X(LONG_BINPUT, 'r', FIXED, 4, 1, 1, MP_PICKLE_VALUE | MP_OPF_KEEPS | MP_OPF_PUT)                      \
	X(BINGET, 'h', FIXED, 1, 0, 1, MP_PICKLE_VALUE | MP_OPF_GET)                                          \
	X(LONG_BINGET, 'j', FIXED, 4, 0, 1, MP_PICKLE_VALUE | MP_OPF_GET)                                     \
	/* refused: objects, imports, calls, buffers, sets, protocol 0's text forms */                       \
	X(GLOBAL, 'c', LINE, 0, 0, 0, 0)                                                                      \
	X(STACK_GLOBAL, 0x93, NONE, 0, 0, 0, 0)                                                               \
	X(REDUCE, 'R', NONE, 0, 0, 0, 0)                                                                      \
	X(BUILD, 'b', NONE, 0, 0, 0, 0)                                                                       \
	X(INST, 'i', LINE, 0, 0, 0, 0)                                                                        \
	X(OBJ, 'o', NONE, 0, 0, 0, 0)                                                                         \
	X(NEWOBJ, 0x81, NONE, 0, 0, 0, 0)                                                                     \
	X(NEWOBJ_EX, 0x92, NONE, 0, 0, 0, 0)                                                                  \
	X(PERSID, 'P', LINE, 0, 0, 0, 0)                                                                      \
	X(BINPERSID, 'Q', NONE, 0, 0, 0, 0)                                                                   \
	X(EXT1, 0x82, FIXED, 1, 0, 0, 0)                                                                      \
	X(EXT2, 0x83, FIXED, 2, 0, 0, 0)                                                                      \
	X(EXT4, 0x84, FIXED, 4, 0, 0, 0)                                                                      \
	X(EMPTY_SET, 0x8f, NONE, 0, 0, 0, 0)                                                                  \
	X(ADDITEMS, 0x90, NONE, 0, 0, 0, 0)                                                                   \
	X(FROZENSET, 0x91, NONE, 0, 0, 0, 0)                                                                  \
	X(BYTEARRAY8, 0x96, COUNTED, 8, 0, 0, 0)                                                              \
	X(NEXT_BUFFER, 0x97, NONE, 0, 0, 0, 0)                                                                \
	X(READONLY_BUFFER, 0x98, NONE, 0, 0, 0, 0)                                                            \
	X(INT, 'I', LINE, 0, 0, 0, 0)                                                                         \
	X(LONG, 'L', LINE, 0, 0, 0, 0)                                                                        \
	X(FLOAT, 'F', LINE, 0, 0, 0, 0)                                                                       \
	X(STRING, 'S', LINE, 0, 0, 0, 0)                                                                      \
	X(BINSTRING, 'T', COUNTED, 4, 0, 0, 0)                                                                \
	X(SHORT_BINSTRING, 'U', COUNTED, 1, 0, 0, 0)                                                          \
	X(UNICODE, 'V', LINE, 0, 0, 0, 0)                                                                     \
	X(PUT, 'p', LINE, 0, 0, 0, 0)                                                                         \
	X(GET, 'g', LINE, 0, 0, 0, 0)

/* MP_OP_MARK, MP_OP_MEMOIZE, ...: the opcode bytes by name. */
enum mp_pickle_opcode {
#define MP_PICKLE_OP_ENUM(name, byte, arg, n, pops, pushes, flags) MP_OP_##name = (byte),
	MP_PICKLE_OPCODES(MP_PICKLE_OP_ENUM)
#undef MP_PICKLE_OP_ENUM
};

/* What the table says of one byte (name NULL: no opcode). */
struct mp_pickle_opinfo {
	const char *name;
	uint8_t arg;    /* enum mp_pickle_arg */
	uint8_t n;      /* the operand's bytes, or its length's */
	uint8_t pops, pushes;
	uint16_t flags; /* MP_OPF_* */
};

extern const struct mp_pickle_opinfo mp_pickle_ops[256];

/* One opcode in the input: its byte, its row's operand bytes, stack effect and flags, the bytes it
   takes (operand included), and its operand: a fixed one's value, or a counted one's length (its bytes
   follow at the offset of the opcode plus 1 + N). */
struct mp_pickle_tok {
	unsigned char op;
	uint8_t n, pops, pushes;
	uint16_t flags;
	size_t size;
	uint64_t arg;
};

enum mp_pickle_tok_status {
	MP_TOK_OK,
	MP_TOK_SHORT,   /* the input ends inside its operand */
	MP_TOK_REFUSED, /* an opcode memprof does not run (a REFUSED row) or no opcode at all */
};

/* The N-byte little-endian unsigned number at P. */
static inline uint64_t mp_pickle_read_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* One opcode's token from its operand at A (REST bytes left after the opcode byte), by the kind of
   its operand; N and DATA are constants of the opcode's row. */
static inline enum mp_pickle_tok_status mp_pickle_tok_NONE(const unsigned char *a, size_t rest, size_t n, bool data,
							   struct mp_pickle_tok *t)
{
	(void)a, (void)rest, (void)n;
	t->arg = 0;
	t->size = 1;
	return data ? MP_TOK_OK : MP_TOK_REFUSED;
}

static inline enum mp_pickle_tok_status mp_pickle_tok_FIXED(const unsigned char *a, size_t rest, size_t n,
							    bool data, struct mp_pickle_tok *t)
{
	if (!data)
		return MP_TOK_REFUSED;
	if (n > rest)
		return MP_TOK_SHORT;
	t->arg = mp_pickle_read_le(a, n);
	t->size = 1 + n;
	return MP_TOK_OK;
}

static inline enum mp_pickle_tok_status mp_pickle_tok_COUNTED(const unsigned char *a, size_t rest, size_t n,
							      bool data, struct mp_pickle_tok *t)
{
	if (!data)
		return MP_TOK_REFUSED;
	if (n > rest || (t->arg = mp_pickle_read_le(a, n)) > rest - n)
		return MP_TOK_SHORT;
	t->size = 1 + n + (size_t)t->arg;
	return MP_TOK_OK;
}

static inline enum mp_pickle_tok_status mp_pickle_tok_LINE(const unsigned char *a, size_t rest, size_t n, bool data,
							   struct mp_pickle_tok *t)
{
	(void)a, (void)rest, (void)n, (void)data, (void)t;
	return MP_TOK_REFUSED;
}

/* The tokenizer: the opcode at P of the LEN bytes at D (P < LEN) into *T. Inline, and a switch made
   from the table, so that each opcode's operand size is a constant the processor can run ahead with
   (a size loaded from the table made every opcode wait for the one before): every pass reads every
   opcode through it, tens of millions in a big snapshot. */
static inline __attribute__((always_inline)) enum mp_pickle_tok_status
mp_pickle_next_op(const unsigned char *d, size_t p, size_t len, struct mp_pickle_tok *t)
{
	size_t rest = len - p - 1;

	t->op = d[p];
	t->flags = 0;
	switch (d[p]) {
#define MP_PICKLE_TOK_CASE(name, byte, arg, n, pops, pushes, flags)                         \
	case (byte):                                                                         \
		*t = (struct mp_pickle_tok){ (byte), (n), (pops), (pushes), (flags), 0, 0 }; \
		return mp_pickle_tok_##arg(d + p + 1, rest, (n), ((flags) & MP_OPF_DATA) != 0, t);
		MP_PICKLE_OPCODES(MP_PICKLE_TOK_CASE)
#undef MP_PICKLE_TOK_CASE
	default:
		return MP_TOK_REFUSED;
	}
}

/* The bytes the data opcode at P takes, 0 when it is none or is cut short. */
static inline size_t mp_pickle_op_size(const unsigned char *d, size_t p, size_t len)
{
	struct mp_pickle_tok t;

	return mp_pickle_next_op(d, p, len, &t) == MP_TOK_OK ? t.size : 0;
}

/* Whether OP pushes a str or bytes read from its operand. */
static inline bool mp_pickle_is_text(unsigned char op)
{
	return (mp_pickle_ops[op].flags & (MP_OPF_STR | MP_OPF_BYTES)) != 0;
}

#endif
