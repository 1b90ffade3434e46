"""`gpuprobe report --html`, as a user sees it in Chromium (Debian's, headless, driven over the
DevTools protocol): on a planted incident with known answers (test/tools/write_incident_trace),
the page draws every request's latency with rolling P50/P99 that rise in the incident, GPU busy
per device that falls in it, the allocator's fragmentation rising in it, each cause event as a
mark; hovering over a request shows its
value, over a mark what it was; a click on an outlier opens its breakdown; dragging zooms both
charts together; tables sort and filter; 100,000 requests draw; nothing is fetched and the
console stays clean. A screenshot of each page is kept under the test's temporary directory."""
import json
import os
import pathlib
import re
import subprocess

import pytest

from browser_util import CHROMIUM, Browser

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="skipped: chromium is not installed (apt install chromium)")

N = 2000
INCIDENT = range(N * 45 // 100, N * 55 // 100)  # requests of 20 ms instead of about 2
MARKS = {"gc pause": 2, "compile": 1, "allocator": 50, "synchronization": 20, "graph break": 20}


def cli(*args):
    return subprocess.run([str(BUILD / "gpuprobe"), *map(str, args)], check=True,
                          capture_output=True, text=True).stdout


def incident(tmp_path, n, sink="chrome"):
    trace = tmp_path / ("incident.json" if sink == "chrome" else "incident.pftrace")
    subprocess.run([str(BUILD / "test" / "write_incident_trace"), f"{sink}={trace}", str(n)],
                   check=True)
    page = tmp_path / "page.html"
    cli("report", trace, "--latency", "request", "--html", page)
    return trace, page


def column(browser, chart, index):
    """The values a chart holds in one column (dygraphs' own accessors), nulls left out."""
    return browser.eval(f"""(() => {{
        const g = gpuprobePage.charts.{chart}, out = [];
        for (let r = 0; r < g.numRows(); ++r) {{
          const v = g.getValue(r, {index});
          if (v !== null && !Number.isNaN(v)) out.push([g.getValue(r, 0), v]);
        }}
        return out; }})()""")


def at(browser, chart, x, y):
    """Viewport coordinates of the data point (x, y) on a chart."""
    return browser.eval(f"""(() => {{
        const g = gpuprobePage.charts.{chart};
        const div = document.getElementById("{chart}-chart");
        const [dx, dy] = g.toDomCoords({x}, {y});
        const box = div.getBoundingClientRect();
        return [box.left + dx, box.top + dy]; }})()""")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("page")
    trace, html = incident(tmp, N)
    report = json.loads(cli("report", trace, "--latency", "request", "--json"))
    with Browser(width=1200, height=1400) as browser:
        browser.open(html.as_uri())
        yield browser, report, html, tmp


def test_self_contained_and_clean(page):
    browser, _, html, tmp = page
    text = html.read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", text)  # nothing fetched from anywhere
    assert "sourceMappingURL" not in text
    assert browser.eval("document.body.dataset.ready") == "1"
    assert browser.errors() == []
    shot = tmp / "report.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 50_000
    for section in ("over-time", "outliers", "kernels", "ranges", "compile"):
        assert browser.eval(f"!!document.getElementById('{section}')"), section


def test_latency_over_time_with_rolling_quantiles(page):
    browser, report, _, _ = page
    points = column(browser, "latency", 1)
    assert len(points) == N  # every request, none thinned
    assert "timeline" not in report  # --json carries none: only the page asks for it
    rolling_p50, rolling_p99 = column(browser, "latency", 2), column(browser, "latency", 3)
    assert len(rolling_p50) == len(rolling_p99) > 300
    # The incident's span in time: where its requests begin and end.
    ordered = sorted(points)
    begin, end = ordered[INCIDENT.start][0], ordered[INCIDENT.stop - 1][0]
    window = browser.eval("gpuprobePage.charts.latency.xAxisRange()")
    margin = (window[1] - window[0]) / 50  # the rolling window
    inside = [v for t, v in rolling_p50 if begin + margin < t < end]
    outside = [v for t, v in rolling_p50 if t < begin - margin or t > end + margin]
    assert inside and min(inside) > 19  # the incident's 20 ms requests
    assert outside and max(outside) < 2.3  # ordinary requests of 2.0-2.2 ms
    assert all(p99 >= p50 for (_, p50), (_, p99) in zip(rolling_p50, rolling_p99))
    assert sum(1 for _, v in points if v > 19) == len(INCIDENT)
    outliers = column(browser, "latency", 4)
    assert len(outliers) == len(report["jitter"]["outliers"]) > 0


def test_gpu_busy_per_device_falls_in_the_incident(page):
    browser, _, _, _ = page
    labels = browser.eval("gpuprobePage.charts.gpu.getLabels()")
    assert labels[1:] == ["GPU 0 busy %", "GPU 1 busy %"]
    begin, end = browser.eval("""(() => { const g = gpuprobePage.charts.latency, ts = [];
        for (let r = 0; r < g.numRows(); ++r) if (g.getValue(r, 1) > 19) ts.push(g.getValue(r, 0));
        return [Math.min(...ts), Math.max(...ts)]; })()""")
    for device in (1, 2):
        busy = column(browser, "gpu", device)
        assert len(busy) == 400
        inside = [v for t, v in busy if begin + 100 < t < end - 100]
        outside = [v for t, v in busy if t < begin - 100 or t > end + 100]
        assert sum(inside) / len(inside) < sum(outside) / len(outside) / 3


def test_fragmentation_over_time(page):
    browser, report, _, _ = page
    assert browser.eval("gpuprobePage.charts.memory.getLabels()")[1:] == [
        "allocated GiB", "reserved GiB", "inactive split GiB"]
    fragmentation = sorted(column(browser, "fragmentation", 1))
    allocated = column(browser, "memory", 1)
    assert len(fragmentation) == len(allocated) == N  # a sample at each request's start
    assert all(v == pytest.approx(2.0) for _, v in allocated)
    # 2.5 GiB reserved until the incident's 50 cudaMallocs add 64 MiB each.
    before = [v for _, v in fragmentation[:INCIDENT.start + 1]]
    after = [v for _, v in fragmentation[INCIDENT.start + 50:]]
    assert before == pytest.approx([20.0] * len(before))
    assert after == pytest.approx([100 * (1 - 2 / 5.625)] * len(after))
    rising = [v for _, v in fragmentation[INCIDENT.start:INCIDENT.start + 51]]
    assert rising == sorted(rising) and len(set(rising)) == 51
    assert report["memory"]["fragmentation_max"] == pytest.approx(1 - 2 / 5.625)
    # As opened: a time lies at the same x on every chart.
    d = report["duration_ms"]
    for t in (0, d / 2, d):
        xs = [at(browser, c, t, 0)[0] for c in ("latency", "gpu", "memory", "fragmentation")]
        assert max(xs) - min(xs) < 1.5, (t, xs)


def test_cause_marks_are_counted_and_drawn(page):
    browser, _, _, _ = page
    labels = browser.eval("[...document.querySelectorAll('#over-time .kind')].map(l => l.textContent)")
    assert sorted(labels) == sorted(f"{kind} ({n})" for kind, n in MARKS.items())


def test_hover_shows_the_request_and_the_mark(page):
    browser, report, _, _ = page
    # A request before the incident: dygraphs' legend follows the mouse with its value.
    t, v = column(browser, "latency", 1)[10]
    # Zoomed in so that the requests lie pixels apart.
    browser.eval(f"gpuprobePage.charts.latency.updateOptions({{dateWindow: [{t - 20}, {t + 20}]}})")
    x, y = at(browser, "latency", t, v)
    browser.mouse("mouseMoved", x, y)
    legend = browser.eval("""(() => { const l = document.querySelector('#latency-chart .dygraph-legend');
        return l && getComputedStyle(l).display !== 'none' ? l.textContent : ''; })()""")
    assert f"t = {t:.3f} ms" in legend and f"request (ms):\xa0{v:.3g}" in legend, legend
    browser.eval(f"gpuprobePage.charts.latency.updateOptions({{dateWindow: [0, {report['duration_ms']}]}})")
    # The first GC pause (in request N/10): the tip names it and its length.
    gc = sorted(column(browser, "latency", 1))[N // 10]
    x, y = at(browser, "latency", gc[0] + 5, 1)  # 5 ms into that request: inside the pause
    browser.mouse("mouseMoved", x, y)
    tip = browser.eval("""(() => { const t = document.getElementById('mark-tip');
        return getComputedStyle(t).display === 'block' ? t.textContent : ''; })()""")
    assert "gc pause at" in tip and "8.000 ms" in tip


def test_click_on_an_outlier_opens_its_breakdown(page):
    browser, report, _, _ = page
    slowest = report["jitter"]["outliers"][0]
    browser.eval("gpuprobePage.charts.latency.updateOptions({dateWindow: [0, %f]})"
                 % report["duration_ms"])
    x, y = at(browser, "latency", slowest["start_ms"] + slowest["duration_ms"] / 2,
              slowest["duration_ms"])
    browser.click(x, y)
    assert browser.eval("gpuprobePage.selected") == 0
    detail = browser.eval("document.getElementById('outlier-detail').textContent")
    assert f"Outlier 1: {slowest['duration_ms']:.3f} ms at" in detail
    assert slowest["causes"][0]["cause"] in detail
    if slowest["children"]:
        assert slowest["children"][0]["name"] in detail
    # The chart zoomed to the outlier, and the GPU chart followed.
    lat, gpu = (browser.eval(f"gpuprobePage.charts.{c}.xAxisRange()") for c in ("latency", "gpu"))
    assert lat == pytest.approx(gpu) and lat[1] - lat[0] < report["duration_ms"] / 10
    assert lat[0] <= slowest["start_ms"] <= lat[1]


def test_drag_zooms_both_charts(page):
    browser, report, _, _ = page
    browser.eval("gpuprobePage.charts.latency.updateOptions({dateWindow: [0, %f]})"
                 % report["duration_ms"])
    d = report["duration_ms"]
    x0, y = at(browser, "latency", d * 0.3, 10)
    x1, _ = at(browser, "latency", d * 0.6, 10)
    browser.drag(x0, y, x1)
    charts = ("latency", "gpu", "memory", "fragmentation")
    lat, *others = (browser.eval(f"gpuprobePage.charts.{c}.xAxisRange()") for c in charts)
    assert lat == pytest.approx([d * 0.3, d * 0.6], rel=0.02)
    assert others == [pytest.approx(lat)] * len(others)
    # One axis: a time lies at the same x on every chart.
    xs = [at(browser, c, d * 0.45, 0)[0] for c in charts]
    assert max(xs) - min(xs) < 1.5, xs


def test_tables_sort_and_filter(page):
    browser, _, _, _ = page
    rows = "[...document.querySelectorAll('#range-table tbody tr')].map(r => r.cells[0].textContent)"
    browser.eval("document.getElementById('range-table').scrollIntoView({block: 'center'})")
    x, y = browser.eval("""(() => { const b = document.querySelector('#range-table th:nth-child(2)')
        .getBoundingClientRect(); return [b.left + 5, b.top + 5]; })()""")
    browser.click(x, y)  # by calls, most first
    assert browser.eval(rows)[-1] == "torch.compile 0/1"
    browser.click(x, y)  # fewest first
    assert browser.eval(rows)[0] == "torch.compile 0/1"
    x, y = browser.eval("""(() => { const b = document.querySelector('#range-table .filter')
        .getBoundingClientRect(); return [b.left + 5, b.top + 5]; })()""")
    browser.click(x, y)
    browser.call("Input.insertText", session=True, text="gc")
    assert browser.eval(rows) == ["gc gen2"]


def test_a_hundred_thousand_requests_draw(tmp_path):
    _, html = incident(tmp_path, 100_000, sink="perfetto")
    with Browser(width=1200, height=1400) as browser:
        browser.open(html.as_uri(), timeout=120)
        assert browser.eval("document.body.dataset.ready") == "1"
        assert browser.eval("""(() => { const g = gpuprobePage.charts.latency; let n = 0;
            for (let r = 0; r < g.numRows(); ++r) if (g.getValue(r, 1) !== null) ++n;
            return n; })()""") == 100_000
        # 100,000 allocator samples: the most fragmented of each of 4000 slices, the peak kept.
        fragmentation = [v for _, v in column(browser, "fragmentation", 1)]
        assert 3900 <= len(fragmentation) <= 4000
        assert max(fragmentation) == pytest.approx(100 * (1 - 2 / 5.625))
        assert "the most fragmented of" in browser.eval("document.getElementById('over-time').textContent")
        assert browser.errors() == []
        browser.screenshot(tmp_path / "100k.png")
