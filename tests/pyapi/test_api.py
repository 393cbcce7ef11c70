# test_api.py - the memprof Python package, installed from its wheel into a fresh venv, against a real PyTorch
# job: its own torch.cuda.memory._snapshot() and memory_stats(), PyTorch's _memory_viz.py functions, and
# memprof's CLI (which the rest of the suite checks against the same truths).
import collections
import gc
import os
import pickle
import re
import resource
import shutil
import subprocess
import sys
import threading
import time

import pytest

import memprof

CLI = shutil.which("memprof")


def same_snapshot(mine, truth):
    """Differences between the snapshot memprof rebuilt from a target and the job's own, as messages. Key order,
    types and values must agree, but for what a read after the job's _snapshot() must see: the 'snapshot' trace
    entries that very call recorded after its own copy, at the ring's end, and time_us off by the microsecond
    that converting the ring's TSC times rounds (tests/walker/compare_truth.py allows the same)."""
    out = []

    def walk(a, b, path):
        if len(out) > 20:
            return
        if type(a) is not type(b):
            out.append("%s: %s vs %s" % (path, type(a).__name__, type(b).__name__))
        elif isinstance(a, dict):
            if list(a) != list(b):
                out.append("%s: keys %s vs %s" % (path, list(a), list(b)))
            for k in a:
                if k in b:
                    walk(a[k], b[k], "%s.%s" % (path, k))
        elif isinstance(a, (list, tuple)):
            if path.endswith(".device_traces"):
                a = [d[:len(t)] if all(e["action"] == "snapshot" for e in d[len(t):]) else d for d, t in zip(a, b)]
            if len(a) != len(b):
                out.append("%s: %d vs %d items" % (path, len(a), len(b)))
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, "%s[%d]" % (path, i))
        elif path.endswith(".time_us"):
            if abs(a - b) > 1:
                out.append("%s: %r vs %r" % (path, a, b))
        elif a != b:
            out.append("%s: %r vs %r" % (path, a, b))

    walk(mine, truth, "snapshot")
    return out


def cli(*args):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True)


# -- the package and its CLI
def test_versions_agree():
    assert memprof.__version__ == memprof.library_version()
    assert cli("--version").stdout.split() == ["memprof", memprof.__version__]


def test_cli_is_on_path_and_reads_the_core(job, memviz):
    assert CLI is not None and os.path.dirname(CLI) == os.path.dirname(sys.executable)
    r = cli("segsum", job.core)
    assert r.returncode == 0, r.stderr
    assert r.stdout == memviz.segsum(job.snapshot) + "\n"


# -- PyTorch's own shapes
def test_snapshot_of_the_core_is_the_jobs_own(job):
    mine = memprof.snapshot(job.core)
    assert same_snapshot(mine, job.snapshot) == []
    assert sum(len(s["blocks"]) for s in mine["segments"]) > 100
    assert any(b["frames"] for s in mine["segments"] for b in s["blocks"]), "history was on: frames decoded"


def test_snapshot_of_the_live_process_is_the_jobs_own(live):
    assert same_snapshot(memprof.snapshot(pid=live.pid), live.snapshot) == []


def stopped_threads(pid):
    """The threads of PID in a tracing stop."""
    stopped = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            stopped += f.read().rsplit(")", 1)[1].split()[0] == "t"
    return stopped


def test_live_process_is_held_while_read_and_let_go(live):
    """pid= holds every thread still while a call reads (as --stop) and lets them go after; stop=False reads the job
    as it runs (here: parked, so the same state)."""
    with memprof.open(pid=live.pid) as t:
        info = t.info()
        assert re.search(r"^held: +\d+ threads? stopped \(ptrace\)", info, re.M), info
        assert stopped_threads(live.pid) == 0, "let go between calls"
        assert same_snapshot(t.snapshot(), live.snapshot) == []
        assert stopped_threads(live.pid) == 0
    with memprof.open(pid=live.pid, stop=False) as t:
        assert re.search(r"^held: +no \(not asked to hold it\)", t.info(), re.M)
        assert same_snapshot(t.snapshot(), live.snapshot) == []
    assert same_snapshot(memprof.snapshot(pid=live.pid, stop=False), live.snapshot) == []


