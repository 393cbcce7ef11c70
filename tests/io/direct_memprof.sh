# direct_memprof.sh - sourced by the io tests: run MEMPROF past libtool's wrapper script.
# In the build tree, memprof is a shell script that sets LD_LIBRARY_PATH and runs
# .libs/memprof; it costs ~10 ms a call, which thousands of calls cannot afford. When
# MEMPROF is such a wrapper, point MEMPROF at the real binary and export the library path.
if [ -f "$MEMPROF" ] && [ -x "$(dirname "$MEMPROF")/.libs/$(basename "$MEMPROF")" ] &&
	head -c 4096 "$MEMPROF" | grep -q 'libtool'; then
	LD_LIBRARY_PATH=$(cd "$(dirname "$MEMPROF")/.libs" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	MEMPROF=$(cd "$(dirname "$MEMPROF")/.libs" && pwd)/$(basename "$MEMPROF")
	export LD_LIBRARY_PATH MEMPROF
fi
