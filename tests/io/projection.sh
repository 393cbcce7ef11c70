#!/usr/bin/env bash
# projection.sh - the pickle stream reader's projections (frames a command does not show passed over:
# segsum all of them, trace the blocks', memory, segments and compare the trace ring's) against the generic
# reader (MEMPROF_NO_PICKLE_STREAM=1), which passes over frames only where no command here wants any: the
# same output, errors and status, on the test pickles, gen_small.py's (frames shared as PyTorch shares them,
# fetched by what is kept from what was passed over), with the second thread on every input and off.
# Environment: MEMPROF (the CLI), PYTHON (default python3), srcdir (the tests folder).
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$srcdir/io/setup.sh" projection

small_pickles projection

. "$srcdir/io/same_reader.sh"

# same NAME ARGS...: memprof ARGS by the stream reader (the thread as MEMPROF_AHEAD_MIN says) and by the
# generic reader: the same stdout, stderr and status.
same() { same_without MEMPROF_NO_PICKLE_STREAM "$@"; }

for p in "$srcdir/data/example.pickle" "$work"/small/*.pickle; do
	n=$(basename "$p" .pickle)
	for ahead in 0 ''; do
		export MEMPROF_AHEAD_MIN=$ahead
		[ -n "$ahead" ] || unset MEMPROF_AHEAD_MIN
		for cmd in segsum trace memory segments; do
			same "$n: $cmd${ahead:+ (thread)}" "$cmd" "$p"
		done
		same "$n: compare${ahead:+ (thread)}" compare "$p" "$p" --blocks
	done
done
# The case made for it must show the frames it fetched from the blocks' (else the test proves nothing).
for n in dicts lists; do
	grep -q "'frames': \[{'name': 'backward'" <<<"$(MEMPROF_AHEAD_MIN=0 "$MEMPROF" trace "$work/small/small-shared-$n-p4.pickle")" &&
		ok || bad "small-shared-$n: trace shows no frames shared with a block"
done
finish projection
