#!/usr/bin/env python3
"""objects_target.py OUT - a live process for tests/python/objects.sh: makes code objects of every kind of name
(ASCII, Latin-1, UCS-2, UCS-4, long), writes one line per code object to OUT, then waits until its standard input
closes. A line: ID MAJOR MINOR FIRSTLINENO HEX(FILENAME) HEX(NAME) HEX(QUALNAME) then LASTI:LINE pairs (the
lines this interpreter's PyCode_Addr2Line gives), the truth the C reader is compared with."""
import ctypes
import sys

addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
addr2line.restype = ctypes.c_int

SOURCE = "\n" * 1230 + '''
def plain(a, b):
    x = [i * a
         for i in range(b)]
    return x

class Ünïcödé:
    def méthode(self):
        return "é"

def 函数(x):
    def inner_𝔣():
        return x
    return inner_𝔣

def ''' + "long_" * 100 + '''name():
    pass
'''


def codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, type(code)):
            yield from codes(const)


def main():
    top = compile(SOURCE, "/tmp/dïr/файл_𝔣.py", "exec")
    keep = list(codes(top))
    with open(sys.argv[1], "w") as out:
        for c in keep:
            qual = getattr(c, "co_qualname", c.co_name)
            pairs = ["%d:%d" % (l, addr2line(c, l)) for l in [-1] + list(range(0, len(c.co_code), 2))]
            print(id(c), *sys.version_info[:2], c.co_firstlineno, c.co_filename.encode().hex(),
                  c.co_name.encode().hex(), qual.encode().hex(), *pairs, file=out)
    sys.stdin.read()


if __name__ == "__main__":
    main()
