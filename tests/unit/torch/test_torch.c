/* test_torch.c - the tensor reader (src/torch) on hand-built memory: a Python tensor of each THPVariable form
   (a plain at::Tensor, an owned and a borrowed MaybeOwned), a view with strides, more dimensions than the
   inline five, a gradient and a grad_fn through the autograd meta, and damage: a TensorImpl that does not point
   back, an undefined tensor, a rank of 2^40, a negative size, sizes that do not make numel, a view reaching past
   its storage, an unknown dtype or device, a storage of 2^60 bytes. The layout is chosen by what reads. An
   autograd node's edges and the words of its members (a SavedVariable, a vector of them). Real
   jobs: tests/walker/jobs.sh (owners), tests/torch/tensors_driver.c. */
#include <string.h>

#include "mp_torch.h"

#define BASE 0x10000u
#define MEM_IMAGE_BASE BASE
#define MEM_IMAGE_SIZE 16384
#include "mem_image.h"

enum {
	PYOBJ = BASE + 0x100,     /* the Python object */
	IMPL = BASE + 0x400,      /* its TensorImpl */
	STORAGE = BASE + 0x800,   /* the StorageImpl */
	META = BASE + 0xa00,      /* an AutogradMeta */
	GRAD = BASE + 0xc00,      /* the gradient's TensorImpl */
	SIZES = BASE + 0x1000,    /* out-of-line sizes and strides */
	BORROWED = BASE + 0x1200, /* an at::Tensor a borrowing THPVariable points to */
	DATA = 0x7f0000000000ull, /* device memory: never read */
};

static const mp_torch_layout *layout(const char *name)
{
	for (size_t i = 0; i < mp_torch_nlayouts; i++)
		if (strcmp(mp_torch_layouts[i].name, name) == 0)
			return &mp_torch_layouts[i];
	CU_FAIL_FATAL("no such layout");
	return NULL;
}

static void put16(uint64_t addr, uint16_t v)
{
	memcpy(mem + (addr - BASE), &v, 2);
}

/* A float32 CUDA tensor of SHAPE (RANK dims, contiguous) over a storage of NBYTES at DATA + OFFSET elements. */
static void make_impl(const mp_torch_layout *l, uint64_t impl, uint64_t pyobj, const int64_t *shape, int rank,
		      uint64_t nbytes, int64_t offset)
{
	int64_t numel = 1, stride = 1;
	uint64_t sizes = impl + l->impl_sizes + 8;

	memset(mem + (impl - BASE), 0, 0x180);
	put64(impl + l->impl_pyobj, pyobj);
	put64(impl + l->impl_storage, STORAGE);
	put64(impl + l->impl_storage_offset, (uint64_t)offset);
	put16(impl + l->impl_dtype, 6); /* float32 */
	put64(impl + l->impl_sizes, (uint64_t)rank);
	if (rank > MP_TORCH_INLINE_DIMS) {
		put64(sizes, SIZES);
		sizes = SIZES;
	}
	for (int i = rank; i-- > 0;) {
		put64(sizes + 8 * (uint64_t)i, (uint64_t)shape[i]);
		put64(sizes + 8 * (uint64_t)((rank > MP_TORCH_INLINE_DIMS ? rank : MP_TORCH_INLINE_DIMS) + i),
		      (uint64_t)stride);
		stride *= shape[i];
		numel *= shape[i];
	}
	put64(impl + l->impl_numel, (uint64_t)numel);
	memset(mem + (STORAGE - BASE), 0, 0x100);
	put64(STORAGE + l->storage_data, DATA);
	put64(STORAGE + l->storage_nbytes, nbytes);
	mem[STORAGE + l->storage_device - BASE] = MP_TORCH_DEVICE_CUDA;
	mem[STORAGE + l->storage_device + 1 - BASE] = 0;
}

static mp_err read_at(mp_target *t, const mp_torch_layout *l, uint64_t pyobj, mp_tensor *x)
{
	mp_diag diag = { 0 };

	mp_target_flush(t);
	return mp_torch_read_tensor(t, l, pyobj, x, &diag);
}

