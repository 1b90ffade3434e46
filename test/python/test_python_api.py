"""`import gpuprobe`: the C++ library's API from Python — sessions, ranges (context manager and
decorator), instants, counters, steps, GC pauses, the GPUPROBE variable, the profiling schedule —
with Python and C++ events in the same rings and files."""
import gc
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

import gpuprobe
from trace_util import inside, load_events, named, thread_names


def test_python_and_cpp_ranges_nest_on_one_timeline(tmp_path):
    path = tmp_path / "t.json"

    def python_inner():
        with gpuprobe.range("python inner"):
            return 42

    with gpuprobe.Session(f"chrome={path}"):
        with gpuprobe.range("python outer"):
            assert gpuprobe._core._cpp_scope("cpp middle", python_inner) == 42
            gpuprobe.range("unused")  # creating a range records nothing
    events = load_events(path)
    outer = named(events, "python outer")[0]
    middle = named(events, "cpp middle")[0]
    inner = named(events, "python inner")[0]
    assert outer["cat"] == "python" and middle["cat"] == "user_annotation"
    assert inside(middle, outer) and inside(inner, middle)
    assert not named(events, "unused")


def test_context_manager_decorator_instant_counter_step(tmp_path):
    path = tmp_path / "t.json"

    @gpuprobe.range("fib")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    with gpuprobe.Session(f"chrome={path}"):
        with gpuprobe.range("work", "app"):
            assert fib(5) == 5
            gpuprobe.instant("checkpoint")
            gpuprobe.counter("queue", 7)
        gpuprobe.step()
        with gpuprobe.range("second step"):
            pass
        gpuprobe.step()
    events = load_events(path)
    work = named(events, "work")[0]
    fibs = named(events, "fib")
    assert len(fibs) == 15  # calls of fib(5), recursion included
    assert all(inside(f, work) for f in fibs)
    assert fib.__name__ == "fib"  # functools.wraps
    assert named(events, "checkpoint")[0]["ph"] == "i"
    assert named(events, "queue")[0]["args"]["queue"] == 7
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    assert [s["name"] for s in steps] == ["ProfilerStep#0", "ProfilerStep#1"]
    assert inside(work, steps[0]) and inside(named(events, "second step")[0], steps[1])


def test_threads_record_their_own_ranges(tmp_path):
    path = tmp_path / "t.json"

    def worker(i):
        gpuprobe.set_thread_name(f"worker {i}")
        for _ in range(100):
            with gpuprobe.range("job"):
                pass

    with gpuprobe.Session(f"chrome={path}") as s:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = s.stats()
    assert len(named(load_events(path), "job")) == 400
    assert stats["dropped"] == 0


def test_ranges_built_per_request_keep_their_names_and_categories(tmp_path):
    # A range built anew each time finds its name's site by the str object: across sessions
    # (each interns its names again), with one str under two categories, with more names than
    # the module keeps sites for, and with names made at run time and freed after use.
    # A session frees the names the one before it did not look up: a site kept past its session
    # would point at freed memory, which the names interned first in the next session reuse.
    name = "per request"
    for i in range(4):
        path = tmp_path / f"t{i}.json"
        with gpuprobe.Session(f"chrome={path}"):
            for k in range(200):
                with gpuprobe.range(f"made {i}.{k}"):
                    pass
            for _ in range(3):
                with gpuprobe.range(name):
                    pass
            with gpuprobe.range(name, category="app"):
                pass
            for k in range(200):
                with gpuprobe.range(f"made {i}.{k}"):  # a second, equal str each time
                    pass
        events = load_events(path)
        cats = sorted(e["cat"] for e in named(events, name))
        assert cats == ["python", "python", "python", "user_annotation"], i
        for k in range(200):
            made = named(events, f"made {i}.{k}")
            assert len(made) == 2 and {e["cat"] for e in made} == {"python"}, (i, k)


