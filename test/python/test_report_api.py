"""`pip install .` installs the `gpuprobe` command with the package, and `gpuprobe.report()` gives
the same structure as `gpuprobe report --json` — plain dicts, the tables as pandas DataFrames,
the HTML report in Jupyter — for a trace recorded from Python."""
import html
import json
import pathlib
import subprocess
import sys

import pytest

import gpuprobe
from gpuprobe import _report as report_module


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "trace.json"
    with gpuprobe.Session(f"chrome={path}"):
        for i in range(50):
            with gpuprobe.range("request"):
                with gpuprobe.range("parse"):
                    pass
                if i == 25:
                    with gpuprobe.range("slow part"):
                        sum(range(200000))
    return path


def test_the_command_is_installed_beside_the_interpreter(monkeypatch):
    monkeypatch.delenv("GPUPROBE_CLI", raising=False)
    cli = pathlib.Path(report_module.cli())
    assert cli.name == "gpuprobe"
    assert cli.parent == pathlib.Path(sys.executable).parent  # the environment's bin/
    out = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("gpuprobe ")


def test_report_is_the_json_of_the_command(trace, monkeypatch):
    monkeypatch.delenv("GPUPROBE_CLI", raising=False)
    r = gpuprobe.report(trace, limit=5, latency="request")
    assert isinstance(r, dict)
    expected = json.loads(subprocess.run(
        [report_module.cli(), "report", str(trace), "--limit", "5", "--latency", "request",
         "--json"], capture_output=True, text=True, check=True).stdout)
    assert dict(r) == expected
    assert r["schema"] == "gpuprobe.report/1"
    ranges = {row["name"]: row for row in r["ranges"]}
    assert ranges["request"]["calls"] == 50
    assert r["jitter"]["range"] == "request"


def test_tables_as_dataframes_and_the_html_report(trace):
    pandas = pytest.importorskip("pandas")
    r = gpuprobe.report(trace)
    frames = r.frames
    assert isinstance(frames["ranges"], pandas.DataFrame)
    assert set(frames["ranges"]["name"]) >= {"request", "parse", "slow part"}
    shown = r._repr_html_()  # what Jupyter shows: the page, in an iframe of its own
    assert shown.startswith("<iframe srcdoc=") and "request" in shown
    page = r.html()
    assert "<html" in page.lower() and 'id="report-data"' in page
    assert html.escape(page, quote=True) in shown


def test_bad_input_is_one_clear_error(tmp_path):
    with pytest.raises(TypeError, match="unknown option 'colour'"):
        gpuprobe.report(tmp_path, colour="red")
    with pytest.raises(RuntimeError, match="gpuprobe report: .*nothing.gpuprobe"):
        gpuprobe.report(tmp_path / "nothing.gpuprobe")
