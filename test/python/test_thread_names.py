"""Python threads are named in the outputs as `threading` names them, not "python" (the OS name
a thread inherits from the thread that started it); gpuprobe.set_thread_name still wins; the
program's threads keep their names; and compile workers (threads that compile kernels outside a
compile's context) are named "compile worker <N>"."""
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import gpuprobe
from trace_util import load_events, named, thread_names


def os_name(native_id):
    with open(f"/proc/self/task/{native_id}/comm") as f:
        return f.read().strip()


def test_python_threads_have_their_threading_names(tmp_path):
    path = tmp_path / "t.json"
    seen = {}

    def work(label):
        with gpuprobe.range(f"work {label}"):
            seen[label] = (threading.get_native_id(), os_name(threading.get_native_id()),
                           threading.current_thread().name)

    def explicit():
        gpuprobe.set_thread_name("named by the program")
        work("explicit")

    with gpuprobe.Session(f"chrome={path}"):
        t = threading.Thread(target=work, args=("loader",), name="loader-7")
        t.start()
        t.join()
        t = threading.Thread(target=explicit, name="ignored")
        t.start()
        t.join()
        with ThreadPoolExecutor(1, thread_name_prefix="pool") as pool:
            pool.submit(gpuprobe.counter, "depth", 3.0).result()  # a counter's first event too
            pool.submit(work, "pooled").result()
        work("main")
    events, names = load_events(path), thread_names(path)
    by_label = {label: named(events, f"work {label}")[0]["tid"] for label in seen}
    assert "loader-7" in names[by_label["loader"]]
    assert "named by the program" in names[by_label["explicit"]]
    assert "ignored" not in names[by_label["explicit"]]
    assert "pool_0" in names[by_label["pooled"]]
    assert "MainThread" not in names[by_label["main"]]  # the process's name, as before
    # Nothing the program sees changed: the threads' own and OS names.
    assert seen["loader"][2] == "loader-7"
    assert seen["loader"][1] == seen["main"][1]  # the inherited OS name, still


def test_compile_workers_are_named(tmp_path):
    pytest.importorskip("torch")
    from gpuprobe.torch.compile_phases import CompilePhases

    path = tmp_path / "t.json"
    log = logging.getLogger("gpuprobe test structured trace")

    def span(name, metadata):
        now = time.time_ns() / 1000
        for ph, ts in (("B", now), ("E", now + 5)):
            payload = json.dumps({"name": name, "ph": ph, "ts": ts})
            reader.record({"chromium_event": {}, **metadata}, payload)

    reader = CompilePhases(log)
    try:
        with gpuprobe.Session(f"chrome={path}"):
            with ThreadPoolExecutor(2) as pool:  # Inductor's: no compile id on its threads
                pool.submit(span, "compile_file", {}).result()
            span("compile_file", {"frame_id": 0, "frame_compile_id": 0})  # the compiling thread
    finally:
        reader.close()
    events, names = load_events(path), thread_names(path)
    spans = named(events, "compile phase: compile_file")
    assert len(spans) == 2
    workers = [names[e["tid"]] for e in spans if "compile worker" in names[e["tid"]]]
    assert len(workers) == 1
