#!/bin/sh
# flame_svg_view.sh - render folded stacks with mp_flame_svg to SVG (and PNG) to eyeball the result.
#
# Usage: tests/flame_svg_view.sh [FOLDED_FILE [OUT_PREFIX]]
# Builds a throwaway driver from the sources (no configure needed), writes
# OUT_PREFIX.svg (default /tmp/flame_svg_view.svg), checks that it is
# well-formed XML, and, when a headless Chromium is installed, screenshots it
# to OUT_PREFIX.png. Without FOLDED_FILE a small built-in sample is used.
# A manual tool, not part of "make check".
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
in=${1:-}
out=${2:-/tmp/flame_svg_view}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -z "$in" ]; then
	in=$tmp/sample.folded
	cat >"$in" <<'EOF'
main;run;parse_config;yaml_load;malloc 12000
main;run;parse_config;yaml_load;strdup;malloc 3000
main;run;serve;handle_request;json_encode;realloc 45000
main;run;serve;handle_request;json_encode;buffer_grow;realloc 30000
main;run;serve;handle_request;db_query;pg_exec;malloc 80000
main;run;serve;handle_request;db_query;row_decode;std::vector<Row>::push_back;operator new(unsigned long) 60000
main;run;serve;handle_request;render_template;string_append;malloc 25000
main;run;serve;accept_loop;conn_new;calloc 9000
main;run;cache_warm;lru_insert;malloc 40000
main;run;cache_warm;lru_insert;hash_resize;calloc 15000
main;init;load_plugins;dlopen;_dl_map_object;malloc 7000
main;init;café_名前;malloc 4000
main;init;a<b>&"c";malloc 800
EOF
fi

cat >"$tmp/drv.c" <<'EOF'
/* drv.c - read a folded-stack file, write its flame graph SVG. */
#include <stdio.h>
#include <stdlib.h>

#include "flame_svg.h"

int main(int argc, char **argv)
{
	FILE *in = argc == 4 ? fopen(argv[1], "rb") : NULL, *svg = argc == 4 ? fopen(argv[2], "wb") : NULL;
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	mp_diag diag = { 0 };
	mp_out out;
	mp_err err;

	if (argc != 4 || in == NULL || svg == NULL) {
		perror("open");
		return 1;
	}
	do {
		if (len == cap && (text = realloc(text, cap = cap ? 2 * cap : 65536)) == NULL)
			return 1;
		n = fread(text + len, 1, cap - len, in);
		len += n;
	} while (n > 0);
	mp_out_init_file(&out, svg);
	err = mp_flame_svg(text, len, argv[3], "bytes", &out, &diag);
	if (err == MP_OK)
		err = mp_out_flush(&out);
	if (err != MP_OK)
		fprintf(stderr, "flame_svg_view: %s: %s\n", mp_strerror(err), diag.msg);
	mp_out_free(&out);
	free(text);
	fclose(in);
	return fclose(svg) != 0 || err != MP_OK;
}
EOF

${CC:-cc} -std=c11 -O2 -Wall -Wextra -I"$top/src/base" -I"$top/src/analysis" \
	"$top/src/base/mp_err.c" "$top/src/base/mp_out.c" "$top/src/base/mp_hash.c" \
	"$top/src/analysis/flame_svg.c" "$tmp/drv.c" -o "$tmp/drv"
"$tmp/drv" "$in" "$out.svg" "Flame Graph: $(basename "$in")"
python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$out.svg"
echo "wrote $out.svg (well-formed XML)"

for browser in chromium chromium-browser google-chrome; do
	if command -v "$browser" >/dev/null 2>&1; then
		"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
			--disable-component-update --no-first-run --screenshot="$out.png" \
			--window-size=1300,800 "file://$out.svg" >/dev/null 2>&1
		echo "wrote $out.png"
		exit 0
	fi
done
echo "no headless browser found: open $out.svg in a browser to look at it"
