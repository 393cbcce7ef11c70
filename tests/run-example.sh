#!/usr/bin/env bash
# run-example.sh - set up, build, and run memprof's main job on an example: a core dump of PyTorch's real CUDA
# caching allocator (the test bed's `training` scenario on PyTorch 2.6's c10, stripped like a release build, on
# a fake CUDA device; tests/testbed/README.md), then the same on the snapshot pickle shipped in the repository.
# The first run downloads and builds the test bed into ~/.cache/memprof-testbed (a few minutes); later runs reuse it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/setup-debian.sh"
"$top/tests/build.sh" "$top/_build"
example=$top/_build/example
rm -rf "$example"
echo "setup: making a core dump of PyTorch's caching allocator (tests/testbed/target.sh)" >&2
"$top/tests/testbed/target.sh" training stripped gcore "$example" >/dev/null
cd "$top"
for cmd in "info _build/example/core" "stats _build/example/core" "summary --abbreviated _build/example/core" \
	"stats tests/data/example.pickle"; do
	echo "\$ memprof $cmd"
	# shellcheck disable=SC2086 # the words of $cmd are the arguments
	"$top/_build/memprof" $cmd
done
