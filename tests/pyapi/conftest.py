# conftest.py - what the Python API's tests read, named by check.sh in the environment: a real PyTorch job's
# truth files and kernel core (MEMPROF_PYAPI_JOB), the same job left waiting (MEMPROF_PYAPI_LIVE), PyTorch's own
# _memory_viz.py of the job's release (MEMPROF_PYAPI_MEMVIZ), and tests/data (MEMPROF_PYAPI_DATA).
import importlib.util
import json
import os
import pickle

import pytest


def _env_dir(name):
    value = os.environ.get(name)
    if not value:
        pytest.skip("%s is not set (tests/pyapi/check.sh sets it)" % name)
    return value


class Job:
    """A job's directory as tests/testbed/job.sh leaves it."""

    def __init__(self, path):
        self.dir = path
        self.core = os.path.join(path, "core")
        self.snapshot_path = os.path.join(path, "snapshot.pickle")
        with open(self.snapshot_path, "rb") as f:
            self.snapshot = pickle.load(f)
        with open(os.path.join(path, "memory_stats.json")) as f:
            self.memory_stats = json.load(f)
        pid = os.path.join(path, "pid")
        self.pid = int(open(pid).read()) if os.path.exists(pid) else None


@pytest.fixture(scope="session")
def job():
    return Job(_env_dir("MEMPROF_PYAPI_JOB"))


@pytest.fixture(scope="session")
def live():
    j = Job(_env_dir("MEMPROF_PYAPI_LIVE"))
    assert j.pid is not None
    return j


@pytest.fixture(scope="session")
def memviz():
    """PyTorch's _memory_viz.py of the job's release, imported from its file (it needs no torch)."""
    path = _env_dir("MEMPROF_PYAPI_MEMVIZ")
    spec = importlib.util.spec_from_file_location("_memory_viz_of_the_job", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def data():
    return _env_dir("MEMPROF_PYAPI_DATA")
