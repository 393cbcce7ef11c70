/* The one accounting of device memory in use, shared by cudaMalloc and cuMemCreate. */
#include "fakecuda_internal.h"

#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t used[FAKECUDA_MAX_DEVICES];

int fakecuda_charge(int device, size_t bytes)
{
	const struct fakecuda_config *config = fakecuda_config();
	if (device < 0 || device >= config->devices)
		return FAKECUDA_ENODEV;
	int status = FAKECUDA_ENOMEM;
	pthread_mutex_lock(&lock);
	if (bytes <= config->capacity - used[device]) {
		used[device] += bytes;
		status = FAKECUDA_OK;
	}
	pthread_mutex_unlock(&lock);
	return status;
}

void fakecuda_uncharge(int device, size_t bytes)
{
	pthread_mutex_lock(&lock);
	used[device] -= bytes;
	pthread_mutex_unlock(&lock);
}

size_t fakecuda_used(int device)
{
	pthread_mutex_lock(&lock);
	size_t bytes = used[device];
	pthread_mutex_unlock(&lock);
	return bytes;
}
