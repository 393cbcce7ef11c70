/* mp_snapshot_file.c - snapshot files: read-only mapping, format detection, save. */
#include "mp_snapshot_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mp_json.h"
#include "mp_json_stream.h"
#include "mp_pickle_read.h"
#include "mp_pickle_stream.h"
#include "mp_pickle_write.h"

enum mp_format mp_format_detect(const unsigned char *head, size_t len)
{
	size_t i = 0;

	if (len >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
		return MP_FMT_PICKLE;
	while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
		i++;
	if (i < len && (head[i] == '{' || head[i] == '['))
		return MP_FMT_JSON;
	/* Protocol 0/1 pickles of containers start with these opcodes. */
	if (len > 0 && (head[0] == '}' || head[0] == ']' || head[0] == '(' || head[0] == 0x80))
		return MP_FMT_PICKLE;
	return MP_FMT_UNKNOWN;
}

enum mp_format mp_format_from_name(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot == NULL)
		return MP_FMT_UNKNOWN;
	if (strcasecmp(dot, ".json") == 0)
		return MP_FMT_JSON;
	if (strcasecmp(dot, ".pickle") == 0 || strcasecmp(dot, ".pkl") == 0)
		return MP_FMT_PICKLE;
	return MP_FMT_UNKNOWN;
}

/* Pages a reader has passed are not needed again (strings are copied into
   the heap), so drop them to keep the resident set small. */
struct mapping {
	const unsigned char *base;
	size_t dropped;
};

static void drop_consumed(void *ctx, size_t consumed)
{
	struct mapping *m = ctx;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t upto = consumed / page * page;

	if (upto > m->dropped) {
		madvise((void *)(m->base + m->dropped), upto - m->dropped, MADV_DONTNEED);
		m->dropped = upto;
	}
}

/* Append S to the NUL-terminated text in BUF (CAP bytes), cutting it short if need be. */
static void append_text(char *buf, size_t cap, const char *s)
{
	size_t used = strlen(buf);

	while (*s != '\0' && used + 1 < cap)
		buf[used++] = *s++;
	buf[used] = '\0';
}

/* Put the input's name in front of a reader's message, once. */
static void name_the_input(mp_diag *diag, const char *name)
{
	char msg[sizeof diag->msg] = "'";
	size_t n = strlen(name);

	if (diag == NULL || (diag->msg[0] == '\'' && strncmp(diag->msg + 1, name, n) == 0))
		return;
	append_text(msg, sizeof msg, name);
	append_text(msg, sizeof msg, "': ");
	append_text(msg, sizeof msg, diag->msg[0] ? diag->msg : "cannot read");
	memcpy(diag->msg, msg, sizeof msg);
}

/* The pickle reader's options for FLAGS (SKIP: room for the skip key). */
static struct mp_pickle_opts pickle_opts(mp_heap *heap, unsigned flags, struct mapping *map, mp_val *skip)
{
	struct mp_pickle_opts opts = { 0 };

	*skip = mp_heap_keys(heap)->frames;
	if (map != NULL) {
		opts.progress = drop_consumed;
		opts.progress_ctx = map;
	}
	if (flags & MP_LOAD_NO_FRAMES) {
		opts.skip_keys = skip;
		opts.nskip_keys = 1;
		opts.skip_in = (flags & MP_LOAD_NO_BLOCK_FRAMES ? MP_PICKLE_SKIP_IN_BLOCKS : 0) |
			       (flags & MP_LOAD_NO_TRACE_FRAMES ? MP_PICKLE_SKIP_IN_TRACE : 0);
	}
	opts.one_thread = (flags & MP_LOAD_GENERIC) != 0;
	return opts;
}

/* FLAGS for a reader that cannot tell a snapshot's records apart: frames are passed over only
   where none are needed. */
static unsigned flags_without_records(unsigned flags)
{
	return (flags & MP_LOAD_NO_FRAMES) == MP_LOAD_NO_FRAMES ? flags : flags & ~MP_LOAD_NO_FRAMES;
}

static mp_err read_pickle(mp_heap *heap, const unsigned char *data, size_t len, unsigned flags,
			  struct mapping *map, mp_val *root, mp_diag *diag)
{
	mp_val skip;
	struct mp_pickle_opts opts = pickle_opts(heap, flags_without_records(flags), map, &skip);

	return mp_pickle_read(heap, data, len, root, &opts, diag);
}

static mp_err stream_pickle(mp_heap *heap, const unsigned char *data, size_t len, unsigned flags,
			    struct mapping *map, mp_snapshot **out)
{
	mp_val skip;
	struct mp_pickle_opts opts = pickle_opts(heap, flags, map, &skip);

	return mp_pickle_read_snapshot(heap, data, len, &opts, out);
}

/* The key whose lists the JSON readers pass over under FLAGS. */
static mp_val json_skip_key(const mp_heap *heap, unsigned flags)
{
	return flags_without_records(flags) & MP_LOAD_NO_FRAMES ? mp_heap_keys(heap)->frames : MP_ABSENT;
}

static mp_err stream_json(mp_heap *heap, const unsigned char *data, size_t len, unsigned flags,
			  struct mapping *map, mp_snapshot **out)
{
	struct mp_json_stream_opts opts = { .skip_key = json_skip_key(heap, flags) };

	if (map != NULL) {
		opts.progress = drop_consumed;
		opts.progress_ctx = map;
	}
	return mp_json_read_snapshot(heap, (const char *)data, len, &opts, out);
}

/* A format's stream reader (records straight to the model): STREAM_PICKLE or STREAM_JSON. */
typedef mp_err (*stream_fn)(mp_heap *heap, const unsigned char *data, size_t len, unsigned flags,
			    struct mapping *map, mp_snapshot **out);

