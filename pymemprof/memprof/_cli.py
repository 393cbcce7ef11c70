# _cli.py - the `memprof` command a wheel puts on PATH: the CLI binary the package carries, run in this
# process's place (same arguments, exit status and signals).
import os
import sys


def main():
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "memprof")
    if not os.access(binary, os.X_OK):
        sys.stderr.write("memprof: %s is missing: this memprof package was not built as a wheel\n" % binary)
        return 2
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
