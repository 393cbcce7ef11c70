#!/usr/bin/env bash
# check.sh - the whole test bed in one go: fakecuda's self-test, real c10 on it, and every scenario.
# Needs CUDA headers under /usr/local/cuda (this project's machines have them; a plain Debian 12
# does not), network access to Debian's archive on the first run (cached afterwards under
# ~/.cache/memprof-testbed), and $MEMPROF for the scenario checks. Run by `make check-testbed`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/fakecuda/selftest.sh"
"$here/c10/smoke.sh" debug stripped debug-oldabi stripped-oldabi mutant-2.14-stats mutant-block-regcounter
MEMPROF_C10_VARIANTS=${MEMPROF_C10_VARIANTS:-"debug stripped"} "$here/scenarios/check.sh"
