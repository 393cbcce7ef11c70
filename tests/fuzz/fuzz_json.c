/* fuzz_json.c - libFuzzer harness: the JSON snapshot reader (memprof's schema, tags included) and the writers'
   round trip (fuzz_snapshot_io.c), on inputs the loader takes for JSON. Seeds: tests/fuzz/corpus/json;
   dictionary: json.dict. */
#include "fuzz_front.h"
#include "fuzz_snapshot_io.h"
#include "mp_snapshot_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (mp_format_detect(data, size) == MP_FMT_JSON)
		fuzz_snapshot_io(data, size);
	return 0;
}
