# common.sh - sourced by the test-bed scripts: the cache location, the registries as this machine reaches them (its
# apt sources, its pip configuration), a private apt directory, one-builder locks.
# shellcheck shell=bash
#
# Env: MEMPROF_TESTBED_CACHE (default ~/.cache/memprof-testbed), MEMPROF_DEBIAN_MIRROR (default: the Debian
# archive of the machine's apt sources, tb_debian_mirror), MEMPROF_DEBIAN_KEYRING (default Debian's archive keyring).
# The caller defines log() and die() before sourcing this file.

tb_cache=${MEMPROF_TESTBED_CACHE:-$HOME/.cache/memprof-testbed}
export MEMPROF_TESTBED_CACHE=$tb_cache
mkdir -p "$tb_cache"
tb_mirror=
tb_keyring=${MEMPROF_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

# The c10 builds (c10/build.sh) and the driver's scenarios (scenarios/README.md), for the scripts that go
# through all of them (`target.sh --list variants|scenarios` prints them for the tests outside tests/testbed).
# shellcheck disable=SC2034 # for the scripts that source this file
tb_variants="debug stripped debug-oldabi stripped-oldabi mutant-2.14-stats mutant-block-regcounter
	stripped-mutant-2.14-stats stripped-mutant-block-regcounter debian-2.6"
# PyPI's torch releases the test bed runs as variants pypi-X.Y.Z (pypi/c10.sh): the last patch of every 2.x minor.
# shellcheck disable=SC2034
tb_pypi_releases="2.0.1 2.1.2 2.2.2 2.3.1 2.4.1 2.5.1 2.6.0 2.7.1 2.8.0 2.9.1 2.10.0 2.11.0 2.12.1 2.13.0 2.14.1"
# shellcheck disable=SC2034
tb_scenarios="training fragmented pending_free oom multi_device private_pool expandable history huge"

# tb_hash FILE... - 12 hex digits over the files' contents (cache keys).
tb_hash() {
	cat "$@" | sha256sum | cut -c1-12
}

# tb_cached POINTER LOCK - whether the directory that the file POINTER names is complete (holds .complete); then
# tb_cached_dir names it. Otherwise the lock file .lock-LOCK is taken for the rest of the script (fd 9: one
# fetcher at a time) and POINTER looked at once more, since another script may have completed it meanwhile; on
# status 1 the caller makes the directory, touches its .complete and writes POINTER. (Not for $(...): a subshell
# would let go of the lock.)
tb_cached() {
	local pointer=$1 lock=$2
	_tb_cached_ready "$pointer" && return 0
	exec 9>"$tb_cache/.lock-$lock"
	flock 9
	_tb_cached_ready "$pointer"
}
_tb_cached_ready() { # POINTER
	[ -f "$1" ] && tb_cached_dir=$(cat "$1") && [ -f "$tb_cached_dir/.complete" ]
}

# tb_debian_mirror - set tb_mirror to the Debian archive the test bed fetches from: MEMPROF_DEBIAN_MIRROR, else the
# first main Debian archive of the machine's own apt sources (tb_debian_archives over the files apt reads:
# Dir::Etc::sourcelist and the *.list and *.sources of Dir::Etc::sourceparts), so that a mirror, a proxy or an
# internal archive the machine is set up with is the one used. Dies in one line when neither names one.
tb_debian_mirror() {
	[ -z "$tb_mirror" ] || return 0
	if [ -n "${MEMPROF_DEBIAN_MIRROR:-}" ]; then
		tb_mirror=${MEMPROF_DEBIAN_MIRROR%/}
		return 0
	fi
	local list=/etc/apt/sources.list parts=/etc/apt/sources.list.d f files=()
	if command -v apt-config >/dev/null; then
		eval "$(apt-config shell list Dir::Etc::sourcelist/f parts Dir::Etc::sourceparts/d)"
	fi
	parts=${parts%/}
	[ ! -f "$list" ] || files+=("$list")
	for f in "$parts"/*; do # apt's order: the parts by name, both formats
		case $f in *.list | *.sources) [ -f "$f" ] && files+=("$f") ;; esac
	done
	[ ${#files[@]} -eq 0 ] || tb_mirror=$(tb_debian_archives "${files[@]}" | head -n1)
	[ -n "$tb_mirror" ] || die "no Debian archive in this machine's apt sources" \
		"($list, $parts/*.list, $parts/*.sources): set MEMPROF_DEBIAN_MIRROR"
}

# tb_debian_archives FILE... - the URIs of the main Debian archive in apt source files, one a line, in order, without
# a trailing slash: FILE is deb822 when named *.sources, else one-line ("deb [options] URI SUITE COMPONENT...").
# An entry counts when it is enabled, of type deb or deb-src, has the component main and a Debian suite (stable,
# testing, unstable, sid, oldstable, oldoldstable, experimental, a Debian codename, or the machine's own codename
# where /etc/os-release says Debian): not -security, -updates or -backports, nor another vendor's archive.
tb_debian_archives() {
	local codename=
	codename=$(. /etc/os-release 2>/dev/null && [ "${ID:-}" = debian ] && echo "${VERSION_CODENAME:-}") || true
	awk -v own="$codename" '
	function debian_suite(s) {
		return s ~ /^(stable|testing|unstable|sid|oldstable|oldoldstable|experimental)$/ ||
			s ~ /^(buster|bullseye|bookworm|trixie|forky|duke)$/ || (own != "" && s == own)
	}
	function emit(types, uris, suites, comps, enabled,   n, i, t, main, deb, suite, u) {
		if (tolower(enabled) == "no" || tolower(enabled) == "false") return
		n = split(types, t, /[ \t]+/); deb = 0
		for (i = 1; i <= n; i++) if (t[i] == "deb" || t[i] == "deb-src") deb = 1
		n = split(comps, t, /[ \t]+/); main = 0
		for (i = 1; i <= n; i++) if (t[i] == "main") main = 1
		n = split(suites, t, /[ \t]+/); suite = 0
		for (i = 1; i <= n; i++) if (debian_suite(t[i])) suite = 1
		if (!deb || !main || !suite) return
		n = split(uris, u, /[ \t]+/)
		for (i = 1; i <= n; i++) if (u[i] != "" && u[i] !~ /^cdrom:/) { sub(/\/+$/, "", u[i]); print u[i] }
	}
	function flush() {
		if (types != "") emit(types, uris, suites, comps, enabled)
		types = uris = suites = comps = enabled = ""
	}
	FNR == 1 { flush(); deb822 = FILENAME ~ /\.sources$/ }
	deb822 {
		if ($0 ~ /^[ \t]*$/) { flush(); next }
		if ($0 ~ /^#/ || $0 ~ /^[ \t]/) next # comments; continuation lines (a Signed-By key block)
		k = tolower($0); sub(/:.*/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
		if (k == "types") types = v; else if (k == "uris") uris = v; else if (k == "suites") suites = v
		else if (k == "components") comps = v; else if (k == "enabled") enabled = v
		next
	}
	{
		line = $0; sub(/#.*/, "", line); gsub(/\[[^]]*\]/, " ", line)
		n = split(line, w, /[ \t]+/); j = (w[1] == "") ? 2 : 1
		if (n < j + 3) next
		c = w[j + 3]; for (i = j + 4; i <= n; i++) c = c " " w[i]
		emit(w[j], w[j + 1], w[j + 2], c, "")
	}
	END { flush() }
	' "$@"
}

# tb_pip_offers PYTHON REQUIREMENT... - whether the package indexes of the machine's pip configuration (pip.conf,
# PIP_* variables: its index, mirror, proxy, find-links) answer for every REQUIREMENT ("name", "name==X.Y.Z" or
# "name===X.Y.Z": with that version among those listed), asked of PYTHON's own pip (`pip index versions`). After a
# failed install it tells a registry this machine cannot reach, or that lacks the release (the caller skips, 77),
# from a real failure.
tb_pip_offers() {
	local python=$1 req name version listed
	shift
	for req in "$@"; do
		name=${req%%[<>=!~;@[ ]*}
		case $req in
		*===*) version=${req#*===} ;;
		*==*) version=${req#*==} ;;
		*) version= ;;
		esac
		listed=$("$python" -m pip index versions --no-input "$name" 2>/dev/null | sed -n 's/^Available versions: //p')
		[ -n "$listed" ] || return 1
		case $version in '' | *'*'*) continue ;; esac
		case ", $listed, " in *", $version, "*) ;; *) return 1 ;; esac
	done
}

