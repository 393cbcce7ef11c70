/* cmd_version.c - `version`: which memprof this is (the command line's --version, gdb's `memprof version`). */
#include <config.h>

#include "command_int.h"

static int run_version(mp_command_ctx *c, const mp_command_args *a)
{
	mp_out out;
	int rc;

	(void)a;
	mp_out_init(&out);
	mp_out_puts(&out, "memprof " PACKAGE_VERSION "\n");
	rc = cmd_emit(c, &out, false);
	mp_out_free(&out);
	return rc;
}

const mp_command mp_cmd_version = {
	"version", MP_FRONT_ALL, "print memprof's version",
	"",
	"Prints \"memprof VERSION\", as `memprof --version` does. In the debugger it is the version of the\n"
	"library the command set runs on (the command set refuses a library of another version).\n",
	"",
	(const mp_option[]){
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done",
	run_version, 0, NULL,
};
