"""The flight recorder from Python, as a server runs it: a planted incident (requests turning slow)
fires the p99 trigger by itself and the dump's Chrome trace opens in HTA; the on-call engineer's
`POST /dump` on the metrics port and `gpuprobe.dump()` each write one; and the metrics count them."""
import json
import os
import pathlib
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from hta.trace_analysis import TraceAnalysis

import gpuprobe


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dumps(directory):
    return sorted(p for p in pathlib.Path(directory).iterdir() if (p / "dump.json").exists())


def wait_for(what, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    return what()


def serve(n, seconds):
    for _ in range(n):
        with gpuprobe.range("request"):
            time.sleep(seconds)


def hta_names(chrome_dir):
    analysis = TraceAnalysis(trace_dir=str(chrome_dir))
    trace = analysis.t.get_trace(0)
    table = analysis.t.symbol_table.get_sym_table()
    return trace["name"].map(lambda i: table[i])


def test_a_p99_incident_writes_one_dump_that_hta_opens(tmp_path):
    out = tmp_path / "dumps"
    session = gpuprobe.Session(
        f"flight=30,dump={out},dump_after=0.3,trigger=p99:request>20ms/5s")
    serve(150, 0.001)        # healthy: p99 ~1 ms
    serve(5, 0.030)          # the incident: p99 of 155 is the 154th, a slow one
    with gpuprobe.range("after the incident"):
        pass
    found = wait_for(lambda: dumps(out))
    serve(5, 0.030)          # still above: the trigger does not fire again
    session.stop()
    assert len(found) == 1 and len(dumps(out)) == 1
    dump = found[0]
    info = json.loads((dump / "dump.json").read_text())
    assert info["source"] == "trigger"
    assert info["trigger"] == "p99:request>20ms/5s"
    assert info["values"]["value_ms"] > 20
    assert info["values"]["samples"] >= 100
    assert "p99 of request over the last 5 s" in info["reason"]
    assert info["pid"] == os.getpid()
    assert info["drops"]["events_dropped"] == 0
    chrome = [f for f in info["files"] if f.startswith("chrome/")]
    assert len(chrome) == 1 and (dump / chrome[0]).exists()
    assert (dump / "trace.pftrace").stat().st_size > 0
    names = hta_names(dump / "chrome")
    counts = names.value_counts()
    assert counts["request"] == 155          # every request of the window, none later
    assert counts["after the incident"] == 1
    # The moment it fired is an instant on the timeline (HTA keeps only complete events).
    events = json.loads((dump / chrome[0]).read_text())["traceEvents"]
    marks = [e for e in events if e["name"].startswith("gpuprobe dump: p99 of request")]
    assert len(marks) == 1 and marks[0]["ph"] == "i"


CLI = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"


def test_report_on_a_dump_says_what_fired_and_explains_the_requests_that_fired_it(tmp_path):
    out = tmp_path / "dumps"
    session = gpuprobe.Session(f"flight=30,dump={out},dump_after=0.2,trigger=p99:request>20ms/1s")
    serve(3, 0.040)          # slow, but too few to fire, and out of the window when it fires
    time.sleep(1.3)
    serve(150, 0.001)
    serve(5, 0.030)          # the incident the trigger sees
    found = wait_for(lambda: dumps(out))
    session.stop()
    assert len(found) == 1
    text = subprocess.run([str(CLI), "report", str(found[0])], capture_output=True, text=True,
                          check=True).stdout
    lines = text.splitlines()
    assert lines[0].startswith(f"dump {found[0].name} (trigger): p99 of request over the last 1 s")
    assert "trigger p99:request>20ms/1s at " in lines[1]
    assert "GPU activity: none recorded" in text
    assert 'outliers below: "request" above 20 ms that began in the 1.0 s the trigger watched' in text
    report = json.loads(subprocess.run([str(CLI), "report", "--json", str(found[0])],
                                       capture_output=True, text=True, check=True).stdout)
    assert report["dump"]["trigger"] == "p99:request>20ms/1s"
    assert report["dump"]["watched"] == {"range": "request", "threshold_ms": 20, "seconds": 1.0}
    assert report["jitter"]["range"] == "request"
    assert report["jitter"]["threshold_ms"] == 20
    # Those that fired it (the first two or three of the five: it fires as soon as the P99 is
    # one of them), not the three slower ones before its window.
    durations = sorted(o["duration_ms"] for o in report["jitter"]["outliers"])
    assert 2 <= len(durations) <= 5 and all(30 <= d < 40 for d in durations), durations
    # The rest of the report covers the whole window, the earlier requests included.
    assert any(r["name"] == "request" and r["calls"] == 158 for r in report["ranges"])


def test_post_dump_and_gpuprobe_dump_each_write_one_and_are_counted(tmp_path, capfd):
    assert gpuprobe.dump("no session") is None
    assert "no flight recorder" in capfd.readouterr().err
    out = tmp_path / "dumps"
    port = free_port()
    session = gpuprobe.Session(
        f"flight=10,dump={out},dump_after=0.1,dump_format=chrome,metrics={port}")
    serve(10, 0.001)
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/dump?reason=on-call%20asked", method="POST")
    with urllib.request.urlopen(request, timeout=5) as r:
        assert r.status == 200
        by_http = pathlib.Path(r.read().decode().strip())
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/dump", timeout=5)  # GET
    assert refused.value.code == 405
    assert wait_for(lambda: (by_http / "dump.json").exists())
    serve(10, 0.001)
    by_api = pathlib.Path(gpuprobe.dump("from the program"))
    assert wait_for(lambda: (by_api / "dump.json").exists())
    serve(1, 0.001)  # a batch after the dump: the metrics are published with it
    session.flush()

    def written():
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            text = r.read().decode()
        return "gpuprobe_dumps_written_total 2" in text and text
    text = wait_for(written)
    assert text, "gpuprobe_dumps_written_total never reached 2"
    assert 'gpuprobe_triggers_suppressed_total{limit="cooldown"} 0' in text
    session.stop()
    assert json.loads((by_http / "dump.json").read_text())["reason"] == "on-call asked"
    assert json.loads((by_http / "dump.json").read_text())["source"] == "http"
    assert json.loads((by_api / "dump.json").read_text())["source"] == "api"
    assert (hta_names(by_api / "chrome") == "request").sum() == 20


def test_a_hostile_reason_reaches_no_terminal_raw(tmp_path, capfd):
    """Issue 48, item 11: POST /dump?reason= carried escape sequences and line breaks raw to the
    host's stderr, to dump.json and to `gpuprobe report`'s output."""
    out = tmp_path / "dumps"
    port = free_port()
    session = gpuprobe.Session(f"flight=10,dump={out},dump_after=0.1,metrics={port}")
    serve(5, 0.001)
    # A terminal title, a screen clear, a forged notice on a line of its own, then 2000 bytes.
    evil = "%1b%5d0;owned%07%1b%5b2J%0d%0agpuprobe:%20dump%20written:%20/etc/passwd" + "y" * 2000
    request = urllib.request.Request(f"http://127.0.0.1:{port}/dump?reason={evil}", method="POST")
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.status == 200
        written = pathlib.Path(r.read().decode().strip())
    assert wait_for(lambda: (written / "dump.json").exists())
    session.stop()
    err = capfd.readouterr().err
    assert "\x1b" not in err and "\r" not in err
    assert not any(line.startswith("gpuprobe: dump written: /etc/passwd")
                   for line in err.splitlines())
    assert f"dump written: {written} (\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0agpuprobe: " in err
    reason = json.loads((written / "dump.json").read_text())["reason"]
    assert len(reason.encode()) <= 200 and reason.isprintable()
    # A dump directory may come from anywhere: gpuprobe report escapes a forged dump.json too.
    forged = json.loads((written / "dump.json").read_text())
    forged["reason"] = "\x1b]0;owned\x07\x1b[2J\r\ngpuprobe: all is well"
    (written / "dump.json").write_text(json.dumps(forged))
    text = subprocess.run([str(CLI), "report", str(written)], capture_output=True, text=True,
                          timeout=120).stdout
    assert "\x1b" not in text and "\r" not in text
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0agpuprobe: all is well" in text