# tb_need TOOL... - die naming the first TOOL this machine lacks.
tb_need() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null || die "$tool not found"
	done
}

# tb_apt NAME SUITE LINE... - set up the private apt directory $tb_cache/apt-NAME whose sources.list holds
# the LINEs ("deb-src SUITE main", "deb SUITE non-free", ...; the mirror and options are added), run
# `apt-get update` in it once per call, and fill the array tb_apt_opts with the options that make apt-get /
# apt-cache use it and nothing of the machine's own apt state. tb_apt_dir names the directory.
# The machine's sources, lists and dpkg status are never read or written.
tb_apt() {
	local name=$1 suite=$2
	shift 2
	tb_apt_dir=$tb_cache/apt-$name
	mkdir -p "$tb_apt_dir/lists/partial" "$tb_apt_dir/cache/archives/partial" "$tb_apt_dir/dl"
	tb_apt_opts=(
		-o "Dir::Etc::sourcelist=$tb_apt_dir/sources.list"
		-o "Dir::Etc::sourceparts=-"
		-o "Dir::State::Lists=$tb_apt_dir/lists"
		-o "Dir::Cache=$tb_apt_dir/cache"
		-o "Dir::State::status=/dev/null"
		-o "APT::Get::List-Cleanup=0"
		-o "Debug::NoLocking=1"
		-o "APT::Sandbox::User=root"
	)
	local opt
	command -v apt-get >/dev/null || die "apt-get not found"
	tb_debian_mirror
	opt="signed-by=$tb_keyring"
	_tb_apt_write "$opt" "$@"
	if ! apt-get "${tb_apt_opts[@]}" -qq update >"$tb_apt_dir/update.log" 2>&1 ||
		grep -q -E 'NO_PUBKEY|not signed|EXPKEYSIG|Signature by key' "$tb_apt_dir/update.log"; then
		mv "$tb_apt_dir/update.log" "$tb_apt_dir/update-signed.log"
		log "note: $tb_keyring could not verify $suite; falling back to [trusted=yes] (see $tb_apt_dir/update-signed.log)"
		opt="trusted=yes"
		_tb_apt_write "$opt" "$@"
		apt-get "${tb_apt_opts[@]}" -qq update >"$tb_apt_dir/update.log" 2>&1 || {
			cat "$tb_apt_dir/update.log" >&2
			die "apt-get update failed ($suite)"
		}
	fi
}

