/* fuzz_pickle.c - libFuzzer harness: the pickle snapshot reader (full and projected) and the writers' round trip
   (fuzz_snapshot_io.c), on inputs the loader takes for pickles. Seeds: tests/fuzz/corpus/pickle; dictionary:
   pickle.dict (protocol 2-5 opcodes, the snapshot's keys). */
#include "fuzz_front.h"
#include "fuzz_snapshot_io.h"
#include "mp_snapshot_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (mp_format_detect(data, size) == MP_FMT_PICKLE)
		fuzz_snapshot_io(data, size);
	return 0;
}
