#!/usr/bin/env python3
"""wheel-cut.py DIR VERSION - keep what the test bed needs of DIR/dl/torch-VERSION-*.whl in DIR (see wheel.sh).

VERSION's line: the wheel's file name, torch.__version__, the git commit, the CUDA version of the build
(version.py's `cuda`), the C++ string ABI libc10.so was built with (1 when one of c10's own exported symbols
names a `std::__cxx11` type, 0 otherwise: the wheels link parts of libstdc++ statically, whose `__cxx11` symbols
say nothing) and the CUDA runtime soname libc10_cuda.so needs (DT_NEEDED).
"""
import glob
import os
import re
import subprocess
import sys
import zipfile

KEEP_LIBS = ("torch/lib/libc10.so", "torch/lib/libc10_cuda.so")


def main():
    tmp, version = sys.argv[1], sys.argv[2]
    whls = glob.glob(os.path.join(tmp, "dl", "torch-%s*.whl" % version))
    if len(whls) != 1:
        sys.exit("wheel-cut: expected one wheel of torch %s, found %d" % (version, len(whls)))
    z = zipfile.ZipFile(whls[0])
    for info in z.infolist():
        n = info.filename
        if n.startswith("torch/include/") or n in KEEP_LIBS or n == "torch/version.py":
            z.extract(info, os.path.join(tmp, "x"))
    x = os.path.join(tmp, "x", "torch")
    os.rename(os.path.join(x, "include"), os.path.join(tmp, "include"))
    os.makedirs(os.path.join(tmp, "lib"))
    for lib in KEEP_LIBS:
        os.rename(os.path.join(tmp, "x", lib), os.path.join(tmp, "lib", os.path.basename(lib)))
    os.rename(os.path.join(x, "version.py"), os.path.join(tmp, "version.py"))
    text = open(os.path.join(tmp, "version.py")).read()

    def field(name):
        m = re.search(r"^%s\s*(?::\s*[^=]*)?=\s*'([^']*)'" % name, text, re.M)
        return m.group(1) if m else "-"

    ver, git, cuda = field("__version__"), field("git_version"), field("cuda")
    if not ver.startswith(version):
        sys.exit("wheel-cut: the wheel says torch %s, not %s" % (ver, version))
    dyn = subprocess.run(["nm", "-D", "--defined-only", os.path.join(tmp, "lib", "libc10.so")],
                         check=True, capture_output=True, text=True).stdout
    abi = 1 if any(w.startswith("_ZN3c10") and "__cxx11" in w for w in dyn.split()) else 0
    needed = subprocess.run(["readelf", "-d", os.path.join(tmp, "lib", "libc10_cuda.so")],
                            check=True, capture_output=True, text=True).stdout
    m = re.search(r"\[(libcudart\.so[^\]]*)\]", needed)
    cudart = m.group(1) if m else "-"
    with open(os.path.join(tmp, "VERSION"), "w") as f:
        f.write("%s %s %s %s %d %s\n" % (os.path.basename(whls[0]), ver, git, cuda, abi, cudart))
    subprocess.run(["rm", "-rf", os.path.join(tmp, "x")], check=True)


if __name__ == "__main__":
    main()
