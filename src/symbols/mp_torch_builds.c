/* mp_torch_builds.c - PyPI's releases by the build-id of their libc10_cuda.so: names the release of
   a target whose torch/version.py is not beside the library (a core read with only the libraries
   copied next to it). The rows are facts of the wheels; tests/testbed/pypi/build-ids.sh prints
   them and checks this table against the wheels (tests/walker/versions.sh). */
#include <stdio.h>
#include <string.h>

#include "mp_c10.h"

static const struct {
	const char *build_id; /* hex */
	const char *version;  /* torch.__version__ of the wheel */
} builds[] = {
	{ "25993630d91a9330ebeb51e403809db99110eaee", "2.0.1+cu117" },
	{ "c62b41d6ef43af1ede195df3895e8c68d801de39", "2.1.2+cu121" },
	{ "66dc239f9610d36a50eefaa1f64df888a3a76fef", "2.2.2+cu121" },
	{ "ec2fa72cbbd7e8ecf7d654ae1558897efb439056", "2.3.1+cu121" },
	{ "1473eef26c0c4df93b4e0e08878cd9ed7c021022", "2.4.1+cu121" },
	{ "ef6206c890eeb1b20e2cc6444535b4c05540be0c", "2.5.1+cu124" },
	{ "62f303a24cdf426b202811cbb6330f1042c7309e", "2.6.0+cu124" },
	{ "218f521d29622902bad3e2a00232838b389dad90", "2.7.1+cu126" },
	{ "192fc47ce2317000875a575d144d18dcd039a5df", "2.8.0+cu128" },
	{ "d9bfdd5a168655341fb2595f9dd763c9be969281", "2.9.1+cu128" },
	{ "ed342957ebf42fe100d91c9fe156e246a7e21aed", "2.10.0+cu128" },
	{ "29dec3cf84422903fd1ea8ba24fa01f7c3de4214", "2.11.0+cu130" },
	{ "683ff1848b9f759fdb6049374ce8083f5d124a78", "2.12.1+cu130" },
	{ "cd671f1ea81ad5998caf4412a46a45ab3a936c6c", "2.13.0+cu130" },
	{ "f5bd35964db14b210b82f3ab0852b9ccfbaffa6c", "2.14.1+cu130" },
};

bool mp_torch_release_by_build_id(const unsigned char *id, size_t len, char *version, size_t size)
{
	char hex[2 * sizeof ((mp_c10 *)0)->build_id + 1];

	if (len == 0 || len > sizeof ((mp_c10 *)0)->build_id)
		return false;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++)
		if (strcmp(builds[i].build_id, hex) == 0) {
			snprintf(version, size, "%s", builds[i].version);
			return true;
		}
	return false;
}
