/* category_defaults.c - the default rules for PyTorch training code. Each rule's reason is in
   CATEGORY-RULES.md; keep the two in step. Order matters: the first match wins. */
#include "mp_category.h"

#include <stddef.h>

#define GLOBS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define FRAME(files, functions) \
	((const mp_frame_cond[]){ { files, functions, false } })
#define RULE(name, cat, files, functions) \
	{ name, MP_CAT_##cat, FRAME(files, functions), 1, 0, false, false, false, false, 0, 0, 0, { 0, 0 }, NULL, 0 }
/* A rule on what the ring's order says (category_phases.c), with no frame condition. */
#define PHASE_RULE(name, cat, phases) \
	{ name, MP_CAT_##cat, NULL, 0, 0, false, false, false, false, 0, 0, 0, { 0, 0 }, NULL, phases }

static const mp_category_rule defaults[] = {
	/* What a library allocates for itself, wherever it runs: no tensor's memory, and no profiler category. */
	RULE("library-workspace", UNKNOWN, NULL,
	     GLOBS("at::cuda::getNewWorkspace*", "at::cuda::setWorkspaceForHandle*", "at::cuda::getCUDABlasLtWorkspace*",
		   "at::native::*Workspace::Workspace*", "*at::cuda::blas::gemm_and_bias*", "at::native::run_conv_plan*")),
	/* An operator's intermediates (made by an operator it called, freed before it returned): PyTorch's
	   TEMPORARY. Needs C++ frames; before everything else, as the profiler's data flow decides it first. */
	PHASE_RULE("operator-temporary", TEMPORARY, MP_PHASE_WITHIN_OPERATOR),
	/* Optimizers first: an optimizer stepped from a gradient hook runs inside backward. */
	RULE("optimizer-load-state-dict", OPTIMIZER_STATE, GLOBS("*/torch/optim/optimizer.py"),
	     GLOBS("load_state_dict")),
	RULE("optimizer-state-init", OPTIMIZER_STATE, GLOBS("*/torch/optim/*.py"), GLOBS("_init_group", "__init__")),
	RULE("sgd-momentum-buffer", OPTIMIZER_STATE, GLOBS("*/torch/optim/sgd.py"),
	     GLOBS("_single_tensor_sgd", "_multi_tensor_sgd", "_fused_sgd")),
	/* The step's intermediates live across several operators: not PyTorch's TEMPORARY (made and freed within
	   one), and no other category of its profiler. */
	RULE("optimizer-step-scratch", UNKNOWN, GLOBS("*/torch/optim/*.py"),
	     GLOBS("_single_tensor_*", "_multi_tensor_*", "_fused_*")),
	/* What a backward pass made, by the ring's order: kept when the pass returned and of a parameter's size,
	   a gradient (AccumulateGrad keeps the backward function's buffer as .grad); kept otherwise, not said; freed
	   before the pass returned, the pass's own detail. Before the frame rules: the frames of a kept gradient are
	   the backward function's, not AccumulateGrad's. */
	PHASE_RULE("backward-gradient", GRADIENT,
		   MP_PHASE_BACKWARD | MP_PHASE_OUTLIVES_BACKWARD | MP_PHASE_PARAMETER_SIZE),
	PHASE_RULE("backward-kept", UNKNOWN, MP_PHASE_BACKWARD | MP_PHASE_OUTLIVES_BACKWARD),
	/* The engine's own glue between backward functions (summing the gradients a tensor gets from several
	   uses, reducing a broadcast gradient): no backward function ran it, and PyTorch's profiler gives it no
	   category. */
	RULE("autograd-engine-glue", UNKNOWN, NULL,
	     GLOBS("torch::autograd::InputBuffer::*", "torch::autograd::validate_outputs*",
		   "void torch::autograd::validate_outputs*", "torch::autograd::InputMetadata::*")),
	PHASE_RULE("backward-detail", AUTOGRAD_DETAIL, MP_PHASE_BACKWARD),
	/* Gradients: AccumulateGrad runs inside the engine, so before it. */
	RULE("accumulate-grad", GRADIENT, NULL, GLOBS("*AccumulateGrad*", "*accumulateGrad*")),
	RULE("autograd-engine", AUTOGRAD_DETAIL, NULL,
	     GLOBS("torch::autograd::Engine::*", "torch::autograd::generated::*")),
	/* Activation checkpointing's recomputed forward, run inside backward to feed one backward function:
	   PyTorch's profiler counts what it keeps for that function with the pass's detail. */
	RULE("checkpoint-recompute", AUTOGRAD_DETAIL, GLOBS("*/torch/utils/checkpoint.py"),
	     GLOBS("unpack_hook", "recompute_fn", "backward")),
	/* The gradient loss.backward() starts from (ones like the loss): PyTorch's memory profiler counts it
	   with the forward's tensors. */
	RULE("backward-seed", ACTIVATION, GLOBS("*/torch/autograd/__init__.py"), GLOBS("_make_grads")),
	RULE("autograd-backward", AUTOGRAD_DETAIL, GLOBS("*/torch/autograd/__init__.py"), GLOBS("backward", "grad")),
	/* Parameters: moving, loading and creating a module's tensors. */
	RULE("module-to", PARAMETER, GLOBS("*/torch/nn/modules/module.py"),
	     GLOBS("_apply", "to", "cuda", "to_empty", "load_state_dict", "_load_from_state_dict")),
	RULE("module-init", PARAMETER, GLOBS("*/torch/nn/modules/*.py"),
	     GLOBS("__init__", "reset_parameters", "initialize_parameters")),
	RULE("parameter-new", PARAMETER, GLOBS("*/torch/nn/parameter.py"), GLOBS("__new__")),
	/* What the job computes from a forward's output before the backward pass (the loss, outside any module):
	   the profiler's data flow carries the forward's ACTIVATION on to it. */
	PHASE_RULE("forward-tail", ACTIVATION, MP_PHASE_BEFORE_BACKWARD),
	/* Inputs: what the job's own loop made and still held when a forward began (the batch, its labels), and
	   batches made or moved by the data loading code of PyTorch and common trainers. */
	PHASE_RULE("loop-input", INPUT, MP_PHASE_BEFORE_FORWARD),
	RULE("data-loader", INPUT, GLOBS("*/torch/utils/data/*"), NULL),
	RULE("accelerate-send-to-device", INPUT, GLOBS("*/accelerate/utils/operations.py"),
	     GLOBS("send_to_device")),
	RULE("lightning-transfer-batch", INPUT, GLOBS("*/lightning/*", "*/pytorch_lightning/*"),
	     GLOBS("*transfer_batch_to_device*")),
	/* Last: whatever else a module's forward allocates and still holds. */
	RULE("module-forward", ACTIVATION, GLOBS("*/torch/nn/modules/module.py"),
	     GLOBS("_call_impl", "_wrapped_call_impl")),
};

const mp_category_rule *mp_category_default_rules(size_t *n)
{
	*n = sizeof defaults / sizeof defaults[0];
	return defaults;
}
