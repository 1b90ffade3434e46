"""`gpuprobe report --html` on traces of real programs (recorded by gpuprobe's Python API, run in a
subprocess), as a user sees the page in headless Chromium: an outlier with no child ranges says
so (no stray "null"); hundreds of tiny young-generation GC pauses are left out of the chart and
counted, the long ones drawn; a chooser plots another repeated range and its outliers without a
new report; an empty outlier table says why; the rolling P50/P99 break where no instance ran;
data loading and compile have sections of their own, the terminal's text scrolls inside its box;
on a torch.compile program, a failed compile's error is whole (shortened on the page only at a
word boundary, the rest a click away) and the generated code's graph runs are counted on the CPU.
"""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from browser_util import CHROMIUM, Browser

BUILD = pathlib.Path(os.environ.get("GPUPROBE_BUILD_DIR", "build"))
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="skipped: chromium is not installed (apt install chromium)")

# 300 requests of about 1 ms, each but the slow ones holding a "db query"; every 7th also an
# "auth" (43 in all); requests 50, 150 and 250 sleep 30 ms with nothing inside (outliers with no
# child ranges); many small lists, so Python's young generation collects often and briefly, and
# one full collection of a large heap (a long pause); half a second with no request midway.
SERVER = """
import gc, sys, time
import gpuprobe
heap = [[i] for i in range(300_000)]
with gpuprobe.Session("chrome=" + sys.argv[1]):
    gpuprobe.watch_gc()
    for i in range(300):
        if i == 150:
            time.sleep(0.5)
        with gpuprobe.range("request"):
            if i in (50, 150, 250):
                time.sleep(0.03)
                continue
            with gpuprobe.range("db query"):
                junk = [[j] for j in range(2000)]
                time.sleep(0.0008)
            if i % 7 == 0:
                with gpuprobe.range("auth"):
                    time.sleep(0.0002)
            if i == 200:
                gc.collect()
"""

# A torch CPU training loop: a compiled model (Inductor's C++ kernels) run 17 times, a helper
# whose backend fails with a long error (Dynamo falls back to eager), batches from an
# instrumented DataLoader.
TORCH = """
import sys
import torch, torch._dynamo
import gpuprobe, gpuprobe.torch as gt
torch._dynamo.config.suppress_errors = True
model = torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                          torch.nn.Linear(32, 4)))
def refuse(gm, inputs):
    raise RuntimeError("this backend refuses every graph, with an error long enough that a cut "
                       "at three hundred characters would land inside it and the hint at its end "
                       "would be lost to the reader of the report; Explanation: refused on "
                       "purpose. Hint: Try another backend such as inductor or eager")
helper = torch.compile(lambda x: torch.sin(x) + 1, backend=refuse)
data = torch.utils.data.TensorDataset(torch.randn(17 * 8, 16), torch.randint(0, 4, (17 * 8,)))
loader = gt.instrument_dataloader(torch.utils.data.DataLoader(data, batch_size=8))
with gpuprobe.Session("chrome=" + sys.argv[1]):
    watcher = gt.watch_compile()
    for x, y in loader:
        with gpuprobe.range("train step"):
            torch.nn.functional.cross_entropy(model(x), y)
            helper(x)
        gpuprobe.step()
    watcher.close()
"""


def record(tmp, program):
    trace = tmp / "trace.json"
    subprocess.run([sys.executable, "-c", textwrap.dedent(program), str(trace)], check=True,
                   capture_output=True, timeout=120)
    return trace


def page_of(trace, *args):
    html = trace.with_name("-".join([trace.stem, *(str(a).strip("-") for a in args)]) + ".html")
    subprocess.run([str(BUILD / "gpuprobe"), "report", trace, *map(str, args), "--html", html],
                   check=True, capture_output=True)
    return html


def text(browser, selector):
    return browser.eval(f"document.querySelector({selector!r}).textContent")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("server")
    trace = record(tmp, SERVER)
    with Browser(width=1200, height=1400) as browser:
        browser.open(page_of(trace, "--latency", "request").as_uri())
        assert browser.eval("document.body.dataset.ready") == "1"
        yield browser, trace, tmp
        assert browser.errors() == []
        browser.screenshot(tmp / "server.png")


def test_an_outlier_without_child_ranges_says_so(server):
    browser, _, _ = server
    outliers = browser.eval("JSON.parse(document.getElementById('report-data').textContent)"
                            ".jitter.outliers")
    assert any(not o["children"] for o in outliers)  # a sleep's
    for i, o in enumerate(outliers):
        browser.eval(f"gpuprobePage.select({i})")
        detail = text(browser, "#outlier-detail")
        assert "null" not in detail and "undefined" not in detail, detail
        if not o["children"]:
            assert detail.endswith("No range inside it took longer than its own median."), detail