/* The stream reader first, unless MP_LOAD_GENERIC or the environment variable OFF says not to;
   what it does not take, the generic reader and mp_snapshot_from_value read again from the start. */
static mp_err stream(stream_fn reader, const char *off, const unsigned char *data, size_t len, unsigned flags,
		     struct mapping *map, mp_snapshot **out)
{
	mp_heap *heap;
	mp_err err;

	if ((flags & MP_LOAD_GENERIC) || getenv(off) != NULL || (heap = mp_heap_new()) == NULL)
		return MP_E_UNSUPPORTED;
	err = reader(heap, data, len, flags, map, out);
	if (err != MP_OK) {
		mp_heap_free(heap);
		if (map != NULL)
			map->dropped = 0;
	}
	return err;
}

static mp_err load_once(const char *name, const unsigned char *data, size_t len, unsigned flags,
			struct mapping *map, mp_snapshot **out, mp_diag *diag)
{
	enum mp_format fmt = mp_format_detect(data, len < 64 ? len : 64);
	mp_heap *heap;
	mp_val root;
	mp_err err;

	if ((fmt == MP_FMT_PICKLE &&
	     stream(stream_pickle, "MEMPROF_NO_PICKLE_STREAM", data, len, flags, map, out) == MP_OK) ||
	    (fmt == MP_FMT_JSON && stream(stream_json, "MEMPROF_NO_JSON_STREAM", data, len, flags, map, out) == MP_OK))
		return MP_OK;
	if ((heap = mp_heap_new()) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "'%s': out of memory", name);
	switch (fmt) {
	case MP_FMT_PICKLE:
		err = read_pickle(heap, data, len, flags, map, &root, diag);
		break;
	case MP_FMT_JSON:
		err = mp_json_read(heap, (const char *)data, len, json_skip_key(heap, flags), &root, diag);
		break;
	default:
		err = mp_fail(diag, MP_E_FORMAT, "'%s': %s", name,
			      len == 0 ? "empty file" : "neither a snapshot pickle nor JSON");
		break;
	}
	if (err == MP_OK)
		err = mp_snapshot_from_value(heap, root, out, diag);
	if (err != MP_OK) {
		mp_heap_free(heap);
		name_the_input(diag, name);
	}
	return err;
}

static mp_err load_data(const char *name, const unsigned char *data, size_t len, unsigned flags,
			struct mapping *map, mp_snapshot **out, mp_diag *diag)
{
	mp_err err = load_once(name, data, len, flags, map, out, diag);

	/* A projection fails where a full read would not when a skipped value is
	   wanted elsewhere (in a hand-made pickle): then read everything. */
	if (err == MP_E_SKIPPED && (flags & MP_LOAD_NO_FRAMES) != 0) {
		if (diag != NULL)
			diag->msg[0] = '\0';
		if (map != NULL)
			map->dropped = 0;
		err = load_once(name, data, len, flags & ~MP_LOAD_NO_FRAMES, map, out, diag);
	}
	return err;
}

mp_err mp_snapshot_load_mem(const char *name, const unsigned char *data, size_t len,
			    unsigned flags, mp_snapshot **out, mp_diag *diag)
{
	return load_data(name, data, len, flags, NULL, out, diag);
}

/* Read all of FD (a pipe) into memory. */
static mp_err slurp(int fd, unsigned char **data, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap), *nb;
	ssize_t r;

	while (buf != NULL && (r = read(fd, buf + n, cap - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return MP_E_ERRNO;
		}
		n += (size_t)r;
		if (n == cap) {
			nb = realloc(buf, cap * 2);
			if (nb == NULL)
				free(buf);
			buf = nb;
			cap *= 2;
		}
	}
	if (buf == NULL)
		return MP_E_NOMEM;
	*data = buf;
	*len = n;
	return MP_OK;
}

static mp_err load_stdin(unsigned flags, mp_snapshot **out, mp_diag *diag)
{
	unsigned char *data;
	size_t len;
	mp_err err = slurp(STDIN_FILENO, &data, &len);

	if (err != MP_OK)
		return mp_fail(diag, err, "standard input: %s", strerror(errno));
	err = load_data("-", data, len, flags, NULL, out, diag);
	free(data);
	return err;
}

mp_err mp_snapshot_load(const char *path, unsigned flags, mp_snapshot **out, mp_diag *diag)
{
	struct stat st;
	struct mapping map = { 0 };
	void *base;
	mp_err err;
	int fd;

	if (strcmp(path, "-") == 0)
		return load_stdin(flags, out, diag);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mp_fail(diag, MP_E_ERRNO, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return mp_fail(diag, MP_E_FORMAT, "'%s' is not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return mp_fail(diag, MP_E_FORMAT, "'%s': empty file", path);
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return mp_fail(diag, MP_E_ERRNO, "cannot map '%s': %s", path, strerror(errno));
	madvise(base, (size_t)st.st_size, MADV_SEQUENTIAL);
	map.base = base;
	err = load_data(path, base, (size_t)st.st_size, flags, &map, out, diag);
	munmap(base, (size_t)st.st_size);
	return err;
}

mp_err mp_snapshot_save(mp_snapshot *snap, enum mp_format fmt, mp_out *out, mp_diag *diag)
{
	mp_val root;
	mp_err err;

	if (snap->projected)
		return mp_fail(diag, MP_E_UNSUPPORTED, "snapshot was loaded without its frames: cannot save it");
	err = mp_snapshot_to_value(snap, fmt == MP_FMT_JSON ? MP_TV_POOL_ID_AS_LIST : 0, &root, diag);
	if (err != MP_OK)
		return err;
	if (fmt == MP_FMT_JSON)
		return mp_json_write(snap->heap, root, out, diag);
	return mp_pickle_write(snap->heap, root, out, diag);
}
