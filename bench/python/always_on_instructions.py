"""What always-on gpuprobe adds to a serving loop's own work, counted in instructions by
Valgrind's callgrind — a count that does not move with the machine's load the way time does, so
that a cost well under 1 % shows on a busy machine where no timing can resolve it.

The loop, its arms and their configs are bench/python/always_on_cost.py's (examples/serving's
compiled model on the CPU, one range per request): in one process under callgrind, each round
runs every arm in an order rotated and reversed each round, and counts the instructions the
serving thread executes in --requests requests after a short uncounted warm start. Printed per
arm: instructions per request, and the ratio to `off` of the same round (median and range over
the rounds); `off-again` shows what two counts of the same code differ by (Python's GC passes,
allocator paths).

What it does not count: gpuprobe's own threads (collector, flight recorder, metrics server) —
always_on_cost.py bounds their share by their CPU time — and what instructions cannot show
(cache misses, a core shared with those threads). Needs valgrind (its callgrind.h) and a C
compiler; the model is compiled for AVX2, which Valgrind runs (it cannot run AVX-512).

    python bench/python/always_on_instructions.py [--requests 200] [--rounds 3] [--arms ...]
"""
import argparse
import ctypes
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

# Valgrind's client requests, for the loop to zero and dump the counts around each slice.
MARKS_C = """
#include <valgrind/callgrind.h>
void marks_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void marks_zero(void) { CALLGRIND_ZERO_STATS; }
void marks_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""
DEFAULT_ARMS = "off,off-again,always-on,session+range,session,range+watchers"


def measure(args, marks):
    """Runs under callgrind: every slice's count is dumped, named "<arm> <round>"."""
    import torch
    import torch._inductor.config

    torch._inductor.config.cpp.simdlen = 256  # AVX2: Valgrind cannot run AVX-512
    torch.set_num_threads(1)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from always_on_cost import ARMS, Service, arm

    names = args.arms.split(",")
    unknown = [n for n in names if n not in ARMS or ARMS[n][0] and "cupti" in ARMS[n][0]]
    if unknown or "off" not in names:
        raise SystemExit(f"--arms: not CPU arms of always_on_cost.py: {unknown}; 'off' is needed")
    lib = ctypes.CDLL(marks)
    service = Service("cpu", "inductor")
    for _ in range(50):  # the compile, then the first runs' one-time work
        service.predict(args.batch, args.seq, 0)
    lib.marks_start()
    dumps = os.path.join(tempfile.mkdtemp(prefix="gpuprobe-instructions-"), "dumps")
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        if r % 2:
            order.reverse()
        for name in order:
            with arm(name, service, dumps):
                for _ in range(args.warm):
                    service.predict(args.batch, args.seq, 0)
                lib.marks_zero()
                for _ in range(args.requests):
                    service.predict(args.batch, args.seq, 0)
                lib.marks_dump(f"{name} {r}".encode())
            print(f"round {r}: {name}", file=sys.stderr, flush=True)
    shutil.rmtree(os.path.dirname(dumps), ignore_errors=True)


def read_counts(out_dir):
    """{(arm, round): instructions} of the serving thread's dumps."""
    counts = {}
    for path in pathlib.Path(out_dir).glob("callgrind.out.*"):
        text = path.read_text(errors="replace")
        name = re.search(r"^desc: Trigger: Client Request: (\S+) (\d+)$", text, re.M)
        summary = re.search(r"^summary: (\d+)$", text, re.M)
        if name and summary:
            counts[(name.group(1), int(name.group(2)))] = int(summary.group(1))
    return counts


def report(args, counts):
    names = args.arms.split(",")
    per_request = {n: [counts[(n, r)] / args.requests for r in range(args.rounds)] for n in names}
    print(f"{args.rounds} rounds of {args.requests} requests per arm (after {args.warm} uncounted),"
          f" the serving thread's instructions counted by callgrind; examples/serving's compiled "
          f"model on the CPU, batch {args.batch} x seq {args.seq}")
    print(f"{'arm':16} {'instructions/request':>21} {'added':>9} {'x off (median)':>15} "
          f"{'range over rounds':>20}")
    for name in names:
        ratios = [a / b for a, b in zip(per_request[name], per_request["off"])]
        mean = statistics.fmean(per_request[name])
        added = mean - statistics.fmean(per_request["off"])
        print(f"{name:16} {mean:21,.0f} {added:+9,.0f} {statistics.median(ratios):15.5f} "
              f"{min(ratios):9.5f}..{max(ratios):.5f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="counted per arm per round")
    parser.add_argument("--warm", type=int, default=20, help="uncounted requests before each")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--arms", default=DEFAULT_ARMS, help="CPU arms of always_on_cost.py")
    parser.add_argument("--marks", help=argparse.SUPPRESS)  # set in the process callgrind runs
    args = parser.parse_args()
    if args.marks:
        return measure(args, args.marks)
    if shutil.which("valgrind") is None or shutil.which("cc") is None:
        raise SystemExit("needs valgrind and a C compiler (Debian: valgrind, gcc)")
    if "GPUPROBE" in os.environ:
        raise SystemExit("unset GPUPROBE: the arms start their own sessions")
    work = tempfile.mkdtemp(prefix="gpuprobe-callgrind-")
    try:
        marks = os.path.join(work, "libmarks.so")
        source = os.path.join(work, "marks.c")
        pathlib.Path(source).write_text(MARKS_C)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", source, "-o", marks], check=True)
        env = dict(os.environ, TORCHINDUCTOR_CPP_MARCH="x86-64-v3", ATEN_CPU_CAPABILITY="avx2",
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor"))
        # Counted from marks_start() on; each dump is the calling (serving) thread's alone.
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
                   f"--callgrind-out-file={work}/callgrind.out", sys.executable, __file__,
                   "--marks", marks] + sys.argv[1:]
        run = subprocess.run(command, env=env, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            sys.stderr.write("\n".join(run.stderr.splitlines()[-30:]) + "\n")
            raise SystemExit(f"the loop under callgrind failed ({run.returncode})")
        report(args, read_counts(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