def test_snapshot_of_a_file_is_the_file(job):
    assert memprof.snapshot(job.snapshot_path) == job.snapshot


def test_a_file_named_like_an_option(tmp_path, monkeypatch, job):
    shutil.copy(job.snapshot_path, tmp_path / "-x.pickle")
    monkeypatch.chdir(tmp_path)
    assert memprof.snapshot("-x.pickle") == job.snapshot
    assert memprof.compare("-x.pickle", "-x.pickle") == ""


def test_a_change_is_seen(job):
    """The comparison can fail: one block's size changed must be found."""
    mine = memprof.snapshot(job.core)
    mine["segments"][0]["blocks"][0]["size"] += 512
    assert same_snapshot(mine, job.snapshot) != []


def test_memory_stats_are_the_jobs_own(job):
    for device, truth in job.memory_stats.items():
        stats = memprof.memory_stats(job.core, int(device))
        assert isinstance(stats, collections.OrderedDict)
        assert list(stats) == sorted(stats), "torch.cuda.memory_stats() sorts its keys"
        assert dict(stats) == truth


def test_memviz_takes_the_snapshot(job, memviz):
    mine = memprof.snapshot(job.core)
    lines = lambda x: x  # noqa: E731 - the folded lines, not flamegraph.pl's SVG
    assert memviz.segsum(mine) == memviz.segsum(job.snapshot)
    assert memviz.segments(mine, format_flamegraph=lines) == memviz.segments(job.snapshot, format_flamegraph=lines)
    assert memviz.memory(mine, format_flamegraph=lines) == memviz.memory(job.snapshot, format_flamegraph=lines)
    # the trace, but for what the job's _snapshot() call recorded after its copy
    mine["device_traces"] = [d[:len(t)] for d, t in zip(mine["device_traces"], job.snapshot["device_traces"])]
    assert memviz.trace(mine) == memviz.trace(job.snapshot)


def test_analyses_equal_memviz_functions(job, memviz):
    with memprof.open(job.core) as t:
        assert t.segsum() == memviz.segsum(job.snapshot)
        assert t.memory() == memviz.memory(job.snapshot, format_flamegraph=lambda x: x)
    assert memprof.compare(job.snapshot_path, job.snapshot_path) == \
        memviz.compare(job.snapshot["segments"], job.snapshot["segments"], format_flamegraph=lambda x: x)


def test_summary_is_the_clis(job):
    text = memprof.summary(job.core, 0)
    assert text == cli("summary", job.core).stdout
    assert "PyTorch CUDA memory summary, device ID 0" in text


# -- memprof's analyses as data, text alongside
def test_categories_as_data_and_text(job):
    with memprof.open(job.core) as t:
        data = t.categories()
        assert data["devices"] and isinstance(data["devices"], list)
        assert data == __import__("json").loads(cli("categories", "--format", "json", job.core).stdout)
        assert t.categories(format="plain") == cli("categories", job.core).stdout


def test_owners_and_pystack_as_data(job):
    owners = memprof.owners(job.core)
    assert owners == __import__("json").loads(cli("owners", "--format", "json", job.core).stdout)
    stacks = memprof.pystack(job.core)
    assert stacks == __import__("json").loads(cli("pystack", "--format", "json", job.core).stdout)


def test_one_target_many_analyses(job):
    with memprof.open(job.core, frames=False) as t:
        snap = t.snapshot()
        assert all(b["frames"] == [] for s in snap["segments"] for b in s["blocks"])
        assert t.memory_stats(0)["num_alloc_retries"] == job.memory_stats["0"]["num_alloc_retries"]
        assert "Summary of segments" in t.segsum()
    with pytest.raises(ValueError):
        t.segsum()


