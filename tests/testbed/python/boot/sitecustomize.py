"""Started by every Python of a test-bed job (job.sh puts this directory first on PYTHONPATH).

The fake device's cuDNN is a stub (tests/testbed/nvstubs/cudnn.c) that cannot serve PyTorch's cuDNN frontend, so
convolutions would fail inside it; with torch.backends.cudnn.enabled False, PyTorch runs its own (native)
convolutions instead, which the fake device runs like any kernel. This sets that flag right after `import torch`
finishes, before the script can use it, without importing torch itself. Set MEMPROF_TESTBED_CUDNN=1 to leave cuDNN
on. With USE_LIBUV=0 (../../dist.sh, Debian's build) it also makes torch.distributed's TCP stores do without libuv.
On a real GPU (job.sh's `system` build) MEMPROF_TESTBED_CAPACITY (bytes, or with a K, M or G suffix, as
FAKECUDA_CAPACITY) caps what the caching allocator may hold on each device (set_per_process_memory_fraction), so
that the scenarios, written for the fake device's 1 GiB, run out of memory where they do there.
The distribution's own sitecustomize (this one shadows it) is run first.
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

        def exec_then_adjust(module):
            exec_module(module)
            if os.environ.get("MEMPROF_TESTBED_CUDNN") != "1":
                module.backends.cudnn.enabled = False
            if os.environ.get("USE_LIBUV") == "0":
                _tcp_store_without_libuv(module)
            if os.environ.get("MEMPROF_TESTBED_CAPACITY"):
                _cap_devices(module, _bytes(os.environ["MEMPROF_TESTBED_CAPACITY"]))

        spec.loader.exec_module = exec_then_adjust
        return spec


def _bytes(text):
    """'1G', '138M', '4096' as bytes (binary units, as the fake device reads FAKECUDA_CAPACITY)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)


def _cap_devices(torch, capacity):
    """Let the caching allocator hold at most CAPACITY bytes on each device (its own OOM past that)."""
    for device in range(torch.cuda.device_count()):
        total = torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, capacity / total), device)


def _tcp_store_without_libuv(torch):
    """USE_LIBUV=0 (dist.sh sets it for Debian's PyTorch, built without libuv): torch.distributed.TCPStore made
    without use_libuv defaults to False. 2.6's torchrun makes its rendezvous store with the default, True, whatever
    USE_LIBUV says, and fails there, as do the ranks' stores (made by rendezvous.py, loaded with torch)."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not hasattr(dist, "TCPStore"):
        return
    base = dist.TCPStore

    class TCPStore(base):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("use_libuv", False)
            super().__init__(*args, **kwargs)

    TCPStore.__name__ = TCPStore.__qualname__ = base.__name__
    # torch.distributed's modules loaded with torch (rendezvous.py: the ranks' stores) took the name already.
    for name, module in list(sys.modules.items()):
        if (name == "torch.distributed" or name.startswith("torch.distributed.")) and \
                getattr(module, "TCPStore", None) is base:
            module.TCPStore = TCPStore


_run_shadowed_sitecustomize()
if os.environ.get("MEMPROF_TESTBED_CUDNN") != "1" or os.environ.get("USE_LIBUV") == "0" or \
        os.environ.get("MEMPROF_TESTBED_CAPACITY"):
    sys.meta_path.insert(0, _AfterTorch())
