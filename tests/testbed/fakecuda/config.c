/* Reads the FAKECUDA_* environment once, with defaults. */
#include "fakecuda_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct fakecuda_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* Accepts a decimal count with an optional K/M/G/T suffix (powers of 1024); 0 on junk. */
static size_t parse_size(const char *text)
{
	char *end;
	errno = 0;
	unsigned long long value = strtoull(text, &end, 10);
	if (errno || end == text)
		return 0;
	switch (*end) {
	case 'T': case 't': value <<= 10; /* fall through */
	case 'G': case 'g': value <<= 10; /* fall through */
	case 'M': case 'm': value <<= 10; /* fall through */
	case 'K': case 'k': value <<= 10; end++; break;
	case '\0': break;
	default: return 0;
	}
	if (*end == 'B' || *end == 'b' || *end == 'i')
		end++;
	return *end == '\0' ? (size_t)value : 0;
}

/* A bad setting is fatal: a test bed that silently used defaults would test the wrong thing. */
static size_t env_size(const char *name, size_t fallback)
{
	const char *text = getenv(name);
	if (!text || !*text)
		return fallback;
	size_t value = parse_size(text);
	if (!value) {
		fprintf(stderr, "fakecuda: %s=%s is not a positive size\n", name, text);
		abort();
	}
	return value;
}

static void read_config(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	config.devices = (int)env_size("FAKECUDA_DEVICES", 1);
	config.capacity = env_size("FAKECUDA_CAPACITY", (size_t)1 << 30);
	config.granularity = env_size("FAKECUDA_GRANULARITY", (size_t)2 << 20);
	const char *delay = getenv("FAKECUDA_DELAY_US");
	config.delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) : 0;
	if (config.devices > FAKECUDA_MAX_DEVICES || config.granularity % page
	    || config.capacity % page) {
		fprintf(stderr, "fakecuda: need FAKECUDA_DEVICES <= %d and page-multiple "
			"FAKECUDA_CAPACITY/FAKECUDA_GRANULARITY\n", FAKECUDA_MAX_DEVICES);
		abort();
	}
}

const struct fakecuda_config *fakecuda_config(void)
{
	pthread_once(&config_once, read_config);
	return &config;
}

void fakecuda_delay(void)
{
	unsigned us = fakecuda_config()->delay_us;
	if (us)
		usleep(us);
}
