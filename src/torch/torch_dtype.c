/* torch_dtype.c - ScalarType (c10/core/ScalarType.h's order, which a TypeMeta's index follows for every
   scalar type) to the name torch prints and the element size. */
#include <stddef.h>

#include "mp_torch.h"

static const struct {
	const char *name;
	unsigned size;
} dtypes[] = {
	{ "uint8", 1 }, { "int8", 1 }, { "int16", 2 }, { "int32", 4 }, { "int64", 8 }, { "float16", 2 },
	{ "float32", 4 }, { "float64", 8 }, { "complex32", 4 }, { "complex64", 8 }, { "complex128", 16 },
	{ "bool", 1 }, { "qint8", 1 }, { "quint8", 1 }, { "qint32", 4 }, { "bfloat16", 2 }, { "quint4x2", 1 },
	{ "quint2x4", 1 }, { "bits1x8", 1 }, { "bits2x4", 1 }, { "bits4x2", 1 }, { "bits8", 1 }, { "bits16", 2 },
	{ "float8_e5m2", 1 }, { "float8_e4m3fn", 1 }, { "float8_e5m2fnuz", 1 }, { "float8_e4m3fnuz", 1 },
	{ "uint16", 2 }, { "uint32", 4 }, { "uint64", 8 },
	/* 30 to 43: sub-byte types with no storage of their own (uint1..7, int1..7) */
	{ NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 },
	{ NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 }, { NULL, 0 },
	{ "float8_e8m0fnu", 1 }, { "float4_e2m1fn_x2", 1 }, { "bcomplex32", 4 },
};

const char *mp_torch_dtype_name(int dtype)
{
	return dtype >= 0 && (size_t)dtype < sizeof dtypes / sizeof dtypes[0] ? dtypes[dtype].name : NULL;
}

unsigned mp_torch_dtype_size(int dtype)
{
	return dtype >= 0 && (size_t)dtype < sizeof dtypes / sizeof dtypes[0] ? dtypes[dtype].size : 0;
}

const char *mp_torch_device_name(int type)
{
	/* c10/core/DeviceType.h */
	static const char *const names[] = { "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip",
					     "fpga", "maia", "xla", "vulkan", "metal", "xpu", "mps", "meta",
					     "hpu", "ve", "lazy", "ipu", "mtia", "privateuseone" };

	return type >= 0 && (size_t)type < sizeof names / sizeof names[0] ? names[type] : NULL;
}
