#!/usr/bin/env bash
# run-example.sh - set up, build, and run memprof's main job on the example shipped in the repo.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/setup-debian.sh"
"$top/tests/build.sh" "$top/_build"
echo "\$ memprof stats tests/data/example.pickle"
"$top/_build/memprof" stats "$top/tests/data/example.pickle"
