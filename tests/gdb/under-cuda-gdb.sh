#!/usr/bin/env bash
# under-cuda-gdb.sh - the gdb tests again under cuda-gdb: Debian's nvidia-cuda-gdb (tests/gdb/cuda-gdb.sh fetches
# it; bookworm's 11.8 is gdb 10.2 with Python 3.11), which debugs host code without a GPU. errors.sh whole,
# commands.sh and checkpoints.sh on the debug build (the plain gdb runs cover the other builds).
# Not run (77) where cuda-gdb cannot be had or cannot run here; tests/gdb/CUDA-GDB.md says what it can.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! cuda_gdb=$("$here/cuda-gdb.sh" 2>"${TMPDIR:-/tmp}/cuda-gdb-fetch.$$.err"); then
	echo "not run: $(tail -1 "${TMPDIR:-/tmp}/cuda-gdb-fetch.$$.err")"
	rm -f "${TMPDIR:-/tmp}/cuda-gdb-fetch.$$.err"
	exit 77
fi
rm -f "${TMPDIR:-/tmp}/cuda-gdb-fetch.$$.err"
echo "cuda-gdb: $("$cuda_gdb" --version 2>/dev/null | head -1)"
status=0
for t in errors commands checkpoints; do
	MEMPROF_GDB=$cuda_gdb MEMPROF_GDB_VARIANTS=${MEMPROF_GDB_VARIANTS:-debug} "$here/$t.sh"
	rc=$?
	echo "== $t.sh under cuda-gdb: exit $rc"
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
	[ $rc -eq 77 ] && [ $status -eq 0 ] && status=77
done
exit $status
