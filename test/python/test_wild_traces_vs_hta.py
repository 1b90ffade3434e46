"""`gpuprobe report` on real traces nobody on this project wrote (test/data/wild: Kineto's own test
traces, AMD TraceLens's MI300/MI210/H100 traces, torch 2.1 and 2.15 recordings; SOURCES.md there),
checked against Holistic Trace Analysis's own functions run here on the same traces (the
oracle's definitions matched as wild_corpus.py says) and against each file's own events:

- the kernel table (calls and total time per kernel name) and the copies table;
- the GPU's busy time (the union of kernels, copies and sets);
- the idle time before each kernel per stream, split into host wait, kernel wait and other;
- the launch delay (kernel start less the launch call's end): count, P50, P99, max;
- ROCm's GEMM kernels classed as compute; CPU-only traces' ranges against the file's events.

Agreement is within 0.5 %, except the launch-delay percentiles: the report's come from a
logarithmic histogram (bucket midpoints, +-1.1 %) at the nearest rank, so they are checked
against HTA's delays at the nearest rank within 1.1 %. Before issue 41's reader (exact times,
every Kineto vocabulary), 29 of these cases failed (wild_corpus.py says why)."""
import collections
import decimal
import gzip
import json
import math

import pytest

import wild_corpus as wc
from wild_corpus import cases, present, report

REL = 0.005  # 0.5 %
HISTOGRAM_REL = 0.011  # the report's LogHistogram: bucket midpoints within 1.1 %
ABS_US = 0.002  # HTA keeps microseconds in doubles: 2 ns for its sums' rounding


@pytest.fixture(scope="module")
def hta(tmp_path_factory):
    """HTA's figures for a corpus trace, computed once per trace."""
    done = {}

    def get(trace):
        if trace.file not in done:
            done[trace.file] = wc.Hta(present(trace), tmp_path_factory.mktemp("hta"))
        return done[trace.file]
    return get


def exact_events(trace):
    """The trace's events with ts and dur as exact integers of nanoseconds (the JSON's decimal
    text, not a double), for oracles computed from the file itself."""
    path = present(trace)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    for e in events:
        for key in ("ts", "dur"):
            if isinstance(e.get(key), (int, decimal.Decimal)):
                e[key] = int(decimal.Decimal(e[key]) * 1000)
    return events


GPU_WORK = ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset")


def union_ns(intervals):
    """The total length of the union of [begin, end) intervals."""
    total, reach = 0, None
    for begin, end in sorted(intervals):
        if reach is None or begin > reach:
            total += end - begin
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def busy_us(ours):
    """The report's GPU busy time in us: each device's busy share of the trace's duration."""
    return sum(ours["gpu"]["busy_percent"].values()) / 100 * ours["duration_ms"] * 1000


@pytest.mark.parametrize("trace", cases("read", vendors=("CUDA", "ROCm", "CPU"), with_hta=False))
def test_report_reads_the_trace(trace):
    ours = report(trace)
    assert ours["schema"] == "gpuprobe.report/1" and ours["events"] > 0
    events = exact_events(trace)
    kernels = sum(1 for e in events if e.get("cat") in wc.KERNEL_CATS)
    assert ours["gpu"]["kernels"]["count"] == kernels
    if trace.vendor == "CPU":
        assert ours["verdict"].startswith("CPU only")
    else:
        assert "CPU only" not in ours["verdict"] and ours["gpu"]["kernel_ms"] > 0


@pytest.mark.parametrize("trace", cases("kernels"))
def test_kernel_totals_agree_with_hta(trace, hta):
    """Every kernel name, its calls and total time, as HTA's kernel breakdown (all names: none
    folded into 'others'; copies and sets are compared in their own test)."""
    theirs = {n: v for n, v in hta(trace).kernels.items()
              if not n.startswith(("Memcpy", "Memset"))}
    ours = {k["name"]: (k["calls"], k["total_ms"] * 1000) for k in report(trace)["kernels"]}
    assert ours.keys() == theirs.keys()
    for name, (calls, total_us) in theirs.items():
        if calls is not None:  # HTA gives sum and mean; a name whose kernels all last 0 has none
            assert ours[name][0] == calls, name
        assert ours[name][1] == pytest.approx(total_us, rel=REL, abs=ABS_US), name


@pytest.mark.parametrize("trace", cases("kernels", with_hta=False))
def test_kernel_totals_and_busy_agree_with_the_files_events(trace):
    """The same figures against the file itself, exact to the nanosecond: also for a trace HTA
    cannot read."""
    events = exact_events(trace)
    calls, total = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") in wc.KERNEL_CATS:
            calls[e["name"]] += 1
            total[e["name"]] += e["dur"]
    ours = report(trace)
    assert {k["name"]: k["calls"] for k in ours["kernels"]} == dict(calls)
    for k in ours["kernels"]:
        assert k["total_ms"] * 1e6 == pytest.approx(total[k["name"]], rel=1e-9, abs=1), k["name"]
    work = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") in GPU_WORK]
    assert busy_us(ours) * 1000 == pytest.approx(union_ns(work), rel=1e-6)


