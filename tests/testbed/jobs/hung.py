"""A job hung in a thread: a data-loading thread holds device tensors and blocks forever on a lock that the main
thread holds, while the main thread (which trained a little) stops at the checkpoint. For attaching to a live job:
every thread's Python stack is in threads.txt.

usage: hung.py
"""
import threading

import torch

import memprof_testbed

lock = threading.Lock()


def loader(started):
    batch = torch.empty(2 << 20, dtype=torch.uint8, device="cuda")
    started.set()
    with lock:      # never acquired: the main thread holds it
        batch.zero_()


def main():
    model = torch.nn.Linear(256, 256).cuda()
    model(torch.randn(16, 256, device="cuda")).sum().backward()
    started = threading.Event()
    lock.acquire()
    thread = threading.Thread(target=loader, args=(started,), name="loader", daemon=True)
    thread.start()
    started.wait()
    memprof_testbed.checkpoint()
    lock.release()
    thread.join()


if __name__ == "__main__":
    main()
