/* mp_out.c - growable output buffer. */
#include "mp_out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Drain into the sink once this much is buffered. */
#define DRAIN_AT (1u << 20)

void mp_out_init(mp_out *out)
{
	memset(out, 0, sizeof *out);
}

void mp_out_init_file(mp_out *out, FILE *sink)
{
	mp_out_init(out);
	out->sink = sink;
}

static void drain(mp_out *out)
{
	if (out->sink == NULL || out->len == 0 || out->err != MP_OK)
		return;
	if (fwrite(out->data, 1, out->len, out->sink) != out->len)
		out->err = MP_E_ERRNO;
	out->drained += out->len;
	out->len = 0;
}

mp_err mp_out_flush(mp_out *out)
{
	drain(out);
	if (out->sink != NULL && out->err == MP_OK && fflush(out->sink) != 0)
		out->err = MP_E_ERRNO;
	return out->err;
}

void mp_out_free(mp_out *out)
{
	free(out->data);
	out->data = NULL;
	out->len = out->cap = 0;
}

char *mp_out_take(mp_out *out, size_t *len)
{
	char *data;

	if (out->err != MP_OK || mp_out_reserve(out, 1) == NULL)
		return NULL;
	out->data[out->len] = '\0';
	data = out->data;
	if (len != NULL)
		*len = out->len;
	out->data = NULL;
	out->len = out->cap = 0;
	return data;
}

char *mp_out_reserve(mp_out *out, size_t n)
{
	size_t cap;
	char *data;

	if (out->err != MP_OK)
		return NULL;
	if (out->len >= DRAIN_AT)
		drain(out);
	if (n <= out->cap - out->len && out->data != NULL) /* NULL + 0 is undefined too */
		return out->data + out->len;
	if (n > SIZE_MAX / 2 - out->len) {
		out->err = MP_E_NOMEM;
		return NULL;
	}
	cap = out->cap ? out->cap : 4096;
	while (cap - out->len < n)
		cap *= 2;
	data = realloc(out->data, cap);
	if (data == NULL) {
		out->err = MP_E_NOMEM;
		return NULL;
	}
	out->data = data;
	out->cap = cap;
	return out->data + out->len;
}

void mp_out_write(mp_out *out, const void *data, size_t len)
{
	char *dst = mp_out_reserve(out, len);

	if (dst == NULL)
		return;
	memcpy(dst, data, len);
	out->len += len;
}

void mp_out_puts(mp_out *out, const char *s)
{
	mp_out_write(out, s, strlen(s));
}

void mp_out_putc(mp_out *out, char c)
{
	char *dst = mp_out_reserve(out, 1);

	if (dst == NULL)
		return;
	*dst = c;
	out->len++;
}

void mp_out_printf(mp_out *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mp_out_vprintf(out, fmt, ap);
	va_end(ap);
}

void mp_out_vprintf(mp_out *out, const char *fmt, va_list ap)
{
	va_list again;
	int n;
	char *dst;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0) {
		out->err = MP_E_ERRNO;
		va_end(again);
		return;
	}
	dst = mp_out_reserve(out, (size_t)n + 1);
	if (dst != NULL) {
		vsnprintf(dst, (size_t)n + 1, fmt, again);
		out->len += (size_t)n;
	}
	va_end(again);
}

void mp_out_u64(mp_out *out, uint64_t v)
{
	char tmp[24];
	char *p = tmp + sizeof tmp;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	mp_out_write(out, p, (size_t)(tmp + sizeof tmp - p));
}

void mp_out_i64(mp_out *out, int64_t v)
{
	if (v < 0) {
		mp_out_putc(out, '-');
		mp_out_u64(out, (uint64_t)0 - (uint64_t)v);
		return;
	}
	mp_out_u64(out, (uint64_t)v);
}
