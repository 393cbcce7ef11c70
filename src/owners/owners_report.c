/* owners_report.c - the owners as text or JSON. A device's table: one row per module (its path cut to the
   chosen depth) and one per owner outside any module (optimizer state of parameters no module names, other
   Python tensors, what no Python tensor reaches), a column per category, the bytes of the blocks each owns
   (MemTracker counts a CUDA storage as its size rounded up to 512 bytes, the allocator's smallest block,
   which is the block's size for every block not split from a larger one). */
#include <stdlib.h>
#include <string.h>

#include "mp_owners_report.h"

/* One row: a module or an owner outside modules, bytes per category. */
struct row {
	char *label;
	uint64_t bytes[MP_OWNER__COUNT];
	uint64_t total;
};

struct table {
	struct row *rows;
	size_t n, cap;
	uint64_t bytes[MP_OWNER__COUNT], total;
	uint64_t uncovered; /* bytes of owned blocks that no counted storage covers */
	size_t blocks[MP_OWNER__COUNT];
};

/* The row LABEL of T, added when new (NULL: out of memory). */
static struct row *row_of(struct table *t, const char *label, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->rows[i].label) == len && memcmp(t->rows[i].label, label, len) == 0)
			return &t->rows[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct row *r = realloc(t->rows, cap * sizeof *r);

		if (r == NULL)
			return NULL;
		t->rows = r;
		t->cap = cap;
	}
	memset(&t->rows[t->n], 0, sizeof t->rows[t->n]);
	if ((t->rows[t->n].label = strndup(label, len)) == NULL)
		return NULL;
	return &t->rows[t->n++];
}

/* How much of module path PATH a row keeps: the root and DEPTH names below it. */
static size_t cut(const char *path, int depth)
{
	size_t n = strcspn(path, ".");

	for (int d = 0; depth < 0 || d < depth; d++) {
		if (path[n] != '.')
			break;
		n += 1 + strcspn(path + n + 1, ".");
	}
	return n;
}

/* The row an owned entry's bytes go to. */
static const char *row_label(const mp_owned *e, int depth, size_t *len)
{
	static const char *const outside[MP_OWNER__COUNT] = {
		[MP_OWNER_PARAMETER] = "(parameters of no module)", [MP_OWNER_BUFFER] = "(buffers of no module)",
		[MP_OWNER_GRADIENT] = "(gradients of no module)",
		[MP_OWNER_OPTIMIZER_STATE] = "(optimizer state of no module)",
		[MP_OWNER_ACTIVATION] = "(other Python tensors)", [MP_OWNER_OTHER_PYTHON] = "(other Python tensors)",
		[MP_OWNER_NOT_PYTHON] = "(no Python tensor)",
	};

	if (e != NULL && e->module != NULL) {
		*len = cut(e->module, depth);
		return e->module;
	}
	if (e != NULL && e->saved) {
		*len = strlen("(saved for backward outside modules)");
		return "(saved for backward outside modules)";
	}
	*len = strlen(outside[e != NULL ? e->kind : MP_OWNER_NOT_PYTHON]);
	return outside[e != NULL ? e->kind : MP_OWNER_NOT_PYTHON];
}

static bool add(struct table *t, const char *label, size_t len, enum mp_owner_kind kind, uint64_t bytes)
{
	struct row *r = row_of(t, label, len);

	if (r == NULL)
		return false;
	r->bytes[kind] += bytes;
	r->total += bytes;
	t->bytes[kind] += bytes;
	t->blocks[kind]++;
	t->total += bytes;
	return true;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].label);
	free(t->rows);
	memset(t, 0, sizeof *t);
}

/* Device DEVICE's table (-2: the CPU's tensors, by storage size). */
static bool fill(struct table *t, const mp_owners *o, const mp_snapshot *snap, int64_t device, int depth)
{
	size_t len;
	const char *label;

	/* the rows in the order the modules were named (the module tree's), whatever the blocks' order */
	for (size_t i = 0; i < o->ntensors; i++)
		if (o->tensors[i].module != NULL) {
			label = row_label(&o->tensors[i], depth, &len);
			if (row_of(t, label, len) == NULL)
				return false;
		}
	if (device == -2) {
		for (size_t i = 0; i < o->ntensors; i++) {
			const mp_owned *e = &o->tensors[i];

			if (!e->counted || e->tensor.device_type == MP_TORCH_DEVICE_CUDA)
				continue;
			label = row_label(e, depth, &len);
			if (!add(t, label, len, e->kind, e->tensor.storage_nbytes))
				return false;
		}
		return true;
	}
	for (size_t i = 0; i < o->nblocks; i++) {
		const mp_owner_block *ob = &o->blocks[i];
		const mp_owned *e = ob->owner != SIZE_MAX ? &o->tensors[ob->owner] : NULL;

		if (ob->device != device)
			continue;
		label = row_label(e, depth, &len);
		if (!add(t, label, len, ob->kind, (uint64_t)snap->blocks[ob->block].size))
			return false;
		if (e != NULL && (uint64_t)snap->blocks[ob->block].size > ob->covered)
			t->uncovered += (uint64_t)snap->blocks[ob->block].size - ob->covered;
	}
	return true;
}