static void test_forms(void)
{
	const int64_t shape[] = { 4, 8 };
	mp_target *t = open_mem();
	mp_tensor x;

	/* 2.14: cdata is the TensorImpl* itself */
	make_impl(layout("2.14"), IMPL, PYOBJ, shape, 2, 128, 0);
	put64(PYOBJ + 16, IMPL);
	CU_ASSERT_EQUAL(read_at(t, layout("2.14"), PYOBJ, &x), MP_OK);
	CU_ASSERT_EQUAL(x.data_ptr, DATA);
	CU_ASSERT_EQUAL(x.nbytes, 128);
	CU_ASSERT_EQUAL(x.ndim, 2);
	CU_ASSERT_EQUAL(mp_tensor_shape(&x)[1], 8);
	CU_ASSERT_STRING_EQUAL(mp_torch_dtype_name(x.dtype), "float32");
	CU_ASSERT_EQUAL(x.device_type, MP_TORCH_DEVICE_CUDA);
	/* the same memory read as 2.11's: its TensorImpl does not point back where 2.11 looks */
	CU_ASSERT_NOT_EQUAL(read_at(t, layout("2.11"), PYOBJ, &x), MP_OK);
	/* 2.6, owned: a bool, then the TensorImpl* */
	make_impl(layout("2.6"), IMPL, PYOBJ, shape, 2, 128, 0);
	mem[PYOBJ + 16 - BASE] = 0;
	put64(PYOBJ + 24, IMPL);
	CU_ASSERT_EQUAL(read_at(t, layout("2.6"), PYOBJ, &x), MP_OK);
	CU_ASSERT_EQUAL(x.impl, IMPL);
	/* 2.6, borrowed: a pointer to an at::Tensor that holds the TensorImpl* */
	mem[PYOBJ + 16 - BASE] = 1;
	put64(PYOBJ + 24, BORROWED);
	put64(BORROWED, IMPL);
	CU_ASSERT_EQUAL(read_at(t, layout("2.6"), PYOBJ, &x), MP_OK);
	CU_ASSERT_EQUAL(x.impl, IMPL);
	/* a flag that is no bool */
	mem[PYOBJ + 16 - BASE] = 7;
	CU_ASSERT_EQUAL(read_at(t, layout("2.6"), PYOBJ, &x), MP_E_CORRUPT);
	mp_target_close(t);
}

static void test_shapes(void)
{
	const mp_torch_layout *l = layout("2.14");
	const int64_t seven[] = { 2, 1, 3, 1, 2, 1, 2 }, ten[] = { 2, 1, 3, 1, 2, 1, 2, 1, 1, 5 }, shape[] = { 4, 8 };
	mp_target *t = open_mem();
	mp_tensor x, y;

	put64(PYOBJ + 16, IMPL);
	/* more dimensions than the inline five: sizes and strides behind a pointer */
	make_impl(l, IMPL, PYOBJ, seven, 7, 96, 0);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_OK);
	CU_ASSERT_EQUAL(x.ndim, 7);
	CU_ASSERT_EQUAL(mp_tensor_shape(&x)[6], 2);
	CU_ASSERT_EQUAL(x.numel, 24);
	/* more than the tensor keeps in itself: its own copy of the sizes, copied deep */
	make_impl(l, IMPL, PYOBJ, ten, 10, 480, 0);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_OK);
	CU_ASSERT_EQUAL(x.ndim, 10);
	CU_ASSERT_EQUAL(x.numel, 120);
	CU_ASSERT_EQUAL(mp_tensor_copy(&y, &x), MP_OK);
	mp_tensor_release(&x);
	CU_ASSERT_EQUAL(y.ndim, 10);
	CU_ASSERT_EQUAL(mp_tensor_shape(&y)[2], 3);
	CU_ASSERT_EQUAL(mp_tensor_shape(&y)[9], 5);
	mp_tensor_release(&y);
	/* ... that fails after its sizes were read: they are not kept (a leak checker would say) */
	make_impl(l, IMPL, PYOBJ, ten, 10, 400, 0);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	/* a view 8 elements into its storage: its data pointer moves, the storage's does not */
	make_impl(l, IMPL, PYOBJ, shape, 2, 256, 8);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_OK);
	CU_ASSERT_EQUAL(x.data_ptr, DATA + 32);
	CU_ASSERT_EQUAL(x.storage_data, DATA);
	/* ... reaching past the storage's end */
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 8);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	/* an expanded view (stride 0) may hold more elements than its storage */
	make_impl(l, IMPL, PYOBJ, shape, 2, 32, 0);
	put64(IMPL + l->impl_sizes + 8 + 8 * MP_TORCH_INLINE_DIMS, 0);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_OK);
	mp_target_close(t);
}

