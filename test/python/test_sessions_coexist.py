"""A program's own Session while another session records (the GPUPROBE variable's, or one the
program made earlier) stands down instead of raising: its ranges go to the recording session's
outputs, it says so in one line on stderr, its own outputs are never written, and its stop()
leaves the recording session alone. Config mistakes still raise ValueError, and only raise."""
import os
import subprocess
import sys
import textwrap

import pytest

import gpuprobe
from trace_util import load_events, named

SCRIPT = textwrap.dedent("""
    import sys
    import gpuprobe

    own = sys.argv[1]
    with gpuprobe.Session(f"chrome={own}") as s:
        assert s.records_into is not None
        assert s.running
        with gpuprobe.range("script work"):
            pass
        s.flush()
        assert s.stats()["written"] >= 0
    assert not s.running
    s.stop()  # again: still nothing raised
    with gpuprobe.range("after the script's session"):
        pass  # the environment's session still records
    print("script done")
""")


def test_environment_session_and_a_scripts_session_coexist(tmp_path):
    env_trace, own_trace = tmp_path / "env.json", tmp_path / "own.json"
    env = dict(os.environ, GPUPROBE=f"chrome={env_trace}")
    env.pop("GPUPROBE_OWNER_PID", None)
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(own_trace)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "script done" in result.stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith("gpuprobe:")]
    assert len(lines) == 1, result.stderr
    assert "stands down" in lines[0]
    assert "GPUPROBE environment variable" in lines[0] and str(env_trace) in lines[0]
    assert f"chrome={own_trace}" in lines[0] and "will not be written" in lines[0]
    events = load_events(env_trace)
    assert len(named(events, "script work")) == 1
    assert len(named(events, "after the script's session")) == 1
    assert not own_trace.exists()


def test_a_second_session_stands_down_and_its_stop_stops_nothing(tmp_path, capfd):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    with gpuprobe.Session(f"chrome={first}") as outer:
        assert outer.records_into is None
        inner = gpuprobe.Session(f"chrome={second}")
        err = capfd.readouterr().err
        assert err.count("stands down") == 1 and "a session the program started" in err
        assert str(first) in inner.records_into
        with gpuprobe.range("inside the second"):
            pass
        inner.flush()
        assert inner.stats()["written"] >= 1  # the recording session's figures
        inner.stop()
        assert not inner.running and outer.running
        with gpuprobe.range("after the second stopped"):
            pass
        # Said once per recording session: another Session, and a schedule's windows, each a
        # Session of their own, say nothing more (and hand over no trace).
        with gpuprobe.Session(f"chrome={tmp_path / 'c.json'}"):
            pass
        ready = []
        with gpuprobe.profile(schedule=gpuprobe.schedule(wait=0, warmup=0, active=1),
                              on_trace_ready=ready.append) as prof:
            for _ in range(3):
                with gpuprobe.range("a profiled step"):
                    pass
                prof.step()
        assert ready == []
        assert "stands down" not in capfd.readouterr().err
    events = load_events(first)
    assert named(events, "inside the second") and named(events, "after the second stopped")
    assert len(named(events, "a profiled step")) == 3
    assert not second.exists() and not (tmp_path / "c.json").exists()


def test_config_mistakes_raise_and_only_raise(tmp_path, capfd):
    with pytest.raises(ValueError) as e:
        gpuprobe.Session("bogus=1")
    assert "unknown config key 'bogus'" in str(e.value)
    assert "gpuprobe.help()" in str(e.value) and "::" not in str(e.value)
    with pytest.raises(ValueError, match="ring"):
        gpuprobe.Session("ring=lots")
    # Also while another session records: a mistake is not stood down.
    with gpuprobe.Session(f"chrome={tmp_path / 'a.json'}"):
        with pytest.raises(ValueError, match="bogus"):
            gpuprobe.Session("bogus=1")
    assert capfd.readouterr().err == ""
