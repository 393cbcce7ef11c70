/* cmd_oom.c - `oom`: why a request ran out of memory, from a core, a live process, the debugger's process or
   a snapshot file. The failed request is the trace's last 'oom' entry (memory history on), else the
   OutOfMemoryError being raised or handled in a Python thread (its message), else the c10::OutOfMemoryError
   the debugger caught (--cxx-exception, what `catch oom` passes), else --size. */
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "mp_oom.h"
#include "mp_py_threads.h"
#include "mp_torch_error.h"

/* What the target's threads say about an OOM: the message of an OutOfMemoryError in flight. */
typedef struct found {
	uint64_t cxx_exception; /* 0: look in the Python threads */
	char *message;
	char where[120];
} found;

static void read_exception(mp_target *t, void *arg)
{
	found *f = arg;
	mp_py_threads ts;

	if (f->message != NULL)
		return; /* --message said it */
	if (f->cxx_exception != 0) {
		if (mp_torch_error_message(t, f->cxx_exception, &f->message, NULL) == MP_OK)
			snprintf(f->where, sizeof f->where, "the c10::OutOfMemoryError thrown at 0x%llx",
				 (unsigned long long)f->cxx_exception);
		return;
	}
	if (mp_py_threads_read_target(t, &ts, NULL) != MP_OK)
		return;
	for (size_t i = 0; i < ts.nthreads && f->message == NULL; i++) {
		const mp_py_thread *th = &ts.threads[i];

		if (th->exc_type == NULL || th->exc_msg == NULL || strstr(th->exc_type, "OutOfMemoryError") == NULL)
			continue;
		f->message = strdup(th->exc_msg);
		snprintf(f->where, sizeof f->where, "the %s %s in thread 0x%llx%s", th->exc_type,
			 th->exc_raising ? "being raised" : "being handled", (unsigned long long)th->thread_id,
			 th->is_main ? " (main)" : "");
	}
	mp_py_threads_free(&ts);
}

/* The request to explain, in order: --size, the trace, the exception. */
static int find_request(mp_command_ctx *c, const mp_command_args *a, const mp_snapshot *snap, const found *f,
			mp_oom_request *req)
{
	long device = mp_arg_device(a, MP_O_DEVICE, -1), stream = 0;
	const char *size = mp_arg(a, MP_O_SIZE), *s = mp_arg(a, MP_O_STREAM);
	mp_oom_request msg;
	bool have_msg = f->message != NULL && mp_oom_request_from_message(f->message, 0, &msg);

	if (s != NULL && !mp_parse_long(s, &stream))
		return mp_command_error(c, "oom: --stream: '%s' is no stream", s);
	if (size != NULL) {
		*req = (mp_oom_request){ .source = MP_OOM_FROM_ARGS, .device = device < 0 ? 0 : device,
					 .stream = stream, .device_free = -1, .trace_index = -1 };
		if (!mp_parse_size(size, &req->size) || req->size <= 0)
			return mp_command_error(c, "oom: --size: '%s' is no size", size);
		snprintf(req->where, sizeof req->where, "--size (a request asked about, not one that failed)");
		return MP_CMD_OK;
	}
	if (mp_oom_request_from_trace(snap, have_msg && device < 0 ? msg.device : device, req) == MP_OK) {
		if (have_msg && msg.device == req->device) {
			req->has_message = true;
			req->message = msg.message;
		}
		return MP_CMD_OK;
	}
	if (have_msg && (device < 0 || device == msg.device)) {
		*req = msg;
		if (s != NULL)
			req->stream = stream;
		if (snprintf(req->where, sizeof req->where, "%s (its message; the stream is %s)", f->where,
			     s != NULL ? "--stream's" : "taken to be the default stream 0") < 0)
			req->where[0] = '\0';
		return MP_CMD_OK;
	}
	return MP_CMD_NOTHING;
}

