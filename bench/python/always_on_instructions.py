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
    """{(arm, round): {event: count}} of the serving thread's dumps, and {(arm, round): path}."""
    counts, paths = {}, {}
    for path in pathlib.Path(out_dir).glob("callgrind.out.*"):
        text = path.read_text(errors="replace")
        name = re.search(r"^desc: Trigger: Client Request: (\S+) (\d+)$", text, re.M)
        events = re.search(r"^events: (.+)$", text, re.M)
        summary = re.search(r"^summary: ([\d ]+)$", text, re.M)
        if name and events and summary:
            key = (name.group(1), int(name.group(2)))
            counts[key] = dict(zip(events.group(1).split(), map(int, summary.group(1).split())))
            paths[key] = path
    return counts, paths


# The caches callgrind simulates with --misses: the H200 host's first level (32 KiB instructions,
# 48 KiB data) and its 2 MiB L2 as the "last level", so that a miss there is one that goes to L3
# or memory — what a cold range pays for on that machine.
CACHES = ["--cache-sim=yes", "--I1=32768,8,64", "--D1=49152,12,64", "--LL=2097152,16,64"]
MISSES = ["I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"]


def gpuprobe_misses(path):
    """{event: count} in the functions of gpuprobe's own objects (libgpuprobe, _core) in a dump,
    from callgrind_annotate's per-function table (self cost, not inclusive)."""
    table = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no",
                            "--show=" + ",".join(MISSES), str(path)],
                           capture_output=True, text=True).stdout
    totals = dict.fromkeys(MISSES, 0)
    for line in table.splitlines():
        fields = re.sub(r"\([^)]*\)", " ", line).split()  # without the "(0.02%)" shares
        if len(fields) > len(MISSES) and re.search(r"/gpuprobe/_core\.|libgpuprobe", fields[-1]):
            values = [int(v.replace(",", "")) if v[0].isdigit() else 0 for v in fields[:len(MISSES)]]
            totals.update({e: totals[e] + v for e, v in zip(MISSES, values)})
            if os.environ.get("GPUPROBE_MISSES_VERBOSE"):
                print("   ", " ".join(f"{v:8}" for v in values), fields[-1])
    return totals


def report_misses(args, counts, paths):
    names = args.arms.split(",")
    print(f"cache misses per request, simulated (L1 32 KiB I / 48 KiB D, 2 MiB L2 as the last "
          f"level); median over {args.rounds} rounds; 'gpuprobe' = in gpuprobe's own functions")
    print(f"{'arm':16}" + "".join(f"{e:>10}" for e in MISSES))
    for name in names:
        cells = [statistics.median(counts[(name, r)][e] for r in range(args.rounds))
                 / args.requests for e in MISSES]
        print(f"{name:16}" + "".join(f"{c:10.1f}" for c in cells))
        own = [gpuprobe_misses(paths[(name, r)]) for r in range(args.rounds)]
        print(f"{'  gpuprobe':16}" + "".join(
            f"{statistics.median(o[e] for o in own) / args.requests:10.1f}" for e in MISSES))


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
    parser.add_argument("--misses", action="store_true",
                        help="also simulate the caches and count misses per request")
    parser.add_argument("--keep", action="store_true",
                        help="keep callgrind's dumps (printed: where) for callgrind_annotate")
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
                   f"--callgrind-out-file={work}/callgrind.out"] + (CACHES if args.misses else []) + [
                   sys.executable, __file__, "--marks", marks] + sys.argv[1:]
        run = subprocess.run(command, env=env, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            sys.stderr.write("\n".join(run.stderr.splitlines()[-30:]) + "\n")
            raise SystemExit(f"the loop under callgrind failed ({run.returncode})")
        counts, paths = read_counts(work)
        report(args, {key: events["Ir"] for key, events in counts.items()})
        if args.misses:
            report_misses(args, counts, paths)
    finally:
        if args.keep:
            print(f"callgrind's dumps kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
