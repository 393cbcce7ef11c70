# setup.sh NAME - sourced first by the io tests ($srcdir set): MEMPROF required (past libtool's wrapper), PYTHON,
# a scratch directory $work removed at exit, and tests/lib/check.sh's ok/bad/finish.
set -u
: "${MEMPROF:?set MEMPROF to the memprof binary}"
PYTHON=${PYTHON:-python3}
. "$srcdir/io/direct_memprof.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-$1.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
# shellcheck source=../lib/check.sh
. "$srcdir/lib/check.sh"

# small_pickles NAME: gen_small.py's pickles into $work/small, or the test ends saying so.
small_pickles() {
	"$PYTHON" "$srcdir/io/gen_small.py" --out "$work/small" || { echo "$1: gen_small.py failed"; exit 1; }
}
