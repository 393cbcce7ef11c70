/* cmd_pystack.c - `pystack`: every Python thread of a core or process and its Python stack, innermost
   frame first, as faulthandler prints it (plain) or as a list of threads (json). Needs CPython only, not
   PyTorch: the target is opened, not walked. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "mp_py_heap.h"
#include "mp_py_threads.h"

/* A message shown on one line: newlines as \n, cut after MAX bytes. */
static void put_line_text(mp_out *out, const char *text, size_t max)
{
	size_t n = strlen(text);

	for (size_t i = 0; i < n && i < max; i++) {
		if (text[i] == '\n')
			mp_out_puts(out, "\\n");
		else
			mp_out_write(out, &text[i], 1);
	}
	if (n > max)
		mp_out_puts(out, "...");
}

static void plain_thread(mp_out *out, const mp_py_threads *ts, const mp_py_thread *th)
{
	mp_out_printf(out, "Thread 0x%llx", (unsigned long long)th->thread_id);
	if (th->native_thread_id != 0)
		mp_out_printf(out, " (LWP %llu)", (unsigned long long)th->native_thread_id);
	if (th->is_main)
		mp_out_puts(out, " [main thread]");
	if (th->interp != ts->main_interp)
		mp_out_printf(out, " [interpreter 0x%llx]", (unsigned long long)th->interp);
	if (th->holds_gil)
		mp_out_puts(out, " [holds the GIL]");
	if (th->exc_type != NULL) {
		mp_out_printf(out, " [%s %s", th->exc_raising ? "raising" : "handling", th->exc_type);
		if (th->exc_msg != NULL) {
			mp_out_puts(out, ": ");
			put_line_text(out, th->exc_msg, 300);
		}
		mp_out_puts(out, "]");
	}
	mp_out_puts(out, " (most recent call first):\n");
	if (th->nframes == 0)
		mp_out_puts(out, th->frames_cut ? "  <no Python frame could be read>\n" : "  <no Python frame>\n");
	for (size_t j = 0; j < th->nframes; j++) {
		const mp_py_frame *f = &th->frames[j];

		if (f->line >= 0)
			mp_out_printf(out, "  File \"%s\", line %d, in %s\n", f->filename, f->line, f->name);
		else
			mp_out_printf(out, "  File \"%s\", line ?, in %s\n", f->filename, f->name);
	}
	if (th->frames_cut && th->nframes > 0)
		mp_out_puts(out, "  <the rest could not be read>\n");
}

static cJSON *json_frame(const mp_py_frame *f)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "file", f->filename);
	if (f->line >= 0)
		cJSON_AddNumberToObject(o, "line", f->line);
	else
		cJSON_AddNullToObject(o, "line");
	cJSON_AddStringToObject(o, "function", f->name);
	cJSON_AddStringToObject(o, "qualname", f->qualname);
	return o;
}

/* ADDR as a "0x..." string member NAME of O. */
static void add_hex(cJSON *o, const char *name, uint64_t addr)
{
	char buf[24];

	snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)addr);
	cJSON_AddStringToObject(o, name, buf);
}

static cJSON *json_thread(const mp_py_threads *ts, const mp_py_thread *th)
{
	cJSON *o = cJSON_CreateObject(), *frames, *exc;

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "thread_id", (double)th->thread_id);
	if (th->native_thread_id != 0)
		cJSON_AddNumberToObject(o, "native_thread_id", (double)th->native_thread_id);
	else
		cJSON_AddNullToObject(o, "native_thread_id");
	add_hex(o, "thread_state", th->tstate);
	add_hex(o, "interpreter", th->interp);
	cJSON_AddBoolToObject(o, "main_thread", th->is_main);
	if (ts->gil_known)
		cJSON_AddBoolToObject(o, "holds_gil", th->holds_gil);
	else
		cJSON_AddNullToObject(o, "holds_gil");
	if (th->exc_type != NULL && (exc = cJSON_AddObjectToObject(o, "exception")) != NULL) {
		cJSON_AddStringToObject(exc, "type", th->exc_type);
		if (th->exc_msg != NULL)
			cJSON_AddStringToObject(exc, "message", th->exc_msg);
		else
			cJSON_AddNullToObject(exc, "message");
		cJSON_AddStringToObject(exc, "state", th->exc_raising ? "raising" : "handling");
		add_hex(exc, "object", th->exc);
	} else {
		cJSON_AddNullToObject(o, "exception");
	}
	cJSON_AddBoolToObject(o, "frames_complete", !th->frames_cut);
	if ((frames = cJSON_AddArrayToObject(o, "frames")) != NULL)
		for (size_t j = 0; j < th->nframes; j++)
			cJSON_AddItemToArray(frames, json_frame(&th->frames[j]));
	return o;
}

