"""`gpuprobe diff --html` and `report DIR --html`: self-contained pages that headless Chromium
(Debian's `chromium`) renders with non-empty plots — changes between two traces, time per
rank — no network access and no console errors. (The report page of one trace, drawn with a
chart library and used through the mouse: test_report_page.py.)"""
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


needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="skipped: chromium is not installed (apt install chromium)")


def synthetic(path, *args):
    subprocess.run([str(BUILD / "test" / "write_synthetic_gpu_trace"), f"chrome={path}", *map(str, args)],
                   check=True)


def check_page(page, sections, min_plots, tmp_path):
    """The page is self-contained, Chromium renders it without console errors, it has the
    sections, and each of its plots draws some bar. Returns the rendered DOM."""
    html = page.read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", html)  # nothing fetched from anywhere
    result = chromium("--dump-dom", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    for section in sections:
        assert f'id="{section}"' in dom
    plots = re.findall(r"<svg class=\"plot\".*?</svg>", dom, re.S)
    assert len(plots) >= min_plots
    for plot in plots:
        bars = [(float(w), float(h)) for w, h in
                re.findall(r'<rect class="bar[^"]*"[^>]*width="([0-9.]+)" height="([0-9.]+)"', plot)]
        assert any(w > 1 and h > 1 for w, h in bars)  # not empty: some bar is drawn
    console = [l for l in result.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert console == [], console
    shot = tmp_path / (page.stem + ".png")
    result = chromium(f"--screenshot={shot}", "--window-size=1000,1400", page.as_uri())
    assert result.returncode == 0 and shot.stat().st_size > 10_000
    return dom


def html_of(tmp_path, *args):
    page = tmp_path / "page.html"
    subprocess.run([str(BUILD / "gpuprobe"), *map(str, args), "--html", str(page)], check=True,
                   capture_output=True)
    return page


@needs_chromium
def test_html_diff_and_ranks_pages_render(tmp_path):
    synthetic(tmp_path / "a.json", 0, 30)
    synthetic(tmp_path / "b.json", 0, 45)
    dom = check_page(html_of(tmp_path, "diff", tmp_path / "a.json", tmp_path / "b.json"),
                     ("deltas",), 1, tmp_path)
    assert "ProfilerStep" in dom
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for rank in range(3):
        synthetic(ranks / f"rank{rank}.json", rank, 45 if rank == 1 else 30)
    dom = check_page(html_of(tmp_path, "report", ranks), ("work",), 1, tmp_path)
    assert "rank 1 (straggler)" in dom and "No collectives" in dom
