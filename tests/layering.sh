#!/usr/bin/env bash
# layering.sh - each layer includes only its own and lower layers, and a private header (*_int.h) only
# from its own folder and that folder's subfolders; a header that only its own folder includes is a private one,
# so it is named *_int.h (else the rule above would not keep it there); each header compiles alone.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
layers=(src/base coredump src/target src/symbols src/python src/torch src/watch src/context src/walker src/model src/analysis src/allocsim src/whatif src/owners src/oom src/categories src/timeline src/viz src/fleet src/commands src/session src/cli)
# shellcheck source=lib/check.sh
. "$top/tests/lib/check.sh"

# A private header's folder DIR may be included from ME's folder: DIR itself or a subfolder of it (a family
# of a folder, such as src/commands/cmd, shares its parent's private header).
private_to_me() { # DIR ME
	case "$2/" in "$1"/*) return 0 ;; *) return 1 ;; esac
}

layer_of() { # FILE -> index of its layer, or -1
	for i in "${!layers[@]}"; do
		case "$1" in "${layers[$i]}"/*) echo "$i"; return ;; esac
	done
	echo -1
}
header_layer() { # HEADER NAME -> index of the layer that holds it (in a family's subfolder too), or -1 (external)
	for i in "${!layers[@]}"; do
		[ -n "$(header_path "${layers[$i]}" "$1")" ] && { echo "$i"; return; }
	done
	echo -1
}
header_path() { # LAYER HEADER NAME -> its path in the layer's folder or subfolders, or nothing
	find "$1" -name "$2" -type f -print -quit
}

for f in $(find src coredump -name '*.[ch]' | sort); do
	mine=$(layer_of "$f")
	while read -r inc; do
		theirs=$(header_layer "$inc")
		if [ "$theirs" -gt "$mine" ]; then
			bad "$f includes $inc from a higher layer (${layers[$theirs]})"
		elif [ "$theirs" -ge 0 ] && case "$inc" in *_int.h) true ;; *) false ;; esac &&
			! private_to_me "$(dirname "$(header_path "${layers[$theirs]}" "$inc")")" "$(dirname "$f")"; then
			bad "$f includes $inc, private to $(dirname "$(header_path "${layers[$theirs]}" "$inc")")"
		else
			ok
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# A header of a layer that nothing outside its folder (and the folder's subfolders) includes, in the library, its
# tests, gdbext, pymemprof, doc or bench, is private to that folder: it must be named *_int.h, so that the rule
# above keeps it there (a private header named mp_*.h went unchecked). The top layer is exempt: no layer is above it.
includes=$(grep -rIHo --include='*.c' --include='*.h' --include='*.cpp' '^#include "[^"]*"' \
	src coredump tests gdbext pymemprof doc bench 2>/dev/null | sed 's/:#include "\(.*\)"$/ \1/')
for h in $(find src coredump -name '*.h' ! -name '*_int.h' | sort); do
	case $h in "${layers[${#layers[@]} - 1]}"/*) continue ;; esac
	if awk -v name="$(basename "$h")" -v dir="$(dirname "$h")/" -v self="$h" '
		{ inc = $2; sub(/.*\//, "", inc) }
		inc == name && $1 != self && index($1, dir) != 1 { found = 1; exit }
		END { exit !found }' <<<"$includes"; then
		ok
	else
		bad "$h is included only from $(dirname "$h"): a private header, to be named *_int.h"
	fi
done

# Every header compiles on its own (it includes what it uses).
incs=$(find "${layers[@]}" -type d -printf '-I%p ')
for h in $(find src coredump -name '*.h'); do
	if echo "#include \"$(basename "$h")\"" | ${CC:-cc} -std=c11 -D_GNU_SOURCE -fsyntax-only $incs -x c - 2>/tmp/layering.$$; then
		ok
	else
		bad "$h does not compile alone:"; head -5 /tmp/layering.$$
	fi
done
rm -f /tmp/layering.$$
finish
