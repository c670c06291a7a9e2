#!/usr/bin/env python3
"""bench/nccl_torch_allreduce.py - the peer for examples/16_nccl_allreduce.c: the same float
all-reduce (sum) through PyTorch's NCCL backend, one process a GPU as nccl-tests and PyTorch users
run it, at the example's sizes (1 KiB, 32 KiB, 1 MiB, 32 MiB, 1 GiB), timed the example's way
(after a warm-up, the fastest of 3 runs of 20 all-reduces, 5 above 32 MiB; events on
rank 0's stream) and printed with nccl-tests' definitions (algbw = bytes / time, busbw = algbw *
2 (n - 1) / n). Each size's result is checked on every rank. Run on a machine with two or more
GPUs (tests/multi-gpu-check does): python3 bench/nccl_torch_allreduce.py [--gpus N].
NVLink multicast stays off (NCCL_NVLS_ENABLE=0): on a host whose GPUs others share, a program
that uses it can put them out of service."""
import argparse
import os

os.environ["NCCL_NVLS_ENABLE"] = "0"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

SIZES = [1 << 10, 1 << 15, 1 << 20, 1 << 25, 1 << 30]


def worker(rank, world, port, results):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    for nbytes in SIZES:
        n = nbytes // 4
        # rank r sends (r + 1) * (k % 251), integer-valued floats: the sum is exact
        base = (torch.arange(n, device="cuda", dtype=torch.int64) % 251).float()
        x = base * (rank + 1)
        reps = 20 if nbytes <= (32 << 20) else 5
        for _ in range(3):  # warm-up (NCCL's first call sets up its channels)
            dist.all_reduce(x)
        runs = []
        for _ in range(3):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            torch.cuda.synchronize()
            start.record()
            for _ in range(reps):
                dist.all_reduce(x)
            stop.record()
            stop.synchronize()
            runs.append(start.elapsed_time(stop) / reps)
        x = base * (rank + 1)
        dist.all_reduce(x)
        expect = base * (world * (world + 1) / 2)
        wrong = torch.tensor([int((x != expect).sum().item())], device="cuda")
        dist.reduce(wrong, 0)  # every rank's count, summed on rank 0
        if rank == 0:
            results.append((nbytes, min(runs), int(wrong.item())))
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    world = ap.parse_args().gpus
    if world < 2:
        print("nccl_torch_allreduce: %d GPU(s); needs two or more" % world)
        return 2
    print("PyTorch %s, its NCCL %s, %d GPUs" % (torch.__version__, ".".join(map(str, torch.cuda.nccl.version())), world))
    with mp.Manager() as m:
        results = m.list()
        mp.spawn(worker, args=(world, 29500 + os.getpid() % 1000, results), nprocs=world, join=True)
        rows = list(results)
    print("%12s %10s %12s %12s %8s" % ("bytes", "time us", "algbw GB/s", "busbw GB/s", "wrong"))
    wrong_total = 0
    for nbytes, ms, wrong in rows:
        algbw = nbytes / ms / 1e6
        print("%12d %10.1f %12.2f %12.2f %8d" % (nbytes, ms * 1e3, algbw, algbw * 2 * (world - 1) / world, wrong))
        wrong_total += wrong
    print("%s: PyTorch NCCL all-reduce over %d GPUs, %d wrong elements" % ("PASSED" if wrong_total == 0 else "FAILED", world, wrong_total))
    return 0 if wrong_total == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
