#!/usr/bin/env bash
# layouts.sh - memprof's tensor layouts (src/torch/torch_layouts.c) against the releases' own headers: for each
# release whose headers this machine has, tests/torch/layout_probe.cpp is compiled against them (never linked:
# g++ -S, offsetof with -fno-access-control) and the offsets it gives must be the layout's, field for field;
# THPVariable's cdata must be a MaybeOwned<Tensor> exactly where the layout says so.
#   2.14  PyPI's torch 2.14.1 wheel's torch/include (the test bed's venv; tests/testbed/python/build.sh makes it)
#   2.6   Debian's 2.6 c10 sources and the test bed's configured c10 headers (TensorImpl, StorageImpl only:
#         the c10 tree has no ATen or autograd headers; the autograd meta and cdata are proven on the jobs)
#   2.11  the torch 2.11.0 wheel's headers, where ~/.cache/torch-wheel-2.11.0 holds them (not in CI)
#   and every PyPI release whose wheel the test bed has cut (tests/testbed/pypi/wheel.sh), against the row of
#   its minor and C++ ABI: 2.1-oldabi (2.1, 2.2), 2.6-oldabi (2.3 to 2.6), 2.6 (2.7 to 2.9), 2.11 (2.10 to
#   2.12), 2.14 (2.13, 2.14); 2.0 has none.
# Exit 0 when every release found agrees, 1 on a difference, 77 when none could be probed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
driver=${LAYOUTS_DRIVER:-$(dirname "${MEMPROF:-$top/_build/memprof}")/tests/torch/layouts_driver}
tb_cache=${MEMPROF_TESTBED_CACHE:-$HOME/.cache/memprof-testbed}
fields="impl_storage impl_autograd_meta impl_pyobj impl_sizes impl_storage_offset impl_numel impl_dtype impl_device
	storage_data storage_device storage_nbytes storage_pyobj inline_dims meta_grad meta_grad_fn
	meta_grad_accumulator node_sequence_nr node_next_edges node_size edge_size saved_size saved_data"
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
ran=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$driver" ] || { echo "layouts: no $driver (make check builds it)" >&2; exit 2; }
command -v g++ >/dev/null || { echo "not run: no g++"; exit 77; }

# probe NAME STD CDATA_HEADER INCLUDE... [-DPROBE_C10_ONLY]: compare layout NAME with the headers.
probe() { # (env label: how the lines name it, default NAME)
	local name=$1 std=$2 header=$3 n=0 f want got lbl=${label:-$1} graph=
	shift 3
	ran=$((ran + 1))
	if ! g++ -std="$std" -S -O0 -w -fno-access-control "$@" "$here/layout_probe.cpp" -o "$work/$name.s" 2>"$work/$name.err"; then
		bad "$lbl: the probe does not compile against its headers: $(grep -m1 error "$work/$name.err")"
		return
	fi
	awk '/^probe_values:/ { on = 1; next } on && /\.quad/ { print $2; next } on { exit }' "$work/$name.s" >"$work/$name.values"
	"$driver" "$name" >"$work/$name.table"
	for f in $fields; do
		n=$((n + 1))
		got=$(sed -n "${n}p" "$work/$name.values")
		[ -n "$got" ] || continue # a c10-only probe stops before the autograd fields
		want=$(awk -v f="$f" '$1 == f { print $2 }' "$work/$name.table")
		# the autograd graph's fields: a row whose node_size is 0 was not measured for them (memprof reads no
		# graph there)
		case $f in meta_grad_accumulator | node_* | edge_* | saved_*)
			[ "$(awk '$1 == "node_size" { print $2 }' "$work/$name.table")" != 0 ] ||
				{ graph=" (its row leaves the autograd graph's fields unmeasured)"; continue; } ;;
		esac
		if [ "$got" != "$want" ]; then
			bad "$lbl: $f is $got in the release's headers, $want in memprof's layout"
			return
		fi
	done
	if [ -n "$header" ]; then
		got=0
		grep -q 'MaybeOwned<at::Tensor> cdata' "$header" && got=1
		want=$(awk '$1 == "cdata_maybe_owned" { print $2 }' "$work/$name.table")
		if [ "$got" != "$want" ]; then
			bad "$lbl: THPVariable's cdata is a MaybeOwned: $got in the headers, $want in memprof's layout"
			return
		fi
	fi
	ok "$lbl: memprof's layout == the release's headers ($(wc -l <"$work/$name.values") offsets${header:+ and the type of cdata})$graph"
}

