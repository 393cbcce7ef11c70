#!/usr/bin/env bash
# setup-debian.sh - install what memprof needs to build and test on Debian 12 (run as root).
set -euo pipefail

packages=(
	build-essential autoconf automake libtool pkg-config
	libelf-dev libdw-dev libcjson-dev libcunit1-dev
	python3 python3-venv ca-certificates time
	man-db groff-base
	gdb gdbserver libfmt-dev
	chromium python3-pil
	mmdebstrap dpkg-dev
	clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "setup: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# Wait for another apt (a parallel test-bed fetch) rather than fail on its lock.
	apt-get install -o DPkg::Lock::Timeout=600 -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
