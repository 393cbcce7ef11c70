/* oom_message.c - the numbers of PyTorch's CUDA out-of-memory message, and its way of printing sizes.
   Two forms exist: 2.0's "Tried to allocate 20.00 MiB (GPU 0; 1.00 GiB total capacity; 900.00 MiB already
   allocated; 10.00 MiB free; 950.00 MiB reserved in total by PyTorch)" and, from 2.1 on, sentences: "GPU 0 has
   a total capacity of 1024.00 MiB of which 888.00 MiB is free. ... Of the allocated memory 90.28 MiB is
   allocated by PyTorch, and 45.72 MiB is reserved by PyTorch but unallocated." Each number is looked for by
   the words around it, so lines PyTorch adds or drops (other processes, a memory fraction) do not matter. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom_int.h"

static const char *const units[] = { "bytes", "KiB", "MiB", "GiB" };

const char *oom_size_text(char *buf, size_t n, int64_t v)
{
	return mp_format_torch_size(buf, n, v);
}

void mp_oom_format_size(mp_out *out, int64_t n)
{
	char buf[40];

	mp_out_puts(out, oom_size_text(buf, sizeof buf, n));
}

/* A size as format_size wrote it at P ("922.00 MiB", "512 bytes"); *END after it. −1 when none. */
static int64_t read_size(const char *p, const char **end)
{
	char *e;
	double v;

	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	v = strtod(p, &e);
	if (e == p || !isfinite(v) || v < 0 || v > 1e15)
		return -1;
	while (*e == ' ')
		e++;
	for (int u = 0; u < 4; u++) {
		size_t n = strlen(units[u]);

		if (strncmp(e, units[u], n) == 0) {
			if (end != NULL)
				*end = e + n;
			return (int64_t)llround(v * (double)(1ll << (10 * u)));
		}
	}
	return -1;
}

/* Half the last printed digit of the size that ends right before AFTER in TEXT: format_size prints two decimals
   of KiB, MiB or GiB, or whole bytes (0). */
static int64_t slack_before(const char *text, const char *after)
{
	const char *p = strstr(text, after);

	for (int u = 3; p != NULL && u > 0; u--) {
		size_t n = strlen(units[u]);

		if ((size_t)(p - text) >= n && strncmp(p - n, units[u], n) == 0)
			return (1ll << (10 * u)) / 200;
	}
	return 0;
}

/* The size right after the first BEFORE in TEXT, −1 when absent. */
static int64_t size_after(const char *text, const char *before)
{
	const char *p = strstr(text, before);

	return p == NULL ? -1 : read_size(p + strlen(before), NULL);
}

/* The size that ends right before AFTER: scan back from AFTER to the number's start. */
static int64_t size_before(const char *text, const char *after)
{
	const char *p = strstr(text, after), *s;

	if (p == NULL)
		return -1;
	/* "<number> <unit>" then AFTER: step back over the unit and the blanks, then the number */
	s = p;
	while (s > text && s[-1] == ' ')
		s--;
	while (s > text && isalpha((unsigned char)s[-1]))
		s--;
	while (s > text && s[-1] == ' ')
		s--;
	while (s > text && (isdigit((unsigned char)s[-1]) || s[-1] == '.'))
		s--;
	return read_size(s, NULL);
}

bool mp_oom_message_parse(const char *text, mp_oom_message *m)
{
	const char *p;

	*m = (mp_oom_message){ -1, -1, -1, -1, -1, -1, -1, -1, -1, 0 };
	if (text == NULL || strstr(text, "out of memory") == NULL)
		return false;
	m->tried = size_after(text, "Tried to allocate ");
	if ((p = strstr(text, "GPU ")) != NULL && isdigit((unsigned char)p[4]))
		m->device = strtol(p + 4, NULL, 10);
	if (strstr(text, "total capacity of ") != NULL) {
		/* 2.1 on */
		m->capacity = size_after(text, "total capacity of ");
		m->free = size_after(text, " of which ");
		m->in_use = size_after(text, "this process has ");
		m->allowed = size_before(text, " allowed;");
		m->allowed_slack = slack_before(text, " allowed;");
		m->allocated = size_after(text, "Of the allocated memory ");
		m->private_pools = size_after(text, "allocated by PyTorch, with ");
		m->reserved_unallocated = size_before(text, " is reserved by PyTorch but unallocated");
	} else {
		/* 2.0: "(GPU 0; X total capacity; Y already allocated; Z free; W reserved in total by PyTorch)" */
		m->capacity = size_before(text, " total capacity");
		m->allocated = size_before(text, " already allocated");
		m->free = size_before(text, " free;");
		int64_t reserved = size_before(text, " reserved in total by PyTorch");

		if (reserved >= 0 && m->allocated >= 0)
			m->reserved_unallocated = reserved - m->allocated;
		m->allowed = size_before(text, " allowed;");
		m->allowed_slack = slack_before(text, " allowed;");
	}
	return m->tried >= 0;
}

bool mp_oom_request_from_message(const char *text, int64_t stream, mp_oom_request *out)
{
	mp_oom_message m;

	if (!mp_oom_message_parse(text, &m))
		return false;
	*out = (mp_oom_request){ .source = MP_OOM_FROM_EXCEPTION, .device = m.device >= 0 ? m.device : 0,
				 .stream = stream, .size = m.tried, .device_free = m.free, .trace_index = -1,
				 .has_message = true, .message = m };
	return true;
}