static int run_oom(mp_command_ctx *c, const mp_command_args *a)
{
	const char *format = mp_arg(a, MP_O_FORMAT), *units = mp_arg(a, MP_O_UNITS), *cxx = mp_arg(a, MP_O_CXX_EXCEPTION);
	const char *message = mp_arg(a, MP_O_MESSAGE);
	found f = { 0 };
	mp_snapshot *snap = NULL;
	mp_oom_request req;
	mp_oom *o = NULL;
	enum mp_units u = c->units;
	mp_out out;
	mp_diag diag;
	char name[64];
	bool owned;
	long addr;
	mp_err err;
	int rc;

	if (cxx != NULL && (!mp_parse_long(cxx, &addr) || addr == 0))
		return mp_command_error(c, "oom: --cxx-exception: '%s' is no address", cxx);
	f.cxx_exception = cxx != NULL ? (uint64_t)addr : 0;
	if (message != NULL) {
		mp_oom_message m;

		if (!mp_oom_message_parse(message, &m))
			return mp_command_error(c, "oom: --message: not a CUDA out-of-memory message ('Tried to allocate' "
					       "missing)");
		if ((f.message = strdup(message)) == NULL)
			return mp_command_fail(c, "oom", MP_E_NOMEM, NULL);
		snprintf(f.where, sizeof f.where, "--message");
	}
	if (units != NULL)
		mp_units_parse(units, &u);
	if ((rc = cmd_snapshot_annotated_then(c, a, 0, 0, !mp_arg_given(a, MP_O_NO_OWNERS), &snap, &owned,
					      read_exception, &f)) != MP_CMD_OK) {
		free(f.message);
		return rc;
	}
	if ((rc = find_request(c, a, snap, &f, &req)) != MP_CMD_OK) {
		cmd_release(snap, owned);
		free(f.message);
		return rc == MP_CMD_NOTHING
			       ? cmd_nothing(c, cmd_label(c, a, 0, name, sizeof name),
					     "no OOM to explain: no 'oom' entry in the trace, no OutOfMemoryError in any "
					     "thread (give --size to ask about a request)")
			       : rc;
	}
	free(f.message);
	mp_command_diag(c, &diag);
	err = mp_oom_explain(snap, &req, &o, &diag);
	cmd_release(snap, owned);
	if (err != MP_OK)
		return mp_command_fail(c, cmd_label(c, a, 0, name, sizeof name), err, &diag);
	mp_out_init(&out);
	mp_oom_report(o, format == NULL ? MP_OOM_PLAIN : strcmp(format, "json") == 0 ? MP_OOM_JSON
						   : strcmp(format, "rst") == 0 ? MP_OOM_RST : MP_OOM_PLAIN, u, &out);
	rc = out.err != MP_OK ? mp_command_fail(c, "output", out.err, NULL) : cmd_emit(c, &out, false);
	mp_out_free(&out);
	if (rc == MP_CMD_OK && !mp_oom_is_oom(o))
		rc = MP_CMD_NOTHING;
	mp_oom_free(o);
	return rc;
}

const mp_command mp_cmd_oom = {
	"oom", MP_FRONT_ALL, "why a request ran out of memory, and what would have worked",
	"TARGET [--device N] [--size BYTES [--stream S] | --message TEXT] [--no-owners]\n"
	"       [--format plain|rst|json] [--units U]",
	"Explains an out-of-memory error of PyTorch's CUDA caching allocator from the allocator's state:\n"
	"a core dump, a live process, the debugger's process, or a snapshot pickle. The failed request\n"
	"is the last 'oom' entry of the device's trace (memory history on: its exact size and stream),\n"
	"else the torch.OutOfMemoryError a Python thread raises or handles, or the one --message quotes from\n"
	"a log (its message: the allocation size, the device, the free memory; the stream is taken to be\n"
	"the default one), else --size\n"
	"(a request asked about: would it be served now?). The allocator's decision is replayed with its\n"
	"own rules and settings (round_size, small/large pool, best fit on the stream, max_split_size,\n"
	"the cudaMalloc size, the retry that releases cached segments), PyTorch's numbers are printed\n"
	"next to the same numbers computed from the state, and every byte reserved but not live goes to\n"
	"one cause, by weight (device_full and outside first: see src/oom/OOM-CAUSES.md): device_full,\n"
	"outside, private_pool, pending_free, other_pool, other_stream, oversize_split,\n"
	"fragmentation. Then the fragmentation of each pool and stream, who holds the live memory (owners\n"
	"from the Python heap, else call sites, else blocks), what would have worked (expandable_segments,\n"
	"max_split_size_mb:M, empty_cache() at a point of the trace, freeing a named holder, dropping a\n"
	"private pool, or nothing of the allocator's) and what would not have helped, with the reason.\n"
	"In gdb, `memprof catch oom` stops at the next OOM and explains it; `memprof watch --pid` keeps\n"
	"the explanation of each OOM of a running job.\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N", "the device of the OOM (default: the one that has it)" },
		{ MP_O_SIZE, MP_OPT_SIZE, NULL, "BYTES", "explain a request of BYTES instead of a failed one" },
		{ MP_O_STREAM, MP_OPT_INTEGER, NULL, "S", "the stream of the request (default 0, the default stream)" },
		{ MP_O_NO_OWNERS, MP_OPT_FLAG, NULL, NULL, "do not read owners from the Python heap" },
		{ MP_O_MESSAGE, MP_OPT_TEXT, NULL, "TEXT", "the OutOfMemoryError's message, from a log (a snapshot without history)" },
		{ MP_O_CXX_EXCEPTION, MP_OPT_TEXT, NULL, "ADDR", "the c10::OutOfMemoryError at ADDR (gdb's catch oom)" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json", "F", "plain (default), rst or json" },
		{ MP_O_UNITS, MP_OPT_CHOICE, MP_UNITS_CHOICES, "U", "units of the sizes (JSON counts bytes)" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 an OOM explained, 1 none (or the request asked about would be served), 2 bad input or usage",
	run_oom, 0, NULL,
};
