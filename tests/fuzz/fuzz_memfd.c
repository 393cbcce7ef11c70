/* fuzz_memfd.c - the fuzz input as a file (fuzz_memfd.h). */
#include "fuzz_memfd.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_front.h"

const char *fuzz_memfd(const uint8_t *data, size_t len)
{
	static int fd = -1;
	static char path[64];
	size_t done = 0;

	if (fd < 0) {
		if ((fd = memfd_create("memprof-fuzz", MFD_CLOEXEC)) < 0)
			fuzz_fail("memfd_create failed");
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0)
		fuzz_fail("ftruncate of the memfd failed");
	while (done < len) {
		ssize_t n = pwrite(fd, data + done, len - done, (off_t)done);

		if (n <= 0)
			fuzz_fail("writing the memfd failed");
		done += (size_t)n;
	}
	return path;
}
