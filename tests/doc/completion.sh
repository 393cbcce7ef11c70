#!/usr/bin/env bash
# completion.sh - the bash completion built from the command table (doc/, installed as
# bash-completion/completions/memprof), in a real bash: the script is sourced, COMP_WORDS, COMP_CWORD,
# COMP_LINE and COMP_POINT are set as readline sets them, _memprof is called and COMPREPLY checked. The
# commands and each one's options are those the built binary's help lists; choice values those its usage
# lines show; file names are completed by kind in a directory of files of every kind; --pid completes pids.
# Environment: MEMPROF (the CLI; doc/bash-completion/memprof beside it), top_srcdir.
set -uo pipefail
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
memprof=${MEMPROF:-$top/_build/memprof}
script=${MEMPROF_COMPLETION:-$(dirname "$memprof")/doc/bash-completion/memprof}
# shellcheck source=../lib/check.sh
. "$top/tests/lib/check.sh"

[ -s "$script" ] || { echo "FAIL: no completion script at $script"; exit 1; }
# shellcheck source=/dev/null
source "$script" || { echo "FAIL: $script does not source"; exit 1; }
[[ $(complete -p memprof 2>/dev/null) == *"-F _memprof memprof" ]] && ok || bad "sourcing does not register _memprof for memprof"

# complete LINE: COMPREPLY for the cursor at LINE's end (a blank at the end: a new, empty word), sorted, one line.
# The words split as readline splits them: at blanks, and '=' a word of its own (it is in COMP_WORDBREAKS).
complete_line() {
	local line=$1
	COMP_LINE=$line
	COMP_POINT=${#line}
	read -ra COMP_WORDS <<<"${line//=/ = }"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_memprof
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
# expect LINE WANT: what completing LINE offers is exactly WANT (blank-separated, any order).
expect() {
	local got want
	got=$(complete_line "$1")
	want=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" = "$want" ]; then ok; else bad "'$1' completes to '$got', not '$want'"; fi
}
# sorted WORDS...: the words sorted, blank-separated.
sorted() { printf '%s\n' "$@" | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//'; }

# Commands: the first word of each command `memprof --help` lists (trace_plot has an underscore, as
# _memory_viz.py's), and the top-level options.
mapfile -t commands < <("$memprof" --help | sed -n 's/^  \([a-z_]\+\)\( [a-z]\+\)\?  .*/\1/p' | sort -u)
[ "${#commands[@]}" -ge 10 ] && ok || bad "memprof --help lists ${#commands[@]} commands"
expect "memprof " "$(sorted "${commands[@]}" help -h --help -V --version)"
expect "memprof se" "$(sorted $(printf '%s\n' "${commands[@]}" | grep '^se'))"
expect "memprof --v" "--version"

# Options: each command's, as its -h lists them (-h and --help too), and only those.
choices=0
while read -r name; do
	opts=$("$memprof" $name -h | sed -n '/^Options:$/,$s/^  \(-[-a-z0-9]*\).*/\1/p')
	expect "memprof $name -" "$(sorted $opts -h --help)"
	# Choice values: an option its usage line shows as [--opt a|b|c] offers a, b and c.
	while read -r opt values; do
		expect "memprof $name $opt " "$(sorted ${values//|/ })"
		expect "memprof $name $opt=" "$(sorted ${values//|/ })"
		choices=$((choices + 1))
	done < <("$memprof" $name -h | head -1 | grep -o '\[\(-[-a-z]*\) [a-z]*\(|[a-z]*\)\+\]' | tr -d '[]')
done < <("$memprof" --help | sed -n 's/^  \([a-z_]\+\( [a-z]\+\)\?\)  .*/\1/p')
[ "$choices" -ge 5 ] && ok || bad "only $choices choice options found in the usage lines"
expect "memprof owners --format j" "json"
expect "memprof blocks --device " "all"
expect "memprof blocks --state allocated,pe" "allocated,pending"
expect "memprof segsum --layout x --n" "--no-frames --no-stop"
expect "memprof stats --no-" "--no-frames --no-stop"

# Files by kind, in a directory of every kind.
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
mkdir dir
touch a.pickle b.pkl c.json core core.1234 job.core notes.txt image.png dir/inner.pickle
targets="a.pickle b.pkl c.json core core.1234 job.core dir"
expect "memprof segsum " "$targets"
expect "memprof blocks --top 3 " "$targets"
expect "memprof pystack --format=json " "$targets"
expect "memprof compare a.pickle " "$targets"
expect "memprof block 0x1000 " "$targets"
expect "memprof block " ""
expect "memprof segsum c" "c.json core core.1234"
expect "memprof segsum dir/" "dir/inner.pickle"
expect "memprof convert " "a.pickle b.pkl c.json dir"
expect "memprof convert a.pickle " "a.pickle b.pkl c.json dir"
expect "memprof snapshot save core " "a.pickle b.pkl c.json dir"
expect "memprof snapshot " "save $targets"
expect "memprof snapshot core -o " "a.pickle b.pkl c.json core core.1234 job.core dir image.png notes.txt"
expect "memprof segments core -o n" "notes.txt"
expect "memprof watch -o " "dir"
expect "memprof segsum a.pickle " ""
# a variadic command (fleet's file...): every word after the first is one more
expect "memprof fleet " "a.pickle b.pkl c.json dir"
expect "memprof fleet dir a.pickle --top 3 " "a.pickle b.pkl c.json dir"

# --pid: running processes.
sleep 30 &
sleeper=$!
got=$(complete_line "memprof segsum --pid ")
[[ " $got " == *" $sleeper "* && " $got " == *" $$ "* ]] && ok || bad "--pid does not offer pids $sleeper and $$"
expect "memprof watch --pid $sleeper" "$(sorted $(cd /proc && ls -d "$sleeper"* 2>/dev/null | grep -x '[0-9]*'))"
[[ $(complete_line "memprof watch --pid x") == "" ]] && ok || bad "--pid offers something for 'x'"
kill "$sleeper" 2>/dev/null

finish
