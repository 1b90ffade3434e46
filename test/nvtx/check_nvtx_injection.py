"""Runs test/nvtx/nvtx_program (plain NVTX3 calls, not linked with gpuprobe) with gpuprobe as its
NVTX tool and checks the Chrome trace: names, nesting, threads, the start/end range ended on
another thread. Usage: check_nvtx_injection.py PROGRAM LIBGPUPROBE_NVTX. Exit 0 when it passes."""
import json
import os
import subprocess
import sys
import tempfile


def run(program, library, trace):
    env = dict(os.environ, NVTX_INJECTION64_PATH=library, GPUPROBE=f"chrome={trace}")
    env.pop("GPUPROBE_OWNER_PID", None)
    subprocess.run([program], env=env, check=True, timeout=120)
    with open(trace, encoding="utf-8") as f:
        data = json.load(f)
    # gpuprobe's own NVTX export declined its own injection: nothing is fed back.
    assert data["gpuprobe"]["nvtx"] is False, data["gpuprobe"]
    return data["traceEvents"]


def check(events):
    ranges = [e for e in events if e.get("ph") == "X"]
    instants = [e for e in events if e.get("ph") in ("i", "I")]

    def one(name, pool=ranges):
        found = [e for e in pool if e.get("name") == name]
        assert len(found) == 1, f"{name!r}: {len(found)} events, want 1"
        return found[0]

    def inside(inner, outer):
        return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]

    outer, inner = one("outer"), one("inner")
    assert outer["tid"] == inner["tid"] and inside(inner, outer), (outer, inner)
    main_tid = outer["tid"]
    mark = one("a mark", instants)
    assert mark["tid"] == main_tid and inner["ts"] <= mark["ts"] <= inner["ts"] + inner["dur"]
    assert one("wide \u00e9t\u00e9")["tid"] == main_tid
    steps = [e for e in ranges if e.get("name") == "mylib: registered step"]
    assert len(steps) == 3 and all(e["tid"] == main_tid for e in steps), steps
    one("mylib: domain mark", instants)
    worker = one("worker range")
    assert worker["tid"] != main_tid, worker
    handed, local = one("handed over"), one("local start/end")
    assert inside(worker, handed), (worker, handed)  # started before it, ended after it
    assert handed["tid"] not in (main_tid, worker["tid"]), handed  # a row of its own
    assert local["tid"] != handed["tid"], (local, handed)  # they overlap: two rows
    assert not [e for e in events if str(e.get("name", "")).startswith("gpuprobe:")]


def run_without_session(program, library):
    """The injection loaded, no GPUPROBE: the program runs as before and nothing is written."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUPROBE")}
    env["NVTX_INJECTION64_PATH"] = library
    done = subprocess.run([program], env=env, timeout=120, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done


def main():
    program, library = sys.argv[1], sys.argv[2]
    run_without_session(program, library)
    with tempfile.TemporaryDirectory() as tmp:
        check(run(program, library, os.path.join(tmp, "nvtx.json")))
    print("nvtx injection: ok")


if __name__ == "__main__":
    main()
