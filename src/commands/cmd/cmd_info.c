/* cmd_info.c - `info`: what memprof found in a core or process: the library, its version and
   build, where the allocator is, which layout fits, and each device in brief. */
#include <stdlib.h>

#include "command_int.h"
#include "describe_int.h"
#include "mp_layout.h"

/* The layout W used, written to PATH as a layout file. */
static int write_layout(mp_command_ctx *c, const mp_walk *w, const char *path)
{
	char *text = mp_layout_format(&w->layout);
	mp_out out;
	int rc;

	if (text == NULL)
		return mp_command_fail(c, "layout", MP_E_NOMEM, NULL);
	mp_out_init(&out);
	mp_out_puts(&out, text);
	rc = cmd_write_file(c, "info", path, &out);
	mp_out_free(&out);
	free(text);
	return rc;
}

/* When the walk fails (no layout fits an unknown build, a damaged allocator), what is known without
   it still helps: the process, the library, its build-id, release, ABI and CUDA. The walk's error
   follows these lines. */
static void describe_unwalked(mp_command_ctx *c, const char *word)
{
	mp_diag quiet = { 0 };
	mp_target *t;
	mp_c10 *c10;
	mp_out out;
	bool owned;

	c10 = calloc(1, sizeof *c10);
	if (c10 == NULL)
		return;
	/* The walk's error stays the one reported: opening the target again must not replace it. */
	if (c->front->target(c, 0, word, &t, &owned) == MP_CMD_OK) {
		mp_out_init(&out);
		mp_describe_target(&out, t);
		if (mp_c10_find(t, c10, &quiet) == MP_OK)
			mp_describe_library(&out, c10);
		(void)cmd_emit(c, &out, false);
		mp_out_free(&out);
		if (owned)
			mp_target_close(t);
	}
	free(c10);
}

static int run_info(mp_command_ctx *c, const mp_command_args *a)
{
	const char *path = mp_arg(a, MP_O_OUTPUT);
	mp_target *t;
	mp_walk *w;
	mp_out out;
	bool owned;
	int rc = c->front->walked(c, 0, a->npos > 0 ? a->pos[0] : NULL, &t, &w, &owned);

	if (rc != MP_CMD_OK) {
		describe_unwalked(c, a->npos > 0 ? a->pos[0] : NULL);
		return rc;
	}
	mp_out_init(&out);
	if (c->front->info_lines != NULL && !owned) /* the front end's own target */
		c->front->info_lines(c, &out, false);
	mp_describe_target(&out, t);
	mp_describe_library(&out, &w->c10);
	mp_describe_walk(&out, w);
	mp_describe_python(&out, t);
	if (c->front->info_lines != NULL && !owned)
		c->front->info_lines(c, &out, true);
	rc = cmd_emit(c, &out, false);
	mp_out_free(&out);
	if (rc == MP_CMD_OK && path != NULL)
		rc = write_layout(c, w, path);
	if (owned) {
		mp_walk_free(w);
		mp_target_close(t);
	}
	return rc;
}

const mp_command mp_cmd_info = {
	"info", MP_FRONT_ALL, "what memprof finds in a core or process: library, version, layout, devices",
	"TARGET [-o LAYOUT]",
	"The PyTorch library found in the target (a core dump or a live process), its build-id,\n"
	"version, C++ ABI and CUDA major, where the allocator lives, which struct layout fits its\n"
	"memory and where that layout came from (DWARF or a version table), and each device's\n"
	"segments, blocks and trace in brief. -o LAYOUT writes the layout used as a layout file\n"
	"(for --layout or 'set memprof layout' elsewhere).\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "LAYOUT", "write the layout used to LAYOUT" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 2 bad input or usage, or nothing to walk",
	run_info, 0, NULL,
};