@pytest.mark.parametrize("trace", cases("copies"))
def test_copies_agree_with_hta(trace, hta):
    """Copies per direction (HTA's 'Memcpy HtoD (Pageable -> Device)' rows, by direction): count
    and time. HTA's 'Memset' rows have no counterpart in the report (no memset figure yet: issue
    41's report additions); they are in the busy time, compared below."""
    theirs = collections.defaultdict(lambda: [0, 0.0])
    for name, (calls, total_us) in hta(trace).kernels.items():
        if name.startswith("Memcpy"):
            row = theirs[name.split()[1]]
            row[0] += calls or 0
            row[1] += total_us
    ours = {c["kind"]: c for c in report(trace)["copies"] if "set" not in c["kind"].lower()}
    assert ours.keys() == theirs.keys()
    for kind, (calls, total_us) in theirs.items():
        assert ours[kind]["copies"] == calls, kind
        assert ours[kind]["ms"] * 1000 == pytest.approx(total_us, rel=REL, abs=ABS_US), kind


@pytest.mark.parametrize("trace", cases("busy"))
def test_gpu_busy_time_agrees_with_hta(trace, hta):
    """The GPU's busy time: HTA's temporal breakdown (span less idle, i.e. the union of the
    kernels, copies and sets) against the report's busy share of the trace's duration."""
    assert busy_us(report(trace)) == pytest.approx(hta(trace).busy_us, rel=REL, abs=ABS_US)


def overlaps_us(trace):
    """{stream: the sum of its negative gaps, us}: work on a stream that starts before the
    previous work (by start) ends, as with programmatic dependent launch, from the file. The
    report counts no idle time there; HTA adds these negative gaps to kernel wait."""
    by_stream = collections.defaultdict(list)
    for e in exact_events(trace):
        if e.get("cat") in GPU_WORK and e.get("ph") == "X":
            by_stream[e["args"].get("stream")].append((e["ts"], e["ts"] + e["dur"]))
    overlaps = {}
    for stream, work in by_stream.items():
        work.sort()
        reach, negative = work[0][1], 0
        for (_, prev_end), (start, end) in zip(work, work[1:]):
            assert prev_end == reach, "work nested in earlier work: HTA's gaps differ otherwise"
            negative += min(start - prev_end, 0)
            reach = max(reach, end)
        overlaps[stream] = negative / 1000
    return overlaps


@pytest.mark.parametrize("trace", cases("idle"))
def test_idle_split_per_stream_agrees_with_hta(trace, hta):
    """Per stream, the idle time before each kernel, copy and set: host wait (its launch call
    started after the stream's previous work ended), kernel wait (under 30 us), other. HTA's
    kernel wait also holds the negative gaps of overlapping work (overlaps_us): taken out."""
    theirs = hta(trace).idle
    overlaps = overlaps_us(trace)
    streams = {s["stream"]: s for s in report(trace)["gpu"]["streams"]}
    assert streams.keys() == {stream for stream, _ in theirs}
    keys = {"host_wait": "host_wait_ms", "kernel_wait": "kernel_wait_ms", "other": "other_idle_ms"}
    for stream, s in streams.items():
        for category, key in keys.items():
            hta_us = theirs.get((stream, category), 0.0)
            if category == "kernel_wait":
                hta_us -= overlaps[stream]
            assert s[key] * 1000 == pytest.approx(hta_us, rel=REL, abs=ABS_US), (stream, category)


def nearest_rank(values, q):
    """The Q quantile of sorted VALUES at the nearest rank (as the report's histogram takes it)."""
    return values[max(math.ceil(q * len(values)) - 1, 0)]


@pytest.mark.parametrize("trace", cases("launch"))
def test_launch_delay_agrees_with_hta(trace, hta):
    """Launch delay of every kernel with a launch call: HTA's get_cuda_kernel_launch_stats (on
    the copy where every launch call is named cudaLaunchKernel, so that it counts Triton's
    cuLaunchKernel and ROCm's hip* launches as the report does)."""
    delays = hta(trace).launch_delays_us
    ours = report(trace)["gpu"]["launch_delay_us"]
    assert ours["launches"] == len(delays) > 0
    for key, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
        expected = nearest_rank(delays, q)
        assert ours[key] == pytest.approx(expected, rel=HISTOGRAM_REL, abs=ABS_US), key


@pytest.mark.parametrize("trace", cases("classes", vendors=("ROCm",), with_hta=False))
def test_rocm_gemms_are_compute(trace):
    """rocBLAS/hipBLASLt's Tensile GEMM kernels (Cijk_...) are compute kernels."""
    gemms = [k for k in report(trace)["kernels"] if k["name"].startswith("Cijk_")]
    assert gemms
    assert {k["class"] for k in gemms} == {"compute"}


@pytest.mark.parametrize("trace", cases("cpu", vendors=("CPU",), with_hta=False))
def test_cpu_trace_ranges_agree_with_the_files_events(trace):
    """HTA's figures are the GPU's; a CPU-only trace's are checked against its own events: the
    steps, every op's calls and total time, and the trace's duration."""
    events = exact_events(trace)
    ours = report(trace)
    ranges = {r["name"]: r for r in ours["ranges"]}
    steps = [e for e in events if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
    assert ranges["ProfilerStep"]["calls"] == len(steps) == 3
    calls, total = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") == "cpu_op":
            calls[e["name"]] += 1
            total[e["name"]] += e["dur"]
    assert len(calls) > 50
    for name in calls:
        assert ranges[name]["calls"] == calls[name], name
        assert ranges[name]["total_ms"] * 1e6 == pytest.approx(total[name], rel=1e-9, abs=1), name
        assert ranges[name]["self_ms"] <= ranges[name]["total_ms"] + 1e-9, name
    timed = [e for e in events if isinstance(e.get("ts"), int)]
    span_ns = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed)
    assert ours["duration_ms"] * 1e6 == pytest.approx(span_ns, rel=1e-9, abs=1)