static void test_autograd(void)
{
	const mp_torch_layout *l = layout("2.14");
	const int64_t shape[] = { 16 };
	mp_target *t = open_mem();
	mp_diag diag = { 0 };
	mp_tensor x, g;

	put64(PYOBJ + 16, IMPL);
	make_impl(l, IMPL, PYOBJ, shape, 1, 64, 0);
	put64(IMPL + l->impl_autograd_meta, META);
	put64(META + l->meta_grad, GRAD);
	put64(META + l->meta_grad_fn, BASE + 0x40);
	memcpy(mem + (GRAD - BASE), mem + (IMPL - BASE), 0x180);
	put64(GRAD + l->impl_pyobj, 0);
	put64(GRAD + l->impl_autograd_meta, 0);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_OK);
	CU_ASSERT_EQUAL(x.grad_impl, GRAD);
	CU_ASSERT_TRUE(x.has_grad_fn);
	CU_ASSERT_EQUAL(mp_torch_read_impl(t, l, GRAD, 0, &g, &diag), MP_OK);
	CU_ASSERT_EQUAL(g.nbytes, 64);
	/* an undefined tensor (the grad before backward): no storage, no elements */
	put64(GRAD + l->impl_storage, 0);
	put64(GRAD + l->impl_numel, 0);
	put64(GRAD + l->impl_sizes, 0);
	put16(GRAD + l->impl_dtype, 47);
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_torch_read_impl(t, l, GRAD, 0, &g, &diag), MP_E_UNSUPPORTED);
	/* a TensorImpl that is its own gradient */
	put64(META + l->meta_grad, IMPL);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	mp_target_close(t);
}

static void test_damage(void)
{
	const mp_torch_layout *l = layout("2.14");
	const int64_t shape[] = { 4, 8 };
	mp_target *t = open_mem();
	mp_tensor x;

	put64(PYOBJ + 16, IMPL);
	/* not pointing back: another object's, or no live tensor of its own */
	make_impl(l, IMPL, PYOBJ + 64, shape, 2, 128, 0);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_TYPE);
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 0);
	put64(IMPL + l->impl_sizes, 1ull << 40);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 0);
	put64(IMPL + l->impl_sizes + 8, (uint64_t)-4);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 0);
	put64(IMPL + l->impl_numel, 33);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 0);
	put16(IMPL + l->impl_dtype, 999);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 0);
	mem[STORAGE + l->storage_device - BASE] = 99;
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	make_impl(l, IMPL, PYOBJ, shape, 2, 1ull << 60, 0);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	/* sizes and strides whose reach overflows (what UBSan caught on a damaged core) */
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 0);
	put64(IMPL + l->impl_sizes + 8, 10158081);
	put64(IMPL + l->impl_sizes + 8 + 8 * MP_TORCH_INLINE_DIMS, 39125021762781567ull);
	put64(IMPL + l->impl_numel, 10158081 * 8);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	/* a storage offset of 2^62 */
	make_impl(l, IMPL, PYOBJ, shape, 2, 128, 1ll << 62);
	CU_ASSERT_EQUAL(read_at(t, l, PYOBJ, &x), MP_E_CORRUPT);
	/* a TensorImpl pointer into nothing */
	put64(PYOBJ + 16, 0x5000000);
	CU_ASSERT_NOT_EQUAL(read_at(t, l, PYOBJ, &x), MP_OK);
	mp_target_close(t);
}

/* Words the node member scan passes on. */
struct words {
	uint64_t w[64];
	size_t n;
};

static bool collect(void *ctx, uint64_t word)
{
	struct words *c = ctx;

	if (c->n < 64)
		c->w[c->n++] = word;
	return true;
}

static bool has_word(const struct words *c, uint64_t word)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->w[i] == word)
			return true;
	return false;
}

/* An autograd node (2.14: Node an intrusive_ptr_target): its sequence number, its edges (one undefined), and
   its members after Node's: a SavedVariable, then a std::vector<SavedVariable> of two, inside a malloc chunk. */
