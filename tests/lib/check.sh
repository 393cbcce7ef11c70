# check.sh - what the shell tests share to count their checks: ok, bad, not_run and finish.
# shellcheck shell=bash
#
# Source it from the script's own directory, e.g. `. "$here/../lib/check.sh"`, then call ok or bad once per
# check and end with finish: the last line of the test's output is "N passed, M failed", and the script's
# status is finish's (or `finish || exit 1` where more follows). not_run ends the script with automake's
# "skipped" status, 77.

pass=0 fail=0

# ok [TEXT]: one more check passed; prints "ok: TEXT" when TEXT is given (without it, nothing: the quiet scripts).
ok() {
	[ $# -eq 0 ] || echo "ok: $*"
	pass=$((pass + 1))
}

# bad TEXT: one more check failed; prints "FAIL: TEXT".
bad() {
	echo "FAIL: $*"
	fail=$((fail + 1))
}

# not_run TEXT: prints "not run: TEXT" and exits 77 (automake's "skipped").
not_run() {
	echo "not run: $*"
	exit 77
}

# finish [PREFIX]: prints "PREFIX N passed, M failed" (PREFIX and a space only when given); returns 1 when a
# check failed, else 0.
finish() {
	echo "${1:+$1 }$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
