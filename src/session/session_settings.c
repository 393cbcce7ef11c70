/* session_settings.c - the session's settings, declared once: name, kind, help, default, and how each is
   set and shown. mp_session_set/show read this table, and so do the front ends through the session API:
   gdb's `set/show memprof NAME`, the Python API's options of memprof.open(), `info`'s settings line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mp_snapshot_walk.h"
#include "session_int.h"

#define STR_(x) #x
#define STR(x) STR_(x) /* a number's macro as text */

typedef struct session_setting {
	const char *name;
	/* What a value is, as mp_session_setting_spec gives it: "choice WORDS" (one of the words), "device all"
	   (a device number or all), "number" (a whole number from 0), "file auto" (a file, or auto). */
	const char *spec;
	const char *def; /* the value of a new session */
	unsigned flags;  /* enum mp_session_setting_flags */
	const char *help;
	/* Set VALUE (checked): 0, or -1 with the session's error set. */
	int (*set)(mp_session *s, const char *value);
	/* The value as text, into BUF (SIZE bytes) when it is not a constant. */
	const char *(*show)(const mp_session *s, char *buf, size_t size);
} session_setting;

static int bad_value(mp_session *s, const char *name, const char *value, const char *expected)
{
	session_error(s, "%s: '%s' is not %s", name, value, expected);
	return -1;
}

/* VALUE as a switch: 1 on, 0 off, -1 neither. */
static int switch_value(const char *value)
{
	return strcmp(value, "on") == 0 ? 1 : strcmp(value, "off") == 0 ? 0 : -1;
}

static int set_units(mp_session *s, const char *value)
{
	return mp_units_parse(value, &s->units) ? 0 : bad_value(s, "units", value, "one of " MP_UNITS_CHOICES);
}

static const char *show_units(const mp_session *s, char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return mp_units_name(s->units);
}

static int set_device(mp_session *s, const char *value)
{
	long n;

	if (strcmp(value, "all") == 0 || value[0] == '\0')
		s->device = -1;
	else if (mp_parse_long(value, &n) && n >= 0 && n <= MP_CMD_MAX_DEVICE)
		s->device = n;
	else
		return bad_value(s, "device", value, "'all' or a device number");
	return 0;
}

static const char *show_device(const mp_session *s, char *buf, size_t size)
{
	if (s->device < 0)
		return "all";
	snprintf(buf, size, "%ld", s->device);
	return buf;
}

static int set_layout(mp_session *s, const char *value)
{
	mp_layout layout;
	mp_diag diag;
	mp_err err;

	if (strcmp(value, "auto") == 0 || value[0] == '\0') {
		free(s->layout_path);
		s->layout_path = NULL;
	} else {
		session_diag_init(s, &diag);
		if ((err = mp_layout_load_file(value, &layout, &diag)) != MP_OK) {
			session_fail(s, value, err, &diag);
			return -1;
		}
		free(s->layout_path);
		if ((s->layout_path = strdup(value)) == NULL) {
			session_error(s, "out of memory");
			return -1;
		}
		s->layout = layout;
	}
	mp_session_invalidate(s); /* another layout reads another state */
	return 0;
}

static const char *show_layout(const mp_session *s, char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return s->layout_path != NULL ? s->layout_path : "auto";
}

static int set_max_blocks(mp_session *s, const char *value)
{
	long n;

	if (!mp_parse_long(value, &n) || n < 0)
		return bad_value(s, "max-blocks", value, "a count (0: memprof's cap)");
	s->max_blocks = (size_t)n;
	mp_session_invalidate(s);
	return 0;
}

static const char *show_max_blocks(const mp_session *s, char *buf, size_t size)
{
	snprintf(buf, size, "%zu", s->max_blocks);
	return buf;
}

static int set_frames(mp_session *s, const char *value)
{
	int on = switch_value(value);

	if (on < 0)
		return bad_value(s, "frames", value, "on or off");
	s->walk_flags = on ? 0 : MP_SW_NO_FRAMES;
	mp_session_invalidate(s);
	return 0;
}

static const char *show_frames(const mp_session *s, char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return s->walk_flags & MP_SW_NO_FRAMES ? "off" : "on";
}

static int set_stop(mp_session *s, const char *value)
{
	int on = switch_value(value);

	if (on < 0)
		return bad_value(s, "stop", value, "on or off");
	if (s->stop != (on == 1))
		session_drop_target(s); /* opened again, held or not */
	s->stop = on == 1;
	return 0;
}

static const char *show_stop(const mp_session *s, char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return s->stop ? "on" : "off";
}

/* *SLOT = VALUE as a path that is there, or NULL for WORD (the default), or "" for OTHER (when not NULL). NAME
   names the setting in an error. */
