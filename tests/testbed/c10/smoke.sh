#!/usr/bin/env bash
# smoke.sh [VARIANT...] - build smoke.cpp against each c10 variant and run it on the fake CUDA runtime.
#
# Builds the fake runtime with `make -C tests/testbed/fakecuda OUT=<dir>` (or uses $MEMPROF_FAKECUDA_DIR).
# Checks: cudart-imports.txt matches libc10_cuda.so's imports, the fake exports every one of them, ldd resolves
# libcudart.so.13 and libcuda.so.1 to the fake (trap 1: the loader cache knows the real ones), and the real
# allocator hands out memory and reports it in snapshot(). Exit 0 all passed, 1 a failure, 77 skipped (no fake).
# Default variants: debug stripped debug-oldabi stripped-oldabi (plus the mutants when MEMPROF_C10_MUTANTS=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)

log() { echo "c10/smoke: $*" >&2; }
fail() { log "FAIL: $*"; status=1; }
status=0

variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
	variants=(debug stripped debug-oldabi stripped-oldabi)
	[ "${MEMPROF_C10_MUTANTS:-0}" = 1 ] && variants+=(mutant-2.14-stats mutant-block-regcounter)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-c10-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

fake=${MEMPROF_FAKECUDA_DIR:-}
if [ -z "$fake" ]; then
	if [ -f "$top/tests/testbed/fakecuda/Makefile" ] &&
		make -s -C "$top/tests/testbed/fakecuda" OUT="$work/fake" >"$work/fake.log" 2>&1; then
		fake=$work/fake
	else
		[ -f "$work/fake.log" ] && tail -n 20 "$work/fake.log" >&2
		log "fake CUDA runtime not available (tests/testbed/fakecuda did not build): link checks only"
	fi
fi

for variant in "${variants[@]}"; do
	out=$("$here/build.sh" "$variant")
	# shellcheck source=/dev/null
	. "$out/build.env"
	incs=()
	for d in $C10_INCLUDE_DIRS; do incs+=("-I$d"); done
	# shellcheck disable=SC2206
	cxxflags=($C10_CXXFLAGS)

	# The import list the fake runtime is written against must be current.
	nm -D --undefined-only "$C10_LIBDIR/libc10_cuda.so" | awk '$2 ~ /^cuda/ {sub(/@.*/, "", $2); print $2}' |
		sort -u >"$work/imports"
	# (The list is of a build against CUDA 13 headers; with Debian's CUDA 12 headers some names carry _v2.)
	# (readelf's output read whole: `readelf | grep -q` under pipefail fails when grep stops reading first)
	if grep -q 'NEEDED.*libcudart\.so\.13' <<<"$(readelf -d "$C10_LIBDIR/libc10_cuda.so")" &&
		! sed -n '/^# Runtime/,/^# Driver/p' "$here/cudart-imports.txt" | grep -v '^#' | sort -u |
		diff -u - "$work/imports" >&2; then
		fail "$variant: cudart-imports.txt is out of date"
	fi

	# The old-ABI builds must export no std::__cxx11 names, the others must.
	ncxx11=$(nm -D "$C10_LIBDIR/libc10.so" | grep -c __cxx11 || true)
	case $C10_CXXFLAGS in
	*_GLIBCXX_USE_CXX11_ABI=0*) [ "$ncxx11" -eq 0 ] || fail "$variant: libc10.so exports $ncxx11 __cxx11 symbols" ;;
	*) [ "$ncxx11" -gt 0 ] || fail "$variant: libc10.so exports no __cxx11 symbols" ;;
	esac

	exe=$work/smoke-$variant
	if [ -n "$fake" ]; then
		# The runtime SONAME libc10_cuda.so was linked against (libcudart.so.13 with CUDA 13 headers).
		cudart=$(readelf -d "$C10_LIBDIR/libc10_cuda.so" | sed -n 's/.*(NEEDED).*\[\(libcudart\.so\.[0-9]*\)\]/\1/p')
		[ -f "$fake/$cudart" ] || { fail "$variant: fake has no $cudart"; continue; }
		# The program itself must need the fake runtime (so libc10_cuda.so reuses it): Debian's gcc links
		# --as-needed, hence --no-as-needed; its RUNPATH names the fake before anything in the loader cache.
		g++ "${cxxflags[@]}" -O1 -g "${incs[@]}" -o "$exe" "$here/smoke.cpp" \
			-L"$C10_LIBDIR" -lc10_cuda -lc10 \
			-L"$fake" -Wl,--no-as-needed -l:"$cudart" -Wl,--as-needed -Wl,-rpath,"$fake:$C10_LIBDIR"
		missing=$(nm -D --defined-only "$fake/$cudart" | awk '{print $3}' | sed 's/@.*//' |
			sort -u | comm -13 - "$work/imports")
		[ -z "$missing" ] || fail "$variant: fake $cudart lacks: $(echo $missing)"
		ldd "$exe" >"$work/ldd"
		grep -q "$cudart => $fake/" "$work/ldd" || fail "$variant: $cudart not the fake: $(grep cudart "$work/ldd")"
		grep -q "libcuda.so.1 => $fake/" "$work/ldd" || fail "$variant: libcuda.so.1 not the fake: $(grep 'libcuda\.' "$work/ldd" || echo absent)"
		grep -q "libc10_cuda.so => $C10_LIBDIR/" "$work/ldd" || fail "$variant: wrong libc10_cuda.so"
		if "$exe" >"$work/run.out" 2>&1; then
			grep -q "^cudart $fake/" "$work/run.out" || fail "$variant: ran on $(grep '^cudart' "$work/run.out")"
			segs=$(sed -n 's/^segments \([0-9]*\) blocks \([0-9]*\).*/\1 \2/p' "$work/run.out")
			if [ -n "$segs" ] && [ "${segs% *}" -gt 0 ] && [ "${segs#* }" -gt 0 ]; then
				log "ok $variant: $(grep '^segments' "$work/run.out")"
			else
				cat "$work/run.out" >&2
				fail "$variant: no segments in snapshot"
			fi
		else
			cat "$work/run.out" >&2
			fail "$variant: smoke program failed"
		fi
	else
		# No fake: prove that the libraries link (against the machine's real runtime; not run).
		g++ "${cxxflags[@]}" -O1 "${incs[@]}" -o "$exe" "$here/smoke.cpp" \
			-L"$C10_LIBDIR" -lc10_cuda -lc10 -L"${CUDA_HOME:-/usr/local/cuda}/lib64" -lcudart -Wl,-rpath,"$C10_LIBDIR"
		log "linked $variant (not run: no fake runtime)"
	fi
done

if [ -z "$fake" ] && [ $status -eq 0 ]; then
	exit 77
fi
exit $status
