#!/usr/bin/env bash
# json_stream.sh - the JSON stream reader (src/model/json/mp_json_stream.c) against the whole-text reader it
# falls back on (MEMPROF_NO_JSON_STREAM=1): the same output, error messages and exit status for every command
# run here, on the JSON that memprof convert writes from the test pickles, and on JSON the stream reader leaves
# to the old way (each case of which must still load, or fail, as before).
# Environment: MEMPROF (the CLI), PYTHON (default python3), srcdir (the tests folder).
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$srcdir/io/setup.sh" json-stream

small_pickles json_stream
for p in "$srcdir/data/example.pickle" "$work"/small/*.pickle; do
	"$MEMPROF" convert "$p" "$work/$(basename "$p" .pickle).json" 2>/dev/null
done
# What the stream reader gives up on: a bare list, a repeated key in a block, a tag as a block, an error.
printf '[]\n' >"$work/giveup-bare.json"
printf '{"segments": [{"address": 0, "total_size": 4, "stream": 0, "blocks": [{"size": 4, "size": 4, "state": "inactive"}]}]}' \
	>"$work/giveup-repeated.json"
printf '{"segments": [{"address": 0, "total_size": 4, "stream": 0, "blocks": [{"__tuple__": []}]}]}' \
	>"$work/giveup-tag.json"
printf '{"segments": [{"address": 0, "total_size": 4, "stream": 0, "blocks": []}' >"$work/giveup-cut.json"

. "$srcdir/io/same_reader.sh"

# same NAME ARGS...: memprof ARGS with the stream reader and without it: the same stdout, stderr, status.
same() { same_without MEMPROF_NO_JSON_STREAM "$@"; }

n=0
for j in "$work"/*.json; do
	b=$(basename "$j" .json)
	n=$((n + 1))
	same "$b segsum" segsum "$j"
	same "$b summary" summary "$j"
	same "$b blocks" blocks "$j"
	same "$b trace" trace "$j"
	same "$b convert" convert "$j" "$work/$b.back.pickle" --to pickle
	same "$b convert -" convert "$j" - --to json
done
[ "$n" -ge 8 ] || bad "only $n JSON inputs"

# The stream reader is the one used: on a JSON of some thousand blocks it leaves no cJSON tree of the file,
# so its resident set stays below the whole-text reader's.
"$PYTHON" - "$work/many.json" <<'PY'
import json, sys
frames = [{"name": "f%d" % i, "filename": "/some/long/path/to/a/module_%d.py" % i, "line": i} for i in range(8)]
segs = []
for s in range(200):
	base = (1 << 30) + (s << 16)
	blocks = [{"address": base + 512 * b, "size": 512, "requested_size": 500, "state": "active_allocated",
		   "frames": frames[b % 8:] + frames[:b % 8]} for b in range(100)]
	segs.append({"device": 0, "address": base, "total_size": 51200, "allocated_size": 51200, "active_size": 51200,
		     "requested_size": 50000, "stream": 0, "segment_type": "small", "segment_pool_id": [0, 0],
		     "is_expandable": False, "frames": [], "blocks": blocks})
json.dump({"segments": segs, "device_traces": [[]]}, open(sys.argv[1], "w"))
PY
rss() { /usr/bin/env "$@" /usr/bin/time -f '%M' "$MEMPROF" blocks "$work/many.json" 2>&1 >/dev/null | tail -1; }
if [ -x /usr/bin/time ]; then
	on=$(rss)
	off=$(rss MEMPROF_NO_JSON_STREAM=1)
	if [ "$on" -lt "$off" ]; then
		ok
	else
		bad "resident set with the stream reader ${on} KB, without ${off} KB"
	fi
fi
same "many segsum" segsum "$work/many.json"
same "many blocks" blocks "$work/many.json"

finish