def test_ranges_nested_deeper_than_the_threads_inline_stack_nest_and_end_in_any_order(tmp_path):
    # A thread keeps its first 16 open ranges inline and moves them to the heap beyond that:
    # recursion 60 deep through one decorated function, on the main thread and on two threads
    # that end (freeing their stack) while the session records, and exits out of order — an
    # outer range ended while deeper ones stay open — across the move.
    path = tmp_path / "t.json"

    @gpuprobe.range("level")
    def level(n):
        if n > 1:
            level(n - 1)

    def body():
        level(60)
        outer = gpuprobe.range("outer")
        outer.__enter__()
        inner = [gpuprobe.range(f"inner {k}") for k in range(20)]
        for r in inner:
            r.__enter__()
        outer.__exit__(None, None, None)  # out of order: the 20 inner ranges stay open
        for r in reversed(inner):
            r.__exit__(None, None, None)

    with gpuprobe.Session(f"chrome={path}"):
        body()
        threads = [threading.Thread(target=body) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        body()  # the main thread again, its stack already on the heap
    events = load_events(path)
    for tid in {e["tid"] for e in named(events, "outer")}:
        levels = sorted((e for e in named(events, "level") if e["tid"] == tid),
                        key=lambda e: e["ts"])
        assert len(levels) % 60 == 0 and levels, tid
        for call in range(len(levels) // 60):
            chain = levels[60 * call:60 * (call + 1)]
            for parent, child in zip(chain, chain[1:]):
                assert inside(child, parent)
    assert len(named(events, "outer")) == 4
    for k in range(20):
        inner = named(events, f"inner {k}")
        assert len(inner) == 4
        for e in inner:  # ended by its own exit, after the outer range's
            (outer,) = [o for o in named(events, "outer") if o["tid"] == e["tid"] and
                        o["ts"] <= e["ts"] <= o["ts"] + o["dur"]]
            assert e["ts"] + e["dur"] >= outer["ts"] + outer["dur"]


def test_a_range_built_from_one_str_is_one_object(tmp_path):
    # gpuprobe.range("name") gives back the object it built last for that str object: a serving
    # loop's per-request range allocates nothing and looks its name up once a session. Another
    # category, or an equal str that is another object, is another range.
    name = "".join(["re", "quest"])  # made at run time: not shared with other tests' literals
    first = gpuprobe.range(name)
    assert gpuprobe.range(name) is first
    assert gpuprobe.range(name, category="app") is not first
    other = "".join(["re", "quest"])
    assert gpuprobe.range(other) is not first and gpuprobe.range(other).name == name
    for i in range(2):
        path = tmp_path / f"t{i}.json"
        with gpuprobe.Session(f"chrome={path}"):
            for _ in range(3):
                with gpuprobe.range(name):
                    pass
        assert [e["cat"] for e in named(load_events(path), name)] == ["python"] * 3


def test_a_ranges_enter_and_exit_work_in_every_form_python_calls_them(tmp_path):
    # __enter__ and __exit__ bind from a free list (range_methods.cc), not as builtin methods:
    # the `with` statement, calls through the object and through the type (contextlib.ExitStack
    # calls `type(cm).__enter__(cm)`), a bound __exit__ held after its range left the cache of
    # range objects (it keeps its range alive), and wrong calls, which raise.
    import contextlib
    import inspect

    path = tmp_path / "t.json"
    rng = gpuprobe.range("".join(["ex", "it stack"]))
    assert inspect.ismethoddescriptor(gpuprobe.range.__enter__)
    assert gpuprobe.range.__exit__.__name__ == "__exit__"
    assert "Closes" in gpuprobe.range.__exit__.__doc__
    assert rng.__enter__.__self__ is rng and "bound method range.__enter__" in repr(rng.__enter__)
    with gpuprobe.Session(f"chrome={path}"):
        with contextlib.ExitStack() as stack:
            assert stack.enter_context(rng) is rng
        assert rng.__enter__() is rng and rng.__exit__(None, None, None) is False
        assert gpuprobe.range.__enter__(rng) is rng
        assert gpuprobe.range.__exit__(rng, None, None, None) is False
        held_name = "".join(["held ", "exit"])
        held = gpuprobe.range(held_name)
        exit_later = held.__exit__
        held.__enter__()
        del held
        # Other names until one takes its slot of the range cache: then range(held_name) builds a
        # new object, while the bound __exit__ still holds the old one.
        evicted = False
        names = [f"evicting {k}" for k in range(10_000)]  # alive: each at an address of its own
        for k, name in enumerate(names):
            gpuprobe.range(name)
            if k % 50 == 49 and gpuprobe.range(held_name) is not exit_later.__self__:
                evicted = True
                break
        gc.collect()
        assert evicted and exit_later.__self__.name == held_name
        assert exit_later(None, None, None) is False
        with pytest.raises(TypeError, match="no arguments"):
            rng.__enter__(1)
        with pytest.raises(TypeError, match="needs a gpuprobe.range"):
            gpuprobe.range.__enter__(3)
        with pytest.raises(TypeError, match="needs a gpuprobe.range"):
            gpuprobe.range.__exit__()
        with pytest.raises(TypeError, match="keyword"):
            rng.__exit__(exc=None)
        for _ in range(1000):  # bound methods freed and bound again, nested
            with rng, gpuprobe.range("inner"):
                pass
    events = load_events(path)
    assert len(named(events, rng.name)) == 3 + 1000
    assert len(named(events, "held exit")) == 1 and len(named(events, "inner")) == 1000


def test_a_full_name_table_counts_every_range_it_names(tmp_path):
    # A range that got the full table's shared site keeps nothing: each later entry — of a range
    # built anew or of one object — is looked up again and counted, as C++'s are.
    path = tmp_path / "t.json"
    kept = gpuprobe.range("kept object")
    with gpuprobe.Session(f"chrome={path},names=4") as session:
        for k in range(8):
            with gpuprobe.range(f"distinct {k}"):
                pass
        for _ in range(5):
            with gpuprobe.range("constant name"):
                pass
            with kept:
                pass
        overflowed = session.stats()["names_overflowed"]
    events = load_events(path)
    assert len(named(events, "<name table full>")) == overflowed == 4 + 5 + 5
    assert not named(events, "constant name") and not named(events, "kept object")


def test_stats_have_every_gpu_field_the_trace_has(tmp_path):
    # One definition per figure: Session.stats() says what the trace's "gpuprobe" block says,
    # and "dropped" alone is the records lost (never plus the refused buffer requests).
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}") as s:
        stats = s.stats()
    with open(path) as f:
        block = json.load(f)["gpuprobe"]["gpu"]
    assert set(stats["gpu"]) == set(block)
    assert stats["gpu"]["dropped"] == block["dropped"]


def test_gc_pauses_are_ranges_with_counts(tmp_path):
    path = tmp_path / "t.json"
    gpuprobe.watch_gc()
    try:
        with gpuprobe.Session(f"chrome={path}"):
            garbage = [[] for _ in range(1000)]
            for g in garbage:
                g.append(g)  # cycles only the collector frees
            del garbage, g  # `g` would keep the last one alive
            gc.collect()
    finally:
        gpuprobe.unwatch_gc()
    events = load_events(path)
    pauses = named(events, "gc gen2")
    assert pauses and pauses[0]["cat"] == "gc" and pauses[0]["dur"] > 0
    collected = [e["args"]["gc collected"] for e in named(events, "gc collected")]
    # Every cycle is counted, in the explicit pass or in an automatic one the test's own
    # allocations triggered first (seen when other tests ran before it: 999 + 8).
    assert sum(collected) >= 1000


def test_errors_are_python_exceptions(tmp_path):
    with pytest.raises(ValueError, match="ring"):
        gpuprobe.Session("ring=lots")
    with pytest.raises(ValueError, match="unknown config key 'bogus'"):
        gpuprobe.Session("bogus=1")
    with pytest.raises(RuntimeError, match="cannot"):
        gpuprobe.Session("chrome=/proc/nope/t.json")
    with pytest.raises(ValueError, match="category"):
        gpuprobe.range("x", "nonsense")
    with pytest.raises(TypeError):
        gpuprobe.range(42)
    # A second Session while one records is not an error of the program's: it stands down
    # (test_sessions_coexist.py) instead of raising, as it did before issue 40.
    with gpuprobe.Session(f"chrome={tmp_path / 'a.json'}"):
        assert gpuprobe.Session(f"chrome={tmp_path / 'b.json'}").records_into is not None


def test_exceptions_inside_ranges_propagate_and_are_recorded(tmp_path):
    path = tmp_path / "t.json"
    with gpuprobe.Session(f"chrome={path}"):
        with pytest.raises(KeyError):
            with gpuprobe.range("raises"):
                raise KeyError("x")
    assert named(load_events(path), "raises")


def test_environment_variable_starts_a_session(tmp_path):
    path = tmp_path / "env.json"
    code = "import gpuprobe\nwith gpuprobe.range('from env'):\n    pass\n"
    env = dict(os.environ, GPUPROBE=f"chrome={path}")
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert named(load_events(path), "from env")


def test_os_fork_children_exit_and_leave_the_parents_trace_alone(tmp_path):
    # With GPUPROBE set, children of os.fork() run ranges (also on a thread of their own) and
    # exit with sys.exit(): none hangs, and the parent's trace is one document with its events.
    path = tmp_path / "env.json"
    code = (
        "import os, sys, threading, gpuprobe\n"
        "with gpuprobe.range('parent'):\n"
        "    pass\n"
        "children = []\n"
        "for _ in range(5):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        with gpuprobe.range('child'):\n"
        "            t = threading.Thread(target=lambda: gpuprobe.instant('child thread'))\n"
        "            t.start(); t.join()\n"
        "        sys.exit(0)\n"
        "    children.append(pid)\n"
        "for pid in children:\n"
        "    assert os.waitpid(pid, 0)[1] == 0\n"
    )
    env = dict(os.environ, GPUPROBE=f"chrome={path}")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)
    events = load_events(path)  # one JSON document
    assert named(events, "parent") and not named(events, "child")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env.json"]  # no temp files left


