"""Started by every Python of a test-bed job (job.sh puts this directory first on PYTHONPATH).

The fake device's cuDNN is a stub (tests/testbed/nvstubs/cudnn.c) that cannot serve PyTorch's cuDNN frontend, so
convolutions would fail inside it; with torch.backends.cudnn.enabled False, PyTorch runs its own (native)
convolutions instead, which the fake device runs like any kernel. This sets that flag right after `import torch`
finishes, before the script can use it, without importing torch itself. Set MEMPROF_TESTBED_CUDNN=1 to leave cuDNN
on. The distribution's own sitecustomize (this one shadows it) is run first.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


def _run_shadowed_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec and spec.loader:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of `torch` so that the flag is set once torch is loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_disable(module):
            exec_module(module)
            module.backends.cudnn.enabled = False

        spec.loader.exec_module = exec_then_disable
        return spec


_run_shadowed_sitecustomize()
if os.environ.get("MEMPROF_TESTBED_CUDNN") != "1":
    sys.meta_path.insert(0, _AfterTorch())
