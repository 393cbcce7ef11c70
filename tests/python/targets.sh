# targets.sh - sourced by tests of src/python that read live interpreters (objects.sh, heap.sh): a target script
# runs under every CPython 3.10+ of this machine (interpreters.sh) and the Debian trixie root's CPython 3.13
# (chrooted), writes what it says of itself to OUT and waits on its standard input; each is read live, then from a
# gcore core of it.
# The sourcing script sets here, top, pass, fail, ran and defines
#   read_target MODE WHERE OUT SYSROOT   MODE pid (WHERE a pid) or core (WHERE a core file): read the target,
#                                        compare with OUT, print one line; exit 0 when all agrees.
# shellcheck shell=bash

targets_work=$(mktemp -d)
targets_pids=()
trap 'for p in "${targets_pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$targets_work"' EXIT

# target_start DIR CMD...: run CMD with its standard input a fifo held open (closed at exit), its pid in DIR/pid.
target_start() {
	local dir=$1
	shift
	mkdir -p "$dir"
	mkfifo "$dir/in"
	"$@" <"$dir/in" &
	exec {hold}>"$dir/in"
	targets_pids+=($!)
	echo $! >"$dir/pid"
}

# target_check LABEL DIR OUT SYSROOT: once the target wrote DIR/OUT, read it live, then from a gcore core of it.
target_check() {
	local label=$1 dir=$2 out=$2/$3 sysroot=$4 i verdict
	for i in $(seq 300); do [ -s "$out" ] && break; sleep 0.1; done
	ran=$((ran + 1))
	if [ ! -s "$out" ]; then
		bad "$label: the interpreter wrote nothing to $(basename "$out")"; return
	fi
	sleep 0.2 # written whole (renamed into place) just before the wait
	if verdict=$(read_target pid "$(cat "$dir/pid")" "$out" "$sysroot"); then
		ok "$label, live: $verdict"
	else
		bad "$label, live: $verdict"
	fi
	if ! command -v gcore >/dev/null; then
		echo "not run: $label, gcore core: no gcore (gdb)"; return
	fi
	ran=$((ran + 1))
	if ! gcore -o "$dir/core" "$(cat "$dir/pid")" >"$dir/gcore.log" 2>&1; then
		bad "$label: gcore: $(tail -1 "$dir/gcore.log")"
	elif verdict=$(read_target core "$dir/core.$(cat "$dir/pid")" "$out" "$sysroot"); then
		ok "$label, gcore core: $verdict"
	else
		bad "$label, gcore core: $verdict"
	fi
	rm -f "$dir/core".*
}

# targets_run SCRIPT OUT: SCRIPT (given DIR/OUT as its argument) under every interpreter, each checked.
targets_run() {
	local script=$1 out=$2 version python root dir
	# shellcheck source=tests/python/interpreters.sh
	. "$here/interpreters.sh"
	while read -r version python; do
		target_start "$targets_work/$version" "$python" "$script" "$targets_work/$version/$out"
		target_check "CPython $version ($python)" "$targets_work/$version" "$out" ""
	done < <(py_interpreters)
	if root=$("$top/tests/testbed/debian/python-root.sh" 2>"$targets_work/root.log"); then
		# shellcheck source=tests/testbed/lib/chroot.sh
		. "$top/tests/testbed/lib/chroot.sh"
		dir=$targets_work/trixie
		mkdir -p "$dir"
		mkfifo "$dir/in"
		TB_CHROOT_PIDFILE=$dir/pid TB_CHROOT_BIND="$here" tb_chroot_run "$root/root" "$dir" \
			python3 "$script" "$dir/$out" <"$dir/in" &
		exec {hold2}>"$dir/in"
		targets_pids+=($!)
		for _ in $(seq 100); do [ -s "$dir/pid" ] && break; sleep 0.1; done
		target_check "CPython 3.13 (Debian trixie root)" "$dir" "$out" "$root/root"
	else
		echo "not run: the Debian trixie root: $(tail -1 "$targets_work/root.log")"
	fi
}
