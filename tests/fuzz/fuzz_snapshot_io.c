/* fuzz_snapshot_io.c - the snapshot readers and writers on any bytes, the half of fuzz_pickle and fuzz_json
   they share: the full read, the projection segsum reads (frames passed over) and those of trace and memory
   (one kind of record's frames passed over), the first two also the generic
   way (a pickle's stream reader, and the thread that passes over frames ahead of it, must give what the
   generic machine alone and the conversion after it give, or give up; JSON's stream reader what the
   whole-text reader and the conversion give), and for what loads, the round trip through memprof's own writer in both formats: what it writes it must
   read back, and writing that again must give the same bytes. */
#include "fuzz_snapshot_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_front.h"
#include "mp_flamelines.h"
#include "mp_repr.h"
#include "mp_segsum.h"
#include "mp_snapshot_file.h"
#include "mp_trace_text.h"

/* Save SNAP as FMT into OUT; a failure is only allowed for what the writer cannot represent (said in DIAG). */
static mp_err save(mp_snapshot *snap, enum mp_format fmt, mp_out *out)
{
	mp_diag diag = { 0 };
	mp_err err;

	mp_out_init(out);
	err = mp_snapshot_save(snap, fmt, out, &diag);
	if (err != MP_OK && diag.msg[0] == '\0')
		fuzz_fail("the writer failed without saying why");
	return err;
}

/* Write SNAP as FMT, read that back and write it again: what memprof writes it must read back, and the second
   write must equal the first. JSON is taken round once first: an integral float comes back from JSON as an int
   (cJSON does not tell 1.0 from 1: src/model/SCHEMA.md), after which the trip must hold the same. */
static void round_trip(mp_snapshot *snap, enum mp_format fmt)
{
	mp_out first, second;
	mp_snapshot *again = NULL, *settled = NULL;
	mp_diag diag = { 0 };

	if (save(snap, fmt, &first) != MP_OK) {
		mp_out_free(&first);
		return;
	}
	if (mp_snapshot_load_mem("saved", (const unsigned char *)first.data, first.len, 0, &again, &diag) != MP_OK)
		fuzz_fail(fmt == MP_FMT_PICKLE ? "memprof cannot read the pickle it wrote"
					       : "memprof cannot read the JSON it wrote");
	if (fmt == MP_FMT_JSON) {
		mp_out_free(&first);
		if (save(again, fmt, &first) != MP_OK)
			fuzz_fail("memprof cannot write again what it read back");
		settled = again;
		if (mp_snapshot_load_mem("saved", (const unsigned char *)first.data, first.len, 0, &again, &diag) !=
		    MP_OK)
			fuzz_fail("memprof cannot read the JSON it wrote");
	}
	if (save(again, fmt, &second) != MP_OK)
		fuzz_fail("memprof cannot write again what it read back");
	if (first.len != second.len || memcmp(first.data, second.data, first.len) != 0)
		fuzz_fail(fmt == MP_FMT_PICKLE ? "pickle round trip: the second write differs from the first"
					       : "JSON round trip: the second write differs from the first");
	mp_snapshot_free(settled);
	mp_snapshot_free(again);
	mp_out_free(&first);
	mp_out_free(&second);
}

/* Where a field holds a value passed over: one letter per record, for the digest. */
static void skipped_marks(const mp_snapshot *snap, mp_out *out)
{
	for (size_t i = 0; i < snap->nsegments; i++)
		mp_out_puts(out, snap->segments[i].frames == MP_SKIPPED ? "S" : "s");
	for (size_t i = 0; i < snap->nblocks; i++)
		mp_out_puts(out, snap->blocks[i].frames == MP_SKIPPED ? "B" : "b");
	for (size_t i = 0; i < snap->ntrace; i++)
		mp_out_puts(out, snap->trace[i].frames == MP_SKIPPED ? "T" : "t");
}

/* All that a snapshot says, as text: its generic value's repr, where values were passed over, the counts. */
static void digest(mp_snapshot *snap, mp_out *out)
{
	mp_val root;
	mp_diag diag = { 0 };

	mp_out_init(out);
	mp_out_printf(out, "%zu segments, %zu blocks, %zu entries, %zu devices, projected %d, bare %d\n",
		      snap->nsegments, snap->nblocks, snap->ntrace, snap->ndevice_traces, snap->projected,
		      snap->bare_list);
	skipped_marks(snap, out);
	if (mp_snapshot_to_value(snap, 0, &root, &diag) == MP_OK)
		mp_repr(snap->heap, root, out);
	else
		mp_out_printf(out, "\nno value: %s", diag.msg);
}

/* Fail with WHAT unless A and B hold the same text; where they differ is printed first, for whoever replays the input. */
static void same_text(const mp_out *a, const mp_out *b, const char *what)
{
	size_t at = 0;

	if (a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0))
		return;
	while (at < a->len && at < b->len && a->data[at] == b->data[at])
		at++;
	at = at > 40 ? at - 40 : 0;
	fprintf(stderr, "fuzz: at byte %zu:\n  %.160s\nagainst\n  %.160s\n", at, a->len > at ? a->data + at : "",
		b->len > at ? b->data + at : "");
	fuzz_fail(what);
}