/* The threads as JSON text into OUT; false when out of memory. */
static bool json_threads(mp_out *out, const mp_py_threads *ts)
{
	cJSON *list = cJSON_CreateArray();
	char *text;

	if (list == NULL)
		return false;
	for (size_t i = 0; i < ts->nthreads; i++)
		cJSON_AddItemToArray(list, json_thread(ts, &ts->threads[i]));
	text = cJSON_Print(list);
	cJSON_Delete(list);
	if (text == NULL)
		return false;
	mp_out_puts(out, text);
	mp_out_puts(out, "\n");
	free(text);
	return true;
}

/* Each exception's type named with its module, as Python prints it (torch.OutOfMemoryError): a heap type's
   tp_name lacks it (PyPI's torch 2.14 makes its exceptions so), its __module__ says it. Left as it is when the
   heap cannot be read or the type is a builtin. */
static void qualify_exceptions(mp_target *t, mp_py_threads *ts)
{
	mp_py_interp py;
	mp_py_runtime rt;
	mp_py_heap *h;

	if (mp_py_find(t, &py, NULL) != MP_OK || mp_py_runtime_read(t, &py, &rt, NULL) != MP_OK ||
	    mp_py_heap_open(t, &py, &rt, NULL, &h, NULL) != MP_OK)
		return;
	for (size_t i = 0; i < ts->nthreads; i++) {
		mp_py_thread *th = &ts->threads[i];
		const mp_py_type *ty;
		uint64_t type;
		char *name;

		if (th->exc_type == NULL || strchr(th->exc_type, '.') != NULL ||
		    mp_py_object_type(h, th->exc, &type, NULL) != MP_OK || (ty = mp_py_heap_type(h, type, NULL)) == NULL ||
		    strcmp(ty->module, "builtins") == 0 || strcmp(ty->name, th->exc_type) != 0 ||
		    asprintf(&name, "%s.%s", ty->module, ty->name) < 0)
			continue;
		free(th->exc_type);
		th->exc_type = name;
	}
	mp_py_heap_close(h);
}

static int run_pystack(mp_command_ctx *c, const mp_command_args *a)
{
	const char *format = mp_arg(a, MP_O_FORMAT);
	const char *word = a->npos > 0 ? a->pos[0] : NULL;
	mp_py_threads ts;
	mp_target *t;
	mp_out out;
	mp_diag diag;
	char name[64];
	bool owned;
	mp_err err;
	int rc = c->front->target(c, 0, word, &t, &owned);

	if (rc != MP_CMD_OK)
		return rc;
	mp_command_diag(c, &diag);
	err = mp_py_threads_read_target(t, &ts, &diag);
	if (err == MP_OK)
		qualify_exceptions(t, &ts);
	if (owned)
		mp_target_close(t);
	if (err != MP_OK)
		return mp_command_fail(c, cmd_label(c, a, 0, name, sizeof name), err, &diag);
	mp_out_init(&out);
	if (format != NULL && strcmp(format, "json") == 0) {
		if (!json_threads(&out, &ts))
			out.err = MP_E_NOMEM;
	} else {
		for (size_t i = 0; i < ts.nthreads; i++) {
			if (i > 0)
				mp_out_puts(&out, "\n");
			plain_thread(&out, &ts, &ts.threads[i]);
		}
	}
	rc = out.err != MP_OK ? mp_command_fail(c, "output", out.err, NULL) : cmd_emit(c, &out, false);
	mp_out_free(&out);
	if (rc == MP_CMD_OK && ts.nthreads == 0)
		rc = cmd_nothing(c, cmd_label(c, a, 0, name, sizeof name), "no Python thread");
	mp_py_threads_free(&ts);
	return rc;
}

const mp_command mp_cmd_pystack = {
	"pystack", MP_FRONT_ALL, "every Python thread's stack in a core or process (any CPython 3.10-3.14)",
	"TARGET [--format plain|json]",
	"Every thread of every interpreter of the CPython in the target (a core dump or a live\n"
	"process, with or without PyTorch) and its Python frames, innermost first, as faulthandler\n"
	"prints them: file, line and function. A thread's line says its pthread id, its LWP (3.11 on),\n"
	"whether it is the main thread or holds the GIL, and the exception it is handling or raising\n"
	"(type and message). --format json gives a list of threads with their frames (and each\n"
	"function's qualified name). Damaged memory gives the frames that could be read and a\n"
	"warning. Nothing is written to the target and no code runs in it.\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain json", "F", "plain (default) or json" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 1 no Python thread, 2 bad input or usage, or no CPython in the target",
	run_pystack, 0, NULL,
};
