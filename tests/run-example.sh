#!/usr/bin/env bash
# run-example.sh - set up, build, and run memprof's main job on an example: the core dump of a real PyTorch training
# job (PyPI's torch 2.14.1 in a venv, a small transformer after two Adam steps) that ran on the test bed's fake CUDA
# device (tests/testbed/python/README.md) and was killed at a checkpoint, then the same on the snapshot pickle shipped
# in the repository. The first run installs torch into ~/.cache/memprof-testbed (about a minute here, where the
# wheel lies on disk; a 2.5 GB download elsewhere); later runs reuse it. Where that cannot be had (no network) or the
# kernel cannot leave a core, the example is a core of PyTorch's caching allocator alone (the C++ test bed's driver).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/setup-debian.sh"
"$top/tests/build.sh" "$top/_build"
example=$top/_build/example
rm -rf "$example"
mkdir -p "$example"
echo "setup: running a PyTorch training job on the fake CUDA device and taking its core (tests/testbed/jobs/run.sh)" >&2
if "$top/tests/testbed/jobs/run.sh" training pypi-2.14.1 kernel "$example" >"$example/job.vars" 2>"$example/job.log"; then
	what="the kernel's core of a PyTorch 2.14.1 training job (python3.11, PyPI's CUDA wheel)"
else
	rc=$?
	tail -3 "$example/job.log" >&2
	[ $rc -eq 77 ] || exit $rc
	echo "setup: no Python job here; a core of PyTorch's caching allocator alone (tests/testbed/target.sh)" >&2
	"$top/tests/testbed/target.sh" training stripped gcore "$example" >/dev/null
	what="a gcore of PyTorch 2.6's caching allocator in the test bed's C++ driver"
fi
cd "$top"
echo "# memprof on $what: _build/example/core"
for cmd in "info _build/example/core" "segsum _build/example/core" "summary --abbreviated _build/example/core" \
	"segsum tests/data/example.pickle"; do
	echo "\$ memprof $cmd"
	# shellcheck disable=SC2086 # the words of $cmd are the arguments
	"$top/_build/memprof" $cmd
done
