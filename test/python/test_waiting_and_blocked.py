"""Waiting told from working (sched=): a slow request's time split into running, waiting for a
CPU and blocked, from the scheduler's per-thread counters, and what ran meanwhile named — on
three planted workloads whose split the test measures itself (the request thread's own
/proc/thread-self/schedstat and clock around the request), and a clean one where nothing is
blamed:

- a lock held for 29 ms by another thread inside its range "hold lock" (blocked; the holder named),
- another process spinning on the request thread's only CPU (waiting for a CPU),
- another Python thread spinning while the request computes in Python (blocked on the GIL; the
  thread that ran named)."""
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

import gpuprobe

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
SCHEDSTAT = pathlib.Path("/proc/thread-self/schedstat")
pytestmark = pytest.mark.skipif(not SCHEDSTAT.exists(),
                                reason="skipped: no /proc/thread-self/schedstat on this kernel")
REQUESTS, PLANTED = 120, 100


def own_counters():
    running, waiting, _ = SCHEDSTAT.read_text().split()
    return int(running), int(waiting), time.monotonic_ns()


def burn(seconds):
    """Spends `seconds` of this thread's CPU time, however long that takes on the clock."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def serve(trace, work, planted, before_planted=lambda: None, after_planted=lambda: None,
          every=None):
    """REQUESTS requests on this thread, each `work` seconds of CPU in a child range; the
    planted one runs `planted` inside it. Returns the planted request's split as this thread
    measured it (ms); `every`, a list, also gets each request's."""
    truth = {}
    with gpuprobe.Session(f"chrome={trace},sched=1ms"):
        gpuprobe.set_thread_name("server")
        for i in range(REQUESTS):
            if i == PLANTED:
                before_planted()
            with gpuprobe.range("request"):
                start = own_counters()  # inside: the range's own span, less a few bytecodes
                with gpuprobe.range("compute"):
                    burn(work)
                if i == PLANTED:
                    planted()
                end = own_counters()
            running, waiting = (end[0] - start[0]) / 1e6, (end[1] - start[1]) / 1e6
            wall = (end[2] - start[2]) / 1e6
            split = {"wall": wall, "running": running, "waiting": waiting,
                     "blocked": wall - running - waiting}
            if every is not None:
                every.append(split)
            if i == PLANTED:
                after_planted()
                truth = split
    return truth


def close_to(reported, truth, outlier):
    """Within 20 % of what the thread measured, plus what its measure missed: the bytecodes
    between the range's edges and its reads, where another thread may have had the GIL."""
    return abs(reported - truth["blocked_or_waiting"]) <= 0.2 * truth["blocked_or_waiting"] + (
        outlier["duration_ms"] - truth["wall"])


def planted_outlier(trace, truth):
    """The report's outlier that is the planted request: of the outliers, the one closest in
    length to it (on a loaded machine another request can be slower still). Its length is the
    thread's measure, plus what happened between the range's edges and the thread's reads (a
    preemption there)."""
    report = json.loads(subprocess.run(
        [str(BUILD / "gpuprobe"), "report", "--json", "--latency", "request", str(trace)],
        capture_output=True, text=True, check=True).stdout)
    outlier = min(report["jitter"]["outliers"],
                  key=lambda o: abs(o["duration_ms"] - truth["wall"]))
    # (a loaded machine preempted the thread there by 20 ms and more beside a running build)
    assert truth["wall"] * 0.98 <= outlier["duration_ms"] <= truth["wall"] * 1.5 + 5, (
        outlier, truth)
    return outlier, {c["cause"]: c for c in outlier["causes"]}


def test_blocked_on_a_lock_names_the_holder(tmp_path):
    lock, go, held = threading.Lock(), threading.Event(), threading.Event()

    def holder():
        gpuprobe.set_thread_name("lock holder")
        go.wait()
        with gpuprobe.range("hold lock"):
            with lock:
                held.set()
                time.sleep(0.029)

    thread = threading.Thread(target=holder)
    thread.start()

    def planted():
        with lock:
            pass

    def before():
        go.set()
        held.wait()

    truth = serve(tmp_path / "t.json", 0.003, planted, before)
    thread.join()
    outlier, causes = planted_outlier(tmp_path / "t.json", truth)
    assert truth["blocked"] > 20  # the plant worked: the request slept on the lock
    truth["blocked_or_waiting"] = truth["blocked"]
    assert close_to(causes["blocked"]["overlap_ms"], truth, outlier), (causes, truth)
    # The holder slept with the lock: named as off a CPU, inside its range.
    assert outlier["blocked_behind"]["range"] == "hold lock", outlier
    assert outlier["blocked_behind"]["thread"] == "lock holder"
    assert '"hold lock" was open, off a CPU, on lock holder' in causes["blocked"]["detail"]
    # Not called a CPU gap: what is left of it is what the request computed beyond the usual.
    assert causes.get("CPU gap", {"overlap_ms": 0})["overlap_ms"] < 0.2 * truth["blocked"]


