"""`gpuprobe report --torch-flight-recorder DIR` on PyTorch's own flight recorder dumps of a real
two-process torch.distributed job (gloo, on the CPU) with a planted hang: rank 1 skips one
all-reduce, rank 0's times out, both dump. The first collective a rank never joined is checked
against the dumps read with Python's pickle and against PyTorch's own analyzer (fr_trace), and
placed on the gpuprobe traces the ranks recorded."""
import json
import os
import pathlib
import pickle
import re
import shutil
import subprocess
import sys

import pytest

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def hang(tmp_path_factory):
    pytest.importorskip("torch")
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("skipped: this torch has no gloo backend")
    out = tmp_path_factory.mktemp("hang")
    # Step 2's all-reduce: rank 1 sleeps in its place past the 3 s timeout.
    subprocess.run([sys.executable, str(HERE / "dist_workload.py"), str(out), "--backend", "gloo",
                    "--world", "2", "--steps", "4", "--recorder", "gpuprobe", "--hang-step", "2",
                    "--hang-rank", "1", "--timeout", "3"],
                   check=True, capture_output=True, timeout=300)
    return out


def report(directory):
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", "--torch-flight-recorder",
                          str(directory),
                          "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_the_rank_that_skipped_a_collective_is_named(hang):
    dumps = {r: pickle.load(open(hang / f"fr_rank_{r}", "rb")) for r in (0, 1)}
    seqs = {r: [e["collective_seq_id"] for e in d["entries"] if e["process_group"][0] == "0"]
            for r, d in dumps.items()}
    # What the dumps hold, read by Python: rank 0 issued one collective more than rank 1.
    assert max(seqs[0]) == max(seqs[1]) + 1
    r = report(hang)
    assert r["schema"] == "gpuprobe.collectives/1"
    assert r["ranks"] == [0, 1]
    assert r["version"] == dumps[0]["version"]
    g = r["groups"][r["first_mismatch"]]
    assert g["process_group"] == "0" and g["desc"] == "default_pg"
    assert g["matched"] == max(seqs[1]) - min(seqs[1]) + 1
    m = g["mismatch"]
    assert m["kind"] == "missing"
    assert m["seq"] == max(seqs[0])
    assert m["missing"] == [1]
    assert [j["rank"] for j in m["joined"]] == [0]
    last0 = dumps[0]["entries"][-1]
    assert m["joined"][0]["name"] == last0["profiling_name"] == "gloo:all_reduce"
    assert m["joined"][0]["created_ns"] == m["created_ns"] == last0["time_created_ns"]
    assert m["joined"][0]["where"].startswith("dist_workload.py:")
    assert m["last_of_missing"][0]["seq"] == max(seqs[1])


def test_it_agrees_with_pytorchs_own_analyzer(hang, tmp_path):
    fr_trace = pytest.importorskip("torch.distributed.flight_recorder.fr_trace")
    # PyTorch's gloo recorder writes its process groups' config under an empty name, which its
    # analyzer cannot look up (KeyError): give it the config from the entries, as NCCL's dumps
    # carry it. Our reader needs no such help.
    for r in (0, 1):
        d = pickle.load(open(hang / f"fr_rank_{r}", "rb"))
        if "0" not in d["pg_config"]:
            d["pg_config"] = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}}
        pickle.dump(d, open(tmp_path / f"fr_rank_{r}", "wb"))
    text = subprocess.run([sys.executable, "-m", fr_trace.__name__, str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    said = text.stdout + text.stderr
    seq = re.search(r"Not all ranks joining collective, sequence number: (\d+)", said)
    missing = re.search(r"missing ranks: \{([\d, ]+)\}", said)
    assert seq and missing, said
    m = report(hang)["groups"][0]["mismatch"]
    assert m["seq"] == int(seq.group(1))
    assert m["missing"] == [int(x) for x in missing.group(1).split(",")]


def test_the_mismatch_is_placed_on_gpuprobes_timeline(hang):
    timeline = {t["rank"]: t for t in report(hang)["timeline"]}
    assert sorted(timeline) == [0, 1]
    # Rank 0 was inside its all-reduce (it waited there until the timeout); rank 1 never
    # entered one: it was computing, then went into the planted range instead.
    assert [o["name"] for o in timeline[0]["open"]] == ["all_reduce"]
    in_rank1 = [o["name"] for o in timeline[1]["open"]]
    nxt = timeline[1]["next"]
    assert "all_reduce" not in in_rank1
    assert "planted hang: sleeps instead of joining" in in_rank1 or \
        nxt["name"] == "planted hang: sleeps instead of joining"


def test_text_report_and_bad_directories(hang, tmp_path):
    # --flight-recorder: the flag's earlier name, still accepted.
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", "--flight-recorder", str(hang)],
                         check=True, capture_output=True, text=True).stdout
    assert "first mismatch: process group 0 (default_pg), collective" in out
    assert "rank 1 never joined" in out
    shutil.copy(hang / "rank0.json", tmp_path / "rank0.json")
    bad = subprocess.run([str(BUILD / "gpuprobe"), "report", "--torch-flight-recorder",
                          str(tmp_path)],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "no flight recorder dumps" in bad.stderr
    (tmp_path / "fr_rank_0").write_bytes(b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.")
    bad = subprocess.run([str(BUILD / "gpuprobe"), "report", "--torch-flight-recorder",
                          str(tmp_path)],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "not a reference to os.system" in bad.stderr


def test_a_rank_without_a_dump_is_not_called_healthy(hang, tmp_path):
    # As on the first NCCL run (two H200s): the rank stuck in the collective wrote no dump, and
    # the one dump there agrees with itself, which must not read as "no hang". NCCL's dumps list
    # the group's ranks in pg_config (gloo's file them under an empty name: filled in here).
    d = pickle.load(open(hang / "fr_rank_1", "rb"))
    d["pg_config"] = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}}
    pickle.dump(d, open(tmp_path / "fr_rank_1", "wb"))
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", "--torch-flight-recorder",
                          str(tmp_path)],
                         check=True, capture_output=True, text=True).stdout
    assert "no dump from rank 0, not judged" in out
    assert "rank 0 wrote no dump, so this does not rule out a hang" in out
    assert "no hang or desync" not in out
    r = report(tmp_path)
    assert r["first_mismatch"] is None or r["first_mismatch"] < 0
    assert r["groups"][0]["without_dump"] == [0]