inc=$(ls -d "$tb_cache"/pypi-2.14.1-cp311-*/venv/lib/python3.11/site-packages/torch/include 2>/dev/null | head -n1)
if [ -z "$inc" ] && "$top/tests/testbed/python/build.sh" pypi-2.14.1 >/dev/null 2>"$work/build.err"; then
	inc=$(ls -d "$tb_cache"/pypi-2.14.1-cp311-*/venv/lib/python3.11/site-packages/torch/include 2>/dev/null | head -n1)
fi
if [ -n "$inc" ]; then
	probe 2.14 c++20 "$inc/torch/csrc/autograd/python_variable.h" -I"$inc" -I"$inc/torch/csrc/api/include"
else
	echo "not run: 2.14: no torch 2.14.1 wheel here ($(tail -1 "$work/build.err" 2>/dev/null))"
fi
src=$(ls -d "$tb_cache"/src-2.6.0*/tree 2>/dev/null | head -n1)
c10=$(ls -d "$tb_cache"/c10-2.6.0*-debug-cuda*/include 2>/dev/null | head -n1)
if [ -n "$src" ] && [ -n "$c10" ]; then
	probe 2.6 c++17 "" -DPROBE_C10_ONLY -I"$c10" -I"$src"
else
	echo "not run: 2.6: no c10 2.6 sources built by the test bed here (tests/testbed/check.sh makes them)"
fi
wheel=$HOME/.cache/torch-wheel-2.11.0/include
if [ -d "$wheel/torch/csrc/autograd" ]; then
	probe 2.11 c++17 "$wheel/torch/csrc/autograd/python_variable.h" -I"$wheel" -I"$wheel/torch/csrc/api/include"
else
	echo "not run: 2.11: no torch 2.11.0 wheel headers in $wheel"
fi
# Every PyPI release whose wheel the test bed has cut (tests/testbed/pypi/wheel.sh; tests/walker/versions.sh), against
# the row memprof has for that release (its C++ ABI's rows; mp_torch_choose tells the others apart in memory).
for dir in "$tb_cache"/torch-wheel-2.*.dir; do
	# (wheel.sh's cuts only: their VERSION has six words; older layouts-2.14.sh cuts kept c10's headers alone)
	[ -f "$dir" ] && w=$(cat "$dir") && [ -f "$w/.complete" ] && [ "$(wc -w <"$w/VERSION")" -eq 6 ] || continue
	read -r _ full _ <"$w/VERSION"
	minor=${full#2.}
	minor=${minor%%.*}
	case $minor in
	0)
		echo "not run: PyPI's $full: memprof has no tensor layout for 2.0 (its StorageImpl has no PyObjectSlot)"
		continue
		;;
	1 | 2) row=2.1-oldabi ;;
	3 | 4 | 5 | 6) row=2.6-oldabi ;;
	7 | 8 | 9) row=2.6 ;;
	10 | 11 | 12) row=2.11 ;;
	*) row=2.14 ;;
	esac
	std=c++17
	[ "$minor" -lt 10 ] || std=c++20
	abi=$(awk '{ print $5 }' "$w/VERSION")
	label="$row (PyPI's $full)" probe "$row" "$std" "$w/include/torch/csrc/autograd/python_variable.h" -D_GLIBCXX_USE_CXX11_ABI="$abi" \
		-I"$w/include" -I"$w/include/torch/csrc/api/include"
done
[ "$ran" -gt 0 ] || { finish; exit 77; }
finish
