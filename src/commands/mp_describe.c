/* mp_describe.c - what memprof found in a target, in words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe_int.h"
#include "mp_format.h"
#include "mp_py.h"

static void describe_build_id(mp_out *out, const mp_c10 *c10)
{
	if (c10->build_id_len == 0) {
		mp_out_puts(out, "none");
		return;
	}
	for (size_t i = 0; i < c10->build_id_len; i++)
		mp_out_printf(out, "%02x", c10->build_id[i]);
}

void mp_describe_library(mp_out *out, const mp_c10 *c10)
{
	mp_out_printf(out, "library:     %s\n", c10->path);
	if (c10->local_path[0] != '\0' && strcmp(c10->local_path, c10->path) != 0)
		mp_out_printf(out, "read from:   %s\n", c10->local_path);
	mp_out_puts(out, "build-id:    ");
	describe_build_id(out, c10);
	mp_out_printf(out, "\nload bias:   0x%llx\n", (unsigned long long)c10->bias);
	mp_out_printf(out, "version:     %s%s%s%s\n", c10->version[0] ? c10->version : "unknown",
		      c10->version_source[0] ? " (" : "", c10->version_source, c10->version_source[0] ? ")" : "");
	mp_out_printf(out, "C++ ABI:     %s\n", c10->cxx11_abi == 1 ? "C++11 (new std::string)"
				       : c10->cxx11_abi == 0 ? "pre-C++11 (old std::string)" : "unknown");
	if (c10->cuda_major != 0)
		mp_out_printf(out, "CUDA:        %d (the libcudart its libc10_cuda.so needs)\n", c10->cuda_major);
	mp_out_printf(out, "DWARF:       %s\n", c10->has_dwarf ? c10->dwarf_path : "none");
	mp_out_printf(out, "allocator:   pointer at 0x%llx (%s)\n", (unsigned long long)c10->allocator_ptr_addr,
		      c10->allocator_how);
	/* 2.14+: most allocator settings are in libc10 (2.6 has no such object, so nothing is said). */
	if (c10->accel_config_addr != 0)
		mp_out_printf(out, "settings:    AcceleratorAllocatorConfig at 0x%llx (.symtab of %s)\n",
			      (unsigned long long)c10->accel_config_addr, c10->libc10_path);
}

static int64_t stat_of(const mp_memstats *st, const char *key)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i].key, key) == 0)
			return st->v[i].value;
	return 0;
}

void mp_describe_walk(mp_out *out, const mp_walk *w)
{
	mp_out_printf(out, "backend:     native caching allocator at 0x%llx\n", (unsigned long long)w->allocator);
	mp_out_printf(out, "layout:      %s (%s)\n", w->layout.name, w->layout.source);
	mp_out_printf(out, "devices:     %zu\n", w->ndevices);
	for (size_t d = 0; d < w->ndevices; d++) {
		const mp_walk_device *dev = &w->devices[d];
		size_t nseg = 0, nblk = 0;

		for (size_t i = 0; i < w->nsegments; i++)
			if (w->segments[i].device == dev->index) {
				nseg++;
				nblk += w->segments[i].nblocks;
			}
		mp_out_printf(out, "  device %d: %zu segments, %zu blocks, ", dev->index, nseg, nblk);
		mp_format_bytes(out, stat_of(&dev->stats, "reserved_bytes.all.current"));
		mp_out_puts(out, " reserved, ");
		mp_format_bytes(out, stat_of(&dev->stats, "allocated_bytes.all.current"));
		mp_out_printf(out, " allocated; trace %zu entries (history %s, ring of %llu)\n", dev->ntrace,
			      dev->record_history ? "on" : "off", (unsigned long long)dev->ring_max_entries);
	}
	if (w->ntrace != 0)
		mp_out_printf(out, "trace times: %s\n", w->time_exact ? "exact (same boot as the target)" : "estimates");
	if (w->partial)
		mp_out_puts(out, "result:      partial (see the warnings)\n");
}

/* How a live process is read: held still (how many threads, how long stopping them took, how long so far), or
   running and why. */
static void describe_hold(mp_out *out, const mp_target *t)
{
	mp_target_hold_info h;

	mp_target_hold_info_get(t, &h);
	if (h.held)
		mp_out_printf(out, "held:        %zu thread%s stopped (ptrace) in %.3f ms, held %.3f ms so far\n", h.threads,
			      h.threads == 1 ? "" : "s", (double)h.stop_ns / 1e6, (double)h.held_ns / 1e6);
	else if (h.still)
		mp_out_printf(out, "held:        by its tracer or a stop signal (%s)\n", h.why_not != NULL ? h.why_not : "?");
	else
		mp_out_printf(out, "held:        no (%s): read while it runs, again when it moves under the read\n",
			      h.why_not != NULL ? h.why_not : "?");
}

void mp_describe_target(mp_out *out, const mp_target *t)
{
	const mp_target_info *ti = mp_target_get_info(t);

	mp_out_printf(out, "target:      %s\n", ti->origin != NULL ? ti->origin : "?");
	if (ti->pid != 0)
		mp_out_printf(out, "pid:         %d\n", ti->pid);
	if (ti->exe != NULL)
		mp_out_printf(out, "executable:  %s\n", ti->exe);
	if (ti->cmdline != NULL)
		mp_out_printf(out, "command:     %s\n", ti->cmdline);
	if (ti->kind == MP_TARGET_PID)
		describe_hold(out, t);
}

void mp_describe_python(mp_out *out, mp_target *t)
{
	mp_diag diag = { 0 };
	mp_py_interp py;
	mp_err err = mp_py_find(t, &py, &diag);

	if (err == MP_E_NOTFOUND) {
		mp_out_puts(out, "python:      none found\n");
		return;
	}
	if (err != MP_OK && err != MP_E_UNSUPPORTED) {
		mp_out_printf(out, "python:      unreadable (%s)\n", diag.msg);
		return;
	}
	mp_out_printf(out, "python:      CPython %d.%d", py.major, py.minor);
	if (py.micro >= 0)
		mp_out_printf(out, ".%d", py.micro);
	mp_out_printf(out, " in %s (load bias 0x%llx)%s\n", py.path, (unsigned long long)py.bias,
		      err == MP_E_UNSUPPORTED ? ", a version memprof cannot read: frames unnamed" : "");
}
