"""The NCCL stub's results, checked by PyTorch itself on every rank (under dist.sh): each collective of the nccl
backend on tensors whose values are known (made on the CPU and copied: the fake device's kernels compute nothing,
but copies and the stub's collectives move real bytes), compared with what NCCL gives: all_reduce (sum, max, avg,
premul_sum) in float32, float16, bfloat16, int64; broadcast, reduce, all_gather(_into_tensor), reduce_scatter
(_tensor), all_to_all_single (equal and unequal splits: the latter is send/recv in a group), send/recv around a
ring (batch_isend_irecv), all_gather_object (pickles through NCCL), a new_group of the even ranks, barrier. A wrong result raises (the run fails); then the checkpoint.

usage: collectives.py
"""
import torch
import torch.distributed as dist

import memprof_testbed
from ddp import finish, setup


def dev(t):
    return t.to("cuda")


def same(got, want, what):
    got = got.cpu()
    if got.dtype.is_floating_point:
        ok = torch.allclose(got.float(), want.float(), rtol=1e-2, atol=1e-2)
    else:
        ok = torch.equal(got, want)
    if not ok:
        raise AssertionError(f"rank {dist.get_rank()}: {what}: got {got.tolist()}, want {want.tolist()}")


def main():
    rank, world = setup()
    ranks = torch.arange(world, dtype=torch.float64)
    base = torch.arange(4, dtype=torch.float64)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int64):
        t = dev((base + rank).to(dtype))
        dist.all_reduce(t)
        same(t, (base * world + ranks.sum()).to(dtype), f"all_reduce sum {dtype}")
    t = dev((base * (rank + 1)).float())
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    same(t, (base * world).float(), "all_reduce max")
    t = dev((base + rank).float())
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    same(t, (base + ranks.mean()).float(), "all_reduce avg")
    t = dev((base + rank).float())
    dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.5))
    same(t, ((base * world + ranks.sum()) * 0.5).float(), "all_reduce premul_sum")

    t = dev(torch.full((3,), float(rank)))
    dist.broadcast(t, src=world - 1)
    same(t, torch.full((3,), float(world - 1)), "broadcast")
    t = dev(torch.full((3,), float(rank + 1)))
    dist.reduce(t, dst=0)
    if rank == 0:
        same(t, torch.full((3,), float(world * (world + 1) // 2)), "reduce")

    out = [dev(torch.zeros(2)) for _ in range(world)]
    dist.all_gather(out, dev(torch.full((2,), float(rank))))
    for q in range(world):
        same(out[q], torch.full((2,), float(q)), "all_gather")
    flat = dev(torch.zeros(2 * world))
    dist.all_gather_into_tensor(flat, dev(torch.full((2,), float(rank))))
    same(flat, ranks.float().repeat_interleave(2), "all_gather_into_tensor")
    chunk = dev(torch.zeros(2))
    dist.reduce_scatter_tensor(chunk, dev(torch.arange(2.0 * world) + rank))
    same(chunk, torch.arange(2.0 * rank, 2.0 * rank + 2) * world + ranks.sum(), "reduce_scatter_tensor")

    outa = dev(torch.zeros(world))
    dist.all_to_all_single(outa, dev(torch.arange(float(world)) + 10 * rank))
    same(outa, ranks.float() * 10 + rank, "all_to_all_single")
    # Unequal splits: rank q sends q+1 elements to every peer (ncclSend/ncclRecv in a group).
    sent = dev(torch.full((world * (rank + 1),), float(rank)))
    got = dev(torch.zeros(sum(q + 1 for q in range(world))))
    dist.all_to_all_single(got, sent, output_split_sizes=[q + 1 for q in range(world)],
                           input_split_sizes=[rank + 1] * world)
    same(got, torch.cat([torch.full((q + 1,), float(q)) for q in range(world)]), "all_to_all_single, unequal")

    right, left = (rank + 1) % world, (rank - 1) % world
    recv = dev(torch.zeros(5))
    ops = [dist.P2POp(dist.isend, dev(torch.full((5,), float(rank))), right), dist.P2POp(dist.irecv, recv, left)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    same(recv, torch.full((5,), float(left)), "send/recv around the ring")

    objects = [None] * world
    dist.all_gather_object(objects, {"rank": rank, "name": f"r{rank}"})
    if objects != [{"rank": q, "name": f"r{q}"} for q in range(world)]:
        raise AssertionError(f"all_gather_object: {objects}")
    # (Not broadcast_object_list: it sums the object sizes with a kernel, which computes nothing here.)

    evens = dist.new_group([q for q in range(world) if q % 2 == 0])
    if rank % 2 == 0:
        t = dev(torch.ones(2))
        dist.all_reduce(t, group=evens)
        same(t, torch.full((2,), float((world + 1) // 2)), "all_reduce in a new_group")
    dist.barrier()
    memprof_testbed.note("checked", "all")
    memprof_testbed.checkpoint()
    finish()


if __name__ == "__main__":
    main()
