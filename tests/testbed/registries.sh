#!/usr/bin/env bash
# registries.sh - the test bed reaches Debian's archive and Python's package indexes the way this machine is set up
# to (lib/common.sh), not at addresses of its own:
#   - tb_debian_archives reads one-line *.list and deb822 *.sources files: the main Debian archive's URIs, in order,
#     without cdrom:, -security suites, other vendors' archives or disabled stanzas;
#   - tb_debian_mirror takes the files apt reads (APT_CONFIG's Dir::Etc::sourcelist and sourceparts), lets
#     MEMPROF_DEBIAN_MIRROR override them, and dies in one line when none names a Debian archive;
#   - tb_pip_offers asks pip, with pip's own configuration (here PIP_* variables and a find-links folder), whether a
#     requirement's release is offered;
#   - on this machine: tb_debian_mirror is the archive apt itself fetches bookworm from (apt-get indextargets, where
#     the machine's lists are there) and pip's configured indexes answer for pip (neither counted where they cannot
#     be asked: a note instead).
# Prints one line per check and "N passed, M failed". No network but this machine's pip index, once.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/check.sh
. "$here/../lib/check.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-registries.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# lib SNIPPET [ARG...]: run SNIPPET in a shell that sourced lib/common.sh (its cache in $work), with the ARGs as
# "$@"; stdout, stderr and status as the snippet's.
lib() {
	MEMPROF_TESTBED_CACHE=$work/cache bash -c '
		set -euo pipefail
		log() { echo "registries: $*" >&2; }
		die() { log "error: $*"; exit 1; }
		snippet=$1
		shift
		. "$0"
		eval "$snippet"' "$here/lib/common.sh" "$@"
}
# expect LABEL WANT GOT
expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: want [$2], got [$3]"; fi
}

mkdir -p "$work/apt/parts"
cat >"$work/apt/sources.list" <<'EOF'
# the installer's
deb cdrom:[Debian GNU/Linux 12 _Bookworm_]/ bookworm main
deb [ arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] https://mirror.test/debian/ trixie main contrib # ours
deb http://security.test/debian-security bookworm-security main
deb https://vendor.test/node_20.x nodistro main
deb http://contrib-only.test/debian sid contrib
EOF
cat >"$work/apt/parts/10-vendor.list" <<'EOF'
deb https://vendor.test/apt stable-vendor main
EOF
cat >"$work/apt/parts/20-debian.sources" <<'EOF'
Types: deb
URIs: http://disabled.test/debian
Suites: sid
Components: main
Enabled: no

# a comment between fields
Types: deb deb-src
URIs: http://one.test/debian http://two.test/debian/
suites: bookworm bookworm-updates
Components: main non-free-firmware
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 Components: main
 -----END PGP PUBLIC KEY BLOCK-----

Types: deb
URIs: http://deb-security.test/debian-security
Suites: bookworm-security
Components: main
EOF
cat >"$work/apt/parts/30-ignored.list.save" <<'EOF'
deb http://saved.test/debian sid main
EOF
printf 'Dir::Etc::sourcelist "%s";\nDir::Etc::sourceparts "%s";\n' "$work/apt/sources.list" "$work/apt/parts" \
	>"$work/apt.conf"

got=$(MEMPROF_T=$work/apt lib 'tb_debian_archives "$MEMPROF_T/sources.list" "$MEMPROF_T"/parts/*.list \
	"$MEMPROF_T"/parts/*.sources' 2>&1 | tr '\n' ' ')
expect "the Debian archives of one-line and deb822 sources" \
	"https://mirror.test/debian http://one.test/debian http://two.test/debian " "$got"

got=$(APT_CONFIG=$work/apt.conf lib 'tb_debian_mirror; echo "$tb_mirror"' 2>&1)
expect "tb_debian_mirror: the first archive of the files apt reads" "https://mirror.test/debian" "$got"

got=$(APT_CONFIG=$work/apt.conf MEMPROF_DEBIAN_MIRROR=http://override.test/debian/ \
	lib 'tb_debian_mirror; echo "$tb_mirror"' 2>&1)
expect "MEMPROF_DEBIAN_MIRROR overrides the sources" "http://override.test/debian" "$got"

# No Debian archive: only another distribution's and a vendor's.
mkdir -p "$work/none/parts"
echo "deb http://archive.ubuntu.test/ubuntu jammy main" >"$work/none/sources.list"
cp "$work/apt/parts/10-vendor.list" "$work/none/parts/"
printf 'Dir::Etc::sourcelist "%s";\nDir::Etc::sourceparts "%s";\n' "$work/none/sources.list" "$work/none/parts" \
	>"$work/none.conf"
got=$(APT_CONFIG=$work/none.conf lib 'tb_debian_mirror; echo "not reached"' 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$got" | wc -l)" -eq 1 ] &&
	[[ $got == *"no Debian archive in this machine's apt sources"*MEMPROF_DEBIAN_MIRROR* ]]; then
	ok "no Debian archive: one line, status 1"
else
	bad "no Debian archive: status $rc, [$got]"
fi

# pip, configured by PIP_* variables alone (no config file): a find-links folder of two empty wheels, no index.
mkdir -p "$work/wheels"
touch "$work/wheels/memprof_probe-1.0-py3-none-any.whl" "$work/wheels/memprof_probe-1.1-py3-none-any.whl"
# check_pip LABEL WANT(0: offered, 1: not) FIND_LINKS REQUIREMENT...
check_pip() {
	local label=$1 want=$2 links=$3 rc=0
	shift 3
	PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_FIND_LINKS=$links lib 'tb_pip_offers python3 "$@"' "$@" \
		>/dev/null 2>&1 || rc=1
	if [ "$rc" = "$want" ]; then ok "tb_pip_offers: $label"; else bad "tb_pip_offers: $label (status $rc)"; fi
}
if ! python3 -m pip --version >/dev/null 2>&1; then
	echo "note: python3 has no pip; tb_pip_offers not checked"
else
	check_pip "the releases pip's configuration offers" 0 "$work/wheels" \
		memprof-probe==1.0 memprof_probe===1.1 memprof-probe 'memprof-probe[extra]>=1'
	check_pip "not a release it lacks" 1 "$work/wheels" memprof-probe==1.0 memprof-probe==1.2
	check_pip "no answer where no index is configured" 1 "" memprof-probe
fi

# This machine: its apt's own view of its sources, when it has fetched their lists.
if got=$(lib 'tb_debian_mirror; echo "$tb_mirror"' 2>&1); then
	apt_uris=$(apt-get indextargets --format '$(REPO_URI) $(LABEL)' 2>/dev/null | awk '$2 == "Debian" {print $1}' |
		sed 's:/*$::' | sort -u)
	if [ -z "$apt_uris" ]; then
		echo "note: this machine's archive is $got (apt has no lists to compare with)"
	elif printf '%s\n' "$apt_uris" | grep -qxF "$got"; then
		ok "this machine's Debian archive, as apt fetches it: $got"
	else
		bad "this machine's Debian archive: $got, apt's lists are from: $apt_uris"
	fi
else
	echo "note: $got"
fi
if python3 -m pip --version >/dev/null 2>&1; then
	if lib 'tb_pip_offers python3 pip' >/dev/null 2>&1; then
		ok "this machine's pip configuration answers for pip"
	else
		echo "note: no package index of this machine's pip configuration answers (offline?)"
	fi
fi
finish
