/* mp_c10.h - find PyTorch's libc10_cuda.so in a target: the mapping, load bias, build-id,
   version, the live allocator pointer and the config instances (libc10_cuda's, and from 2.14 on
   libc10.so's), and the layouts to try. */
#ifndef MEMPROF_C10_H
#define MEMPROF_C10_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_layout.h"
#include "mp_target.h"

/* The RTTI name of the one backend memprof can walk. */
#define MP_NATIVE_ALLOCATOR_RTTI "N3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocatorE"

typedef struct mp_c10 {
	char path[4096];       /* libc10_cuda.so as the target mapped it */
	char local_path[4096]; /* the file read here ("" when not found: then nothing else is known) */
	uint64_t bias;         /* load bias: target address = bias + ELF vaddr */
	unsigned char build_id[64];
	size_t build_id_len;
	bool build_id_mismatch; /* the local file is not the one the target mapped */
	char version[32];       /* "2.6.0" from the file name, PyPI's build-ids (mp_torch_builds.c),
				   a version.py beside it, or "" */
	char version_source[128];
	int cxx11_abi;          /* 1, 0, or -1 when unknown (from mangled names in .dynsym) */
	int cuda_major;         /* from the DT_NEEDED libcudart.so.N, 0 when unknown */
	bool has_dwarf;         /* in the file or a separate debug file */
	char dwarf_path[4096];
	/* Address (in the target) of the std::atomic<CUDAAllocator*> that holds the live backend:
	   the library's own .bss object, or, when the executable took a copy relocation of it,
	   wherever the library's GOT slot points (ALLOCATOR_HOW says which). */
	uint64_t allocator_ptr_addr;
	char allocator_how[128];
	/* &CUDAAllocatorConfig::instance()::s_instance (a CUDAAllocatorConfig*), 0 if absent. */
	uint64_t config_instance_addr;
	/* Address of the RTTI name string MP_NATIVE_ALLOCATOR_RTTI in the library, 0 if absent. */
	uint64_t native_rtti_name_addr;
	/* From 2.14 on most allocator settings live in libc10.so, in the function-local static
	   c10::CachingAllocator::AcceleratorAllocatorConfig::instance()::instance, which only
	   libc10.so's .symtab names (it is not exported). Its address in the target and its size,
	   and its initialisation guard's address (0 when the .symtab has no guard); 0 when not
	   found, and then ACCEL_CONFIG_WHY says why in words (libc10.so not mapped, stripped, no
	   such symbol: a version without it, as 2.6). */
	char libc10_path[4096]; /* libc10.so as the target mapped it, "" when not mapped */
	uint64_t accel_config_addr;
	uint64_t accel_config_size;
	uint64_t accel_config_guard_addr;
	char accel_config_why[256];
} mp_c10;

/* The release of PyPI's wheel whose libc10_cuda.so has build-id ID (LEN bytes), as torch.__version__
   ("2.4.1+cu121"), into VERSION (SIZE bytes); false when memprof does not know that build. */
bool mp_torch_release_by_build_id(const unsigned char *id, size_t len, char *version, size_t size);

/* Find libc10_cuda.so among T's mappings and read what is listed above. MP_E_NOTFOUND when T
   maps no libc10_cuda (not a PyTorch CUDA process), or when its file cannot be found here
   (DIAG says where it looked). A build-id mismatch is an error (this is the library walked).
   Whatever stops the AcceleratorAllocatorConfig lookup in libc10.so (a missing or different
   file, no .symtab) is no error: it only fills ACCEL_CONFIG_WHY. */
mp_err mp_c10_find(mp_target *t, mp_c10 *out, mp_diag *diag) MP_WUR;

/* Layouts to try on C10, best first: its DWARF (when present), then the built-in tables whose
   key matches the version/ABI/CUDA found, then the other built-ins. Fills up to MAX entries of
   OUT and returns how many. */
size_t mp_c10_layout_candidates(const mp_c10 *c10, mp_layout *out, size_t max, mp_diag *diag);

#endif
