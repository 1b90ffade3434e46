"""`gpuprobe report --html`: one self-contained page that headless Chromium (Debian's `chromium`)
renders with non-empty plots — GPU busy over time, kernel time, the latency histogram with P50
and P99 marked, jitter causes — no network access and no console errors."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(*args):
    return subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--enable-logging=stderr", "--v=0", *args],
        capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="skipped: chromium is not installed (apt install chromium)")
def test_html_report_renders_with_plots_and_no_console_errors(tmp_path):
    trace = tmp_path / "t.json"
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), f"chrome={trace}"], check=True)
    page = tmp_path / "report.html"
    subprocess.run([str(BUILD / "gpuprobe"), "report", str(trace), "--html", str(page)], check=True,
                   capture_output=True)
    html = page.read_text()
    # Self-contained: nothing fetched from anywhere.
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    result = chromium("--dump-dom", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    for section in ("gpu-busy", "kernels", "latency"):
        assert f'id="{section}"' in dom
    plots = re.findall(r"<svg class=\"plot\".*?</svg>", dom, re.S)
    assert len(plots) >= 3
    for plot in plots:
        heights = [float(h) for h in re.findall(r'class="bar"[^>]*height="([0-9.]+)"', plot)]
        widths = [float(w) for w in re.findall(r'class="bar"[^>]*width="([0-9.]+)"', plot)]
        assert heights or widths
        assert max(heights + widths) > 1  # not empty: some bar is drawn
    assert "P50" in dom and "P99" in dom
    console = [l for l in result.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert console == [], console
    shot = tmp_path / "shot.png"
    result = chromium(f"--screenshot={shot}", "--window-size=1000,1400", page.as_uri())
    assert result.returncode == 0 and shot.stat().st_size > 10_000
