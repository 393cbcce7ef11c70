# interpreters.sh - sourced by the tests of src/python: the CPython interpreters (3.10 and later) this machine
# has, one path per version: python3.X on PATH, pyenv's versions ($PYENV_ROOT, default ~/.pyenv), python3.
# shellcheck shell=bash

# py_interpreters: print "VERSION PATH" lines, lowest version first, one interpreter per X.Y.
py_interpreters() {
	local p v exe seen=" "
	for p in $(command -v python3.10 python3.11 python3.12 python3.13 python3.14 python3 2>/dev/null) \
		"${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
		[ -x "$p" ] || continue
		# the interpreter itself, not a launcher (pyenv's shims are scripts)
		read -r v exe < <("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2], sys.executable)' 2>/dev/null) ||
			continue
		case $v in 3.1[0-9]) ;; *) continue ;; esac
		case $seen in *" $v "*) continue ;; esac
		seen="$seen$v "
		echo "$v $exe"
	done | sort -V
}
