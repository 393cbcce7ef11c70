/* pickle_ops.c - the opcode table, a row per byte, made from MP_PICKLE_OPCODES (pickle_ops_int.h).
   A byte listed twice is a build error (-Woverride-init). */
#include "pickle_ops_int.h"

const struct mp_pickle_opinfo mp_pickle_ops[256] = {
#define MP_PICKLE_OP_ROW(name, byte, arg, n, pops, pushes, flags) \
	[(byte)] = { #name, MP_ARG_##arg, (n), (pops), (pushes), (flags) },
	MP_PICKLE_OPCODES(MP_PICKLE_OP_ROW)
#undef MP_PICKLE_OP_ROW
};