def test_waiting_for_a_cpu_another_process_holds(tmp_path):
    cpu = sorted(os.sched_getaffinity(0))[0]
    before_affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})  # this thread only
    spinner = []

    def before():
        spinner.append(subprocess.Popen(
            [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"]))
        time.sleep(0.2)  # it runs, pinned beside this thread

    def after():
        spinner[0].kill()
        spinner[0].wait()

    try:
        truth = serve(tmp_path / "t.json", 0.025, lambda: burn(0.025), before, after)
    finally:
        os.sched_setaffinity(0, before_affinity)
        for p in spinner:
            p.kill()
    outlier, causes = planted_outlier(tmp_path / "t.json", truth)
    assert truth["waiting"] > 15  # the plant worked: half the CPU went to the spinner
    truth["blocked_or_waiting"] = truth["waiting"]
    assert close_to(causes["waiting for a CPU"]["overlap_ms"], truth, outlier), (causes, truth)
    assert "CPU gap" not in causes or causes["CPU gap"]["overlap_ms"] < 0.3 * truth["wall"]


def test_blocked_on_the_gil_names_the_thread_that_ran(tmp_path):
    stop, started = threading.Event(), threading.Event()

    def hog():
        gpuprobe.set_thread_name("gil hog")
        started.set()
        with gpuprobe.range("hog"):
            while not stop.is_set():
                pass

    thread = threading.Thread(target=hog)

    def before():
        thread.start()
        started.wait()

    truth = serve(tmp_path / "t.json", 0.010, lambda: burn(0.030), before, stop.set)
    thread.join()
    outlier, causes = planted_outlier(tmp_path / "t.json", truth)
    assert truth["blocked"] > 10  # the plant worked: the GIL went to the hog in turns
    truth["blocked_or_waiting"] = truth["blocked"]
    assert close_to(causes["blocked"]["overlap_ms"], truth, outlier), (causes, truth)
    # The hog named: as the thread on a CPU meanwhile, or (a loaded machine, where the hog itself
    # waits for a CPU while it holds the GIL) as the range it waited behind.
    assert ("gil hog was on a CPU" in causes["blocked"]["detail"] or
            outlier.get("blocked_behind", {}).get("thread") == "gil hog"), (causes, outlier)


def test_a_clean_run_blames_neither(tmp_path):
    # Nothing planted: whatever is named must have happened — on a busy machine a request does
    # wait for a CPU now and then, and the thread's own counters say so too.
    every = []
    serve(tmp_path / "t.json", 0.003, lambda: burn(0.003), every=every)
    report = json.loads(subprocess.run(
        [str(BUILD / "gpuprobe"), "report", "--json", "--latency", "request",
         str(tmp_path / "t.json")], capture_output=True, text=True, check=True).stdout)
    assert report["cpu_state"]["threads_sampled"] >= 1
    # Each outlier against the request whose length by this thread's clock is closest to it.
    # Beside what the thread measured, the report may see what happened between the range's
    # edges and the thread's reads (a preemption there: its wait is in the range, not in the
    # reads' difference) and about two sampling periods.
    for outlier in report["jitter"]["outliers"]:
        truth = min(every, key=lambda split: abs(split["wall"] - outlier["duration_ms"]))
        outside = max(outlier["duration_ms"] - truth["wall"], 0.0)
        for c in outlier["causes"]:
            if c["cause"] in ("blocked", "waiting for a CPU"):
                measured = truth["blocked" if c["cause"] == "blocked" else "waiting"]
                assert measured + outside + 2.0 >= 0.5 * c["overlap_ms"], (c, truth, outlier)
