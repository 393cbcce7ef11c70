/* category_defaults.c - the default rules for PyTorch training code. Each rule's reason is in
   CATEGORY-RULES.md; keep the two in step. Order matters: the first match wins. */
#include "mp_category.h"

#include <stddef.h>

#define GLOBS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define FRAME(files, functions) \
	((const mp_frame_cond[]){ { files, functions, false } })
#define RULE(name, cat, files, functions) \
	{ name, MP_CAT_##cat, FRAME(files, functions), 1, 0, false, false, false, false, 0, 0, 0, { 0, 0 }, NULL }

static const mp_category_rule defaults[] = {
	/* Optimizers first: an optimizer stepped from a gradient hook runs inside backward. */
	RULE("optimizer-load-state-dict", OPTIMIZER_STATE, GLOBS("*/torch/optim/optimizer.py"),
	     GLOBS("load_state_dict")),
	RULE("optimizer-state-init", OPTIMIZER_STATE, GLOBS("*/torch/optim/*.py"), GLOBS("_init_group", "__init__")),
	RULE("sgd-momentum-buffer", OPTIMIZER_STATE, GLOBS("*/torch/optim/sgd.py"),
	     GLOBS("_single_tensor_sgd", "_multi_tensor_sgd", "_fused_sgd")),
	RULE("optimizer-step-scratch", TEMPORARY, GLOBS("*/torch/optim/*.py"),
	     GLOBS("_single_tensor_*", "_multi_tensor_*", "_fused_*")),
	/* Gradients: AccumulateGrad runs inside the engine, so before it. */
	RULE("accumulate-grad", GRADIENT, NULL, GLOBS("*AccumulateGrad*", "*accumulateGrad*")),
	RULE("autograd-engine", AUTOGRAD_DETAIL, NULL,
	     GLOBS("torch::autograd::Engine::*", "torch::autograd::generated::*")),
	RULE("autograd-backward", AUTOGRAD_DETAIL, GLOBS("*/torch/autograd/__init__.py"), GLOBS("backward", "grad")),
	/* Parameters: moving, loading and creating a module's tensors. */
	RULE("module-to", PARAMETER, GLOBS("*/torch/nn/modules/module.py"),
	     GLOBS("_apply", "to", "cuda", "to_empty", "load_state_dict", "_load_from_state_dict")),
	RULE("module-init", PARAMETER, GLOBS("*/torch/nn/modules/*.py"),
	     GLOBS("__init__", "reset_parameters", "initialize_parameters")),
	RULE("parameter-new", PARAMETER, GLOBS("*/torch/nn/parameter.py"), GLOBS("__new__")),
	/* Inputs: batches made or moved by the data loading code of PyTorch and common trainers. */
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
