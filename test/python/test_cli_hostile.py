"""The `gpuprobe` command on hostile or merely unusual files, under a memory limit (`ulimit -v`):
invalid UTF-8 in names, one event with a million arguments, two million distinct names, a dump
description nested 100 000 deep or holding integers past 64 bits, a FIFO or a device where a file
belongs. Each command finishes with one line at most and a documented exit status — never an
abort, never a hang — within its memory bound, and says what it capped."""
import gzip
import json
import os
import pathlib
import re
import subprocess
import sys

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
LIMIT_KB = 1_500_000  # 1.5 GB of address space


def run(*args, timeout=300):
    command = " ".join(f"'{a}'" for a in [str(BUILD / "gpuprobe"), *map(str, args)])
    # ASan reserves terabytes of address space: no ulimit -v under it (GPUPROBE_BUILD_DIR=build-asan).
    limit = "" if "asan" in BUILD.name else f"ulimit -v {LIMIT_KB}; "
    return subprocess.run(["bash", "-c", f"{limit}exec {command}"], capture_output=True,
                          timeout=timeout)


def assert_refused(out, *words):
    """One `gpuprobe: ...` line, exit status 1, no sanitizer report."""
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode == 1, (out.returncode, err)
    assert err.startswith("gpuprobe: "), err
    assert "runtime error" not in err and "Sanitizer" not in err, err
    for w in words:
        assert w in err, err


def test_invalid_utf8_names_are_replaced_not_fatal(tmp_path):
    trace = tmp_path / "bad.json"
    trace.write_bytes(b'{"traceEvents":[{"ph":"X","name":"req\xff\xfe","ts":1,"dur":5,'
                      b'"pid":1,"tid":1}]}')
    for args in (("report", trace, "--json"), ("diff", trace, trace, "--json")):
        out = run(*args)
        assert out.returncode == 0, out.stderr
        text = out.stdout.decode("utf-8")  # valid UTF-8
        json.loads(text)
        assert "req\ufffd" in text
    assert run("report", trace).returncode == 0
    assert run("info", trace).returncode == 0


def test_an_event_with_a_million_arguments_keeps_memory_bounded(tmp_path):
    trace = tmp_path / "args.json.gz"
    with gzip.open(trace, "wt", compresslevel=1) as f:
        f.write('{"traceEvents":[{"ph":"C","name":"c","ts":1,"pid":1,"tid":1,"args":{')
        f.write(",".join(f'"a{i}":{i}' for i in range(1_000_000)))
        f.write("}}]}")
    for command in ("info", "report"):
        out = run(command, trace)
        assert out.returncode == 0, out.stderr


