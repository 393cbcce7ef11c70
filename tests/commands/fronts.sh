#!/usr/bin/env bash
# fronts.sh - the CLI and the debugger session accept and refuse the same words with the same messages:
# every shared command with every option (tests/commands/fronts.py), on the example snapshot.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
lib=${MEMPROF_LIBRARY:-$(dirname "$memprof")/.libs/libmemprof.so.0}
# An instrumented library needs its sanitizer runtimes loaded first (Python's own leaks are not ours).
preload=$(ldd "$lib" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ { printf "%s:", $3 }')
LD_PRELOAD=${preload%:} ASAN_OPTIONS=${preload:+detect_leaks=0:abort_on_error=1} \
	exec python3 "$here/fronts.py" "$memprof" "$lib" "$top/tests/data/example.pickle"
