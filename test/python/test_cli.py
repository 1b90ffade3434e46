"""The `gpuprobe` command: info, dump and convert on real traces, each conversion checked by the
tool users open the result with; and corrupt input gets one clear error and a non-zero exit."""
import os
import pathlib
import re
import subprocess

from hta.trace_analysis import TraceAnalysis
from tensorboard.backend.event_processing import event_accumulator

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
CLI = BUILD / "gpuprobe"


def cli(*args, check=True):
    result = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def events_in(path):
    return int(re.search(r"^events\s+(\d+)$", cli("info", path).stdout, re.M).group(1))


def synthetic(tmp_path):
    path = tmp_path / "synthetic.json"
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), f"chrome={path}"],
                   check=True)
    return path


def test_info_describes_a_trace(tmp_path):
    out = cli("info", synthetic(tmp_path)).stdout
    assert re.search(r"^events\s+126$", out, re.M)  # 3 steps, 3 ranges, 60 launches, 60 kernels
    assert re.search(r"^steps\s+3$", out, re.M)
    assert re.search(r"^\s+kernel\s+60$", out, re.M)
    assert re.search(r"^\s+cuda_runtime\s+60$", out, re.M)
    assert "GPU 0: NVIDIA H200, 132 SMs" in out
    assert "GPU 0 stream 7" in out
    assert re.search(r"^format\s+Chrome trace JSON$", out, re.M)


def test_convert_round_trips_through_perfetto_and_gzip(tmp_path):
    source = synthetic(tmp_path)
    cli("convert", source, tmp_path / "t.pftrace.gz")
    cli("convert", tmp_path / "t.pftrace.gz", tmp_path / "back" / "rank0.json")
    assert events_in(tmp_path / "t.pftrace.gz") == events_in(source) == 126
    assert events_in(tmp_path / "back" / "rank0.json") == 126
    # HTA reads the twice-converted trace and finds the same kernels.
    analysis = TraceAnalysis(trace_dir=str(tmp_path / "back"))
    kernels = analysis.get_gpu_kernel_breakdown(visualize=False)[1]
    totals = dict(zip(kernels["name"], kernels["sum (us)"]))
    # HTA leaves out the last step, as it does with torch.profiler's traces: 2 of 3 steps.
    assert totals["gemm_kernel"] == 400 and totals["relu_kernel"] == 60
    dump = cli("dump", tmp_path / "t.pftrace.gz").stdout.splitlines()
    assert len(dump) == 1 + 126 + 1  # header, events, totals
    assert any("kernel" in line and "gemm_kernel" in line and "grid=128,1,1" in line for line in dump)


def test_convert_to_tensorboard(tmp_path):
    cli("convert", synthetic(tmp_path), f"{tmp_path}/logdir/")
    acc = event_accumulator.EventAccumulator(str(tmp_path / "logdir"))
    acc.Reload()
    busy = [e.value for e in acc.Scalars("gpu0/busy_percent")]
    assert [round(v, 2) for v in busy] == [38.33] * 3
    assert len(list((tmp_path / "logdir").glob("plugins/profile/*/*.xplane.pb"))) == 1


def test_corrupt_and_truncated_files_get_one_clear_error(tmp_path):
    data = synthetic(tmp_path).read_bytes()
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(data[: len(data) // 2])
    result = cli("info", truncated, check=False)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert re.match(rf"gpuprobe: {re.escape(str(truncated))}: byte \d+: expected .+", lines[0])

    cli("convert", synthetic(tmp_path), tmp_path / "t.pftrace")
    pf = (tmp_path / "t.pftrace").read_bytes()
    cut = tmp_path / "cut.pftrace"
    cut.write_bytes(pf[:-3])
    result = cli("convert", cut, tmp_path / "out.json", check=False)
    assert result.returncode == 1
    assert re.match(r"gpuprobe: .*cut.pftrace: byte \d+: expected \d+ bytes of packet, found \d+ "
                    r"\(the file is truncated\)", result.stderr.splitlines()[0])
    # What was read before the damage is kept.
    assert events_in(tmp_path / "out.json") > 100

    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01\x02")
    result = cli("dump", garbage, check=False)
    assert result.returncode == 1 and "expected a Chrome trace" in result.stderr

    assert cli("frobnicate", check=False).returncode == 2
    assert cli("convert", "only-one-arg", check=False).returncode == 2


def test_info_of_an_empty_trace_says_it_holds_no_events(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text('{"traceEvents": []}')
    out = cli("info", empty).stdout
    assert re.search(r"^process\s+none: the trace holds no events$", out, re.M)
    assert "pid 0" not in out
    assert re.search(r"^events\s+0$", out, re.M)