def test_tiny_gc_pauses_are_counted_not_drawn(server):
    browser, _, _ = server
    label = browser.eval("""[...document.querySelectorAll('#over-time .kind')]
        .map(l => l.textContent).find(t => t.startsWith('gc pause'))""")
    drawn, _, total = label[len("gc pause ("):-1].partition(" of ")
    assert int(total) > 30 and 1 <= int(drawn) < int(total) / 5, label
    note = text(browser, "#marks-note")
    assert f"{int(total) - int(drawn)} GC pauses shorter than" in note
    assert 'a tenth of the median "request"' in note
    # The drawn marks are those at least a tenth of the median request; the full collection is.
    p50 = browser.eval("JSON.parse(document.getElementById('report-data').textContent)"
                       ".timeline.p50_ms")
    marks = browser.eval("JSON.parse(document.getElementById('report-data').textContent)"
                         ".timeline.marks['gc pause']")
    assert sum(1 for _, d in marks if d >= p50 / 10) == int(drawn)
    assert max(d for _, d in marks) > 5 * p50  # the full collection, drawn


def test_the_chooser_plots_another_range_and_its_outliers(server):
    browser, _, _ = server
    options = browser.eval("[...document.querySelectorAll('#range-choice option')]"
                           ".map(o => o.textContent)")
    assert options[0].startswith("request (300") and any(o.startswith("db query (297")
                                                         for o in options), options
    index = next(i for i, o in enumerate(options) if o.startswith("db query"))
    browser.eval(f"""(() => {{ const s = document.getElementById('range-choice');
        s.value = '{index}'; s.dispatchEvent(new Event('change')); }})()""")
    assert browser.eval("gpuprobePage.range") == "db query"
    labels = browser.eval("gpuprobePage.charts.latency.getLabels()")
    assert labels[1] == "db query (ms)"
    points = browser.eval("""(() => { const g = gpuprobePage.charts.latency; let n = 0;
        for (let r = 0; r < g.numRows(); ++r) if (g.getValue(r, 1) !== null) ++n;
        return n; })()""")
    assert points == 297
    assert text(browser, "#outliers h2").startswith('Outliers of "db query" above')
    outliers = browser.eval("document.querySelectorAll('#outlier-table tbody tr').length")
    assert outliers >= 1  # its slowest: the one the full collection ran in, at least
    browser.eval("gpuprobePage.select(0)")
    assert "Outlier 1:" in text(browser, "#outlier-detail")
    browser.eval("gpuprobePage.choose(0)")
    assert browser.eval("gpuprobePage.charts.latency.getLabels()")[1] == "request (ms)"


def test_an_empty_outlier_table_says_why(server):
    browser, trace, _ = server
    options = browser.eval("[...document.querySelectorAll('#range-choice option')]"
                           ".map(o => o.textContent)")
    auth = next(i for i, o in enumerate(options) if o.startswith("auth (43"))
    browser.eval(f"gpuprobePage.choose({auth})")
    why = text(browser, "#outliers-empty")
    assert why.startswith('No outliers: "auth" ran 43 times, too few') and "P99" in why
    assert browser.eval("document.getElementById('outlier-detail').hidden")
    browser.eval("gpuprobePage.choose(0)")
    # Enough instances, none above a threshold of the user's.
    with Browser(width=1200, height=1400) as other:
        other.open(page_of(trace, "--latency", "request", "--threshold-ms", 10000).as_uri())
        why = text(other, "#outliers-empty")
        assert why == ('No outliers: none of the 300 instances of "request" took longer than '
                       "the threshold, 10000.0 ms.")
        assert other.errors() == []


def test_rolling_quantiles_break_where_no_request_ran(server):
    browser, _, _ = server
    rows = browser.eval("""(() => { const g = gpuprobePage.charts.latency, out = [];
        for (let r = 0; r < g.numRows(); ++r) out.push([g.getValue(r, 0), g.getValue(r, 1),
          Number.isNaN(g.getValue(r, 2)) ? 'NaN' : g.getValue(r, 2)]);
        return out; })()""")
    requests = sorted(t for t, v, _ in rows if v is not None)
    # The half-second pause: the longest stretch between two requests' starts.
    gap_begin, gap_end = max(zip(requests, requests[1:]), key=lambda p: p[1] - p[0])
    assert gap_end - gap_begin > 400
    breaks = [t for t, _, p in rows if p == "NaN"]
    assert any(gap_begin < t < gap_end for t in breaks)
    window = browser.eval("JSON.parse(document.getElementById('report-data').textContent)"
                          ".timeline.window_ms")
    # Inside the pause past the window no line is drawn: no rolling sample there.
    assert not [t for t, _, p in rows
                if isinstance(p, float) and gap_begin + window + 20 < t < gap_end]


def overflowing(browser):
    """What sticks out past the window's right edge once the page has settled at its new size:
    the charts redraw on the window's resize event, which a loaded machine delivers late (CI saw
    the page still wider than the window right after the change). Waits up to 10 s for nothing
    to stick out; returns what still does, by tag, class and right edge."""
    return browser.eval("""(async () => {
        const wide = () => document.documentElement.scrollWidth > window.innerWidth;
        for (let i = 0; i < 100 && wide(); ++i) await new Promise(r => setTimeout(r, 100));
        if (!wide()) return [];
        return [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 12)
            .map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`);
        })()""")