static int set_path(mp_session *s, const char *name, char **slot, const char *value, const char *word,
		    const char *other)
{
	struct stat st;
	char *copy = NULL;

	if (other != NULL && strcmp(value, other) == 0)
		copy = strdup("");
	else if (strcmp(value, word) != 0 && value[0] != '\0') {
		if (stat(value, &st) != 0) {
			session_error(s, "%s: '%s': %s", name, value, strerror(errno));
			return -1;
		}
		copy = strdup(value);
	} else {
		free(*slot);
		*slot = NULL;
		return 0;
	}
	if (copy == NULL) {
		session_error(s, "out of memory");
		return -1;
	}
	free(*slot);
	*slot = copy;
	return 0;
}

static int set_viewer(mp_session *s, const char *value)
{
	return set_path(s, "viewer", &s->viewer, value, "online", "offline");
}

static const char *show_viewer(const mp_session *s, char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return s->viewer == NULL ? "online" : s->viewer[0] == '\0' ? "offline" : s->viewer;
}

static int set_d3(mp_session *s, const char *value)
{
	return set_path(s, "d3", &s->d3, value, "auto", NULL);
}

static const char *show_d3(const mp_session *s, char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return s->d3 == NULL ? "auto" : s->d3;
}

static const session_setting settings[] = {
	{ "units", "choice " MP_UNITS_CHOICES, "auto", 0,
	  "Units of sizes in the tables: auto (as _memory_viz chooses), B, KiB, MiB or GiB.", set_units, show_units },
	{ "device", "device all", "all", 0, "Which device the commands show: all, or a device number.", set_device,
	  show_device },
	{ "layout", "file auto", "auto", 0,
	  "The allocator's struct layout: auto (the build's, known or read from its DWARF), or a layout file\n"
	  "(memprof info -o FILE) for a build of no known layout.", set_layout, show_layout },
	{ "max-blocks", "number", "0", 0,
	  "The walk reads at most this many blocks, then stops with a warning (0: memprof's cap, "
	  STR(MP_WALK_MAX_BLOCKS_DEFAULT_MI) " Mi blocks).", set_max_blocks, show_max_blocks },
	{ "frames", "choice on off", "on", 0,
	  "Whether the walk decodes allocation frames (on), or leaves every frames list empty (off: faster).",
	  set_frames, show_frames },
	{ "stop", "choice on off", "on", MP_SESSION_SETTING_HOST,
	  "Whether a live process is held still (ptrace) while each command reads it and let go after (on),\n"
	  "or read as it runs (off: read again when it moves under the read). A debugger that holds the\n"
	  "process itself sets it off.", set_stop, show_stop },
	{ "viewer", "file online offline", "online", 0,
	  "Where trace_plot's and segment_plot's pages take PyTorch's viewer (MemoryViz.js): online (by URL, as\n"
	  "PyTorch's page), offline (inlined from python3's torch), or a PyTorch source tree or the file to inline.",
	  set_viewer, show_viewer },
	{ "d3", "file auto", "auto", 0,
	  "The d3 bundle an inlined viewer gets: auto (Debian's node-d3 on this machine), or a file.", set_d3, show_d3 },
};

#define NSETTINGS (sizeof settings / sizeof settings[0])

static const session_setting *setting(int i)
{
	return i >= 0 && (size_t)i < NSETTINGS ? &settings[i] : NULL;
}

static const session_setting *find(const char *name)
{
	for (size_t i = 0; name != NULL && i < NSETTINGS; i++)
		if (strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

void session_settings_defaults(mp_session *s)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		(void)settings[i].set(s, settings[i].def); /* the defaults are valid: test_session checks them */
}

int mp_session_set(mp_session *s, const char *name, const char *value)
{
	const session_setting *t = find(name);
	mp_out names;

	s->error[0] = '\0';
	if (t != NULL)
		return t->set(s, value != NULL ? value : "");
	mp_out_init(&names);
	for (size_t i = 0; i < NSETTINGS; i++)
		mp_out_printf(&names, "%s%s", i > 0 ? ", " : "", settings[i].name);
	session_error(s, "no setting '%s' (%s)", name != NULL ? name : "", names.data != NULL ? names.data : "");
	mp_out_free(&names);
	return -1;
}

const char *mp_session_show(mp_session *s, const char *name)
{
	const session_setting *t = find(name);

	return t != NULL ? t->show(s, s->show_buf, sizeof s->show_buf) : NULL;
}

void session_settings_line(const mp_session *s, mp_out *out)
{
	char buf[32];

	mp_out_puts(out, "settings:   ");
	for (size_t i = 0; i < NSETTINGS; i++)
		mp_out_printf(out, "%s %s %s", i > 0 ? "," : "", settings[i].name, settings[i].show(s, buf, sizeof buf));
	mp_out_putc(out, '\n');
}

const char *mp_session_setting_name(int i)
{
	return setting(i) != NULL ? setting(i)->name : NULL;
}

const char *mp_session_setting_help(int i)
{
	return setting(i) != NULL ? setting(i)->help : NULL;
}

const char *mp_session_setting_spec(int i)
{
	return setting(i) != NULL ? setting(i)->spec : NULL;
}

const char *mp_session_setting_default(int i)
{
	return setting(i) != NULL ? setting(i)->def : NULL;
}

unsigned mp_session_setting_flags(int i)
{
	return setting(i) != NULL ? setting(i)->flags : 0;
}
