/* fuzz_snapshot_io.c - the snapshot readers and writers on any bytes, the half of fuzz_pickle and fuzz_json
   they share: the full read, the projection segsum reads (frames passed over), and for what loads, the round trip
   through memprof's own writer in both formats: what it writes it must read back, and writing that again must
   give the same bytes. */
#include "fuzz_snapshot_io.h"

#include <string.h>

#include "fuzz_front.h"
#include "mp_snapshot_file.h"

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

void fuzz_snapshot_io(const uint8_t *data, size_t len)
{
	mp_snapshot *snap = NULL;
	mp_diag diag = { 0 };

	if (mp_snapshot_load_mem("input", data, len, MP_LOAD_NO_FRAMES, &snap, &diag) == MP_OK)
		mp_snapshot_free(snap);
	else if (diag.msg[0] == '\0')
		fuzz_fail("the projected read failed without saying why");
	snap = NULL;
	memset(&diag, 0, sizeof diag);
	if (mp_snapshot_load_mem("input", data, len, 0, &snap, &diag) != MP_OK) {
		if (diag.msg[0] == '\0')
			fuzz_fail("the read failed without saying why");
		return;
	}
	round_trip(snap, MP_FMT_PICKLE);
	round_trip(snap, MP_FMT_JSON);
	mp_snapshot_free(snap);
}