/* ---- text */

static const char *const short_names[MP_OWNER__COUNT] = { "param", "buffer", "grad", "optstate", "activation",
							  "other", "not_python" };

static void put_size(mp_out *out, uint64_t n, enum mp_units u, int width)
{
	mp_out cell;

	mp_out_init(&cell);
	mp_format_size(&cell, (mp_i128)n, u);
	mp_out_printf(out, "  %*.*s", width, (int)cell.len, cell.data);
	mp_out_free(&cell);
}

enum { COL = 11 };

static void put_border(mp_out *out, int label_width, int ncols)
{
	for (int i = 0; i < label_width; i++)
		mp_out_putc(out, '=');
	for (int c = 0; c < ncols; c++) {
		mp_out_puts(out, "  ");
		for (int i = 0; i < COL; i++)
			mp_out_putc(out, '=');
	}
	mp_out_putc(out, '\n');
}

static void put_module_table(const struct table *t, const mp_owners_report_opts *opts, mp_out *out)
{
	bool rst = opts->format == MP_OWNERS_RST;
	int w = 6;

	for (size_t i = 0; i < t->n; i++)
		if ((int)strlen(t->rows[i].label) > w)
			w = (int)strlen(t->rows[i].label);
	if (rst)
		put_border(out, w, MP_OWNER__COUNT + 1);
	mp_out_printf(out, "%-*s", w, "module");
	for (int k = 0; k < MP_OWNER__COUNT; k++)
		mp_out_printf(out, "  %*s", COL, short_names[k]);
	mp_out_printf(out, "  %*s\n", COL, "total");
	if (rst)
		put_border(out, w, MP_OWNER__COUNT + 1);
	for (size_t i = 0; i < t->n; i++) {
		if (t->rows[i].total == 0)
			continue;
		mp_out_printf(out, "%-*s", w, t->rows[i].label);
		for (int k = 0; k < MP_OWNER__COUNT; k++)
			put_size(out, t->rows[i].bytes[k], opts->units, COL);
		put_size(out, t->rows[i].total, opts->units, COL);
		mp_out_putc(out, '\n');
	}
	if (rst)
		put_border(out, w, MP_OWNER__COUNT + 1);
	mp_out_printf(out, "%-*s", w, "total");
	for (int k = 0; k < MP_OWNER__COUNT; k++)
		put_size(out, t->bytes[k], opts->units, COL);
	put_size(out, t->total, opts->units, COL);
	mp_out_putc(out, '\n');
	if (rst)
		put_border(out, w, MP_OWNER__COUNT + 1);
}

static void put_category_table(const struct table *t, const mp_owners_report_opts *opts, mp_out *out, bool cpu)
{
	bool rst = opts->format == MP_OWNERS_RST;

	if (rst)
		put_border(out, 16, 2);
	mp_out_printf(out, "%-16s  %*s  %*s\n", "category", COL, "bytes", COL, cpu ? "storages" : "blocks");
	if (rst)
		put_border(out, 16, 2);
	for (int k = 0; k < MP_OWNER__COUNT; k++) {
		mp_out_printf(out, "%-16s", mp_owner_kind_name(k));
		put_size(out, t->bytes[k], opts->units, COL);
		mp_out_printf(out, "  %*zu\n", COL, t->blocks[k]);
	}
	if (rst)
		put_border(out, 16, 2);
	mp_out_printf(out, "%-16s", cpu ? "total" : "active");
	put_size(out, t->total, opts->units, COL);
	mp_out_putc(out, '\n');
	if (rst)
		put_border(out, 16, 2);
}

static void put_shape(mp_out *out, const mp_tensor *x)
{
	mp_out_putc(out, '[');
	for (int i = 0; i < x->ndim; i++)
		mp_out_printf(out, "%s%lld", i ? ", " : "", (long long)mp_tensor_shape(x)[i]);
	mp_out_putc(out, ']');
}

static void put_device(mp_out *out, const mp_tensor *x)
{
	const char *name = mp_torch_device_name(x->device_type);

	if (x->device_index >= 0)
		mp_out_printf(out, "%s:%d", name, x->device_index);
	else
		mp_out_puts(out, name);
}