def test_ctrl_c_with_gpuprobe_set_writes_the_trace(tmp_path):
    # An uncaught KeyboardInterrupt ends Python by SIGINT after finalizing, where static
    # destructors never run: the package's atexit hook writes the trace first.
    path = tmp_path / "env.json"
    # Python's own SIGINT handler, as an interactive program has it: a test runner started in
    # the background by a non-interactive shell has SIGINT ignored, and Python then keeps it so
    # (the child ran on and exited 0 in such a run).
    code = ("import os, signal, gpuprobe\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "with gpuprobe.range('before ctrl-c'):\n"
            "    pass\n"
            "os.kill(os.getpid(), signal.SIGINT)\n")
    env = dict(os.environ, GPUPROBE=f"chrome={path}")
    env.pop("GPUPROBE_OWNER_PID", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, timeout=60, capture_output=True)
    assert proc.returncode == -signal.SIGINT
    assert named(load_events(path), "before ctrl-c")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env.json"]


def test_a_session_left_open_at_exit_with_a_daemon_thread_is_written(tmp_path):
    path = tmp_path / "t.json"
    code = ("import sys, threading, time, gpuprobe\n"
            f"s = gpuprobe.Session('chrome={path}')\n"
            "def spin():\n"
            "    while True:\n"
            "        with gpuprobe.range('daemon'):\n"
            "            time.sleep(0.001)\n"
            "threading.Thread(target=spin, daemon=True).start()\n"
            "time.sleep(0.05)\n"
            "with gpuprobe.range('main'):\n"
            "    pass\n"
            "sys.exit(0)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    events = load_events(path)
    assert named(events, "main") and named(events, "daemon")


def test_schedule_writes_one_trace_per_active_window(tmp_path):
    sched = gpuprobe.schedule(wait=1, warmup=1, active=2, repeat=2)
    actions = [sched(i).name for i in range(10)]
    assert actions == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"] * 2 + ["NONE", "NONE"]
    out = tmp_path / "tb"
    with gpuprobe.profile(schedule=sched,
                          on_trace_ready=gpuprobe.tensorboard_trace_handler(str(out))) as prof:
        for i in range(10):
            with gpuprobe.range(f"step body {i}"):
                pass
            prof.step()
    files = sorted(out.iterdir())
    assert len(files) == 2 and all(f.name.endswith(".pt.trace.json") for f in files)
    windows = [load_events(f) for f in files]
    bodies = [sorted(e["name"] for e in w if e["name"].startswith("step body")) for w in windows]
    assert bodies == [["step body 2", "step body 3"], ["step body 6", "step body 7"]]
    steps = [sorted(e["name"] for e in w if e["name"].startswith("ProfilerStep")) for w in windows]
    assert steps == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]


