/* viz_page.c - the memory_viz page around a snapshot (mp_viz.h). */
#include "mp_viz.h"

#include <stdlib.h>
#include <string.h>

#include "mp_base64.h"
#include "mp_pickle_write.h"

/* Where PyTorch's page loads the viewer from (_memory_viz.py's template, 2.1 to 2.14). */
#define VIEWER_URL "https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js"

const char *mp_viz_kind_name(enum mp_viz_kind kind)
{
	switch (kind) {
	/* _memory_viz.py's trace_plot -s asks for 'Active Cached Memory Timeline', a view no MemoryViz.js has (2.1 to
	   main name it this): memprof's page asks for the view meant. */
	case MP_VIZ_ACTIVE_CACHED: return "Active Cached Segment Timeline";
	case MP_VIZ_STATE_HISTORY: return "Allocator State History";
	default: return "Active Memory Timeline";
	}
}

/* ---- the page */

/* Whether K is the str NAME. */
static bool is_key(const mp_heap *heap, mp_val k, const char *name)
{
	size_t len;
	const char *s = mp_heap_atom(heap, k, &len);

	return s != NULL && len == strlen(name) && memcmp(s, name, len) == 0;
}

/* ROOT (a dict) with its key NAME's value VALUE, or without the key for MP_ABSENT, in *OUT (ROOT itself when it
   has no such key). */
