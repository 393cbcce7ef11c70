/* tensors_driver.c pid PID|core CORE MANIFEST [SYSROOT] - memprof's tensor reader (src/torch) on a real job:
   every tensor of the manifest the job wrote of itself (tests/testbed/python/memprof_testbed/manifest.py: the
   object's id() is its address) is read from the process or its core and compared, field by field, with what
   the job said: data pointer, size, storage, device, dtype, shape; each parameter's gradient through its
   autograd meta must be the tensor the manifest lists as its .grad. Prints the layout chosen and a count;
   exit 0 when all agree, 1 on a difference, 2 on a usage or setup error. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_c10.h"
#include "mp_torch.h"

/* The whole file at PATH, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;

	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)size + 1)) != NULL) {
		if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		} else {
			buf[size] = '\0';
		}
	}
	if (f != NULL)
		fclose(f);
	return buf;
}

static uint64_t num(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsNumber(v) ? (uint64_t)v->valuedouble : 0;
}

static const char *text(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Whether tensor X is what manifest entry E says; prints the first difference. */
static int agrees(const mp_tensor *x, const cJSON *e)
{
	char device[32], shape[512] = "[";
	const cJSON *dim;
	size_t n = 1;
	int i = 0;

	if (x->device_index >= 0)
		snprintf(device, sizeof device, "%s:%d", mp_torch_device_name(x->device_type), x->device_index);
	else
		snprintf(device, sizeof device, "%s", mp_torch_device_name(x->device_type));
	cJSON_ArrayForEach(dim, cJSON_GetObjectItemCaseSensitive(e, "shape")) {
		if (i >= x->ndim || (int64_t)dim->valuedouble != mp_tensor_shape(x)[i])
			break;
		i++;
	}
	for (int k = 0; k < x->ndim && n < sizeof shape - 24; k++)
		n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%lld", k ? ", " : "", (long long)mp_tensor_shape(x)[k]);
	if (x->data_ptr != num(e, "data_ptr") || x->nbytes != num(e, "nbytes") ||
	    x->storage_data != num(e, "storage_ptr") || x->storage_nbytes != num(e, "storage_nbytes") ||
	    strcmp(device, text(e, "device")) != 0 || strcmp(mp_torch_dtype_name(x->dtype), text(e, "dtype")) != 0 ||
	    i != x->ndim || i != cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "shape"))) {
		printf("differ: %s: memprof reads 0x%llx %llu bytes of storage 0x%llx (%llu bytes) on %s, %s %s]\n",
		       text(e, "name"), (unsigned long long)x->data_ptr, (unsigned long long)x->nbytes,
		       (unsigned long long)x->storage_data, (unsigned long long)x->storage_nbytes, device,
		       mp_torch_dtype_name(x->dtype), shape);
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	mp_target_opts opts = { .sysroot = argc > 4 ? argv[4] : NULL };
	const mp_torch_layout *l;
	unsigned long ok = 0, wrong = 0, grads = 0, ngrads = 0;
	uint64_t *ids;
	size_t n = 0;
	mp_target *t;
	mp_diag diag = { 0 };
	cJSON *manifest, *e;
	char *json;
	mp_diag quiet = { .msg = "" };
	mp_c10 *c10;
	int abi = -1;

	if (argc < 4 || (strcmp(argv[1], "pid") != 0 && strcmp(argv[1], "core") != 0))
		return fprintf(stderr, "usage: tensors_driver pid PID|core CORE MANIFEST [SYSROOT]\n"), 2;
	if ((json = slurp(argv[3])) == NULL || (manifest = cJSON_Parse(json)) == NULL)
		return fprintf(stderr, "tensors_driver: %s: cannot read the manifest\n", argv[3]), 2;
	if ((strcmp(argv[1], "pid") == 0 ? mp_target_open_pid(atoi(argv[2]), &opts, &t, &diag)
					 : mp_target_open_core(argv[2], &opts, &t, &diag)) != MP_OK)
		return fprintf(stderr, "tensors_driver: %s\n", diag.msg), 2;
	if ((ids = calloc((size_t)cJSON_GetArraySize(manifest) + 1, sizeof *ids)) == NULL)
		return 2;
	cJSON_ArrayForEach(e, manifest)
		if (strcmp(text(e, "kind"), "gradient") != 0)
			ids[n++] = num(e, "id");
	if ((c10 = calloc(1, sizeof *c10)) != NULL && mp_c10_find(t, c10, &quiet) == MP_OK)
		abi = c10->cxx11_abi; /* as the owners do: the rows of the process's C++ ABI */
	free(c10);
	if ((l = mp_torch_choose(t, ids, n, abi, &diag)) == NULL)
		return printf("no layout: %s\n", diag.msg), 1;
	cJSON_ArrayForEach(e, manifest) {
		mp_tensor x, grad;
		const cJSON *g;

		/* A .grad's id may be a temporary's, gone by now (2.6 makes a new Python object on each access):
		   gradients are checked through their parameter's autograd meta below. */
		if (strcmp(text(e, "kind"), "gradient") == 0) {
			ngrads++;
			continue;
		}
		if (mp_torch_read_tensor(t, l, num(e, "id"), &x, &diag) != MP_OK) {
			printf("differ: %s: %s\n", text(e, "name"), diag.msg);
			wrong++;
			continue;
		}
		if (!agrees(&x, e)) {
			wrong++;
			continue;
		}
		ok++;
		/* the gradient the manifest lists next, through the autograd meta */
		g = e->next;
		if (strcmp(text(e, "kind"), "parameter") != 0)
			continue;
		if (g != NULL && strcmp(text(g, "kind"), "gradient") == 0) {
			if (x.grad_impl == 0 || mp_torch_read_impl(t, l, x.grad_impl, 0, &grad, &diag) != MP_OK ||
			    !agrees(&grad, g)) {
				printf("differ: %s: its autograd meta's gradient 0x%llx is not the manifest's %s\n",
				       text(e, "name"), (unsigned long long)x.grad_impl, text(g, "name"));
				wrong++;
			} else {
				grads++;
			}
		} else if (x.grad_impl != 0) {
			printf("differ: %s: memprof finds a gradient the manifest does not list\n", text(e, "name"));
			wrong++;
		}
	}
	if (grads != ngrads) {
		printf("differ: the manifest lists %lu gradients, memprof found %lu\n", ngrads, grads);
		wrong++;
	}
	printf("layout %s: %lu of %zu tensors agree, %lu of %lu gradients through the autograd meta\n", l->name, ok, n,
	       grads, ngrads);
	mp_target_close(t);
	cJSON_Delete(manifest);
	free(json);
	free(ids);
	return wrong == 0 && ok > 0 ? 0 : 1;
}
