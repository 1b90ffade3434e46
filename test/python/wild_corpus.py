"""The corpus of real traces in test/data/wild (test/data/wild/SOURCES.md says where each came
from), what each one tries, and HTA run on each with its definitions matched to the report's.

HTA's definitions are matched by running it on a copy of the trace that differs in three ways, and
with one option:
- every runtime or driver call that launched a kernel is renamed cudaLaunchKernel: HTA's launch
  statistics know only cudaLaunchKernel and cudaLaunchKernelExC by name, where the report counts
  every call correlated with a kernel (cuLaunchKernel from Triton, hipLaunchKernel,
  hipExtModuleLaunchKernel, hipModuleLaunchKernel on ROCm);
- Kineto's cuda_sync events are left out: HTA counts a stream's wait (Stream Wait Event, Event
  Sync) as time the GPU is busy, the report does not (waiting is not work);
- host events lose their "stream" argument: HTA takes every event with a stream for GPU work,
  and Inductor's record_function around a Triton launch (a cpu_op named after the kernel, with
  args stream, grid) then counts as a second kernel of that name and as GPU busy time;
- HTA's rounding of fractional-microsecond times is turned off (it moves each start up and each
  end down to a whole microsecond, shortening short kernels by up to a microsecond; see
  pytorch/pytorch#122425). Times then stay in doubles of microseconds, exact to the nanosecond
  for the traces here.
and HTA includes the last profiler step (include_last_profiler_step), as the report reads the
whole trace."""
import collections
import dataclasses
import functools
import gzip
import json
import os
import pathlib
import subprocess

import pytest

WILD = pathlib.Path(__file__).parent.parent / "data" / "wild"
FETCHED = WILD / "fetched"  # where test/data/wild/fetch.sh puts the larger traces
BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))

FIGURES = ("read", "kernels", "copies", "busy", "idle", "launch", "classes", "cpu", "breakdown",
           "memsets", "overlap")


@dataclasses.dataclass(frozen=True)
class Trace:
    """One corpus trace: its file under test/data/wild (or fetched/), its vendor, what it tries
    that the others do not, and why HTA cannot read it (then not compared with HTA)."""
    file: str
    vendor: str  # CUDA, ROCm or CPU
    tries: str = ""
    hta_fails: str = ""
    fetched: bool = False

    @property
    def path(self):
        return (FETCHED if self.fetched else WILD) / self.file


# Before issue 41's reader, main refused the since-1970 traces ('expected finite, non-negative
# times'), read PyTorch 1.8's capitalised categories as CPU ranges, knew no hip* launch (no launch
# delay, host wait filed as other) and left Cijk_* GEMMs unclassified: 29 of these cases failed.
SINCE_1970 = "since-1970 microsecond times (1.6e15-1.8e15), no baseTimeNanoseconds"
ROCM = "hip* launches and copies, Cijk_* GEMMs"
CORPUS = [
    Trace("kineto_v100_pt18_capitalised.json.gz", "CUDA",
          SINCE_1970 + "; Kernel, Memcpy, Memset, Runtime (PyTorch 1.8/1.9)"),
    Trace("kineto_cupti_test_h100.json.gz", "CUDA"),
    Trace("tracelens_h100_bert_small.json.gz", "CUDA"),
    Trace("tracelens_h100_vit_nsfw.json.gz", "CUDA"),
    Trace("tracelens_mi300_bert_small.json.gz", "ROCm", ROCM),
    Trace("tracelens_mi300_qwen05b.json.gz", "ROCm", ROCM),
    Trace("tracelens_mi210_gpu_only.json.gz", "ROCm", ROCM),
    Trace("tracelens_mi300_triton.json.gz", "ROCm", ROCM,
          hta_fails="HTA 0.6.1 raises TypeError while loading it (pandas: an index_correlation "
                    "column downcast to int8 cannot hold the indices it then stores)"),
    Trace("torch212_cpu_resnet18.json.gz", "CPU", SINCE_1970),
    Trace("torch215_cpu_resnet18.json.gz", "CPU"),
    Trace("torch211_cuda_resnet18.json.gz", "CUDA", "recorded on the H100 with torch 2.11"),
    # Larger traces, fetched by test/data/wild/fetch.sh (CI has no network: their tests skip).
    Trace("deepseek_v3_train_ep64.json", "CUDA", SINCE_1970, fetched=True),
    Trace("tracelens_b200_eager.json.gz", "CUDA", fetched=True),
    Trace("tracelens_h100_owlv2.json.gz", "CUDA", fetched=True),
    Trace("tracelens_mi300_owlv2.json.gz", "ROCm", ROCM, fetched=True),
]


