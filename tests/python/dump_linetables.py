#!/usr/bin/env python3
"""dump_linetables.py [FILE.py...] - every code object of the given sources (default: a sample of this
interpreter's standard library), as the interpreter running this script compiles them, with the line
PyCode_Addr2Line gives for every instruction: the truth memprof's line-table decoder is checked against.

One line per code object: FORMAT FIRSTLINENO NBYTES HEXTABLE LINE... where FORMAT is 310 or 311 (the line-table
format of this CPython), HEXTABLE its co_linetable, and the LINEs are PyCode_Addr2Line(code, lasti) for lasti =
-1 and every even byte offset below NBYTES (the size of the bytecode). Run by tests/python/linetable.sh."""
import ctypes
import glob
import os
import sys

addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
addr2line.restype = ctypes.c_int
FORMAT = 310 if sys.version_info[:2] == (3, 10) else 311


def codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, type(code)):
            yield from codes(const)


def sources():
    if len(sys.argv) > 1:
        return sys.argv[1:]
    lib = os.path.dirname(os.__file__)
    return sorted(glob.glob(os.path.join(lib, "*.py")))[:60] + sorted(glob.glob(os.path.join(lib, "asyncio", "*.py")))


def main():
    n = 0
    for path in sources():
        try:
            with open(path, "rb") as f:
                top = compile(f.read(), path, "exec")
        except (SyntaxError, ValueError, OSError):
            continue
        for code in codes(top):
            nbytes = len(code.co_code)
            lines = [addr2line(code, lasti) for lasti in [-1] + list(range(0, nbytes, 2))]
            print(FORMAT, code.co_firstlineno, nbytes, code.co_linetable.hex() or "-", *lines)
            n += 1
    print("%d code objects of CPython %d.%d" % ((n,) + sys.version_info[:2]), file=sys.stderr)


if __name__ == "__main__":
    main()