# -- keywords from the library's tables, not copied by hand
def test_keywords_come_from_the_command_table(job):
    import inspect
    from memprof import _library
    lib = memprof.library()
    for command in _library.commands(lib):
        if command.positional != "[snapshot]" or " " in command.name:
            continue
        method = getattr(memprof.Target, command.name)
        params = inspect.signature(method).parameters
        for option in command.options:
            bare = option.name[5:] if option.name.startswith("--no-") and option.kind == "flag" else option.name
            keyword = "output" if option.name == "-o" else bare.lstrip("-").replace("-", "_")
            assert keyword in params, (command.name, option.name)
        if command.name != "summary":  # written by hand in torch.cuda.memory_summary()'s shape, its keywords the same
            assert command.help.splitlines()[0] in method.__doc__
    # an option the command lacks is refused, as the CLI refuses it; whatif came with the table
    with memprof.open(job.core) as t:
        with pytest.raises(TypeError):
            t.categories(colour="red")
        assert t.whatif()["check"]["faithful"] in (True, False)
        assert t.categories(owners=False, format="plain") == cli("categories", "--no-owners", job.core).stdout
        assert t.timeline(units="MiB") == __import__("json").loads(
            cli("timeline", "--format", "json", "-o", "-", job.core).stdout)


def test_settings_come_from_the_setting_table(job):
    assert set(memprof.settings()) == {"units", "device", "layout", "max_blocks", "frames", "stop", "viewer", "d3"}
    with memprof.open(job.core, units="KiB", device=0, max_blocks=0) as t:
        assert "KiB" in t.categories(format="plain")
    with pytest.raises(TypeError):
        memprof.open(job.core, colour="red")
    with pytest.raises(memprof.MemprofError, match="units"):
        memprof.open(job.core, units="furlongs")


# -- bad targets
def test_missing_file():
    with pytest.raises(FileNotFoundError):
        memprof.snapshot("/nonexistent/core.1")


def test_directory(tmp_path):
    with pytest.raises(IsADirectoryError):
        memprof.snapshot(tmp_path)


def test_garbage_file(tmp_path):
    bad = tmp_path / "garbage.pickle"
    bad.write_bytes(os.urandom(4096))
    with pytest.raises(memprof.MemprofError) as e:
        memprof.snapshot(bad)
    assert "\n" not in str(e.value) and str(bad) in str(e.value)


def test_truncated_pickle(tmp_path, job):
    cut = tmp_path / "cut.pickle"
    cut.write_bytes(open(job.snapshot_path, "rb").read()[:5000])
    with pytest.raises(memprof.MemprofError) as e:
        memprof.segsum(cut)
    assert "\n" not in str(e.value)


def test_truncated_core(tmp_path, job):
    cut = tmp_path / "core"
    with open(job.core, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(1 << 20))
    with pytest.raises(memprof.MemprofError) as e:
        memprof.snapshot(cut)
    assert "\n" not in str(e.value)


def test_no_such_process():
    with pytest.raises(ProcessLookupError):
        memprof.snapshot(pid=2 ** 22 + 17)


def test_target_or_pid():
    with pytest.raises(TypeError):
        memprof.snapshot()
    with pytest.raises(TypeError):
        memprof.snapshot("x", pid=1)


def test_memory_stats_absent_from_a_plain_pickle(data):
    with pytest.raises(memprof.MemprofError) as e:
        memprof.memory_stats(os.path.join(data, "example.pickle"))
    assert "memory_stats" in str(e.value)


# -- resources
def _rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_no_leak_over_1000_calls(data):
    path = os.path.join(data, "example.pickle")
    for _ in range(100):
        memprof.snapshot(path)
    gc.collect()
    before = _rss_kib()
    for _ in range(1000):
        memprof.snapshot(path)
        memprof.segsum(path)
    gc.collect()
    grown = _rss_kib() - before
    assert grown < 2048, "RSS grew %d KiB over 1000 calls" % grown