def cases(figure, vendors=("CUDA", "ROCm"), with_hta=True):
    """pytest params: the corpus traces of these vendors (that HTA reads, when with_hta)."""
    params = []
    for t in CORPUS:
        if t.vendor not in vendors or (with_hta and t.hta_fails):
            continue
        params.append(pytest.param(t, id=t.file.split(".")[0]))
    return params


def present(trace):
    """Skips (visibly) a fetched trace that test/data/wild/fetch.sh has not fetched."""
    if not trace.path.exists():
        pytest.skip(f"{trace.path} not fetched: run test/data/wild/fetch.sh (needs the network)")
    return trace.path


def load(path):
    """The trace as JSON (gzipped or not)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def report(trace):
    """`gpuprobe report TRACE --json`, every row of every table (skips an unfetched trace)."""
    return _report(present(trace))


@functools.lru_cache(maxsize=None)
def _report(path):
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", str(path), "--json", "--limit",
                          "1000000"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


KERNEL_CATS = ("kernel", "Kernel")
GPU_CATS = KERNEL_CATS + ("gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "gpu_user_annotation")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver", "Runtime")


def hta_copy(path, directory):
    """The definition-matched copy of the trace that HTA reads (see the module's text), alone in
    DIRECTORY as HTA wants. Returns how many launch calls it renamed, by their own name."""
    trace = load(path)
    events = trace["traceEvents"]
    kernels = {e["args"].get("correlation") for e in events
               if e.get("cat") in KERNEL_CATS and isinstance(e.get("args"), dict)}
    renamed = collections.Counter()
    kept = []
    for e in events:
        if e.get("cat") == "cuda_sync":
            continue
        if (e.get("cat") not in GPU_CATS and isinstance(e.get("args"), dict)
                and "stream" in e["args"]):
            e = dict(e, args={k: v for k, v in e["args"].items() if k != "stream"})
        if (e.get("cat") in LAUNCH_CATS and isinstance(e.get("args"), dict)
                and e["args"].get("correlation") in kernels):
            renamed[e["name"]] += 1
            e = dict(e, name="cudaLaunchKernel")
        kept.append(e)
    trace["traceEvents"] = kept
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "trace.json", "w") as f:
        json.dump(trace, f)
    return renamed


class Hta:
    """HTA's figures for one trace, from its own functions on the definition-matched copy."""

    def __init__(self, path, directory):
        from hta.configs.env_options import HTAEnvOptions
        from hta.trace_analysis import TraceAnalysis
        HTAEnvOptions.instance().set_disable_ns_rounding(True)
        self.renamed = hta_copy(path, directory)
        self.analysis = TraceAnalysis(trace_dir=str(directory), include_last_profiler_step=True)
        self.rank = self.analysis.t.get_ranks()[0]

    @functools.cached_property
    def kernels(self):
        """{name: (calls, total us)} for every kernel, copy and set, none folded into 'others'."""
        table = self.analysis.get_gpu_kernel_breakdown(
            visualize=False, num_kernels=10**9, duration_ratio=1.0, include_memory_kernels=True)[1]
        rows = {}
        for r in table.itertuples():
            total, mean = getattr(r, "_2"), getattr(r, "_6")  # "sum (us)", "mean (us)"
            rows[r.name] = (round(total / mean) if mean else None, total)
        return rows

    @functools.cached_property
    def busy_us(self):
        """The union of the GPU's work: the temporal breakdown's span less its idle time."""
        row = self.analysis.get_temporal_breakdown(visualize=False).iloc[0]
        return row["kernel_time(us)"] - row["idle_time(us)"]

    @functools.cached_property
    def temporal(self):
        """HTA's get_temporal_breakdown row of the trace's rank: idle_time(us), compute_time(us),
        non_compute_time(us), kernel_time(us) (the span) and their _pctg of the span."""
        return self.analysis.get_temporal_breakdown(visualize=False).iloc[0]

    @functools.cached_property
    def overlap_percent(self):
        """HTA's get_comm_comp_overlap of the trace's rank, in percent rounded to 0.01 (NaN
        without communication kernels: 0 / 0)."""
        table = self.analysis.get_comm_comp_overlap(visualize=False)
        return float(table.iloc[0]["comp_comm_overlap_pctg"])

    @functools.cached_property
    def idle(self):
        """{(stream, category): us}, category host_wait, kernel_wait or other."""
        table = self.analysis.get_idle_time_breakdown(ranks=[self.rank], visualize=False)[0]
        return {(int(r.stream), r.idle_category): r.idle_time for r in table.itertuples()}

    @functools.cached_property
    def launch_delays_us(self):
        """Every kernel's launch delay (its start less its launch call's end, negative as 0)."""
        stats = self.analysis.get_cuda_kernel_launch_stats(
            ranks=[self.rank], include_memory_events=False, visualize=False)
        return sorted(stats[self.rank]["launch_delay"].tolist()) if stats else []
