/* replay_main.c - a harness without libFuzzer: runs LLVMFuzzerTestOneInput once on each file named, and on each
   file of each directory named (not recursively). Built with the project's compiler for `make check`, which replays
   the seed corpora and every regression input this way (tests/fuzz/replay.sh), under ASan+UBSan in the sanitizer
   pass; also the driver of an AFL++ build (tests/fuzz/README.md). Exit 0 when every input ran. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_front.h"

#define REPLAY_MAX_INPUT (64u << 20) /* larger than any committed input; libFuzzer's -max_len is smaller */

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data;
	size_t n;

	if (f == NULL) {
		perror(path);
		return 1;
	}
	data = malloc(REPLAY_MAX_INPUT);
	if (data == NULL) {
		fclose(f);
		return 1;
	}
	n = fread(data, 1, REPLAY_MAX_INPUT, f);
	fclose(f);
	/* an exact-size copy, so that a read one past the input's end is caught as it is under libFuzzer */
	unsigned char *exact = malloc(n ? n : 1);
	if (exact == NULL) {
		free(data);
		return 1;
	}
	memcpy(exact, data, n);
	free(data);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0, ran = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]);
			ran++;
			continue;
		}
		if ((d = opendir(argv[i])) == NULL) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		while ((e = readdir(d)) != NULL) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				bad |= run_file(path);
				ran++;
			}
		}
		closedir(d);
	}
	printf("%d inputs\n", ran);
	return bad;
}