def _nccl_like_dump(path, entries):
    """A dump shaped as NCCL's recorder writes it (pg_config lists the group's ranks; sends and
    receives name their peers in the group's ranks): gloo's recorder keeps no point-to-point
    operations, so these come from the fields NCCL's dumps carry."""
    frames = [{"name": "all_reduce", "filename": "/x/site-packages/torch/distributed/c10d.py",
               "line": 10}, {"name": "exchange", "filename": "/home/u/pipeline.py", "line": 7}]
    rows = []
    for i, (name, seq, p2p_seq, created) in enumerate(entries):
        rows.append({"record_id": i, "pg_id": 0, "process_group": ("0", "default_pg"),
                     "collective_seq_id": seq, "p2p_seq_id": p2p_seq, "op_id": i + 1,
                     "profiling_name": name, "time_created_ns": created,
                     "input_sizes": [[256]], "input_dtypes": ["Float"],
                     "output_sizes": [[256]], "output_dtypes": ["Float"], "state": "scheduled",
                     "time_discovered_started_ns": None, "time_discovered_completed_ns": None,
                     "retired": False, "timeout_ms": 600000, "is_p2p": "send" in name or "recv" in name,
                     "frames": frames})
    dump = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg",
                                                   "ranks": "[0, 1]"}},
            "pg_status": {}, "entries": rows}
    path.write_bytes(pickle.dumps(dump, protocol=2))


def test_a_send_no_receive_met_is_named(tmp_path):
    # Rank 0 sends to rank 1 twice; rank 1 received the first, then went into an all-reduce
    # (after rank 0's second send, which it never received: that is the first mismatch).
    ms = 1_000_000
    _nccl_like_dump(tmp_path / "fr_rank_0", [("nccl:all_reduce", 1, 0, 1 * ms),
                                            ("nccl:send 0->1", 1, 1, 2 * ms),
                                            ("nccl:send 0->1", 1, 2, 4 * ms)])
    _nccl_like_dump(tmp_path / "fr_rank_1", [("nccl:all_reduce", 1, 0, 1 * ms),
                                            ("nccl:recv 1<-0", 1, 1, 2 * ms),
                                            ("nccl:all_reduce", 2, 1, 5 * ms)])
    r = report(tmp_path)
    assert r["first_mismatch_kind"] == "p2p"
    g = r["groups"][r["first_mismatch"]]
    assert (g["p2p"], g["p2p_matched"]) == (3, 1)
    m = g["p2p_mismatch"]
    assert (m["kind"], m["src"], m["dst"], m["index"]) == ("unreceived", 0, 1, 1)
    assert m["sides"][0]["where"] == "pipeline.py:7 in exchange"
    assert m["last_of_missing"]["name"] == "nccl:all_reduce"
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", "--torch-flight-recorder",
                          str(tmp_path)],
                         check=True, capture_output=True, text=True).stdout
    assert ("collectives 1..2 held by every buffer, 1 joined alike by every rank, collective 2 "
            "not; point-to-point: 1 sends met by their receives, not operation 2 from rank 0 to "
            "rank 1") in out
    assert ("first mismatch: process group 0 (default_pg), point-to-point from rank 0 to rank 1, "
            "operation 2 of the pair: rank 1 never posted the receive") in out
    assert "rank 1's last operation: collective 2 nccl:all_reduce" in out
    assert "issued 1.0 ms after" in out


