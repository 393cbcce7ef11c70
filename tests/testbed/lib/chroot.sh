# chroot.sh - sourced by the test-bed scripts: run a command chrooted in a Debian root (debian/python-root.sh),
# with /proc, /sys, /dev and a job directory mounted only for as long as the command lives.
# shellcheck shell=bash
#
# Needs root (mount, chroot), util-linux's unshare and mountpoint. The caller defines log() and die() before
# sourcing this file.

# tb_chroot_run ROOT WORKDIR CMD [ARG...] - run CMD (looked up through PATH inside ROOT) chrooted in ROOT with
# cwd WORKDIR, and return its exit status. WORKDIR is an absolute directory of this machine (the job's output
# directory: cores, logs); it is bind-mounted at the same path inside ROOT (the mount point is created there,
# and removed again afterwards if it was created and is empty). /proc, /sys, /dev, /dev/pts and /dev/shm (those
# that are mount points here) are bind-mounted too. Every mount is made in a private mount namespace of the
# command's own (`unshare -m --propagation private`): the machine's mount table never shows them, and they vanish
# with the last process of that namespace, so nothing is left mounted in ROOT, whatever way CMD ends.
# The environment passes through unchanged (PATH included), and so do the resource limits: `ulimit -c unlimited`
# before the call makes an aborting CMD leave its kernel core in WORKDIR (core_pattern `core` is relative to the
# cwd).
#
# The process chain is exec all the way: unshare -> sh (mounts) -> chroot -> sh (cd) -> CMD, so CMD keeps the pid
# of the unshare process that this function starts. A caller that needs CMD's pid (gcore, kill, /proc/PID)
# sets TB_CHROOT_PIDFILE=FILE (a path of this machine) and reads the pid from FILE once it is not empty: it is
# written just before the chroot and then stays CMD's pid. (Running the function in the background with `&` gives
# $! = a bash subshell, the parent of that process, not CMD.) Alternatively CMD writes its own pid into WORKDIR.
# TB_CHROOT_BIND="DIR..." (absolute directories of this machine) are bind-mounted at their own paths as well, so
# that paths of this machine (LD_PRELOAD libraries, a test's files) mean the same inside.
tb_chroot_run() {
	[ $# -ge 3 ] || die "usage: tb_chroot_run ROOT WORKDIR CMD [ARG...]"
	local root workdir=$2 made=() d rc=0 lock
	root=$(cd "$1" 2>/dev/null && pwd -P) || die "tb_chroot_run: no root $1"
	shift 2
	[ -x "$root/bin/sh" ] && [ -d "$root/proc" ] && [ -d "$root/sys" ] && [ -d "$root/dev" ] ||
		die "tb_chroot_run: $root does not look like a root (bin/sh, proc, sys, dev)"
	# Runs in one root share its mount point directories: a run holds ROOT.lock shared while it lives (CMD
	# inherits it), and removes the directories it made only when it can take the lock alone. Removing a
	# directory that is another run's mount point would detach that run's mount (Linux detaches mounts of other
	# namespaces on rmdir): its job would lose its files.
	exec {lock}>>"$root.lock" || die "tb_chroot_run: cannot open $root.lock"
	flock -s "$lock"
	# WORKDIR and each TB_CHROOT_BIND directory get a mount point at the same path inside ROOT: the topmost
	# directory that ROOT lacks is created here and removed afterwards.
	for d in "$workdir" ${TB_CHROOT_BIND:-}; do
		case $d in
		/*) ;;
		*) die "tb_chroot_run: not an absolute path: $d" ;;
		esac
		[ -d "$d" ] || die "tb_chroot_run: no directory $d"
		made+=("$(_tb_chroot_mountpoint "$root" "$d")")
	done
	unshare -m --propagation private -- /bin/sh -c "$_tb_chroot_script" tb_chroot_run "$root" "$workdir" \
		"${TB_CHROOT_BIND:-}" "$@" || rc=$?
	if flock -n -x "$lock"; then
		for d in "${made[@]}"; do
			[ -z "$d" ] || _tb_chroot_unmake "$root" "$d"
		done
	fi
	exec {lock}>&-
	return $rc
}

# _tb_chroot_mountpoint ROOT DIR - create ROOT/DIR; print the topmost directory that had to be made ("" if none).
_tb_chroot_mountpoint() {
	local d=$2 made=
	while [ ! -d "$1$d" ]; do
		made=$d
		d=$(dirname "$d")
	done
	mkdir -p "$1$2"
	echo "$made"
}

# _tb_chroot_unmake ROOT TOP - remove the empty mount point directories made under ROOT/TOP.
_tb_chroot_unmake() {
	find "$1$2" -depth -type d -empty -delete 2>/dev/null || true
}

# tb_chroot_mounts DIR - the mount points of this machine's mount table at or under DIR (one a line; nothing when
# none), e.g. to check that a root holds no leftover mount before removing it.
tb_chroot_mounts() {
	local dir
	dir=$(cd "$1" 2>/dev/null && pwd -P) || return 0
	awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo
}

# tb_chroot_rm DIR - rm -rf DIR (a root, or a directory holding one), refusing while anything is mounted under it
# and never crossing into another file system.
tb_chroot_rm() {
	local m
	[ -e "$1" ] || return 0
	m=$(tb_chroot_mounts "$1")
	[ -z "$m" ] || die "not removing $1: mounted under it: $(echo $m)"
	rm -rf --one-file-system "$1"
}

# The mount namespace's shell: tb_chroot_run's mounts, the pid file, then exec chroot, cd WORKDIR, exec CMD.
# shellcheck disable=SC2016 # $1... are expanded by the inner shells
_tb_chroot_script='
set -e
r=$1 w=$2 binds=$3
shift 3
mount --bind /proc "$r/proc"
mount --bind /sys "$r/sys"
mount --bind /dev "$r/dev"
for d in /dev/pts /dev/shm; do
	if mountpoint -q "$d"; then
		mount --bind "$d" "$r$d"
	fi
done
mount --bind "$w" "$r$w"
for d in $binds; do
	mount --bind "$d" "$r$d"
done
if [ -n "${TB_CHROOT_PIDFILE:-}" ]; then
	echo $$ >"$TB_CHROOT_PIDFILE.tmp"
	mv "$TB_CHROOT_PIDFILE.tmp" "$TB_CHROOT_PIDFILE"
fi
exec chroot "$r" /bin/sh -c '\''cd "$1" || exit 126; shift; exec "$@"'\'' sh "$w" "$@"
'
