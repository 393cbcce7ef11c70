/* mp_path.c - places inside a value, spelled as Python subscripts, for messages. */
#include "mp_path.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void mp_path_add(mp_path *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->at >= sizeof p->s)
		return;
	va_start(ap, fmt);
	n = vsnprintf(p->s + p->at, sizeof p->s - p->at, fmt, ap);
	va_end(ap);
	p->at = n < 0 ? sizeof p->s : p->at + (size_t)n;
}

void mp_path_key(mp_path *p, const mp_heap *heap, mp_val k, size_t n)
{
	size_t len;
	const char *s = mp_heap_atom(heap, k, &len);

	if (mp_val_type(k) == MP_T_STR)
		mp_path_add(p, "['%.*s']", len > 40 ? 40 : (int)len, s);
	else
		mp_path_add(p, "[key %zu]", n);
}

const char *mp_path_str(mp_path *p)
{
	if (p->at == 0)
		return "the top level";
	if (p->at >= sizeof p->s)
		memcpy(p->s + sizeof p->s - 4, "...", 4);
	return p->s;
}