static mp_err replace_key(mp_heap *heap, mp_val root, const char *name, mp_val value, mp_val *out)
{
	size_t n = mp_heap_len(heap, root), kept = 0, at = 0;
	const mp_val *kv = mp_heap_items(heap, root);
	mp_val *copy;
	mp_err err;

	*out = root;
	while (at < n && !is_key(heap, kv[2 * at], name))
		at++;
	if (at == n)
		return MP_OK;
	if ((copy = malloc(2 * n * sizeof *copy)) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		if (i != at || value != MP_ABSENT) {
			copy[2 * kept] = kv[2 * i];
			copy[2 * kept++ + 1] = i == at ? value : kv[2 * i + 1];
		}
	err = mp_heap_make(heap, MP_T_DICT, copy, kept, out);
	free(copy);
	return err;
}

/* ROOT's 'device_traces' (one list per device, in the order of SNAP's rings) without the entries DROP marks. */
static mp_err without_entries(mp_snapshot *snap, mp_val root, const bool *drop, mp_val *out)
{
	size_t n = mp_heap_len(snap->heap, root), ndev;
	const mp_val *kv = mp_heap_items(snap->heap, root);
	mp_val traces = MP_ABSENT, *rings = NULL, *items = NULL;
	mp_err err = MP_OK;

	*out = root;
	for (size_t i = 0; i < n; i++)
		if (is_key(snap->heap, kv[2 * i], "device_traces"))
			traces = kv[2 * i + 1];
	if (traces == MP_ABSENT || mp_val_type(traces) != MP_T_LIST ||
	    (ndev = mp_heap_len(snap->heap, traces)) != snap->ndevice_traces)
		return MP_OK; /* nothing the rings' entries line up with */
	if ((rings = malloc((ndev ? ndev : 1) * sizeof *rings)) == NULL ||
	    (items = malloc((snap->ntrace ? snap->ntrace : 1) * sizeof *items)) == NULL)
		err = MP_E_NOMEM;
	for (size_t d = 0; d < ndev && err == MP_OK; d++) {
		const mp_trace_list *l = &snap->device_traces[d];
		mp_val ring = mp_heap_items(snap->heap, traces)[d];
		const mp_val *entries = mp_heap_items(snap->heap, ring);
		size_t kept = 0;

		if (mp_heap_len(snap->heap, ring) != l->n) {
			err = MP_E_CORRUPT; /* cannot happen: the value is made from the rings */
			break;
		}
		for (size_t i = 0; i < l->n; i++)
			if (!drop[l->first + i])
				items[kept++] = entries[i];
		err = mp_heap_make(snap->heap, MP_T_LIST, items, kept, &rings[d]);
	}
	if (err == MP_OK && (err = mp_heap_make(snap->heap, MP_T_LIST, rings, ndev, &traces)) == MP_OK)
		err = replace_key(snap->heap, root, "device_traces", traces, out);
	free(rings);
	free(items);
	return err;
}

/* The snapshot as the pickle PyTorch's CLI embeds: _memory_viz.py loads a bare list of segments as
   {'segments': list, 'traces': []}; what _snapshot() returns, without the 'device_stats' memprof adds to the
   debugger's snapshots; without the trace entries DROP marks (when not NULL). */
static mp_err embedded_pickle(mp_snapshot *snap, const bool *drop, mp_out *pickle, mp_diag *diag)
{
	mp_val root, kv[4];
	mp_err err;

	if (snap->projected)
		return mp_fail(diag, MP_E_SKIPPED, "the snapshot was read without its frames: no page of it");
	if ((err = mp_snapshot_to_value(snap, 0, &root, diag)) != MP_OK)
		return err;
	if (mp_val_type(root) == MP_T_DICT &&
	    ((err = replace_key(snap->heap, root, "device_stats", MP_ABSENT, &root)) != MP_OK ||
	     (drop != NULL && (err = without_entries(snap, root, drop, &root)) != MP_OK)))
		return mp_fail(diag, err, "page: %s", mp_strerror(err));
	if (snap->bare_list) {
		kv[1] = root;
		if ((err = mp_heap_str(snap->heap, "segments", 8, &kv[0])) != MP_OK ||
		    (err = mp_heap_str(snap->heap, "traces", 6, &kv[2])) != MP_OK ||
		    (err = mp_heap_make(snap->heap, MP_T_LIST, NULL, 0, &kv[3])) != MP_OK ||
		    (err = mp_heap_make(snap->heap, MP_T_DICT, kv, 2, &root)) != MP_OK)
			return mp_fail(diag, err, "page: %s", mp_strerror(err));
	}
	return mp_pickle_write(snap->heap, root, pickle, diag);
}

/* PICKLE as the page's local_files: what json.dumps writes for [{"name": "snapshot.pickle", "base64": B}], B the
   base64 of PICKLE padded with NULs (PyTorch pads 3 - len % 3 of them: 1 to 3), which the viewer's unpickler
   stops reading at STOP. */
static void put_local_files(mp_out *out, const mp_out *pickle)
{
	size_t rest = pickle->len % 3;
	unsigned char tail[3] = { 0 }; /* the last REST bytes and the NULs: always 3 */

	memcpy(tail, pickle->data + pickle->len - rest, rest);
	mp_out_puts(out, "[{\"name\": \"snapshot.pickle\", \"base64\": \"");
	mp_base64_put(out, (const unsigned char *)pickle->data, pickle->len - rest);
	mp_base64_put(out, tail, sizeof tail);
	mp_out_puts(out, "\"}]");
}

/* The page's call of the viewer: local_files (PICKLE's) and the view KIND, as Python's repr() writes the str. */
static void put_call(mp_out *out, const mp_out *pickle, enum mp_viz_kind kind)
{
	mp_out_puts(out, "const local_files = ");
	put_local_files(out, pickle);
	mp_out_printf(out, "\nadd_local_files(local_files, '%s')\n", mp_viz_kind_name(kind));
}

mp_err mp_viz_page(mp_snapshot *snap, enum mp_viz_kind kind, const bool *drop, const mp_viz_viewer *offline,
		   mp_out *out, mp_diag *diag)
{
	mp_out pickle;
	mp_err err;

	mp_out_init(&pickle);
	if ((err = embedded_pickle(snap, drop, &pickle, diag)) != MP_OK || (err = pickle.err) != MP_OK) {
		mp_out_free(&pickle);
		return err == MP_E_NOMEM ? mp_fail(diag, err, "page: out of memory") : err;
	}
	if (offline == NULL) { /* _memory_viz.py's template, as it writes it */
		mp_out_puts(out, "\n<!DOCTYPE html>\n<html>\n<head>\n</head>\n<body>\n<script type=\"module\">\n"
				 "import {add_local_files} from \"" VIEWER_URL "\"\n");
		put_call(out, &pickle, kind);
		mp_out_puts(out, "</script>\n</body>\n");
	} else { /* the same, the viewer and d3 inlined: a module script from no URL needs no network */
		mp_out_puts(out, "\n<!DOCTYPE html>\n<html>\n<head>\n</head>\n<body>\n");
		mp_out_puts(out, "<script>\n");
		mp_out_write(out, offline->d3.data, offline->d3.len);
		mp_out_puts(out, "\n</script><script type=\"module\">\n"); /* adjacent: no text node between */
		mp_out_write(out, offline->memoryviz.data, offline->memoryviz.len);
		mp_out_puts(out, "\n{\n"); /* a block: the viewer's own names stay apart from local_files */
		put_call(out, &pickle, kind);
		mp_out_puts(out, "}\n</script>\n</body>\n");
	}
	mp_out_free(&pickle);
	return MP_OK;
}
