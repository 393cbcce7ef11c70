#!/usr/bin/env bash
# run-example.sh - set up, build, and run memprof's main job on an example: the kernel core of a real PyTorch
# training job that ran out of GPU memory (PyPI's torch 2.14.1 in a venv: a small GPT trainer, fp16 autocast,
# AdamW, memory history on; a batch too long runs out inside backward, and the job is killed where it handles the
# torch.OutOfMemoryError), run on the test bed's fake CUDA device of 1 GiB (tests/testbed/python/README.md). memprof
# then says where the memory is (segsum), whose it is (owners), why the request failed and what would have worked
# (oom), and writes PyTorch's memory timeline page of it (trace_plot). The first run installs torch into
# ~/.cache/memprof-testbed (about a minute here, where the wheel lies on disk; a 2.5 GB download elsewhere); later
# runs reuse it. Where that cannot be had (no network) or the kernel cannot leave a core, the example is a core of
# PyTorch's caching allocator alone (the C++ test bed's driver), with less to say.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/setup-debian.sh"
"$top/tests/build.sh" "$top/_build"
example=$top/_build/example
rm -rf "$example"
mkdir -p "$example"
echo "setup: a PyTorch job on the fake CUDA device runs out of memory; taking its core (tests/testbed/job.sh)" >&2
if "$top/tests/testbed/job.sh" pypi-2.14.1 "$top/tests/testbed/jobs/gpt_train.py" kernel "$example" --history python \
	>"$example/job.vars" 2>"$example/job.log"; then
	what="the core of a GPT training job that ran out of memory (PyTorch 2.14.1, python3.11, PyPI's CUDA wheel)"
	commands=("segsum" "owners --depth 2" "oom")
else
	rc=$?
	tail -3 "$example/job.log" >&2
	[ $rc -eq 77 ] || exit $rc
	echo "setup: no Python job here; a core of PyTorch's caching allocator alone (tests/testbed/target.sh)" >&2
	"$top/tests/testbed/target.sh" training stripped gcore "$example" >/dev/null
	what="a gcore of PyTorch 2.6's caching allocator in the test bed's C++ driver"
	commands=("info" "segsum" "summary --abbreviated")
fi
cd "$top"
run() { # WORDS...: print the command line, then run it
	echo
	echo "\$ memprof $*"
	"$top/_build/memprof" "$@"
}
echo "# memprof on $what: _build/example/core"
for cmd in "${commands[@]}"; do
	# shellcheck disable=SC2086 # the words of $cmd are the arguments
	run $cmd _build/example/core
done
run trace_plot _build/example/core -o _build/example/timeline.html
echo "(wrote _build/example/timeline.html: PyTorch's memory timeline of the job, as _memory_viz.py trace_plot writes it; open it in a browser)"
run segsum tests/data/example.pickle