def _spin(seconds):
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += 1
    return n


def test_gil_released_during_a_walk(job):
    """The main thread keeps running while another walks the core: ctypes lets go of the GIL in the library."""
    alone = _spin(0.2) / 0.2  # loop turns per second with nothing else running
    with memprof.open(job.core) as t:
        done = threading.Event()
        worker = threading.Thread(target=lambda: (t.categories(format="plain"), done.set()))  # nearly all in C
        start = time.monotonic()
        worker.start()
        turns = 0
        while not done.is_set():
            turns += 1
            time.monotonic()
        took = time.monotonic() - start
        worker.join()
    # Held for the walk, the loop would stop for all of it; let go, it runs at a good part of its own pace.
    assert took > 0.02 and turns > 0.2 * alone * took, (turns, alone, took)


# -- the wheel
def test_manylinux_wheel_carries_its_libraries():
    """After auditwheel repair, the library and the CLI load libelf, libdw and libcjson from the wheel's own copies."""
    if os.environ.get("MEMPROF_PYAPI_MANYLINUX") != "1":
        pytest.skip("auditwheel was not available: the plain wheel links the system's libraries")
    pkg = os.path.dirname(memprof.__file__)
    for binary in (os.path.join(pkg, "_lib", "libmemprof.so.0"), os.path.join(pkg, "_bin", "memprof")):
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
        for lib in ("libelf", "libdw", "libcjson"):
            line = [x for x in out.splitlines() if lib in x]
            assert line and "memprof.libs/" in line[0], (binary, lib, out)


def test_wheel_installs_pages_and_completion():
    """man finds memprof(1) and memprof-gdb(7) through the venv's bin on PATH; bash takes the completion."""
    venv = os.path.dirname(os.path.dirname(sys.executable))
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + ":/usr/bin:/bin")
    env.pop("MANPATH", None)
    for page, where in (("1 memprof", "man1/memprof.1"), ("7 memprof-gdb", "man7/memprof-gdb.7")):
        found = subprocess.run(["man", "-w"] + page.split(), capture_output=True, text=True, env=env).stdout.strip()
        assert found == os.path.join(venv, "share", "man", where)
    completion = os.path.join(venv, "share", "bash-completion", "completions", "memprof")
    r = subprocess.run(["bash", "-c", 'source "$1" && complete -p memprof', "-", completion],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "memprof" in r.stdout, r.stderr


# -- gdb
def test_gdb_loads_the_packaged_command_set(job):
    gdb = shutil.which("gdb")
    if gdb is None:
        pytest.skip("no gdb on this machine")
    line = subprocess.run(["python", "-m", "memprof.gdb"], capture_output=True, text=True, check=True).stdout.strip()
    assert line.startswith("source ") and os.path.exists(line[len("source "):])
    r = subprocess.run([gdb, "-nx", "-batch", "-ex", line, "-ex", "memprof segsum", "-c", job.core],
                       capture_output=True, text=True, env=dict(os.environ, MEMPROF_LIBRARY=""))
    assert r.returncode == 0, r.stderr
    assert cli("segsum", job.core).stdout.rstrip("\n") in r.stdout


def test_memprof_gdb_of_the_wheel(job):
    gdb = shutil.which("gdb")
    if gdb is None:
        pytest.skip("no gdb on this machine")
    launcher = shutil.which("memprof-gdb")
    assert launcher is not None and os.path.dirname(launcher) == os.path.dirname(sys.executable)
    r = subprocess.run([launcher, "-nx", "-batch", "-ex", "memprof segsum", "-ex", "show auto-solib-add",
                        "-c", job.core], capture_output=True, text=True, env=dict(os.environ, MEMPROF_LIBRARY=""))
    assert r.returncode == 0, r.stderr
    assert cli("segsum", job.core).stdout.rstrip("\n") in r.stdout
    assert "Autoloading of shared library symbols is off" in r.stdout