# _tb_apt_write OPT LINE... - sources.list of $tb_apt_dir: "deb SUITE comp..." -> "deb [OPT arch=amd64] MIRROR SUITE comp...".
_tb_apt_write() {
	local opt=$1 line kind
	shift
	: >"$tb_apt_dir/sources.list"
	for line in "$@"; do
		kind=${line%% *}
		if [ "$kind" = deb ]; then
			echo "deb [$opt arch=amd64] $tb_mirror ${line#* }" >>"$tb_apt_dir/sources.list"
		else
			echo "$kind [$opt] $tb_mirror ${line#* }" >>"$tb_apt_dir/sources.list"
		fi
	done
}

# tb_apt_download PKG... - download the packages' .debs (the candidate versions) into $tb_apt_dir/dl; prints
# their paths, one a line, in the order asked.
tb_apt_download() {
	local p f
	(cd "$tb_apt_dir/dl" && apt-get "${tb_apt_opts[@]}" -qq download "$@" >&2) || die "apt-get download $* failed"
	for p in "$@"; do
		f=$(ls -t "$tb_apt_dir/dl/${p}_"*.deb 2>/dev/null | head -n1)
		[ -n "$f" ] || die "no .deb for $p in $tb_apt_dir/dl"
		echo "$f"
	done
}

# tb_apt_version PKG - the candidate version of PKG in the private apt directory.
tb_apt_version() {
	apt-cache "${tb_apt_opts[@]}" show "$1" 2>/dev/null | sed -n 's/^Version: //p' | head -n1
}

# tb_install_debs PKG... - install Debian packages of the machine (gdb, libfmt-dev, ...) when missing and
# running as root; otherwise fail naming them.
tb_install_debs() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]} (apt-get install ${missing[*]})"
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || {
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
	} || die "could not install ${missing[*]}"
}

# tb_cuda_home - prints the CUDA_HOME to compile c10 and the fake against: Debian's CUDA 12.4 headers (fetched
# once into the cache by cuda/fetch-headers.sh) if MEMPROF_CUDA_HEADERS=debian; else $CUDA_HOME or /usr/local/cuda,
# the first that has cuda_runtime_api.h; else (a fresh Debian 12 has no CUDA headers) Debian's.
tb_cuda_home() {
	local d
	if [ "${MEMPROF_CUDA_HEADERS:-}" != debian ]; then
		for d in ${CUDA_HOME:-} /usr/local/cuda; do
			if [ -f "$d/include/cuda_runtime_api.h" ]; then
				echo "$d"
				return 0
			fi
		done
	fi
	"$(dirname "${BASH_SOURCE[0]}")/../cuda/fetch-headers.sh"
}

