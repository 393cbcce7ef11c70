# setup.py - the memprof wheel (`pip wheel .`, `pip install .`): the Python package pymemprof/memprof with what the
# project's autotools build makes (libmemprof, the memprof CLI, the gdb command set, the manual pages memprof(1)
# and memprof-gdb(7) and the bash completion, which go to the environment's share/). The build is the
# project's own: configure and make in a directory of the setuptools build, nothing compiled twice.
# MEMPROF_PREBUILT=BUILDDIR takes an existing build instead (the tests: the one `make check` has just made).
# The wheel is one per platform and any Python 3 (ctypes, no extension module): py3-none-linux_<arch>.
# It links the system's libelf, libdw and libcjson (Debian: libelf1, libdw1, libcjson1); `auditwheel repair`
# copies them in for a manylinux wheel (README.md, "The Python package").
import os
import re
import shutil
import subprocess
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70.1
    from wheel.bdist_wheel import bdist_wheel

TOP = os.path.dirname(os.path.abspath(__file__))
# The manual pages and the bash completion the build makes, staged here by build_py for install_data.
DATA = os.path.join("build", "memprof-data")
DATA_FILES = [("share/man/man1", ["doc/memprof.1"]), ("share/man/man7", ["doc/memprof-gdb.7"]),
              ("share/bash-completion/completions", ["doc/bash-completion/memprof"])]


def _version():
    with open(os.path.join(TOP, "configure.ac")) as f:
        return re.search(r"AC_INIT\(\[memprof\],\s*\[([^\]]+)\]", f.read()).group(1)


def _run(cmd, cwd):
    print("memprof build: %s (in %s)" % (" ".join(cmd), cwd), flush=True)
    subprocess.run(cmd, cwd=cwd, check=True)


class build_py_with_library(build_py):
    """The package's Python files, then the library, CLI and gdb script out of the autotools build."""

    def run(self):
        super().run()
        builddir = os.environ.get("MEMPROF_PREBUILT") or self._autotools()
        pkg = os.path.join(self.build_lib, "memprof")
        self._install(os.path.join(builddir, ".libs", "libmemprof.so.0"), os.path.join(pkg, "_lib"), 0o755)
        self._install(os.path.join(builddir, "memprof"), os.path.join(pkg, "_bin"), 0o755)
        self._gdb_script(os.path.join(pkg, "_gdb", "memprof.py"))
        for _, files in DATA_FILES:
            for f in files:
                self._install(os.path.join(builddir, f), os.path.join(TOP, DATA), 0o644)
        with open(os.path.join(pkg, "_version.py"), "w") as f:
            f.write("# written by setup.py from configure.ac\nversion = %r\n" % _version())

    def _autotools(self):
        build_base = self.get_finalized_command("build").build_temp
        builddir = os.path.abspath(os.path.join(build_base, "memprof-autotools"))
        os.makedirs(builddir, exist_ok=True)
        if not os.path.exists(os.path.join(TOP, "configure")):
            _run(["autoreconf", "-fi"], TOP)
        if not os.path.exists(os.path.join(builddir, "Makefile")):
            _run([os.path.join(TOP, "configure"), "--quiet"], builddir)
        _run(["make", "-j%d" % (os.cpu_count() or 1), "memprof", "libmemprof.la"] +
             [f for _, files in DATA_FILES for f in files], builddir)
        return builddir

    @staticmethod
    def _install(src, dstdir, mode):
        os.makedirs(dstdir, exist_ok=True)
        dst = os.path.join(dstdir, os.path.basename(src))
        shutil.copyfile(os.path.realpath(src), dst)  # the soname's file, not its symlink
        os.chmod(dst, mode)

    @staticmethod
    def _gdb_script(dst):
        """gdbext/memprof.py.in with the library found in the package, the script in its _gdb/."""
        with open(os.path.join(TOP, "gdbext", "memprof.py.in")) as f:
            text = f.read()
        text = (text.replace("@PACKAGE_VERSION@", _version()).replace("@libdir@", "<package>/_lib")
                .replace("@pkgdatadir@", "<package>"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as f:
            f.write(text)
        # Its binding beside it, as make install puts it (gdb loads the script without this package).
        shutil.copyfile(os.path.join(TOP, "pymemprof", "memprof", "_library.py"),
                        os.path.join(os.path.dirname(dst), "memprof_library.py"))
        # memprof-gdb, the launcher (memprof.gdb.launch runs it with MEMPROF_GDB_SCRIPT naming the script above).
        launcher = os.path.join(os.path.dirname(dst), "memprof-gdb")
        shutil.copyfile(os.path.join(TOP, "gdbext", "memprof-gdb.in"), launcher)
        os.chmod(launcher, 0o755)


class NativeDistribution(Distribution):
    """The package holds native files (no extension module): it installs to platlib, in a platform wheel."""

    def has_ext_modules(self):
        return True


class bdist_wheel_platform(bdist_wheel):
    """A platform wheel for any Python 3: ctypes loads the library, so no Python ABI is tied to it."""

    def get_tag(self):
        return "py3", "none", sysconfig.get_platform().replace("-", "_").replace(".", "_")


setup(
    version=_version(),
    package_dir={"": "pymemprof"},
    packages=["memprof"],
    data_files=[(where, [os.path.join(DATA, os.path.basename(f)) for f in files]) for where, files in DATA_FILES],
    distclass=NativeDistribution,
    cmdclass={"build_py": build_py_with_library, "bdist_wheel": bdist_wheel_platform},
)