def test_data_loading_and_compile_sections_and_the_text_box(server):
    browser, _, _ = server
    assert text(browser, "#data-loading .empty").startswith("No data loading recorded")
    assert text(browser, "#compile .empty") == "No compiles in this trace."
    for width in (1200, 700):
        browser.call("Emulation.setDeviceMetricsOverride", session=True, width=width,
                     height=1400, deviceScaleFactor=1, mobile=False)
        box = browser.eval("""(() => { const p = document.querySelector('pre'),
            b = p.getBoundingClientRect(), s = getComputedStyle(p);
            return [b.right, document.body.getBoundingClientRect().right, p.scrollWidth,
                    p.clientWidth, s.overflowX]; })()""")
        right, body_right, scroll_width, client_width, overflow = box
        assert right <= body_right + 1 and overflow in ("auto", "scroll"), box
        if width == 700:
            assert scroll_width > client_width  # its long lines scroll inside the box
        assert not overflowing(browser)
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=1200, height=1400,
                 deviceScaleFactor=1, mobile=False)


@pytest.fixture(scope="module")
def torch_page(tmp_path_factory):
    pytest.importorskip("torch")
    tmp = tmp_path_factory.mktemp("torch")
    trace = record(tmp, TORCH)
    with Browser(width=1200, height=1400) as browser:
        browser.open(page_of(trace).as_uri())
        assert browser.eval("document.body.dataset.ready") == "1"
        yield browser, tmp
        assert browser.errors() == []
        browser.screenshot(tmp / "torch.png")


def test_a_failed_compiles_error_is_whole_and_cut_only_at_a_word(torch_page):
    browser, _ = torch_page
    whole, shown = browser.eval("""(() => { const e = document.querySelector(
        '#compile ul.texts .long-text'); return [e.dataset.full, e.querySelector('.text')
        .textContent]; })()""")
    assert "BackendCompilerFailed" in whole
    assert whole.endswith("Hint: Try another backend such as inductor or eager")
    assert shown.endswith("…") and whole.startswith(shown[:-1])
    assert whole[len(shown) - 1] in " ,;:."  # the cut is at a word's end
    browser.eval("document.querySelector('#compile .long-text .more').click()")
    assert text(browser, "#compile ul.texts .long-text .text") == whole


def test_generated_code_counts_its_graph_runs_on_the_cpu(torch_page):
    """The compile section is the report's own text (its JSON's "sections"), drawn as lists."""
    browser, tmp = torch_page
    lines = browser.eval("[...document.querySelectorAll('#compile li > .long-text')]"
                         ".map(e => e.dataset.full || e.textContent)")
    generated = [t for t in lines if t.startswith("generated by ")]
    assert generated and "its graph ran 17 times" in generated[0], lines
    # Inductor's C++ kernels: no GPU records, so no kernel launches are claimed.
    assert "its kernels ran" not in generated[0]
    assert any(t.startswith("compiled code ran m = 17 times") for t in lines), lines
    # The same words as the terminal's: each line of the page is a line of `gpuprobe report`.
    report = subprocess.run([str(BUILD / "gpuprobe"), "report", str(tmp / "trace.json")], capture_output=True,
                            text=True, check=True).stdout
    assert all(t in report for t in lines), [t for t in lines if t not in report]
    loading = text(browser, "#data-loading")
    assert "data loading: " in loading and " batches, " in loading and "P99" in loading


DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def test_described_sections_nest_and_sort_as_the_text_says(tmp_path):
    """The recompile storm of examples/compile (test/data/py_storm.json.gz) and compare_modes()'s
    table (py_modes): each reason nests under its count as the text indents it, and a table of
    figures sorts by value, "never" above every figure."""
    pages = {}
    for name in ("py_storm", "py_modes"):
        trace = tmp_path / f"{name}.json.gz"
        trace.write_bytes((DATA / f"{name}.json.gz").read_bytes())
        pages[name] = page_of(trace)
    with Browser(width=1200, height=1400) as browser:
        browser.open(pages["py_storm"].as_uri())
        assert browser.eval("document.body.dataset.ready") == "1"
        nested = browser.eval("""[...document.querySelectorAll('#compile li')].filter(li =>
            li.firstElementChild.textContent.startsWith('recompiles: ')).map(li =>
            [li.firstElementChild.textContent, li.querySelectorAll('ul li').length])""")
        assert len(nested) == 1
        count = int(nested[0][0].split(": ")[1])
        assert count > 0 and nested[0][1] == count, nested
        browser.open(pages["py_modes"].as_uri())
        assert browser.eval("document.body.dataset.ready") == "1"
        head = browser.eval("[...document.querySelectorAll('#compile table thead th')]"
                            ".map(c => c.textContent)")
        assert head[:3] == ["mode", "T_compile (s)", "T_execute (ms)"], head
        cells = browser.eval("[...document.querySelectorAll('#compile table tbody td')]"
                             ".map(c => c.textContent)")
        assert cells[0] == "default" and "never" in cells, cells
        assert browser.errors() == []
