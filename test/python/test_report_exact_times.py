"""`gpuprobe report` reads Kineto times exactly: a torch.profiler trace with wall-clock microseconds
since 1970 (as PyTorch 1.13-2.3 wrote them: ~1.7e15 with three decimals, the nanoseconds) gives
the same report, number for number, as the same trace shifted to small times. Through doubles the
since-1970 one was refused (|ts| > 1e15) or moved by up to 256 ns per event."""
import json
import os
import pathlib
import random
import re
import subprocess

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))

SINCE_1970_NS = 1_712_345_678_901_234_567  # 2024-04-05, an odd number of ns
SMALL_NS = 5_000_000


def micros(ns):
    """Kineto's spelling of a time: integer µs, a point, three digits of ns (marked, for write())."""
    return f"@T{ns // 1000}.{ns % 1000:03d}@"


def kineto_trace(origin_ns):
    """Eight profiler steps of a training loop on one GPU, two streams: operators launching
    kernels (runtime and driver launches), copies, a memset, a stream synchronization, gaps the
    host causes and gaps between queued kernels; every time an odd number of ns."""
    rng = random.Random(41)
    events, corr = [], 1000
    cpu = origin_ns + 1_001
    gpu_free = {7: 0, 13: 0}
    pid, tid = 4242, 4242

    def x(cat, name, pid_, tid_, begin, dur, args=None):
        events.append({"ph": "X", "cat": cat, "name": name, "pid": pid_, "tid": tid_,
                       "ts": micros(begin), "dur": micros(dur), "args": args or {}})

    for step in range(8):
        step_begin = cpu
        ops = []
        for op in range(rng.randint(20, 30)):
            op_begin = cpu + rng.randint(1_003, 60_007)
            stream = 7 if op % 5 else 13
            launch_begin = op_begin + rng.randint(2_001, 4_999)
            launch_dur = rng.randint(3_001, 7_999)
            corr += 1
            kind = rng.random()
            if kind < 0.1:
                api, cat, name = "cudaMemcpyAsync", "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)"
            elif kind < 0.15:
                api, cat, name = "cudaMemsetAsync", "gpu_memset", "Memset (Device)"
            else:
                api, cat = ("cuLaunchKernel" if kind > 0.8 else "cudaLaunchKernel"), "kernel"
                name = rng.choice(["sm90_xmma_gemm_f16f16_f32_tn", "triton_poi_fused_add_0",
                                   "void at::native::vectorized_elementwise_kernel<4>",
                                   "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_tn"])
            runtime = "cuda_driver" if api == "cuLaunchKernel" else "cuda_runtime"
            x(runtime, api, pid, tid, launch_begin, launch_dur, {"correlation": corr})
            work_begin = max(launch_begin + launch_dur + rng.randint(1_001, 20_999),
                             gpu_free[stream] + rng.randint(0, 3) * 1_117)
            work_dur = rng.randint(1_001, 60_999)
            args = {"device": 0, "stream": stream, "correlation": corr}
            if cat != "kernel":
                args["bytes"] = rng.randint(1, 1 << 20)
            x(cat, name, 0, stream, work_begin, work_dur, args)
            gpu_free[stream] = work_begin + work_dur
            op_end = launch_begin + launch_dur + rng.randint(1_001, 3_001)
            ops.append((op_begin, op_end))
            cpu = op_end
        for i, (b, e) in enumerate(ops):
            x("cpu_op", f"aten::op{i % 7}", pid, tid, b, e - b, {"External id": i})
        sync_begin = cpu + 2_003
        sync_end = max(gpu_free.values()) + 5_005
        corr += 1
        x("cuda_runtime", "cudaStreamSynchronize", pid, tid, sync_begin, sync_end - sync_begin,
          {"correlation": corr})
        cpu = sync_end + rng.randint(10_001, 90_001)
        x("user_annotation", f"ProfilerStep#{step}", pid, tid, step_begin, cpu - step_begin)
    meta = [{"name": "process_name", "ph": "M", "ts": micros(origin_ns), "pid": 0, "tid": 0,
             "args": {"name": "GPU 0"}},
            {"name": "thread_name", "ph": "M", "ts": micros(origin_ns), "pid": pid, "tid": tid,
             "args": {"name": "thread 4242 (python3)"}}]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
            "traceEvents": meta + events}


def write(path, trace):
    # The times as Kineto writes them: numbers with three decimals, not JSON strings.
    text = re.sub(r'"@T([0-9]+\.[0-9]{3})@"', r"\1", json.dumps(trace))
    path.write_text(text)
    json.loads(text)  # still JSON


def report(path):
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", str(path), "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def differences(a, b, where=""):
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{where}: keys {sorted(set(a) ^ set(b))}"] if set(a) != set(b) else []
        for k in a.keys() & b.keys():
            out += differences(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} against {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} against {b!r}"]


def test_since_1970_times_give_exactly_the_report_of_small_times(tmp_path):
    wall, small = tmp_path / "wall.json", tmp_path / "small.json"
    write(wall, kineto_trace(SINCE_1970_NS))
    write(small, kineto_trace(SMALL_NS))
    assert '"ts": 1712345678901' in wall.read_text()  # since 1970, three decimals
    a, b = report(wall), report(small)
    gpu = a["gpu"]
    assert gpu["kernels"]["count"] > 150
    assert gpu["launch_delay_us"]["launches"] == gpu["kernels"]["count"]  # every launch matched
    assert sum(s["host_wait_ms"] for s in gpu["streams"]) > 0  # idle of more than one kind
    assert sum(s["kernel_wait_ms"] for s in gpu["streams"]) > 0
    # Every figure the same; only where the trace is in time (its start) may differ.
    diff = [d for d in differences(a, b) if not d.startswith((".trace.start", ".start"))]
    assert diff == [], "\n".join(diff[:20])
