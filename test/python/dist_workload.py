"""A small data-parallel job for `gpuprobe report DIR`: every rank computes a forward and backward
pass, then all-reduces its gradients, each step; one rank computes four times as much (a
straggler the others wait for inside the all-reduce). Each rank writes its own trace.

    python dist_workload.py OUTDIR [--backend gloo|nccl] [--device cpu|cuda] [--world N]
                                   [--slow-rank R] [--steps N] [--recorder torch|gpuprobe] [--p2p]
                                   [--hang-step N [--hang-rank R] [--timeout S]
                                    [--hang-op all_reduce|send] [--hang-mode wait|watchdog]]

Rank r computes on GPU r modulo the GPUs there are (cuda; the default with nccl, which needs a
GPU per rank) or on the CPU (the default with gloo). The torch recorder is torch.profiler (Kineto's
Chrome JSON, with its "gloo:all_reduce" / NCCL events); the gpuprobe recorder is a Session per
rank (rank and world size in the trace and as the label of its metrics, rank<r>.prom; on cuda
CUPTI's kernels with the API calls that launched them, so that NCCL's kernels are attributed to
the range that issued them) with ranges around the forward and backward passes and around the
all-reduce, and a step per iteration. With --p2p each step also passes a small tensor around the
ranks (send to the next, receive from the one before; range "send/recv").

With --hang-step, rank --hang-rank skips that step's all-reduce (or, --hang-op send, its send)
and waits past the timeout instead (in a range "planted hang: ..."). How the others find out:
- wait (the default): the operation raises after --timeout seconds. gloo's does by itself; with
  NCCL it is issued asynchronously and polled until that timeout (the communicator's own
  timeout is longer, so that its watchdog does not take the process down first). Every rank then
  dumps PyTorch's flight recorder (TORCH_FR_BUFFER_SIZE) into OUTDIR as fr_rank_<rank>, the name
  TORCH_FR_DUMP_TEMP_FILE gives PyTorch's own dumps, and its gpuprobe trace is complete.
- watchdog (NCCL only): as production jobs run: the operations are synchronous and nothing in the
  program times out; NCCL's watchdog finds the operation past --timeout, dumps the flight
  recorder itself (TORCH_FR_DUMP_ON_TIMEOUT) and takes the process down, so that rank's gpuprobe
  trace is lost. The rank that skipped dumps on demand.
Either way: `gpuprobe report --torch-flight-recorder OUTDIR`.
"""
import argparse
import datetime
import faulthandler
import os
import pathlib
import signal
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
        variables.update({"TORCH_NCCL_TRACE_BUFFER_SIZE": "2000",
                          "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix,
                          "TORCH_NCCL_DUMP_ON_TIMEOUT": "1"})
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
    # NCCL in wait mode: the program times the planted all-reduce out itself, so the
    # communicator's timeout is longer and its watchdog does not take the process down first.
    nccl_wait = prefix is not None and args.backend == "nccl" and args.hang_mode == "wait"
    if prefix is not None:
        # A rank still running well past the planted timeout prints where it waits (on the
        # first NCCL run, two H200s, rank 0 neither raised nor dumped within 75 s).
        faulthandler.dump_traceback_later(2 * args.timeout + 10)
    dist.init_process_group(args.backend, init_method=f"file://{rendezvous}", rank=rank,
                            world_size=args.world,
                            timeout=datetime.timedelta(seconds=args.timeout * (4 if nccl_wait else 1)))
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

    token = torch.ones(256, device=device)

    def finish(work, what):
        # A synchronous NCCL operation returns once it is enqueued, and a GPU that waits for a
        # peer never finishes it: wait for it on the CPU, with the timeout. Polled rather than
        # work.wait(timeout), whose blocking differs between releases and settings.
        deadline = time.monotonic() + args.timeout
        while not work.is_completed():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} not done after {args.timeout} s")
            time.sleep(0.0005)
        work.wait()  # raises the operation's error, if it failed

    def all_reduce(grads, timed=False):
        for g in grads:
            if timed and nccl_wait:
                finish(dist.all_reduce(g, async_op=True), "all_reduce")
            else:
                dist.all_reduce(g)

    def exchange(record_range=None, timed=False, skip_send=False):
        """Sends a small tensor to the next rank and receives one from the rank before (even
        ranks send first, odd ones receive first: one pair at a time, no cycle). With
        `skip_send` this rank sleeps instead of sending (in a range): returns False."""
        ops = [("send", (rank + 1) % args.world), ("recv", (rank - 1) % args.world)]
        for op, peer in ops if rank % 2 == 0 else reversed(ops):
            if op == "send" and skip_send:
                planted_sleep(record_range, "planted hang: sleeps instead of sending")
                return False
            if timed and nccl_wait:
                finish((dist.isend if op == "send" else dist.irecv)(token, peer), op)
            else:
                (dist.send if op == "send" else dist.recv)(token, peer)
        return True

    def planted_sleep(record_range, name):
        with record_range(name):
            # With the watchdog the others' timeout needs nothing from this rank; it stays
            # alive (after its dump) while they reach it.
            time.sleep(1 if args.hang_mode == "watchdog" else args.timeout + 2)

    def compute():
        for _ in range(repeats):
            model(x).square().mean().backward()

    def step(record_range, hang=False):
        if record_range is None:
            compute()
            all_reduce([p.grad for p in model.parameters()])
            if args.p2p:
                exchange()
            if cuda:
                torch.cuda.synchronize()
            model.zero_grad(set_to_none=False)
            return True
        with record_range("forward+backward"):
            compute()
        grads = [p.grad for p in model.parameters()]
        planted = hang and rank == args.hang_rank
        if planted and args.hang_op == "all_reduce":
            planted_sleep(record_range, "planted hang: sleeps instead of joining")
            return False
        try:
            with record_range("all_reduce"):
                all_reduce(grads, timed=hang)
                if cuda:
                    torch.cuda.synchronize()
            if args.p2p:
                with record_range("send/recv"):
                    if not exchange(record_range, timed=hang, skip_send=planted):
                        return False
                    if cuda:
                        torch.cuda.synchronize()
        except RuntimeError as e:  # the planted hang's timeout
            if not hang:
                raise
            print(f"rank {rank}: timed out: {str(e).splitlines()[0][:120]}", flush=True)
            return False
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

        config = (f"chrome={out},rank={rank},world_size={args.world},"
                  f"metrics_file={pathlib.Path(args.out) / f'rank{rank}.prom'}")
        if cuda:  # the API kinds link each kernel to its launch, and so to the range around it
            config += ",cupti=kernel+memcpy+memset+runtime+driver"
        with gpuprobe.Session(config):
            for i in range(args.steps):
                # From the planted step on every rank times its operations out: with more than
                # two ranks, some get past the step the hanging rank broke and wait in the next.
                hang = args.hang_step is not None and i >= args.hang_step
                if not step(gpuprobe.range, hang=hang):
                    break
                gpuprobe.step()
    if prefix is not None:
        _dump_flight_recorder(args.backend, rank, prefix)
        faulthandler.cancel_dump_traceback_later()
        if args.hang_mode == "watchdog":
            time.sleep(3 * args.timeout)  # alive, its communicator too, while the others time out
        if args.backend == "nccl":
            # Every file is written and closed. A communicator with a collective that never
            # completes is not torn down cleanly at exit (its kernel still waits on the GPU).
            os._exit(0)
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
    parser.add_argument("--p2p", action="store_true",
                        help="each step also sends a small tensor to the next rank and receives "
                             "one from the rank before")
    parser.add_argument("--hang-op", default="all_reduce", choices=["all_reduce", "send"],
                        help="what the hanging rank skips: the all-reduce, or (with --p2p) its "
                             "send [default: all_reduce]")
    parser.add_argument("--hang-mode", default="wait", choices=["wait", "watchdog"],
                        help="how the others find the hang: the program's own timeout, or NCCL's "
                             "watchdog [default: wait]")
    args = parser.parse_args()
    if args.hang_step is not None and args.recorder != "gpuprobe":
        parser.error("--hang-step needs --recorder gpuprobe")
    if args.hang_op == "send" and not args.p2p:
        parser.error("--hang-op send needs --p2p")
    if args.hang_mode == "watchdog" and args.backend != "nccl":
        parser.error("--hang-mode watchdog needs --backend nccl")
    args.device = args.device or ("cuda" if args.backend == "nccl" else "cpu")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        rendezvous = os.path.join(tmp, "rendezvous")
        if args.hang_step is None or args.hang_mode == "wait":
            mp.spawn(_worker, args=(args, rendezvous), nprocs=args.world)
            return
        # The watchdog takes the ranks that time out down; the others finish on their own.
        # Wait for each (mp.spawn would kill the rest at the first one down) and say how it ended.
        context = mp.spawn(_worker, args=(args, rendezvous), nprocs=args.world, join=False)
        for rank, process in enumerate(context.processes):
            process.join()
            code = process.exitcode
            how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
            print(f"rank {rank}: ended with {how}", flush=True)


if __name__ == "__main__":
    main()
