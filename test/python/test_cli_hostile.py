"""The `gpuprobe` command on hostile or merely unusual files, under a memory limit (`ulimit -v`):
invalid UTF-8 in names, one event with a million arguments, two million distinct names. Each
command finishes with one line at most and a documented exit status — never an abort — within
its memory bound, and says what it capped."""
import gzip
import json
import os
import pathlib
import subprocess

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
LIMIT_KB = 1_500_000  # 1.5 GB of address space


def run(*args):
    command = " ".join(f"'{a}'" for a in [str(BUILD / "gpuprobe"), *map(str, args)])
    return subprocess.run(["bash", "-c", f"ulimit -v {LIMIT_KB}; exec {command}"],
                          capture_output=True, timeout=300)


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