def test_two_million_distinct_names_are_capped_and_counted(tmp_path):
    trace = tmp_path / "names.json.gz"
    with gzip.open(trace, "wt", compresslevel=1) as f:
        f.write('{"traceEvents":[\n')
        f.write(",\n".join(f'{{"ph":"X","name":"n{i}","ts":{i},"dur":1,"pid":1,"tid":1}}'
                           for i in range(2_000_000)))
        f.write("]}")
    out = run("report", trace, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    names = {r["name"] for r in report["ranges"]}
    assert "<too many distinct names>" in names
    assert len(names) <= 65536 + 1
    converted = tmp_path / "back.pftrace"
    out = run("convert", trace, converted)
    assert out.returncode == 0, out.stderr
    info = run("info", converted)
    assert info.returncode == 0
    assert b"names past a cap" in info.stdout
    assert report["dropped"]["names_capped"] > 0


def chrome_trace(path, names=("request",)):
    events = [{"ph": "X", "name": n, "ts": 10 * i, "dur": 5, "pid": 1, "tid": 1}
              for i, n in enumerate(names)]
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def dump_dir(tmp_path, files=("trace.json",), **fields):
    """A flight recorder dump as dump=DIR writes one: dump.json and the trace it lists."""
    d = tmp_path / "dump"
    d.mkdir()
    description = {"format": "gpuprobe-dump", "name": "d", "source": "trigger",
                   "trigger": "p99:request>50ms/10s", "trigger_time_ns": 1_700_000_000_000_000_000,
                   "files": list(files), "values": {"threshold_ms": 50, "window_s": 10}}
    description.update(fields)
    (d / "dump.json").write_text(json.dumps(description))
    if "trace.json" in files:
        chrome_trace(d / "trace.json")
    return d


def test_a_dump_description_nested_100k_deep_is_refused_not_a_stack_overflow(tmp_path):
    d = dump_dir(tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    for member in ("window", "files", "drops", "unknown"):
        (d / "dump.json").write_text('{"format":"gpuprobe-dump","files":["trace.json"],"%s":%s}'
                                     % (member, deep))
        assert_refused(run("report", d, timeout=60), "dump.json", "nested deeper")
        assert_refused(run("report", d, "--json", timeout=60), "nested deeper")


def test_deep_json_traces_are_refused_by_every_command(tmp_path):
    trace = tmp_path / "deep.json"
    trace.write_text('{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1,'
                     '"args":{"x":' + "[" * 100_000 + "]" * 100_000 + '}}]}')
    mlir = tmp_path / "deep_mlir.json"
    mlir.write_text('[{"user":0,"name":"p","passes":' * 50_000 + "[]}]" * 50_000)
    for path in (trace, mlir):
        for args in (("info", path), ("dump", path), ("report", path, "--json"),
                     ("diff", path, path), ("convert", path, tmp_path / "out.json")):
            out = run(*args, timeout=60)
            assert out.returncode in (0, 1), (args, out.returncode, out.stderr)
            assert b"Sanitizer" not in out.stderr and b"runtime error" not in out.stderr


def test_a_dump_description_larger_than_64_mib_is_refused_unread(tmp_path):
    d = dump_dir(tmp_path)
    with open(d / "dump.json", "r+b") as f:
        f.truncate(65 << 20)  # sparse: refused by its size before a byte is read
    assert_refused(run("report", d, timeout=60), "dump.json", "larger than")


def test_integers_past_64_bits_in_a_dump_description_are_not_overflowed(tmp_path):
    big, small = 2**63 - 1, -2**63
    d = dump_dir(tmp_path, trigger_time_ns=big, pid=2**64 - 1, rank=small,
                 events=2**64 - 1, gpu_events=-5,
                 window={"from_ns": small, "to_ns": big, "before_s": 1e308, "after_s": -1e308},
                 values={"threshold_ms": 1e308, "window_s": 1e300},
                 drops={"events_dropped": big, "events_dropped_no_ring": big, "gpu_dropped": big,
                        "flight_overwritten_by_age": big, "flight_overwritten_by_memory": big},
                 gpu_recording={"sampled": 7, "recorded_s": 1e308})
    out = run("report", d, "--json", timeout=120)
    assert out.returncode == 0, out.stderr
    assert b"runtime error" not in out.stderr
    dump = json.loads(out.stdout)["dump"]
    assert dump["window_s"] > 1e10  # from 2^-63 to 2^63 ns, not a wrapped difference
    assert dump["watched"]["seconds"] >= 0
    assert dump["events"] >= 0 and dump["gpu_events"] >= 0
    assert dump["dropped"] >= 0 and dump["overwritten"] >= 0
    text = run("report", d, timeout=120)
    assert text.returncode == 0, text.stderr
    assert b"runtime error" not in text.stderr
    window = re.search(rb"window (\S+) s", text.stdout)
    assert window and float(window.group(1)) > 0, text.stdout


def test_a_dump_listing_a_file_outside_its_directory_is_refused(tmp_path):
    chrome_trace(tmp_path / "elsewhere.json")
    d = dump_dir(tmp_path, files=["../elsewhere.json"])
    assert_refused(run("report", d, timeout=60), "outside the dump")


def test_a_fifo_in_a_dump_is_refused_not_waited_on(tmp_path):
    d = dump_dir(tmp_path, files=["w.gpwindow", "trace.json"])
    os.mkfifo(d / "w.gpwindow")
    assert_refused(run("report", d, timeout=60), "w.gpwindow", "not a regular file", "FIFO")
    (d / "w.gpwindow").unlink()
    (d / "dump.json").unlink()
    os.mkfifo(d / "dump.json")
    assert_refused(run("report", d, timeout=60), "dump.json", "not a regular file")


def test_a_device_in_a_dump_is_refused(tmp_path):
    d = dump_dir(tmp_path, files=["z.json"])
    os.symlink("/dev/zero", d / "z.json")
    assert_refused(run("report", d, timeout=60), "z.json", "not a regular file",
                   "character device")


def test_a_fifo_among_the_ranks_is_refused_not_passed_over(tmp_path):
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    chrome_trace(ranks / "rank0.json")
    os.mkfifo(ranks / "rank1.json")
    assert_refused(run("report", ranks, timeout=60), "rank1.json", "not a regular file")


def test_a_fifo_or_device_named_on_the_command_line_is_refused(tmp_path):
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero", "/dev/null"):
        for args in (("info", path), ("dump", path), ("report", path), ("diff", path, path),
                     ("convert", path, tmp_path / "out.json")):
            assert_refused(run(*args, timeout=60), str(path), "not a regular file")


def peak_rss_mb(*args):
    """The peak resident memory of `gpuprobe ARGS`, measured in a fresh process of its own so that
    no earlier child's peak counts."""
    probe = ("import resource, subprocess, sys\n"
             "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
             "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, str(BUILD / "gpuprobe"), *map(str, args)],
                         capture_output=True, text=True, timeout=600, check=True)
    rc, kb = out.stdout.split()
    assert rc == "0", out.stderr
    return int(kb) / 1024


def test_convert_to_chrome_past_the_name_cap_keeps_memory_bounded(tmp_path):
    # 1.2 M events, each of its own name: past the first 65 536 names every event is named
    # "<too many distinct names>", and nothing may be kept per event (it was ~640 B each: a call
    # site and the Chrome writer's text for it).
    trace = tmp_path / "names.json.gz"
    n = 1_200_000
    with gzip.open(trace, "wt", compresslevel=1) as f:
        f.write('{"traceEvents":[\n')
        f.write(",\n".join(f'{{"ph":"X","name":"n{i}","ts":{i},"dur":1,"pid":1,"tid":1}}'
                           for i in range(n)))
        f.write("]}")
    out = tmp_path / "out.json"
    peak = peak_rss_mb("convert", trace, out)
    assert peak < 350, f"peak RSS {peak:.0f} MB"
    info = run("info", out)
    assert info.returncode == 0, info.stderr
    assert re.search(rb"^events\s+%d$" % n, info.stdout, re.M), info.stdout
