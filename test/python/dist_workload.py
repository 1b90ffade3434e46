"""A small data-parallel job for `gpuprobe report DIR`: every rank computes a forward and backward
pass, then all-reduces its gradients, each step; one rank computes four times as much (a
straggler the others wait for inside the all-reduce). Each rank writes its own trace.

    python dist_workload.py OUTDIR [--backend gloo|nccl] [--device cpu|cuda] [--world N]
                                   [--slow-rank R] [--steps N] [--recorder torch|gpuprobe]
                                   [--hang-step N [--hang-rank R] [--timeout S]]

Rank r computes on GPU r modulo the GPUs there are (cuda; the default with nccl, which needs a
GPU per rank) or on the CPU (the default with gloo). The torch recorder is torch.profiler (Kineto's
Chrome JSON, with its "gloo:all_reduce" / NCCL events); the gpuprobe recorder is a Session per
rank (rank and world size in the trace, CUPTI kernels on cuda) with ranges around the forward and
backward passes and around the all-reduce, and a step per iteration.

With --hang-step, rank --hang-rank skips that step's all-reduce and waits past the collective
timeout instead (in a range "planted hang: sleeps instead of joining"); the others' all-reduce
times out and raises (with NCCL through TORCH_NCCL_BLOCKING_WAIT). Every rank then dumps PyTorch's
flight recorder (TORCH_FR_BUFFER_SIZE) into OUTDIR as fr_rank_<rank>, the name
TORCH_FR_DUMP_TEMP_FILE gives PyTorch's own dumps (NCCL's watchdog may also write one at the
timeout: TORCH_FR_DUMP_ON_TIMEOUT) — for `gpuprobe report --flight-recorder OUTDIR`.
"""
import argparse
import datetime
import faulthandler
import os
import pathlib
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _flight_recorder_env(backend, out):
    """PyTorch's flight recorder on, dumping into `out`; with NCCL also under the variables'
    older NCCL-only names (which recent releases warn about)."""
    prefix = os.path.join(out, "fr_rank_")
    variables = {"TORCH_FR_BUFFER_SIZE": "2000", "TORCH_FR_DUMP_TEMP_FILE": prefix,
                 "TORCH_FR_DUMP_ON_TIMEOUT": "1"}
    if backend == "nccl":
        # Blocking wait: the timed-out all-reduce raises in this process instead of the
        # watchdog tearing the process down, so the rank's gpuprobe trace is written too.
        variables.update({"TORCH_NCCL_TRACE_BUFFER_SIZE": "2000",
                          "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix,
                          "TORCH_NCCL_DUMP_ON_TIMEOUT": "1", "TORCH_NCCL_BLOCKING_WAIT": "1"})
    os.environ.update(variables)
    return prefix


def _dump_flight_recorder(backend, rank, prefix):
    """This rank's flight recorder, pickled as PyTorch's own dump on timeout writes it."""
    c10d = torch._C._distributed_c10d
    if backend == "nccl":
        data = c10d._dump_nccl_trace()
    else:
        data = c10d._dump_fr_trace()
    with open(f"{prefix}{rank}", "wb") as f:
        f.write(data)


def _worker(rank, args, rendezvous):
    prefix = _flight_recorder_env(args.backend, args.out) if args.hang_step is not None else None
    if prefix is not None:
        # A rank still running well past the planted timeout prints where it waits (on the
        # first NCCL run, two H200s, rank 0 neither raised nor dumped within 75 s).
        faulthandler.dump_traceback_later(3 * args.timeout + 20)
    dist.init_process_group(args.backend, init_method=f"file://{rendezvous}", rank=rank,
                            world_size=args.world,
                            timeout=datetime.timedelta(seconds=args.timeout))
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

    def compute():
        for _ in range(repeats):
            model(x).square().mean().backward()

    def step(record_range, hang=False):
        if record_range is None:
            compute()
        else:
            with record_range("forward+backward"):
                compute()
        grads = [p.grad for p in model.parameters()]
        if hang and rank == args.hang_rank:
            with record_range("planted hang: sleeps instead of joining"):
                time.sleep(args.timeout + 2)
            return False
        if record_range is None:
            all_reduce(grads)
        else:
            try:
                with record_range("all_reduce"):
                    all_reduce(grads)
                    if cuda:
                        torch.cuda.synchronize()
            except RuntimeError as e:  # the planted hang's timeout
                if not hang:
                    raise
                print(f"rank {rank}: all_reduce timed out: {str(e).splitlines()[0][:120]}",
                      flush=True)
                return False
        if cuda:
            torch.cuda.synchronize()
        model.zero_grad(set_to_none=False)
        return True

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
            for i in range(args.steps):
                if not step(gpuprobe.range, hang=i == args.hang_step):
                    break
                gpuprobe.step()
    if prefix is not None:
        _dump_flight_recorder(args.backend, rank, prefix)
        faulthandler.cancel_dump_traceback_later()
        return  # the group is broken: no barrier, and its teardown is left to the exit
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
    parser.add_argument("--hang-step", type=int,
                        help="plant a hang: --hang-rank skips this step's all-reduce (from 0)")
    parser.add_argument("--hang-rank", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600,
                        help="the collectives' timeout, seconds [default: 600]")
    args = parser.parse_args()
    if args.hang_step is not None and args.recorder != "gpuprobe":
        parser.error("--hang-step needs --recorder gpuprobe")
    args.device = args.device or ("cuda" if args.backend == "nccl" else "cpu")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_worker, args=(args, os.path.join(tmp, "rendezvous")), nprocs=args.world)


if __name__ == "__main__":
    main()
