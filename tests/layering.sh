#!/usr/bin/env bash
# layering.sh - each layer includes only its own and lower layers, and a private header (*_int.h) only
# from its own folder and that folder's subfolders; each header compiles alone.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
layers=(src/base coredump src/target src/symbols src/python src/torch src/watch src/context src/walker src/model src/analysis src/allocsim src/whatif src/owners src/oom src/categories src/timeline src/commands src/session src/cli)
pass=0 fail=0

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
			echo "FAIL: $f includes $inc from a higher layer (${layers[$theirs]})"
			fail=$((fail + 1))
		elif [ "$theirs" -ge 0 ] && case "$inc" in *_int.h) true ;; *) false ;; esac &&
			! private_to_me "$(dirname "$(header_path "${layers[$theirs]}" "$inc")")" "$(dirname "$f")"; then
			echo "FAIL: $f includes $inc, private to $(dirname "$(header_path "${layers[$theirs]}" "$inc")")"
			fail=$((fail + 1))
		else
			pass=$((pass + 1))
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# Every header compiles on its own (it includes what it uses).
incs=$(find "${layers[@]}" -type d -printf '-I%p ')
for h in $(find src coredump -name '*.h'); do
	if echo "#include \"$(basename "$h")\"" | ${CC:-cc} -std=c11 -D_GNU_SOURCE -fsyntax-only $incs -x c - 2>/tmp/layering.$$; then
		pass=$((pass + 1))
	else
		echo "FAIL: $h does not compile alone:"; head -5 /tmp/layering.$$
		fail=$((fail + 1))
	fi
done
rm -f /tmp/layering.$$
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
