/* session_target.c - open the session's target when a command needs it, walk it once per stop,
   and find the snapshot a command names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_array.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"
#include "session_int.h"

/* The callback target's reads go through here to be counted (the benchmark reports them). */
static size_t counted_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	mp_session *s = ctx;

	s->reads++;
	return s->cb_read(s->cb_ctx, addr, buf, len);
}

/* One line of gdb's `info proc mappings`: "START END SIZE OFFSET [PERMS] [PATH]", numbers in hex.
   Lines that are not (headers, "process N") are skipped. */
static bool parse_maps_line(char *line, mp_mapping *m)
{
	unsigned long long v[4];
	char *p = line, *end;

	for (int i = 0; i < 4; i++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (p[0] != '0' || p[1] != 'x')
			return false;
		v[i] = strtoull(p, &end, 16);
		if (end == p)
			return false;
		p = end;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	/* gdb 12 and later put "r-xp"-style permissions before the file */
	if (strspn(p, "rwxsp-") == 4 && (p[4] == ' ' || p[4] == '\t' || p[4] == '\0')) {
		p += 4;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	if (*p != '/')
		return false; /* anonymous memory: no file to read */
	p[strcspn(p, "\r\n")] = '\0';
	*m = (mp_mapping){ .start = v[0], .end = v[1], .file_offset = v[3], .path = p };
	m->local_path = access(p, R_OK) == 0 ? p : NULL;
	return m->end > m->start;
}

static mp_err open_callback(mp_session *s, mp_diag *diag)
{
	char *text = strdup(s->maps_text != NULL ? s->maps_text : ""), *line, *save = NULL;
	mp_mapping *maps = NULL, m;
	size_t n = 0, cap = 0;
	mp_err err = MP_OK;

	if (text == NULL)
		return MP_E_NOMEM;
	for (line = strtok_r(text, "\n", &save); line != NULL && err == MP_OK; line = strtok_r(NULL, "\n", &save)) {
		if (!parse_maps_line(line, &m))
			continue;
		if ((err = mp_array_grow((void **)&maps, &cap, n + 1, sizeof *maps)) == MP_OK)
			maps[n++] = m;
	}
	if (err == MP_OK)
		err = mp_target_open_callback(s->cb_name != NULL ? s->cb_name : "debugger memory", counted_read, s,
					      maps, n, &s->target, diag);
	free(maps);
	free(text);
	return err;
}

static mp_err open_target(mp_session *s, mp_diag *diag)
{
	mp_target_opts opts = { .sysroot = s->sysroot, .solib_path = s->solib_path, .stop = s->stop };

	switch (s->kind) {
	case ST_PID:
		return mp_target_open_pid(s->pid, &opts, &s->target, diag);
	case ST_CORE:
		return mp_target_open_core(s->core, &opts, &s->target, diag);
	case ST_CALLBACK:
		return open_callback(s, diag);
	case ST_NONE:
		break;
	}
	return MP_E_USAGE;
}

static bool poll_interrupt(void *ctx)
{
	mp_session *s = ctx;

	return s->poll != NULL && s->poll(s->poll_ctx) != 0;
}

static const char *target_name(const mp_session *s, char *buf, size_t size)
{
	if (s->kind == ST_CORE)
		return s->core;
	if (s->kind == ST_CALLBACK && s->cb_name != NULL)
		return s->cb_name;
	snprintf(buf, size, "pid %d", s->pid);
	return buf;
}

mp_err session_open(mp_session *s, mp_diag *diag)
{
	return s->target == NULL ? open_target(s, diag) : MP_OK;
}

/* The session's target, opened if need be, for run C: a process is C's live one. */
static mp_err use_target(mp_session *s, mp_command_ctx *c, mp_diag *diag)
{
	mp_err err;

	if ((err = session_open(s, diag)) != MP_OK)
		return err;
	if (s->kind == ST_PID)
		c->live = s->target;
	return MP_OK;
}

int session_walk(mp_session *s, mp_command_ctx *c)
{
	mp_walk_opts opts = { .max_blocks = s->max_blocks, .progress_ctx = s, .interrupted = poll_interrupt };
	char name[32];
	mp_diag diag;
	mp_err err;

	if (s->kind == ST_NONE)
		return session_error(s, "%s", s->why != NULL ? s->why : "no target");
	mp_command_diag(c, &diag);
	if ((err = use_target(s, c, &diag)) != MP_OK)
		return session_fail(s, target_name(s, name, sizeof name), err, &diag);
	if (s->now != NULL)
		return MP_SESSION_OK;
	if (s->layout_path != NULL)
		opts.layout = &s->layout;
	if (poll_interrupt(s))
		return session_error(s, "interrupted");
	err = mp_walk_run(s->target, NULL, &opts, &s->walk, &diag);
	if (err == MP_OK)
		err = mp_snapshot_from_walk(s->walk, s->target, MP_SW_DEVICE_STATS | s->walk_flags, &s->now, &diag);
	if (err != MP_OK) {
		mp_session_invalidate(s);
		return session_fail(s, target_name(s, name, sizeof name), err, &diag);
	}
	return MP_SESSION_OK;
}

void session_drop_target(mp_session *s)
{
	mp_session_invalidate(s);
	mp_target_close(s->target);
	s->target = NULL;
}

struct session_snap *session_find(mp_session *s, const char *name)
{
	for (size_t i = 0; i < s->nsnaps; i++)
		if (strcmp(s->snaps[i].name, name) == 0)
			return &s->snaps[i];
	return NULL;
}

int session_resolve(mp_session *s, mp_command_ctx *c, const char *name, mp_snapshot **snap, bool *owned)
{
	struct session_snap *named;
	mp_diag diag;
	mp_err err;
	int rc;

	*snap = NULL;
	*owned = false;
	if (name == NULL || strcmp(name, "now") == 0) {
		if ((rc = session_walk(s, c)) != MP_SESSION_OK)
			return rc;
		*snap = s->now;
		return MP_SESSION_OK;
	}
	if ((named = session_find(s, name)) != NULL) {
		*snap = named->snap;
		return MP_SESSION_OK;
	}
	if (access(name, F_OK) != 0)
		return session_error(s, "'%s' is no snapshot name (see 'memprof snapshot list'), 'now', or file", name);
	session_diag_init(s, &diag);
	if ((err = mp_snapshot_load(name, 0, snap, &diag)) != MP_OK) /* its message names the file */
		return diag.msg[0] != '\0' ? session_error(s, "%s", diag.msg) : session_fail(s, name, err, NULL);
	*owned = true;
	return MP_SESSION_OK;
}

/* ---- the session as a front end of the command table */

static int front_snapshot(mp_command_ctx *c, int i, const char *word, unsigned load_flags, unsigned walk_flags,
			  mp_snapshot **snap, bool *owned)
{
	(void)i;
	(void)load_flags; /* a file is read whole: a kept snapshot serves every command */
	(void)walk_flags; /* the walk keeps device statistics always */
	return session_resolve(c->data, c, word, snap, owned);
}

/* Core PATH walked on its own (info CORE), with the session's layout setting. */
static int walk_core(mp_command_ctx *c, const char *path, mp_target **t, mp_walk **w)
{
	mp_session *s = c->data;
	mp_walk_opts opts = { .max_blocks = s->max_blocks, .progress_ctx = s, .interrupted = poll_interrupt };
	mp_target_opts topts = { 0 };
	mp_diag diag;
	mp_err err;

	if (mp_file_kind(path) != MP_FILE_CORE)
		return mp_command_error(c, "'%s': not a core dump", path);
	if (s->layout_path != NULL)
		opts.layout = &s->layout;
	mp_command_diag(c, &diag);
	if ((err = mp_target_open_core(path, &topts, t, &diag)) != MP_OK)
		return mp_command_fail(c, c->name, err, &diag);
	return mp_command_walk(c, c->name, *t, &opts, w);
}

static int front_walked(mp_command_ctx *c, int i, const char *word, mp_target **t, mp_walk **w, bool *owned)
{
	mp_session *s = c->data;
	int rc;

	(void)i;
	*owned = word != NULL;
	if (word != NULL)
		return walk_core(c, word, t, w);
	if ((rc = session_walk(s, c)) != MP_SESSION_OK)
		return rc;
	*t = s->target;
	*w = s->walk;
	return MP_CMD_OK;
}

/* The target without a walk (pystack): core WORD on its own, else the session's, opened if need be. */
static int front_target(mp_command_ctx *c, int i, const char *word, mp_target **t, bool *owned)
{
	mp_session *s = c->data;
	mp_target_opts topts = { 0 };
	mp_diag diag;
	mp_err err;

	(void)i;
	*t = NULL;
	*owned = word != NULL;
	mp_command_diag(c, &diag);
	if (word != NULL) {
		if (mp_file_kind(word) != MP_FILE_CORE)
			return mp_command_error(c, "'%s': not a core dump", word);
		if ((err = mp_target_open_core(word, &topts, t, &diag)) != MP_OK)
			return mp_command_fail(c, c->name, err, &diag);
		return MP_CMD_OK;
	}
	if (s->kind == ST_NONE)
		return mp_command_error(c, "%s", s->why != NULL ? s->why : "no target");
	if ((err = use_target(s, c, &diag)) != MP_OK)
		return mp_command_fail(c, c->name, err, &diag);
	*t = s->target;
	return MP_CMD_OK;
}

static const char *backend_name(const mp_session *s)
{
	switch (s->kind) {
	case ST_PID:
		return "direct: the live process's memory through process_vm_readv or /proc/PID/mem";
	case ST_CORE:
		return "direct: memprof reads the core file itself";
	case ST_CALLBACK:
		return "debugger: reads through the debugger's memory callback";
	case ST_NONE:
		break;
	}
	return "none";
}

/* info's lines about the session: its version and backend before, its reads and settings after. */
static void front_info_lines(mp_command_ctx *c, mp_out *out, bool after)
{
	mp_session *s = c->data;

	if (!after) {
		mp_out_printf(out, "memprof:     %s\n", mp_session_version());
		mp_out_printf(out, "reading:     %s\n", backend_name(s));
		return;
	}
	if (s->kind == ST_CALLBACK)
		mp_out_printf(out, "reads:       %llu calls of the debugger's memory read\n",
			      (unsigned long long)s->reads);
	session_settings_line(s, out);
}

/* Failures are told under the command's name, as typed. */
static const char *front_label(mp_command_ctx *c, int i, const char *word, char *buf, size_t size)
{
	(void)i;
	(void)word;
	(void)buf;
	(void)size;
	return c->name;
}

static int front_emit(mp_command_ctx *c, const mp_out *text)
{
	mp_session *s = c->data;

	mp_out_write(&s->out, text->data != NULL ? text->data : "", text->len);
	return s->out.err == MP_OK ? MP_CMD_OK : mp_command_fail(c, "output", s->out.err, NULL);
}

static void front_warn(void *ctx, const char *line)
{
	mp_session *s = ctx;

	mp_out_printf(&s->warnings, "memprof: warning: %s\n", line);
}

/* The process moved under the read: its walk goes, and the failed read's error. */
static void front_again(mp_command_ctx *c)
{
	mp_session *s = c->data;

	mp_session_invalidate(s);
	s->error[0] = '\0';
}

const mp_command_front session_front = {
	.mask = MP_FRONT_SESSION,
	.snapshot = front_snapshot,
	.walked = front_walked,
	.target = front_target,
	.info_lines = front_info_lines,
	.label = front_label,
	.emit = front_emit,
	.warn = front_warn,
	.again = front_again,
};

void session_ctx_init(mp_session *s, mp_command_ctx *c, const char *typed)
{
	memset(c, 0, sizeof *c);
	c->front = &session_front;
	c->data = s;
	c->units = s->units;
	c->device = s->device;
	c->one_device = s->device;
	c->viewer = s->viewer;
	c->d3 = s->d3;
	c->interactive = true;
	c->name = typed;
}
