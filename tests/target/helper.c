/* helper.c - a process for the target tests: known bytes in .rodata, .data, on the heap and in
   an mmap'd malloc block. Prints where they are, then waits (`wait`) or aborts (`abort`). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S16 "0123456789abcdef"
#define S256 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16 S16
#define S2K S256 S256 S256 S256 S256 S256 S256 S256

/* Read-only, untouched: the cores leave it out; only the executable on disk holds it. */
static const char rodata_text[] = "memprof-rodata-marker:" S2K S2K S2K ":end";
/* Written below, so the cores keep it. */
char data_text[64] = "memprof-data-marker";
volatile uint64_t data_word = 0x1122334455667788ull;

#define BIG (300 * 1024) /* past malloc's mmap threshold */

int main(int argc, char **argv)
{
	unsigned char *big = malloc(BIG);
	char *small = malloc(64);
	const char *volatile ro = rodata_text;

	if (big == NULL || small == NULL || argc < 2)
		return 2;
	for (size_t i = 0; i < BIG; i++)
		big[i] = (unsigned char)(i * 7 + 3);
	snprintf(small, 64, "memprof-heap-marker-%d", (int)getpid());
	data_text[19] = '!';
	data_word++;
	printf("pid %d\nrodata %p %zu\ndata %p\nword %p\nbig %p %d\nsmall %p\nready\n", (int)getpid(),
	       (const void *)ro, sizeof rodata_text, (void *)data_text, (void *)&data_word, (void *)big,
	       BIG, (void *)small);
	fflush(stdout);
	if (strcmp(argv[1], "abort") == 0)
		abort();
	for (;;)
		pause();
}