/* Load the input with FLAGS, once as memprof does and once the generic way: the same result, or the same error. */
static mp_err load_both(const uint8_t *data, size_t len, unsigned flags, mp_snapshot **snap, mp_diag *diag)
{
	mp_snapshot *ref = NULL;
	mp_diag ref_diag = { 0 };
	mp_err err = mp_snapshot_load_mem("input", data, len, flags, snap, diag);
	mp_err ref_err = mp_snapshot_load_mem("input", data, len, flags | MP_LOAD_GENERIC, &ref, &ref_diag);
	mp_out a, b;

	if (err != ref_err || strcmp(diag->msg, ref_diag.msg) != 0)
		fuzz_fail("the stream reader and the generic reader disagree on whether the input loads");
	if (err == MP_OK) {
		digest(*snap, &a);
		digest(ref, &b);
		same_text(&a, &b, "the stream reader gives another snapshot than the generic reader");
		mp_out_free(&a);
		mp_out_free(&b);
	}
	mp_snapshot_free(ref);
	return err;
}

typedef mp_err (*analysis_fn)(const mp_snapshot *snap, mp_out *out, mp_diag *diag);

static mp_err trace_all(const mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	return mp_analysis_trace_last((mp_snapshot *)snap, 0, out, diag);
}

/* ANALYSIS of SNAP as text: its output, or its error. */
static void analysis_text(analysis_fn analysis, const mp_snapshot *snap, mp_out *out)
{
	mp_diag diag = { 0 };

	mp_out_init(out);
	if (analysis(snap, out, &diag) != MP_OK)
		mp_out_printf(out, "\nfailed: %s", diag.msg);
}

/* What passes over frames must not change anything else: what the full read takes, the projection takes,
   and ANALYSIS (NAME), which reads none of the frames passed over, prints the same for both. */
static void same_output(const char *name, analysis_fn analysis, const mp_snapshot *projected,
			const mp_snapshot *full)
{
	mp_out a, b;

	analysis_text(analysis, projected, &a);
	analysis_text(analysis, full, &b);
	same_text(&a, &b, name);
	mp_out_free(&a);
	mp_out_free(&b);
}

/* The projections that pass over one kind of record's frames (the stream reader's alone; the other
   readers then read everything): each loads where the full read does, and the analysis that wants the
   other kind's frames prints what it prints on the full read. A frames list or frame dict that the
   kept kind fetches from one passed over (PyTorch shares them) is read then. */
static void one_kind(const uint8_t *data, size_t len, const mp_snapshot *full)
{
	static const struct {
		unsigned flags;
		analysis_fn analysis;
		const char *differs;
	} kinds[] = {
		{ MP_LOAD_NO_BLOCK_FRAMES, trace_all, "trace differs between the blocks' frames passed over and the full read" },
		{ MP_LOAD_NO_TRACE_FRAMES, mp_analysis_memory,
		  "memory differs between the trace ring's frames passed over and the full read" },
	};

	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		mp_snapshot *snap = NULL;
		mp_diag diag = { 0 };

		if (mp_snapshot_load_mem("input", data, len, kinds[i].flags, &snap, &diag) != MP_OK)
			fuzz_fail("a projection of one kind's frames fails where the full read does not");
		same_output(kinds[i].differs, kinds[i].analysis, snap, full);
		same_output("segsum differs between a projection of one kind's frames and the full read",
			    mp_analysis_segsum, snap, full);
		mp_snapshot_free(snap);
	}
}

void fuzz_snapshot_io(const uint8_t *data, size_t len)
{
	mp_snapshot *snap = NULL, *projected = NULL;
	mp_diag diag = { 0 };

	/* The projection's second thread on every input, not only on big ones (mp_pickle_ahead.c). */
	setenv("MEMPROF_AHEAD_MIN", "0", 0);

	if (load_both(data, len, MP_LOAD_NO_FRAMES, &projected, &diag) != MP_OK && diag.msg[0] == '\0')
		fuzz_fail("the projected read failed without saying why");
	memset(&diag, 0, sizeof diag);
	if (load_both(data, len, 0, &snap, &diag) != MP_OK) {
		if (diag.msg[0] == '\0')
			fuzz_fail("the read failed without saying why");
		mp_snapshot_free(projected);
		return;
	}
	if (projected == NULL)
		fuzz_fail("the projection fails where the full read does not");
	same_output("segsum differs between the projection and the full read", mp_analysis_segsum, projected, snap);
	mp_snapshot_free(projected);
	one_kind(data, len, snap);
	round_trip(snap, MP_FMT_PICKLE);
	round_trip(snap, MP_FMT_JSON);
	mp_snapshot_free(snap);
}
