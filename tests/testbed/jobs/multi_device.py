"""Two devices at work (run with FAKECUDA_DEVICES=2): a model on each, data moved between them, a side stream on
the second, so each device's allocator holds its own segments, pools and statistics.

usage: multi_device.py
"""
import torch

import memprof_testbed


def main():
    if torch.cuda.device_count() < 2:
        raise SystemExit("multi_device.py needs two devices (FAKECUDA_DEVICES=2)")
    first = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU()).to("cuda:0")
    second = torch.nn.Sequential(torch.nn.Linear(1024, 512), torch.nn.GELU()).to("cuda:1")
    optimizer = torch.optim.AdamW(list(first.parameters()) + list(second.parameters()))
    side = torch.cuda.Stream(device="cuda:1")
    for _ in range(2):
        x = torch.randn(32, 512, device="cuda:0")
        h = first(x).to("cuda:1", non_blocking=True)
        with torch.cuda.stream(side):
            scratch = torch.empty(1 << 20, device="cuda:1")
        y = second(h)
        y.square().mean().backward()
        optimizer.step()
    memprof_testbed.register("first", first)
    memprof_testbed.register("second", second)
    memprof_testbed.register("scratch", scratch)
    memprof_testbed.checkpoint()


if __name__ == "__main__":
    main()
