#!/usr/bin/env bash
# exports.sh - libmemprof.so exports its public API and nothing else: every symbol `nm -D --defined-only` lists
# matches a global pattern of src/libmemprof.map, carries its version node, and is declared in the public header
# the map names; every function the ctypes binding (pymemprof/memprof/_library.py, which the Python package, the gdb
# extension and the Python tests load) declares, and the gdb extension (gdbext/memprof.py.in) and
# tests/session/drive.py call, is exported.
# Environment: MEMPROF (the CLI; .libs/libmemprof.so beside it) or MEMPROF_LIBRARY, top_srcdir.
set -uo pipefail
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
memprof=${MEMPROF:-$top/_build/memprof}
lib=${MEMPROF_LIBRARY:-$(dirname "$memprof")/.libs/libmemprof.so}
map=$top/src/libmemprof.map
# shellcheck source=lib/check.sh
. "$top/tests/lib/check.sh"

[ -f "$lib" ] || { echo "FAIL: no library at $lib"; exit 1; }
command -v nm >/dev/null || not_run "no nm"

# The map: its version node, the patterns of its global: section, the public header its comment names.
node=$(sed -e 's/#.*//' "$map" | sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_.]*\)[[:space:]]*{.*/\1/p' | head -1)
mapfile -t patterns < <(sed -e 's/#.*//' "$map" | sed -n '/global:/,/local:/p' | tr -d ' \t' |
	sed -e 's/^global://' -e '/^local:/d' -e 's/;$//' -e '/^$/d')
header=$top/$(sed -n 's/^# Public header: \([^ ]*\).*/\1/p' "$map")
[ -n "$node" ] && ok || bad "no version node in $map"
[ "${#patterns[@]}" -gt 0 ] && ok || bad "no global patterns in $map"
[ -f "$header" ] && ok || bad "no public header named in $map ('# Public header: PATH')"

# The library's defined dynamic symbols (nm marks the version node itself as an absolute symbol: skipped).
mapfile -t defined < <(nm -D --defined-only "$lib" | awk '$2 != "A" { print $2, $3 }')
exported=()
for entry in "${defined[@]}"; do
	type=${entry%% *} sym=${entry#* }
	name=${sym%%@*}
	public=no
	for p in "${patterns[@]}"; do
		# shellcheck disable=SC2053 # the map's patterns are globs
		[[ $name == $p ]] && { public=yes; break; }
	done
	if [ "$public" = no ]; then
		bad "exported but not public ($type): $name"
		continue
	fi
	exported+=("$name")
	[[ $sym == "$name@@$node" || $sym == "$name@$node" ]] && ok || bad "$name is not of version $node: $sym"
	grep -Eq "[^A-Za-z0-9_]$name[[:space:]]*\(" "$header" && ok || bad "$name is exported but not declared in ${header#"$top"/}"
done
[ "${#exported[@]}" -gt 0 ] && ok || bad "nothing exported"

# What the ctypes binding declares and its callers call: the names in quotes and after `lib.` that start with mp_.
declare -A is_exported=()
for name in "${exported[@]}"; do is_exported[$name]=1; done
for caller in "$top/pymemprof/memprof/_library.py" "$top/gdbext/memprof.py.in" "$top/tests/session/drive.py"; do
	for name in $(grep -Eo '"mp_[A-Za-z0-9_]+"|lib\.mp_[A-Za-z0-9_]+' "$caller" | sed -e 's/"//g' -e 's/^lib\.//' | sort -u); do
		# (not `printf ... | grep -q`: under pipefail, grep leaving at the first match may kill printf with
		# SIGPIPE and fail the pipeline, which made this test fail now and then)
		if [ -n "${is_exported[$name]:-}" ]; then
			ok
		else
			bad "${caller#"$top"/} calls $name, which $lib does not export"
		fi
	done
done

finish "${#defined[@]} symbols defined in $(basename "$lib"), ${#exported[@]} public;"