def test_a_hang_in_a_send_over_gloo_is_not_called_healthy_without_saying_why(tmp_path):
    # Rank 1 skips its send at step 2; rank 0's receive times out. gloo's recorder keeps no
    # sends or receives, so the dumps agree: the report says what it cannot see.
    pytest.importorskip("torch")
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("skipped: this torch has no gloo backend")
    done = subprocess.run([sys.executable, str(HERE / "dist_workload.py"), str(tmp_path),
                           "--backend", "gloo", "--world", "2", "--steps", "4", "--recorder",
                           "gpuprobe", "--p2p", "--hang-step", "2", "--hang-op", "send",
                           "--timeout", "3"], check=True, capture_output=True, text=True,
                          timeout=300)
    assert "rank 0: timed out" in done.stdout
    r = report(tmp_path)
    assert r["backend"] == "gloo" and r["first_mismatch"] == -1
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", "--torch-flight-recorder",
                          str(tmp_path)],
                         check=True, capture_output=True, text=True).stdout
    assert "gloo's flight recorder keeps no sends or receives" in out


def _events(path):
    return json.loads(pathlib.Path(path).read_text())["traceEvents"]


def test_merge_puts_the_recorders_entries_on_each_ranks_trace(hang, tmp_path):
    # Rank 0's dump, rewritten as NCCL's looks while a collective hangs: the last entry issued,
    # started, never retired. gloo's recorder retires a collective that failed.
    shutil.copy(hang / "fr_rank_1", tmp_path / "fr_rank_1")
    d = pickle.load(open(hang / "fr_rank_0", "rb"))
    d["entries"][-1].update(state="started", retired=False)
    pickle.dump(d, open(tmp_path / "fr_rank_0", "wb"))
    for r in (0, 1):
        shutil.copy(hang / f"rank{r}.json", tmp_path / f"rank{r}.json")
    merged = tmp_path / "merged"
    out = subprocess.run([str(BUILD / "gpuprobe"), "report", "--torch-flight-recorder",
                          str(tmp_path),
                          "--merge", str(merged)], check=True, capture_output=True, text=True)
    assert f"wrote {merged / 'rank0.json'}: " in out.stdout
    r = report(tmp_path)
    g = r["groups"][r["first_mismatch"]]
    seq = g["mismatch"]["seq"]
    for rank in (0, 1):
        before, after = _events(tmp_path / f"rank{rank}.json"), _events(merged / f"rank{rank}.json")
        names = {e["args"]["name"] for e in after if e.get("ph") == "M" and e["name"] == "thread_name"}
        assert any("(PyTorch flight recorder: process group 0 (default_pg))" in n for n in names), names
        track = {e["tid"] for e in after if e.get("ph") == "M" and e["name"] == "thread_name"
                 and "flight recorder" in e["args"]["name"]}
        added = [e for e in after if e.get("tid") in track and e.get("ph") != "M"]
        # Everything the rank recorded is still there; the recorder's events are on their track.
        assert len([e for e in after if e.get("ph") != "M"]) == \
            len([e for e in before if e.get("ph") != "M"]) + len(added)
        issued = [e["name"] for e in added if e["ph"] == "i" and "(collective" in e["name"]]
        assert issued and all(n.startswith("gloo:all_reduce (collective ") for n in issued)
        mark = [e for e in added if e["name"].startswith("first mismatch")]
        if rank == 0:
            assert f"gloo:all_reduce (collective {seq})" in issued
            assert [m["name"] for m in mark] == [f"first mismatch: collective {seq}: rank 1 never joined"]
            # The collective still waiting at the dump: from when it was issued to the trace's end.
            waiting = [e for e in added if e["ph"] == "X"]
            assert [w["name"] for w in waiting] == [f"waiting since issued: gloo:all_reduce (collective {seq})"]
            end = max(e["ts"] + e.get("dur", 0) for e in before if e.get("ph") in ("X", "i"))
            assert waiting[0]["ts"] == pytest.approx(mark[0]["ts"], abs=0.01)
            assert waiting[0]["ts"] + waiting[0]["dur"] == pytest.approx(end, abs=0.01)
        else:
            assert f"gloo:all_reduce (collective {seq})" not in issued  # it never joined
    # The merged traces are gpuprobe traces: they convert to Perfetto and read back.
    pf = tmp_path / "rank0.pftrace"
    subprocess.run([str(BUILD / "gpuprobe"), "convert", str(merged / "rank0.json"), str(pf)],
                   check=True, capture_output=True)
    back = subprocess.run([str(BUILD / "gpuprobe"), "report", str(pf), "--json"], check=True,
                          capture_output=True, text=True).stdout
    ranges = {x["name"] for x in json.loads(back)["ranges"]}
    assert f"waiting since issued: gloo:all_reduce (collective {seq})" in ranges
    bad = subprocess.run([str(BUILD / "gpuprobe"), "report", str(tmp_path), "--merge", str(merged)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--torch-flight-recorder" in bad.stderr
