#!/usr/bin/env python3
"""threads_target.py DIR - a live process for tests/python/threads.sh: threads blocked where their stacks stay
put (on a lock, at the bottom of a deep recursion, inside a generator, inside a coroutine, asleep) and the main
thread handling an exception in an except block. When all are parked it writes DIR/ids (one line per thread:
NAME PTHREAD_ID NATIVE_ID, 0 before 3.11) and, in park(), faulthandler's dump of every thread to DIR/dump: the dump and the
sleep that follows are one line of one function, so the stacks memprof reads later are the ones dumped."""
import faulthandler
import os
import sys
import threading
import time

DEPTH = 150  # deeper than faulthandler's 100 frames
held = threading.Lock()
never = threading.Event()
ready = []


def started(name):
    ev = threading.Event()
    ready.append((name, ev))
    return ev


def on_lock(ev):
    ev.set()
    held.acquire()


def recurse(n, ev):
    if n == 0:
        ev.set()
        never.wait()
    else:
        recurse(n - 1, ev)


def producer(ev):
    yield 1
    ev.set()
    never.wait()
    yield 2


def in_generator(ev):
    for _ in producer(ev):
        pass


async def awaited(ev):
    ev.set()
    never.wait()


async def coroutine(ev):
    await awaited(ev)


def in_coroutine(ev):
    coroutine(ev).send(None)


def asleep(ev):
    ev.set()
    time.sleep(3600)


def park(path):
    with open(path, "w") as f:
        for first in (True, False): faulthandler.dump_traceback(f, all_threads=True) if first else time.sleep(3600)  # noqa: E701,E501


def main(out):
    held.acquire()
    ids = {}
    for name, fn, args in [("lock", on_lock, ()), ("recursion", recurse, (DEPTH,)),
                           ("generator", in_generator, ()), ("coroutine", in_coroutine, ()),
                           ("sleep", asleep, ())]:
        ev = started(name)
        t = threading.Thread(target=fn, args=args + (ev,), name=name, daemon=True)
        t.start()
        ids[name] = t
    for _, ev in ready:
        ev.wait()
    time.sleep(0.3)  # from ev.set() into the blocking call
    # a thread state holds the native id from 3.11 on: before, memprof cannot know it
    native = (lambda t: t.native_id) if sys.version_info >= (3, 11) else (lambda t: 0)
    with open(os.path.join(out, "ids"), "w") as f:
        print("main", threading.main_thread().ident, native(threading.main_thread()), file=f)
        for name, t in ids.items():
            print(name, t.ident, native(t), file=f)
    try:
        raise ValueError("boom: handled in main")
    except ValueError:
        park(os.path.join(out, "dump"))


if __name__ == "__main__":
    main(sys.argv[1])
