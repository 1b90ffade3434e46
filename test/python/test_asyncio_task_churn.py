"""asyncio task churn: a server that runs a short task per request, for hours. Each task's ranges
go on a track of its own; a finished task's track goes to a later task, so that tracks, their
names and gpuprobe's memory stay as many as the tasks ever live at once, not one per task."""
import asyncio
import json
import re
import threading

import gpuprobe
from trace_util import load_events, named, thread_names

LIVE = 50  # tasks live at once


def BOUND(live):
    """The most tracks `live` tasks at once may leave behind (python/src/task_tracks.h)."""
    return 2 * (live + max(16, live // 2)) + 64 + 1


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def run_on_new_thread(fn):
    """Runs `fn` on a thread of its own: a thread's task tracks start with it, whatever tasks
    earlier tests ran."""
    errors = []

    def body():
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            errors.append(e)

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if errors:
        raise errors[0]


def task_tracks(chrome):
    """{tid: label} of the trace's asyncio task tracks (threads named "... (asyncio <label>)")."""
    tracks = {}
    for tid, name in thread_names(chrome).items():
        m = re.search(r"\((asyncio .*)\)$", name)
        if m:
            tracks[tid] = m.group(1)
    return tracks


async def request(i):
    with gpuprobe.range("request"):
        await asyncio.sleep(0)
        with gpuprobe.range("handle"):
            pass


async def serve(tasks):
    for _ in range(tasks // LIVE):
        await asyncio.gather(*(request(i) for i in range(LIVE)))


def test_task_churn_keeps_memory_tracks_and_names_bounded(tmp_path):
    chrome, metrics, dump = tmp_path / "t.json", tmp_path / "m.prom", tmp_path / "dump"
    rss = []

    def churn():
        asyncio.run(serve(20_000))
        rss.append(rss_bytes())
        asyncio.run(serve(200_000))
        rss.append(rss_bytes())

    with gpuprobe.Session(f"chrome={chrome},metrics_file={metrics},flight=30,dump={dump}"):
        run_on_new_thread(churn)
        grown = rss[1] - rss[0]
        text = metrics.read_text()
    # The old code held a track, a name and per-track rows for every task: +30 MB over these
    # 200 000 tasks, and past 65 536 names every new one was "<name table full>". What is left to
    # grow is the flight recorder's events (under 10 bytes a range).
    assert grown < 20 << 20, f"resident memory grew {grown >> 20} MiB over 200 000 tasks"
    assert "<name table full>" not in text
    raw = chrome.read_text()
    assert "<name table full>" not in raw
    assert len(named(load_events(chrome), "request")) == 220_000
    # Tasks keep to a few tracks, as many as the tasks live at once (and finished ones not yet
    # given back, at most half as many, or 16) and 64 spares — here all of one label.
    tracks = task_tracks(chrome)
    assert 0 < len(tracks) <= BOUND(LIVE), len(tracks)
    # Named after the coroutine: asyncio's default task names (Task-12345) are new per task.
    assert all(name.endswith("request") for name in tracks.values()), set(tracks.values())
    assert json.loads(raw)["traceEvents"]


def test_a_reused_track_never_holds_two_live_tasks(tmp_path):
    # Tasks overlap in waves; each finished wave's tracks go to the next. On every track, the
    # ranges of one task nest and never overlap another task's: no two tasks share a track at once.
    chrome = tmp_path / "t.json"

    async def task(wave, i):
        with gpuprobe.range(f"task {wave}.{i}"):
            await asyncio.sleep(0.001 * (i % 3))
            with gpuprobe.range("inner"):
                await asyncio.sleep(0)

    async def main():
        for wave in range(40):
            await asyncio.gather(*(task(wave, i) for i in range(10)))

    with gpuprobe.Session(f"chrome={chrome}"):
        run_on_new_thread(lambda: asyncio.run(main()))
    events = [e for e in load_events(chrome) if e.get("ph") == "X"]
    tracks = task_tracks(chrome)
    by_tid = {}
    for e in events:
        by_tid.setdefault(e["tid"], []).append(e)
    assert 0 < len(tracks) < 40 * 10  # reused
    assert set(by_tid) <= set(tracks)  # every range here is a task's, on a task's track
    for tid in tracks:
        outer = sorted((e for e in by_tid[tid] if e["name"].startswith("task ")),
                       key=lambda e: e["ts"])
        for a, b in zip(outer, outer[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-3, (a, b)  # one task after the other
        for e in by_tid[tid]:
            if e["name"] == "inner":
                assert sum(o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"] + 1e-3
                           for o in outer) == 1


def test_named_tasks_keep_their_names_and_unique_names_stay_bounded(tmp_path):
    # A task the program named keeps its name on its track; a program that names every task
    # uniquely ("conn 12345") gets its first names, then tracks named "asyncio task", never one
    # track or name per task.
    chrome, metrics = tmp_path / "t.json", tmp_path / "m.prom"

    async def conn():
        with gpuprobe.range("conn"):
            await asyncio.sleep(0)

    async def main():
        for wave in range(400):
            await asyncio.gather(*(asyncio.create_task(conn(), name=f"conn {wave}.{i}")
                                   for i in range(10)))

    with gpuprobe.Session(f"chrome={chrome},metrics_file={metrics}"):
        run_on_new_thread(lambda: asyncio.run(main()))
    tracks = task_tracks(chrome)
    assert "asyncio conn 0.0" in tracks.values()
    assert "asyncio task" in tracks.values()
    assert len(tracks) <= BOUND(10), len(tracks)
    assert len(named(load_events(chrome), "conn")) == 4000


def test_a_new_session_gives_free_tracks_new_labels(tmp_path):
    # The program's first tasks leave free tracks behind, labelled after them; in the next session
    # those tracks go to whatever tasks come, under those tasks' labels.
    first, second = tmp_path / "first.json", tmp_path / "second.json"

    async def wave(coroutine, count):
        await asyncio.gather(*(coroutine() for _ in range(count)))

    async def burst():
        with gpuprobe.range("burst"):
            await asyncio.sleep(0)

    async def later():
        with gpuprobe.range("later"):
            await asyncio.sleep(0)

    def both():
        with gpuprobe.Session(f"chrome={first}"):
            for _ in range(5):
                asyncio.run(wave(burst, 100))
        with gpuprobe.Session(f"chrome={second}"):
            for _ in range(5):
                asyncio.run(wave(later, 100))

    run_on_new_thread(both)
    old, new = task_tracks(first), task_tracks(second)
    assert set(old.values()) == {"asyncio " + burst.__qualname__}
    assert set(new.values()) == {"asyncio " + later.__qualname__}
    # The same tracks (thread ids), relabelled — some more, as finished tasks are given back in
    # batches (a loaded machine gave 27 new beside the reused ones): the union stays bounded.
    assert len(set(new) & set(old)) > 16, (len(set(new) - set(old)), len(set(new) & set(old)))
    assert len(set(old) | set(new)) <= BOUND(100)