static void put_tensors(const mp_owners *o, const mp_owners_report_opts *opts, mp_out *out)
{
	for (size_t i = 0; i < o->ntensors; i++) {
		const mp_owned *e = &o->tensors[i];

		if (opts->device >= 0 && (e->tensor.device_type != MP_TORCH_DEVICE_CUDA ||
					  e->tensor.device_index != opts->device))
			continue;
		mp_out_printf(out, "%-16s  ", mp_owner_kind_name(e->kind));
		put_device(out, &e->tensor);
		mp_out_printf(out, "  0x%llx", (unsigned long long)e->tensor.data_ptr);
		put_size(out, e->tensor.nbytes, opts->units, 0);
		mp_out_printf(out, "  %s ", mp_torch_dtype_name(e->tensor.dtype));
		put_shape(out, &e->tensor);
		mp_out_printf(out, "  %s", e->name);
		if (!e->counted)
			mp_out_puts(out, " (shares a storage counted elsewhere)");
		if (e->referrer != NULL)
			mp_out_printf(out, " (%s)", e->referrer);
		if (e->saved)
			mp_out_printf(out, " (saved for backward%s%s)", e->module != NULL ? " in " : "",
				      e->module != NULL ? e->module : "");
		mp_out_putc(out, '\n');
	}
}

/* ---- JSON */

static void put_json_str(mp_out *out, const char *s)
{
	mp_out_putc(out, '"');
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			mp_out_printf(out, "\\%c", c);
		else if (c < 0x20)
			mp_out_printf(out, "\\u%04x", c);
		else
			mp_out_putc(out, (char)c);
	}
	mp_out_putc(out, '"');
}

static void put_json_tensor(mp_out *out, const mp_owners *o, const mp_snapshot *snap, const mp_owned *e)
{
	mp_out_puts(out, "    {\"name\": ");
	put_json_str(out, e->name);
	mp_out_printf(out, ", \"kind\": \"%s\", \"module\": ", mp_owner_kind_name(e->kind));
	if (e->module != NULL)
		put_json_str(out, e->module);
	else
		mp_out_puts(out, "null");
	mp_out_puts(out, ", \"referrer\": ");
	if (e->referrer != NULL)
		put_json_str(out, e->referrer);
	else
		mp_out_puts(out, "null");
	mp_out_printf(out, ", \"data_ptr\": %llu, \"nbytes\": %llu, \"storage_ptr\": %llu, \"storage_nbytes\": %llu, "
			   "\"device\": \"",
		      (unsigned long long)e->tensor.data_ptr, (unsigned long long)e->tensor.nbytes,
		      (unsigned long long)e->tensor.storage_data, (unsigned long long)e->tensor.storage_nbytes);
	put_device(out, &e->tensor);
	mp_out_printf(out, "\", \"dtype\": \"%s\", \"shape\": ", mp_torch_dtype_name(e->tensor.dtype));
	put_shape(out, &e->tensor);
	mp_out_printf(out, ", \"saved\": %s, \"counted\": %s, \"block\": ", e->saved ? "true" : "false",
		      e->counted ? "true" : "false");
	if (e->block != SIZE_MAX)
		mp_out_printf(out, "%lld", (long long)snap->blocks[e->block].address);
	else
		mp_out_puts(out, "null");
	mp_out_puts(out, "}");
	(void)o;
}

static void put_json_table(mp_out *out, const struct table *t, const char *device, bool last)
{
	mp_out_puts(out, "    {\"device\": ");
	put_json_str(out, device);
	mp_out_printf(out, ", \"total\": %llu, \"uncovered\": %llu, \"categories\": {", (unsigned long long)t->total,
		      (unsigned long long)t->uncovered);
	for (int k = 0; k < MP_OWNER__COUNT; k++)
		mp_out_printf(out, "%s\"%s\": {\"bytes\": %llu, \"count\": %zu}", k ? ", " : "", mp_owner_kind_name(k),
			      (unsigned long long)t->bytes[k], t->blocks[k]);
	mp_out_puts(out, "},\n     \"modules\": [");
	for (size_t i = 0, shown = 0; i < t->n; i++) {
		if (t->rows[i].total == 0)
			continue;
		mp_out_puts(out, shown++ ? ",\n       {\"module\": " : "\n       {\"module\": ");
		put_json_str(out, t->rows[i].label);
		for (int k = 0; k < MP_OWNER__COUNT; k++)
			mp_out_printf(out, ", \"%s\": %llu", mp_owner_kind_name(k), (unsigned long long)t->rows[i].bytes[k]);
		mp_out_printf(out, ", \"total\": %llu}", (unsigned long long)t->rows[i].total);
	}
	mp_out_printf(out, "]}%s\n", last ? "" : ",");
}

