/* cmd_info.c - `memprof info`: what memprof found in a core or process: the library, its
   version and build, where the allocator is, which layout fits, and each device in brief. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mp_format.h"

static void put_build_id(mp_out *out, const mp_c10 *c10)
{
	if (c10->build_id_len == 0) {
		mp_out_puts(out, "none");
		return;
	}
	for (size_t i = 0; i < c10->build_id_len; i++)
		mp_out_printf(out, "%02x", c10->build_id[i]);
}

static void put_library(mp_out *out, const mp_c10 *c10)
{
	mp_out_printf(out, "library:     %s\n", c10->path);
	if (c10->local_path[0] != '\0' && strcmp(c10->local_path, c10->path) != 0)
		mp_out_printf(out, "read from:   %s\n", c10->local_path);
	mp_out_puts(out, "build-id:    ");
	put_build_id(out, c10);
	mp_out_printf(out, "\nload bias:   0x%llx\n", (unsigned long long)c10->bias);
	mp_out_printf(out, "version:     %s%s%s%s\n", c10->version[0] ? c10->version : "unknown",
		      c10->version_source[0] ? " (" : "", c10->version_source, c10->version_source[0] ? ")" : "");
	mp_out_printf(out, "C++ ABI:     %s\n", c10->cxx11_abi == 1 ? "C++11 (new std::string)"
				       : c10->cxx11_abi == 0 ? "pre-C++11 (old std::string)" : "unknown");
	if (c10->cuda_major != 0)
		mp_out_printf(out, "CUDA:        %d (libcudart.so.%d)\n", c10->cuda_major, c10->cuda_major);
	mp_out_printf(out, "DWARF:       %s\n", c10->has_dwarf ? c10->dwarf_path : "none");
	mp_out_printf(out, "allocator:   pointer at 0x%llx (%s)\n", (unsigned long long)c10->allocator_ptr_addr,
		      c10->allocator_how);
}

static int64_t stat_of(const mp_memstats *st, const char *key)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i].key, key) == 0)
			return st->v[i].value;
	return 0;
}

static void put_walk(mp_out *out, const mp_walk *w)
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

static void put_target(mp_out *out, const mp_target *t)
{
	const mp_target_info *ti = mp_target_get_info(t);

	mp_out_printf(out, "target:      %s\n", ti->origin != NULL ? ti->origin : "?");
	if (ti->pid != 0)
		mp_out_printf(out, "pid:         %d\n", ti->pid);
	if (ti->exe != NULL)
		mp_out_printf(out, "executable:  %s\n", ti->exe);
	if (ti->cmdline != NULL)
		mp_out_printf(out, "command:     %s\n", ti->cmdline);
}

static int run_info(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	mp_target *t;
	mp_walk *w;
	mp_out out;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 1, 1, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (!cli_walk_target(&o, 0, &t, &w))
		return CLI_BAD;
	mp_out_init(&out);
	put_target(&out, t);
	put_library(&out, &w->c10);
	put_walk(&out, w);
	rc = cli_write_stdout(&out);
	mp_out_free(&out);
	if (rc == CLI_OK && o.output != NULL) {
		char *text = mp_layout_format(&w->layout);

		mp_out_init(&out);
		if (text != NULL)
			mp_out_puts(&out, text);
		rc = text != NULL ? cli_save(o.output, &out) : cli_fail("layout", MP_E_NOMEM, NULL);
		free(text);
		mp_out_free(&out);
	}
	mp_walk_free(w);
	mp_target_close(t);
	return rc;
}

const struct cli_command cli_cmd_info = {
	"info", "what memprof finds in a core or process: library, version, layout, devices",
	"usage: memprof info TARGET [-o LAYOUT]\n"
	"\n"
	"Print the PyTorch library found in TARGET (a core dump or --pid PID), its\n"
	"build-id, version, C++ ABI and CUDA major, where the allocator lives, which\n"
	"struct layout fits its memory and where that layout came from (DWARF or a\n"
	"version table), and each device's segments, blocks and trace in brief.\n"
	"-o LAYOUT writes the layout used as a layout file (for --layout elsewhere).\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 2 bad input or usage, or nothing to walk.\n",
	run_info,
	CLI_O_TARGET | CLI_O_OUTPUT,
};