def test_a_decorated_function_on_two_threads_records_both_calls_whole(tmp_path):
    # One range object, entered on two threads at once: each thread's entry is its own.
    path = tmp_path / "t.json"

    @gpuprobe.range("work")
    def work(seconds):
        time.sleep(seconds)

    def thread_body(outer_name, seconds):
        with gpuprobe.range(outer_name):
            work(seconds)
            time.sleep(0.02)

    with gpuprobe.Session(f"chrome={path}"):
        threads = [threading.Thread(target=thread_body, args=(f"outer {i}", 0.05 + 0.05 * i))
                   for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    events = load_events(path)
    works = sorted(named(events, "work"), key=lambda e: e["dur"])
    assert len(works) == 2
    assert works[0]["dur"] >= 50_000 and works[1]["dur"] >= 100_000
    for i, w in enumerate(works):
        (outer,) = named(events, f"outer {i}")
        assert inside(w, outer)
        assert outer["dur"] >= w["dur"] + 20_000  # not cut short by the other thread's exit


def test_asyncio_tasks_get_their_own_durations(tmp_path):
    # Tasks interleave on one thread: each range ends when its own `with` does, never when
    # another task's range exits.
    import asyncio

    path = tmp_path / "t.json"

    async def task(name, seconds):
        with gpuprobe.range(name):
            await asyncio.sleep(seconds)

    async def main():
        await asyncio.gather(task("short", 0.02), task("long", 0.08), task("middle", 0.05))

    with gpuprobe.Session(f"chrome={path}"):
        asyncio.run(main())
    events = load_events(path)
    for name, ms in (("short", 20), ("middle", 50), ("long", 80)):
        (e,) = named(events, name)
        assert ms * 1000 <= e["dur"] < (ms + 40) * 1000, (name, e["dur"])


def test_tasks_entering_one_range_object_each_end_their_own_entry(tmp_path):
    # Interleaved tasks enter one object — gpuprobe.range("name") gives back one object per str,
    # and a decorated coroutine function has one — and the task that entered first exits first:
    # each exit ends its own task's entry, on its own task's track.
    import asyncio

    path = tmp_path / "t.json"
    name = "shared request"

    @gpuprobe.range("shared fetch")
    async def fetch(seconds):
        await asyncio.sleep(seconds)

    async def request(seconds):
        with gpuprobe.range(name):
            await fetch(seconds)

    async def main():
        tasks = [asyncio.create_task(request(s), name=f"request {s}") for s in (0.01, 0.04, 0.025)]
        await asyncio.gather(*tasks)

    with gpuprobe.Session(f"chrome={path}"):
        asyncio.run(main())
    names = thread_names(path)
    events = load_events(path)
    for range_name in (name, "shared fetch"):
        spans = named(events, range_name)
        assert len(spans) == 3
        for e in spans:
            seconds = float(re.search(r"request ([0-9.]+\d)", names[e["tid"]]).group(1))
            assert seconds * 1e6 <= e["dur"] < (seconds + 0.015) * 1e6, (range_name, seconds, e)


def test_asyncio_tasks_record_on_tracks_of_their_own(tmp_path):
    # Interleaved tasks on one thread: on the thread's track one task's range would be drawn as
    # the parent of another's. Each task's ranges go on the task's track, a thread of its own
    # named after the task, nested exactly as the task nested them; code outside any task stays
    # on the thread.
    import asyncio

    chrome, perfetto = tmp_path / "t.json", tmp_path / "t.pftrace"

    async def request(name, pause):
        with gpuprobe.range(f"{name} whole"):
            for i in range(3):
                with gpuprobe.range(f"{name} part {i}"):
                    await asyncio.sleep(pause)
                    with gpuprobe.range(f"{name} compute {i}"):
                        time.sleep(0.001)

    async def main():
        await asyncio.gather(asyncio.create_task(request("a", 0.01), name="fetch a"),
                             asyncio.create_task(request("b", 0.015), name="fetch b"))

    with gpuprobe.Session(f"chrome={chrome},perfetto={perfetto}"):
        with gpuprobe.range("outside the loop"):
            asyncio.run(main())
    names = thread_names(chrome)
    events = load_events(chrome)
    (outside,) = named(events, "outside the loop")
    assert outside["tid"] == threading.get_native_id()
    tids = {}
    for task in ("a", "b"):
        (whole,) = named(events, f"{task} whole")
        tids[task] = whole["tid"]
        assert "fetch " + task in names[whole["tid"]]
        for i in range(3):
            (part,) = named(events, f"{task} part {i}")
            (compute,) = named(events, f"{task} compute {i}")
            assert inside(part, whole) and inside(compute, part)
    assert len({tids["a"], tids["b"], outside["tid"]}) == 3
    # On each track, ranges nest: no two overlap unless one contains the other.
    for tid in tids.values():
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                       if e.get("ph") == "X" and e["tid"] == tid)
        stack = []
        for begin, end in spans:
            while stack and stack[-1] <= begin:
                stack.pop()
            assert not stack or end <= stack[-1] + 1e-3
            stack.append(end)
    # The Perfetto output has the same tracks: gpuprobe's reader turns it back into the same
    # threads and ranges.
    back = tmp_path / "back.json"
    cli = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build")) / "gpuprobe"
    subprocess.run([str(cli), "convert", str(perfetto), str(back)], check=True)
    again = load_events(back)
    for task in ("a", "b"):
        (whole,) = named(again, f"{task} whole")
        for i in range(3):
            assert inside(named(again, f"{task} compute {i}")[0], whole)
    assert named(again, "a whole")[0]["tid"] != named(again, "b whole")[0]["tid"]


def test_a_decorated_coroutine_function_records_its_whole_run(tmp_path):
    # Not just the creation of the coroutine object: the range lasts until it returns, on the
    # task's track.
    import asyncio

    path = tmp_path / "t.json"

    @gpuprobe.range("fetch")
    async def fetch(seconds):
        await asyncio.sleep(seconds)
        return seconds

    async def main():
        return await asyncio.gather(fetch(0.03), fetch(0.01))

    with gpuprobe.Session(f"chrome={path}"):
        assert asyncio.run(main()) == [0.03, 0.01]
    assert asyncio.iscoroutinefunction(fetch) and fetch.__name__ == "fetch"
    spans = sorted(named(load_events(path), "fetch"), key=lambda e: e["dur"])
    assert len(spans) == 2
    assert 10_000 <= spans[0]["dur"] < 40_000 and 30_000 <= spans[1]["dur"] < 70_000
    assert spans[0]["tid"] != spans[1]["tid"]  # two tasks, two tracks