# tb_cuda_tag CUDA_HOME - "cuda13.0", "cuda12.4": the headers' CUDART_VERSION, for cache keys.
tb_cuda_tag() {
	local v
	v=$(sed -n 's/^#define CUDART_VERSION *\([0-9][0-9]*\).*/\1/p' "$1/include/cuda_runtime_api.h" | head -n1)
	[ -n "$v" ] || die "no CUDART_VERSION in $1/include/cuda_runtime_api.h"
	echo "cuda$((v / 1000)).$((v % 1000 / 10))"
}

# tb_fakecuda [CUDA12_HOME [CUDA11_HOME]] - build (or reuse) the fake CUDA runtime + driver (../fakecuda) against the
# CUDA headers of tb_cuda_home, keyed by a hash of its sources, and print its directory. With CUDA12_HOME (CUDA 12
# headers: cuda/fetch-headers.sh), libcudart.so.12 fills the whole CUDA 12 cudaDeviceProp, as a full PyTorch built
# for CUDA 12 needs. With CUDA11_HOME (CUDA 11 headers: cuda/fetch-headers11.sh), libcudart.so.11.0 fills CUDA 11's
# cudaDeviceProp and cudaFuncAttributes; without, it refuses them (enough for c10 of a CUDA 11 wheel). Either may
# be "".
tb_fakecuda() {
	local cuda12=${1:-} cuda11=${2:-} src key dir cuda_home tag
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fakecuda" && pwd)
	cuda_home=$(tb_cuda_home) || return 1
	tag=$(tb_cuda_tag "$cuda_home")
	[ -z "$cuda12" ] || tag="$tag+$(tb_cuda_tag "$cuda12")"
	[ -z "$cuda11" ] || tag="$tag+$(tb_cuda_tag "$cuda11")"
	key=$(cd "$src" && cat Makefile ./*.c ./*.h ./*.map ./*.in 2>/dev/null | sha256sum | cut -c1-12)
	dir=$tb_cache/fakecuda-$tag-$key
	if [ ! -f "$dir/.complete" ]; then
		(
			flock 8
			if [ ! -f "$dir/.complete" ]; then
				make -s -C "$src" OUT="$dir" CUDA_HOME="$cuda_home" CUDA12_HOME="$cuda12" \
					CUDA11_HOME="$cuda11" >&2 || exit 1
				touch "$dir/.complete"
			fi
		) 8>"$tb_cache/.lock-fakecuda" || return 1
	fi
	echo "$dir"
}

# tb_fakecuda_for_c10 C10_DIR - the fake CUDA for that c10 build (an output dir of ../c10/build.sh), printed: $MEMPROF_FAKECUDA_DIR
# when set, else tb_fakecuda. A build that needs libcudart.so.12 or .so.11.0 (Debian's 2.6, PyPI's wheels before 2.11)
# reads cudaDeviceProp in that CUDA's layout (the PCI bus id it gives NVML when it reports an OOM, for one): the
# fake is then built with those headers too.
tb_fakecuda_for_c10() {
	local cudart cuda12='' cuda11='' here
	if [ -n "${MEMPROF_FAKECUDA_DIR:-}" ]; then
		echo "$MEMPROF_FAKECUDA_DIR"
		return
	fi
	here=$(dirname "${BASH_SOURCE[0]}")/..
	cudart=$(C10_LIBDIR='' C10_LINKDIR='' && . "$1/build.env" && readelf -d "${C10_LINKDIR:-$C10_LIBDIR}/libc10_cuda.so" |
		sed -n 's/.*(NEEDED).*\[\(libcudart\.so\.[0-9.]*\)\]/\1/p')
	case $cudart in
	libcudart.so.12) cuda12=$("$here/cuda/fetch-headers.sh") || { log "no CUDA 12 headers"; return 1; } ;;
	libcudart.so.11.0) cuda11=$("$here/cuda/fetch-headers11.sh") || { log "no CUDA 11 headers"; return 1; } ;;
	esac
	tb_fakecuda "$cuda12" "$cuda11"
}

# tb_kernel_cores_land_here - exit 77 (with a log line) where the kernel cannot leave a core in the process's
# working directory: core_pattern pipes cores to a program, or the hard core size limit is too small.
tb_kernel_cores_land_here() {
	local pattern hard
	pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo '?')
	case $pattern in
	\|*)
		log "core_pattern pipes cores to a program ($pattern): no kernel core can land in OUTDIR (use gcore)"
		exit 77
		;;
	/*) log "warning: core_pattern is an absolute path ($pattern); looking for the core in OUTDIR only" ;;
	esac
	hard=$(ulimit -H -c)
	if [ "$hard" != unlimited ] && [ "$hard" -lt 10000000 ]; then
		log "the hard core size limit is $hard blocks: no kernel core (use gcore)"
		exit 77
	fi
}

# tb_take_kernel_core OUT - the core the kernel just left in OUT, as OUT/core: core_pattern "core" (this machine), or
# "core.%p"-like with core_uses_pid (the newest core* there). Dies when there is none.
tb_take_kernel_core() {
	local found
	found=$(ls -t "$1"/core "$1"/core.* 2>/dev/null | head -n1 || true)
	[ -n "$found" ] && [ -s "$found" ] || die "no core in $1 (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
	[ "$found" = "$1/core" ] || mv "$found" "$1/core"
}

# tb_gcore PID OUT - gdb's gcore of process PID as OUT/core (its log OUT/gcore.log); the process is killed and, when
# it is our child, reaped, whatever the outcome. Exit 77 where ptrace is refused, die on other failures.
tb_gcore() {
	local pid=$1 out=$2 dump=(gcore -o "$out/core" "$pid")
	# A GPU machine may have cuda-gdb (gdb's gcore command) and no gdb.
	command -v gcore >/dev/null || ! command -v cuda-gdb >/dev/null ||
		dump=(cuda-gdb -p "$pid" -batch -iex 'set auto-solib-add off' -ex "gcore $out/core.$pid")
	if ! "${dump[@]}" >"$out/gcore.log" 2>&1 || [ ! -s "$out/core.$pid" ]; then
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		cat "$out/gcore.log" >&2
		if grep -qi 'ptrace' "$out/gcore.log"; then
			log "gcore cannot attach here (ptrace)"
			exit 77
		fi
		die "gcore failed"
	fi
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	mv "$out/core.$pid" "$out/core"
}

# tb_job_ours PID OUTDIR - whether PID is still a process that job.sh or dist.sh started for OUTDIR (its
# environment says MEMPROF_TESTBED_OUT=OUTDIR): pids get reused, and only our own may be killed.
tb_job_ours() {
	# (the environment read whole: `tr | grep -q` under pipefail fails when grep leaves at its match first, and
	# a rank then taken for not ours was left running)
	[ -r "/proc/$1/environ" ] && grep -qxF "MEMPROF_TESTBED_OUT=$2" <<<"$(tr '\0' '\n' 2>/dev/null <"/proc/$1/environ")"
}

# tb_job_kill PID OUTDIR - kill -9 PID if it is still ours (tb_job_ours) and wait until it is gone or a zombie
# (up to 10 s); reap it when it is our child.
tb_job_kill() {
	local pid=$1
	if tb_job_ours "$pid" "$2"; then
		kill -9 "$pid" 2>/dev/null || true
		for _ in $(seq 200); do
			[ -d "/proc/$pid" ] || break
			[ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null)" != Z ] || break
			sleep 0.05
		done
	fi
	wait "$pid" 2>/dev/null || true
}

# tb_job_args TORCH SCRIPT OUTDIR - the arguments job.sh and dist.sh share: TORCH a Python build (pypi-X.Y.Z,
# debian-2.6, or system: the machine's own torch on its GPU; the listed builds are the ones the tests run by default, any PyPI 2.x release runs the same way;
# else the caller's usage), SCRIPT a file. Sets script (its absolute path) and out (OUTDIR, made, absolute), sets
# the build up (python/build.sh; exits with its status, 77 when it cannot be fetched) and sources its job.env
# (JOB_PYTHON, JOB_ROOT, JOB_PRELOAD, JOB_BIND, JOB_TORCH_LIBDIR, JOB_TORCH_VERSION).
tb_job_args() {
	local testbed build
	testbed=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	case $1 in
	pypi-2.[0-9]*.[0-9]* | debian-2.6 | system) ;;
	*)
		log "unknown build '$1' (debian-2.6 or pypi-X.Y.Z; the tests run $("$testbed/python/build.sh" --list))"
		usage
		;;
	esac
	[ -f "$2" ] || die "no script $2"
	script=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
	mkdir -p "$3"
	out=$(cd "$3" && pwd)
	build=$("$testbed/python/build.sh" "$1") || exit $?
	JOB_ROOT=
	# shellcheck source=/dev/null
	. "$build/job.env"
}
