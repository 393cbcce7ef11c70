/* fleet_oom.c - what a rank's OOM explanation (the oom-N.json or oom-N.txt that `memprof watch` and `catch oom`
   write, src/commands/mp_catch.h) says, in a few lines: the request, the first cause, the first remedy. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_int.h"

/* The most of an explanation read: its head says what the fleet shows. */
#define OOM_READ_MAX (1u << 20)

static mp_err read_head(const char *path, char **text, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf;

	if (fp == NULL)
		return MP_E_ERRNO;
	if ((buf = malloc(OOM_READ_MAX + 1)) == NULL) {
		fclose(fp);
		return MP_E_NOMEM;
	}
	*len = fread(buf, 1, OOM_READ_MAX, fp);
	buf[*len] = '\0';
	fclose(fp);
	*text = buf;
	return MP_OK;
}

/* LINE (N bytes) on a line of its own in OUT, control characters as '?'. */
static void put_line(mp_out *out, const char *line, size_t n)
{
	while (n > 0 && (line[0] == ' ' || line[0] == '-'))
		line++, n--;
	for (size_t i = 0; i < n; i++)
		mp_out_putc(out, (unsigned char)line[i] < 0x20 ? '?' : line[i]);
	mp_out_putc(out, '\n');
}

static const char *json_str(const cJSON *o, const char *name)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));

	return s != NULL ? s : "?";
}

/* The JSON explanation: its verdict and request, its first cause and its first remedy. */
static bool sum_json(const char *text, mp_out *out)
{
	cJSON *j = cJSON_Parse(text), *req, *cause, *remedy;
	char size[32], bytes[32];

	if (j == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return false;
	}
	req = cJSON_GetObjectItemCaseSensitive(j, "request");
	cause = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "causes"), 0);
	remedy = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "remedies"), 0);
	mp_format_torch_size(size, sizeof size, (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(req, "size")));
	mp_out_printf(out, "verdict %s: a request of %s on device %.0f, in %s\n", json_str(j, "verdict"),
		      cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(req, "size")) ? size : "?",
		      cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(req, "device")), json_str(req, "where"));
	if (cause != NULL) {
		mp_format_torch_size(bytes, sizeof bytes,
				     (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cause, "bytes")));
		mp_out_printf(out, "first cause: %s (%s)\n", json_str(cause, "id"), bytes);
	}
	if (remedy != NULL)
		mp_out_printf(out, "would have worked: %s\n", json_str(remedy, "action"));
	cJSON_Delete(j);
	return true;
}

/* The first item under the heading that starts with HEADING in TEXT, or NULL; its length in *N. */
static const char *first_item(const char *text, const char *heading, size_t *n)
{
	const char *p = strstr(text, heading);

	while (p != NULL && (p = strchr(p, '\n')) != NULL) {
		size_t len = strcspn(++p, "\n");

		if (len > 0 && strspn(p, "=-") < len && (p[0] == ' ' || p[0] == '-')) {
			*n = len;
			return p;
		}
		if (len > 0 && strspn(p, "=-") < len)
			return NULL; /* the next heading: no item */
	}
	return NULL;
}

/* The text explanation: its first two lines, the first cause and the first remedy. */
static void sum_text(const char *text, mp_out *out)
{
	const char *p = text, *item;
	int lines = 0;
	size_t n;

	while (*p != '\0' && lines < 2) {
		n = strcspn(p, "\n");
		if (n > 0 && strspn(p, "=-") < n) {
			put_line(out, p, n);
			lines++;
		}
		p += n + (p[n] == '\n');
	}
	if ((item = first_item(text, "Why the memory did not serve it", &n)) != NULL) {
		mp_out_puts(out, "first cause: ");
		put_line(out, item, n);
	}
	if ((item = first_item(text, "What would have worked", &n)) != NULL) {
		mp_out_puts(out, "would have worked: ");
		put_line(out, item, n);
	}
}

void fleet_oom_read(fleet_rank *r)
{
	char *text = NULL;
	size_t len = 0;
	mp_out out;
	mp_err err = read_head(r->oom_path, &text, &len);

	if (err != MP_OK) {
		if (r->error == NULL && asprintf(&r->error, "cannot read '%s'", r->oom_path) < 0)
			r->error = NULL;
		return;
	}
	mp_out_init(&out);
	if (strlen(r->oom_path) > 5 && strcmp(r->oom_path + strlen(r->oom_path) - 5, ".json") == 0) {
		if (!sum_json(text, &out))
			mp_out_puts(&out, "(its explanation is not JSON: cut short?)\n");
	} else {
		sum_text(text, &out);
	}
	if (out.len == 0)
		mp_out_puts(&out, "(an empty explanation)\n");
	free(text);
	r->oom = mp_out_take(&out, &len);
	mp_out_free(&out);
}
