#!/usr/bin/env bash
# core.sh SCENARIO gcore|kernel OUT_DIR - a core of the driver in SCENARIO's state, with its ground truth.
#
# Kept for its callers: now ../target.sh SCENARIO $MEMPROF_C10_VARIANT (default debug) gcore|kernel OUT_DIR, which
# leaves OUT_DIR/core, truth.json, driver.path, libdir and loader (see there). Prints OUT_DIR/core.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 3 ] || { echo "scenarios/core: usage: core.sh SCENARIO gcore|kernel OUT_DIR" >&2; exit 1; }
"$here/../target.sh" "$1" "${MEMPROF_C10_VARIANT:-debug}" "$2" "$3" >/dev/null
echo "$(cd "$3" && pwd)/core"