/* The devices that have blocks, in order, then -2 for the CPU when a CPU tensor is counted. */
static size_t devices(const mp_owners *o, const mp_owners_report_opts *opts, int64_t *list, size_t cap)
{
	size_t n = 0;
	bool cpu = false;

	for (size_t i = 0; i < o->nblocks; i++) {
		size_t j;

		if (opts->device >= 0 && o->blocks[i].device != opts->device)
			continue;
		for (j = 0; j < n && list[j] != o->blocks[i].device; j++)
			;
		if (j == n && n < cap - 1)
			list[n++] = o->blocks[i].device;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (list[j] < list[i]) {
				int64_t x = list[i];

				list[i] = list[j];
				list[j] = x;
			}
	for (size_t i = 0; i < o->ntensors && opts->device < 0; i++)
		cpu = cpu || (o->tensors[i].counted && o->tensors[i].tensor.device_type != MP_TORCH_DEVICE_CUDA);
	if (cpu)
		list[n++] = -2;
	return n;
}

void mp_owners_report(const mp_owners *o, const mp_snapshot *snap, const mp_owners_report_opts *opts, mp_out *out)
{
	int64_t list[64];
	size_t n = devices(o, opts, list, sizeof list / sizeof list[0]);
	bool json = opts->format == MP_OWNERS_JSON;

	if (json) {
		mp_out_printf(out, "{\"python\": \"%s\", \"torch_layout\": \"%s\", \"objects\": %llu, \"modules\": %zu, "
				   "\"optimizers\": %zu, \"python_tensors\": %zu, \"partial\": %s,\n  \"tensors\": [\n",
			      o->python, o->layout->name, (unsigned long long)o->objects, o->modules, o->optimizers,
			      o->python_tensors, o->partial ? "true" : "false");
		for (size_t i = 0; i < o->ntensors; i++) {
			put_json_tensor(out, o, snap, &o->tensors[i]);
			mp_out_puts(out, i + 1 < o->ntensors ? ",\n" : "\n");
		}
		mp_out_puts(out, "  ],\n  \"devices\": [\n");
	} else {
		mp_out_printf(out, "%s, tensor layout %s: %llu objects, %zu Python tensors, %zu modules, %zu optimizers%s\n",
			      o->python, o->layout->name, (unsigned long long)o->objects, o->python_tensors, o->modules,
			      o->optimizers, o->partial ? " (partial: see the warnings)" : "");
		if (opts->by == MP_OWNERS_BY_TENSOR) {
			mp_out_putc(out, '\n');
			put_tensors(o, opts, out);
			return;
		}
	}
	for (size_t d = 0; d < n; d++) {
		struct table t = { 0 };
		char name[32];

		if (list[d] == -2)
			snprintf(name, sizeof name, "cpu");
		else
			snprintf(name, sizeof name, "cuda:%lld", (long long)list[d]);
		if (!fill(&t, o, snap, list[d], opts->depth)) {
			out->err = MP_E_NOMEM;
			table_free(&t);
			return;
		}
		if (json) {
			put_json_table(out, &t, name, d + 1 == n);
		} else {
			mp_out_printf(out, "\n%s%s\n", name,
				      list[d] == -2 ? " (tensors' storage sizes; no allocator blocks)" : " (active blocks)");
			if (opts->by == MP_OWNERS_BY_CATEGORY)
				put_category_table(&t, opts, out, list[d] == -2);
			else
				put_module_table(&t, opts, out);
			if (list[d] != -2 && t.uncovered > 0) {
				mp_out_puts(out, "owned blocks' bytes no owner's storage covers:");
				put_size(out, t.uncovered, opts->units, 0);
				mp_out_puts(out, " (the allocator's rounding, or tensors Python cannot see sharing a block)\n");
			}
		}
		table_free(&t);
	}
	if (json) {
		mp_out_puts(out, "  ],\n  \"blocks\": [");
		for (size_t i = 0; i < o->nblocks; i++) {
			const mp_owner_block *ob = &o->blocks[i];
			const mp_block *b = &snap->blocks[ob->block];

			if (opts->device >= 0 && ob->device != opts->device)
				continue;
			mp_out_printf(out, "%s\n    {\"device\": %lld, \"address\": %lld, \"size\": %lld, \"kind\": \"%s\", "
					   "\"covered\": %llu, \"owner\": ",
				      i ? "," : "", (long long)ob->device, (long long)b->address, (long long)b->size,
				      mp_owner_kind_name(ob->kind), (unsigned long long)ob->covered);
			if (ob->owner != SIZE_MAX)
				put_json_str(out, o->tensors[ob->owner].name);
			else
				mp_out_puts(out, "null");
			mp_out_putc(out, '}');
		}
		mp_out_puts(out, "\n  ]\n}\n");
	}
}
