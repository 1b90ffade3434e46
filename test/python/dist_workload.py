"""A small data-parallel job for `gpuprobe report DIR`: every rank computes a forward and backward
pass, then all-reduces its gradients, each step; one rank computes four times as much (a
straggler the others wait for inside the all-reduce). Each rank writes its own trace.

    python dist_workload.py OUTDIR [--backend gloo|nccl] [--device cpu|cuda] [--world N]
                                   [--slow-rank R] [--steps N] [--recorder torch|gpuprobe]

Rank r computes on GPU r modulo the GPUs there are (cuda; the default with nccl, which needs a
GPU per rank) or on the CPU (the default with gloo). The torch recorder is torch.profiler (Kineto's
Chrome JSON, with its "gloo:all_reduce" / NCCL events); the gpuprobe recorder is a Session per
rank (rank and world size in the trace, CUPTI kernels on cuda) with a range around the
all-reduce and a step per iteration.
"""
import argparse
import os
import pathlib
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _worker(rank, args, rendezvous):
    dist.init_process_group(args.backend, init_method=f"file://{rendezvous}", rank=rank,
                            world_size=args.world)
    cuda = args.device == "cuda"
    device = torch.device("cuda", rank % torch.cuda.device_count()) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    width = 1024 if cuda else 256
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, width)).to(device)
    # On the CPU: one thread per rank (two ranks on a two-core machine would otherwise contend
    # for every core), and enough rows that the straggler's fourfold work stands well above the
    # noise of a busy machine.
    if not cuda:
        torch.set_num_threads(1)
    x = torch.randn(4096 if cuda else 1024, width, device=device)
    repeats = 4 if rank == args.slow_rank else 1

    def all_reduce(grads):
        for g in grads:
            dist.all_reduce(g)

    def step(record_collective):
        for _ in range(repeats):
            model(x).square().mean().backward()
        grads = [p.grad for p in model.parameters()]
        if record_collective is None:
            all_reduce(grads)
        else:
            with record_collective("all_reduce"):
                all_reduce(grads)
        if cuda:
            torch.cuda.synchronize()
        model.zero_grad(set_to_none=False)

    for _ in range(2):  # warm-up: allocations, NCCL communicators
        step(None)
    out = pathlib.Path(args.out) / f"rank{rank}.json"
    if args.recorder == "torch":
        activities = [torch.profiler.ProfilerActivity.CPU]
        if cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        # A schedule makes the profiler mark each step (ProfilerStep#N); one warm-up step.
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.steps)
        with torch.profiler.profile(activities=activities, schedule=schedule,
                                    on_trace_ready=lambda p: p.export_chrome_trace(str(out))) as prof:
            for _ in range(args.steps + 1):
                step(None)
                prof.step()
    else:
        import gpuprobe

        config = f"chrome={out},rank={rank},world_size={args.world}"
        if cuda:
            config += ",cupti=kernel"
        with gpuprobe.Session(config):
            for _ in range(args.steps):
                step(gpuprobe.range)
                gpuprobe.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--device", choices=["cpu", "cuda"],
                        help="default: cuda with nccl, else cpu (gloo also all-reduces CUDA tensors)")
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--slow-rank", type=int, default=1)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--recorder", default="torch", choices=["torch", "gpuprobe"])
    args = parser.parse_args()
    args.device = args.device or ("cuda" if args.backend == "nccl" else "cpu")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_worker, args=(args, os.path.join(tmp, "rendezvous")), nprocs=args.world)


if __name__ == "__main__":
    main()