static void test_graph(void)
{
	const mp_torch_layout *l = layout("2.14");
	enum { NODE = BASE + 0x2000, NODE2 = BASE + 0x2400, EDGES = BASE + 0x2800, VEC = BASE + 0x2a00, MEMBERS = 640 };
	uint64_t next[4], seq;
	size_t n;
	struct words words = { .n = 0 };
	mp_target *t = open_mem();
	mp_diag diag = { 0 };

	CU_ASSERT_TRUE(mp_torch_graph_known(l));
	CU_ASSERT_FALSE(mp_torch_graph_known(layout("2.11")));
	memset(mem + (NODE - 8 - BASE), 0, MEMBERS + 8);
	put64(NODE - 8, (MEMBERS + 8) | 1);           /* the chunk's size, PREV_INUSE */
	put64(NODE + l->node_sequence_nr, 42);
	put64(NODE + l->node_next_edges, EDGES);
	put64(NODE + l->node_next_edges + 8, EDGES + 2 * l->edge_size);
	put64(EDGES, NODE2);
	put64(EDGES + l->edge_size, 0);               /* an undefined edge */
	put64(NODE + l->node_size + l->saved_data, IMPL);
	put64(NODE + l->node_size + l->saved_size, VEC);
	put64(NODE + l->node_size + l->saved_size + 8, VEC + 2 * l->saved_size);
	put64(NODE + l->node_size + l->saved_size + 16, VEC + 2 * l->saved_size);
	put64(VEC + l->saved_data, GRAD);
	put64(VEC + l->saved_size + l->saved_data, SIZES);
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_torch_read_node(t, l, NODE, &seq, next, 4, &n, &diag), MP_OK);
	CU_ASSERT_EQUAL(seq, 42);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(next[0], NODE2);
	CU_ASSERT_EQUAL(mp_torch_node_members(t, l, NODE, collect, &words, &diag), MP_OK);
	CU_ASSERT_TRUE(has_word(&words, IMPL));
	CU_ASSERT_TRUE(has_word(&words, GRAD));
	CU_ASSERT_TRUE(has_word(&words, SIZES));
	/* the graph of a layout that does not know it */
	CU_ASSERT_EQUAL(mp_torch_read_node(t, layout("2.11"), NODE, &seq, next, 4, &n, &diag), MP_E_UNSUPPORTED);
	/* damage: edges that end before they begin, a node in no malloc chunk */
	put64(NODE + l->node_next_edges + 8, EDGES - l->edge_size);
	put64(NODE - 8, 0);
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_torch_read_node(t, l, NODE, &seq, next, 4, &n, &diag), MP_E_CORRUPT);
	CU_ASSERT_EQUAL(mp_torch_node_members(t, l, NODE, collect, &words, &diag), MP_E_CORRUPT);
	mp_target_close(t);
}

static void test_choose(void)
{
	const int64_t shape[] = { 4, 8 };
	uint64_t objs[1] = { PYOBJ };
	mp_target *t = open_mem();
	mp_diag diag = { 0 };

	make_impl(layout("2.6"), IMPL, PYOBJ, shape, 2, 128, 0);
	mem[PYOBJ + 16 - BASE] = 0;
	put64(PYOBJ + 24, IMPL);
	mp_target_flush(t);
	CU_ASSERT_STRING_EQUAL(mp_torch_choose(t, objs, 1, -1, &diag)->name, "2.6");
	make_impl(layout("2.14"), IMPL, PYOBJ, shape, 2, 128, 0);
	put64(PYOBJ + 16, IMPL);
	mp_target_flush(t);
	CU_ASSERT_STRING_EQUAL(mp_torch_choose(t, objs, 1, -1, &diag)->name, "2.14");
	/* nothing reads: no layout, and a message saying what each met */
	memset(mem, 0, sizeof mem);
	mp_target_flush(t);
	CU_ASSERT_PTR_NULL(mp_torch_choose(t, objs, 1, -1, &diag));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "2.14: 0 of 1"));
	mp_target_close(t);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "each THPVariable form", test_forms },
		{ "shapes, views, strides", test_shapes },
		{ "gradient and grad_fn", test_autograd },
		{ "damage", test_damage },
		{ "the layout chosen by what reads", test_choose },
		{ "an autograd node: edges and saved tensors", test_graph },
	};

	return UNIT_RUN("torch", tests, NULL, NULL);
}
