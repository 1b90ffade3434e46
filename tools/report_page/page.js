// The report page's script: draws `gpuprobe report --json`'s structure (the page's
// <script id="report-data"> block) with dygraphs, inlined beside it (and util.js, sections.js
// before it). Sections: the incident over time (each instance of a repeated range with rolling
// P50/P99, broken where no instance ran; GPU busy per device; the caching allocator's memory and
// fragmentation; the cause events as marks on the same axis, GC pauses too short to matter left
// out and counted; drag to zoom, double-click to reset, the charts move together), a chooser of
// the range plotted (the report's own and the other repeated ranges the page carries), the
// outliers of that range with their explanation trees (or why there are none), kernel time, the
// ranges, data loading and the compiles (the report's own text for them, sections.js). Every
// table sorts by a click on its header and filters by its search box.
//
// window.gpuprobePage holds the charts, the selected outlier, the plotted range and
// choose(index) to plot another, for whoever inspects the page (its tests do).
(function () {
  "use strict";
  const { el, put, num, msText, section, table } = window.gpuprobeUtil;
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const page = { charts: {}, selected: -1, select: null, range: null, choose: null };
  window.gpuprobePage = page;

  // The mark colours: one per cause the jitter analysis names, and graph breaks.
  const COLOURS = {
    "gc pause": "#e15759", compile: "#f28e2b", allocator: "#b07aa1",
    synchronization: "#76b7b2", "large copy": "#59a14f", "graph break": "#9c755f",
  };
  // Kinds that come in swarms of tiny events (Python's young-generation collections, hundreds
  // of 0.05 ms pauses): those shorter than this share of the plotted range's median instance
  // are not drawn, but counted beneath the chart.
  const SHORT_KINDS = new Set(["gc pause"]);
  const SHORT_SHARE = 0.1;

  // ---- The ranges the latency chart can plot: the report's own (the jitter's, explained in
  // full), then the other repeated ranges whose instances and outliers the page carries.
  const timeline = data.timeline || {};
  const jitter = data.jitter || {};
  const duration = data.duration_ms || 0;
  const marks = timeline.marks || {};
  const shownKinds = new Set(Object.keys(marks));
  const choices = [];
  if ((timeline.points || []).length > 0) {
    choices.push({ name: timeline.range, instances: timeline.instances, one_in: timeline.one_in,
      points: timeline.points, rolling: timeline.rolling || [], p50_ms: timeline.p50_ms,
      threshold_ms: jitter.threshold_ms, outliers: jitter.outliers || [], own: true });
  }
  for (const o of timeline.others || []) {
    choices.push({ name: o.range, instances: o.instances, one_in: o.one_in, points: o.points,
      rolling: o.rolling, p50_ms: o.p50_ms, threshold_ms: o.threshold_ms,
      outliers: o.outliers, own: false });
  }
  let current = choices[0] || null;
  let outliers = current ? current.outliers : (jitter.outliers || []);
  page.range = current ? current.name : null;

  // The marks drawn for the plotted range: each kind's, those of SHORT_KINDS shorter than its
  // share of the median left out (and counted in leftOut).
  let drawn = {}, leftOut = {};
  function thinMarks() {
    drawn = {};
    leftOut = {};
    const below = current && current.p50_ms > 0 ? SHORT_SHARE * current.p50_ms : 0;
    for (const [kind, m] of Object.entries(marks)) {
      if (!SHORT_KINDS.has(kind) || below <= 0) {
        drawn[kind] = m;
        continue;
      }
      const keep = [], out = { n: 0, ms: 0, longest: 0, below };
      for (const x of m) {
        if (x[1] >= below) {
          keep.push(x);
        } else {
          ++out.n;
          out.ms += x[1];
          out.longest = Math.max(out.longest, x[1]);
        }
      }
      drawn[kind] = keep;
      if (out.n > 0) leftOut[kind] = out;
    }
  }
  thinMarks();

  const tip = el("div", { class: "mark-tip", id: "mark-tip" });
  document.body.append(tip);

  // The drawn marks of the shown kinds within [t0, t1]. Each kind's marks are merged intervals
  // in time order, so their ends are ordered too: a binary search finds the first that reaches t0.
  function marksWithin(t0, t1) {
    const found = [];
    for (const kind of shownKinds) {
      const m = drawn[kind] || [];
      let lo = 0, hi = m.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (m[mid][0] + m[mid][1] < t0) lo = mid + 1; else hi = mid;
      }
      for (let i = lo; i < m.length && m[i][0] <= t1; ++i) found.push([kind, m[i][0], m[i][1]]);
    }
    return found;
  }
  function drawMarks(canvas, area, g) {
    const [x0, x1] = g.xAxisRange();
    canvas.save();
    canvas.globalAlpha = 0.45;
    for (const [kind, t, d] of marksWithin(x0, x1)) {
      const a = g.toDomXCoord(t), b = g.toDomXCoord(t + d);
      canvas.fillStyle = COLOURS[kind] || "#888";
      canvas.fillRect(a, area.y, Math.max(b - a, 2), area.h);
    }
    if (page.selected >= 0) {  // the selected outlier's span
      const o = outliers[page.selected];
      const a = g.toDomXCoord(o.start_ms), b = g.toDomXCoord(o.start_ms + o.duration_ms);
      canvas.globalAlpha = 0.15;
      canvas.fillStyle = "#000";
      canvas.fillRect(a, area.y, Math.max(b - a, 2), area.h);
    }
    canvas.restore();
  }
  // Hovering over a mark: what it was, when, for how long.
  function hoverMarks(g, div) {
    div.addEventListener("mousemove", (e) => {
      const box = div.getBoundingClientRect();
      const x = e.clientX - box.left;
      const area = g.getArea();
      const found = x >= area.x && x <= area.x + area.w
        ? marksWithin(g.toDataXCoord(x - 3), g.toDataXCoord(x + 3)) : [];
      if (found.length === 0) {
        tip.style.display = "none";
        return;
      }
      put(tip, ...found.slice(0, 6).map(([kind, t, d]) => el("div", {},
        el("span", { class: "swatch", style: `background:${COLOURS[kind] || "#888"}` }),
        `${kind} at ${msText(t)}` + (d > 0 ? `, ${msText(d)}` : ""))),
      found.length > 6 ? el("div", {}, `and ${found.length - 6} more`) : null);
      tip.style.display = "block";
      tip.style.left = `${e.pageX + 14}px`;
      tip.style.top = `${e.pageY - 10 - tip.offsetHeight}px`;
    });
    div.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  }

  let syncing = false;
  function syncZoom(g, initial) {
    if (initial || syncing) return;
    syncing = true;
    const range = g.xAxisRange();
    for (const other of Object.values(page.charts)) {
      if (other !== g) other.updateOptions({ dateWindow: range });
    }
    syncing = false;
  }
  function redrawAll() {
    for (const g of Object.values(page.charts)) g.updateOptions({});
  }

  // A chart on the shared time axis: the trace's whole span at first, the marks beneath, its
  // zoom followed by the others, a tooltip following the mouse; kept as page.charts[key].
  function timeChart(key, div, rows, options) {
    const g = new Dygraph(div, rows, {
      xlabel: "time since the trace began (ms)",
      legend: "follow",
      dateWindow: [0, duration],
      underlayCallback: drawMarks,
      drawCallback: syncZoom,
      axes: { x: { valueFormatter: (v) => `t = ${num(v, 3)} ms` } },
      ...options,
    });
    page.charts[key] = g;
    hoverMarks(g, div);
    return g;
  }

  function nearestOutlier(x, g) {
    const [x0, x1] = g.xAxisRange();
    const slack = (x1 - x0) * 0.01;
    let best = -1, distance = Infinity;
    outliers.forEach((o, i) => {
      const d = x < o.start_ms ? o.start_ms - x
        : x > o.start_ms + o.duration_ms ? x - o.start_ms - o.duration_ms : 0;
      if (d <= slack && d < distance) {
        best = i;
        distance = d;
      }
    });
    return best;
  }

  // The rolling quantiles with a break (NaN, which dygraphs does not join across) where samples
  // are missing: a stretch in which no instance began within the window draws no line.
  function withBreaks(rolling) {
    const every = timeline.rolling_every_ms;
    if (!(every > 0)) return rolling;
    const out = [];
    for (let i = 0; i < rolling.length; ++i) {
      if (i > 0 && rolling[i][0] - rolling[i - 1][0] > 1.5 * every)
        out.push([rolling[i - 1][0] + every, NaN, NaN]);
      out.push(rolling[i]);
    }
    return out;
  }
  // One table of rows for dygraphs: each instance's latency, the rolling quantiles at their
  // sample times and the outliers, merged in time order.
  function latencyRows(choice) {
    const points = choice.points, rolling = withBreaks(choice.rolling);
    const out = choice.outliers.map((o) => [o.start_ms, o.duration_ms]).sort((a, b) => a[0] - b[0]);
    const rows = [];
    let i = 0, j = 0, k = 0;
    while (i < points.length || j < rolling.length || k < out.length) {
      const ti = i < points.length ? points[i][0] : Infinity;
      const tj = j < rolling.length ? rolling[j][0] : Infinity;
      const tk = k < out.length ? out[k][0] : Infinity;
      if (ti <= tj && ti <= tk) { rows.push([ti, points[i][1], null, null, null]); ++i; }
      else if (tj <= tk) { rows.push([tj, null, rolling[j][1], rolling[j][2], null]); ++j; }
      else { rows.push([tk, null, null, null, out[k][1]]); ++k; }
    }
    return rows;
  }
  const latencyOptions = (choice) => ({
    labels: ["time (ms)", `${choice.name} (ms)`, "rolling P50", "rolling P99", "outlier"],
    series: {
      [`${choice.name} (ms)`]: { strokeWidth: 0, drawPoints: true, pointSize: 1.5, color: "#4e79a7" },
      "rolling P50": { strokeWidth: 1.5, color: "#59a14f" },
      "rolling P99": { strokeWidth: 1.5, color: "#e15759" },
      outlier: { strokeWidth: 0, drawPoints: true, pointSize: 4, color: "#d62728" },
    },
  });

  // ---- The incident over time. The charts are drawn into their section once it is in the
  // document: dygraphs sizes them from their container.
  const sections = document.getElementById("sections");
  const overTime = section("over-time", "Over time");
  sections.append(overTime);
  const about = el("p", { id: "latency-about" });
  const legendKinds = el("div", { class: "kinds" });
  const marksNote = el("p", { class: "note", id: "marks-note" });
  function describe() {
    put(about, `Each "${current.name}" (${current.instances} in all` +
      (current.one_in > 1 ? `, 1 in ${current.one_in} drawn` : "") +
      `), its P50 and P99 over a rolling ${msText(timeline.window_ms)} (no line where none ran), ` +
      "and the outliers explained below; the shaded marks are the events that can cause " +
      "latency. Drag to zoom, double-click or the button to reset, click an outlier for its " +
      "breakdown.");
    put(legendKinds, ...Object.keys(marks).map((kind) => {
      const box = el("input", { type: "checkbox" });
      box.checked = shownKinds.has(kind);
      box.addEventListener("change", () => {
        if (box.checked) shownKinds.add(kind); else shownKinds.delete(kind);
        redrawAll();
      });
      const n = drawn[kind].length, all = marks[kind].length;
      return el("label", { class: "kind" }, box,
        el("span", { class: "swatch", style: `background:${COLOURS[kind] || "#888"}` }),
        n === all ? `${kind} (${n})` : `${kind} (${n} of ${all})`);
    }));
    put(marksNote, ...Object.entries(leftOut).map(([kind, o]) => el("span", {},
      `${o.n} ${kind === "gc pause" ? "GC pauses" : `${kind} events`} shorter than ` +
      `${msText(o.below)} (a tenth of the median "${current.name}") are not drawn: ` +
      `${msText(o.ms)} in all, the longest ${msText(o.longest)}. `)));
  }
  if (current) {
    const div = el("div", { class: "chart", id: "latency-chart" });
    const log = el("input", { type: "checkbox" });
    const reset = el("button", { type: "button" }, "reset zoom");
    const chooser = el("select", { id: "range-choice" }, ...choices.map((c, i) =>
      el("option", { value: String(i) }, `${c.name} (${c.instances}` +
        (c.own ? ", the report's" : "") + ")")));
    chooser.addEventListener("change", () => page.choose(Number(chooser.value)));
    describe();
    overTime.append(
      choices.length > 1 ? el("p", { class: "controls" },
        el("label", {}, "Range plotted: ", chooser),
        el("span", { class: "note" }, " the report's own and the other ranges repeated " +
          "20 times or more, the heaviest first")) : null,
      about,
      el("div", { class: "controls" }, legendKinds, el("label", {}, log, " log scale"), reset),
      div, marksNote);
    const g = timeChart("latency", div, latencyRows(current), {
      ...latencyOptions(current),
      ylabel: "latency (ms)",
      height: 320,
      connectSeparatedPoints: true,
      clickCallback: (e, x) => {
        const i = nearestOutlier(x, g);
        if (i >= 0) page.select(i);
      },
    });
    log.addEventListener("change", () => g.updateOptions({ logscale: log.checked }));
    reset.addEventListener("click", () => {
      for (const c of Object.values(page.charts)) c.updateOptions({ dateWindow: [0, duration] });
    });
  } else {
    overTime.append(el("p", {}, "No range repeats often enough to plot its latency over time."));
  }
  const busy = (data.gpu && data.gpu.device_busy_timeline_percent) || {};
  const devices = Object.keys(busy);
  if (devices.length > 0) {
    const bins = busy[devices[0]].length;
    const rows = [];
    for (let b = 0; b < bins; ++b)
      rows.push([(b + 0.5) * duration / bins, ...devices.map((d) => busy[d][b])]);
    const div = el("div", { class: "chart", id: "gpu-chart" });
    overTime.append(el("h3", {}, "GPU busy per device" +
      (data.gpu.sampled ? " (recorded in bursts: busy within the recorded time)" : "")), div);
    timeChart("gpu", div, rows, {
      labels: ["time (ms)", ...devices.map((d) => `GPU ${d} busy %`)],
      ylabel: "busy (%)",
      height: 160,
      stepPlot: true,
      fillGraph: true,
      valueRange: [0, 105],
    });
  }
  // The caching allocator over time: what it holds and what is in use, and beneath, the share
  // of what it holds that is not (fragmentation) — a chart of its own rather than a second axis,
  // which would narrow the plot and put a time at another x than on the charts above.
  const memory = (data.memory && data.memory.over_time) || [];
  if (memory.length > 0) {
    const GiB = 1024 ** 3;
    const gib = (v) => (v === null ? null : v / GiB);
    const div = el("div", { class: "chart", id: "memory-chart" });
    const fragDiv = el("div", { class: "chart", id: "fragmentation-chart" });
    overTime.append(el("h3", {}, "GPU memory (the caching allocator)" +
      (memory.length < data.memory.samples ? `: the most fragmented of ${memory.length} slices`
        : "")), div, fragDiv);
    timeChart("memory", div,
      memory.map(([t, allocated, reserved, split]) => [t, gib(allocated), gib(reserved), gib(split)]), {
        labels: ["time (ms)", "allocated GiB", "reserved GiB", "inactive split GiB"],
        ylabel: "GiB",
        height: 160,
        stepPlot: true,
        connectSeparatedPoints: true,
        colors: ["#4e79a7", "#f28e2b", "#bab0ac"],
      });
    timeChart("fragmentation", fragDiv,
      memory.map(([t, , , , frag]) => [t, frag === null ? null : 100 * frag]), {
        labels: ["time (ms)", "fragmentation %"],
        ylabel: "fragmentation %",
        height: 140,
        stepPlot: true,
        connectSeparatedPoints: true,
        valueRange: [0, 105],
        colors: ["#b07aa1"],
      });
  }
  if (timeline.marks_left_out > 0) {
    overTime.append(el("p", { class: "note" },
      `${timeline.marks_left_out} short cause events are not drawn (the longest are).`));
  }

  // ---- Outliers of the plotted range and their explanation, or why there are none.
  const outlierTitle = el("h2", {});
  const outlierAbout = el("p", { id: "outliers-about" });
  const outlierTable = el("div", { class: "table-holder" });
  const detail = el("div", { id: "outlier-detail", class: "detail" });
  const outlierSection = el("section", { id: "outliers" }, outlierTitle, outlierAbout,
    outlierTable, detail);
  function tree(children) {
    if (!children || children.length === 0) return null;
    return el("ul", { class: "tree" }, ...children.map((c) => el("li", {},
      el("b", {}, c.name), ` ${msText(c.duration_ms)} (median ${msText(c.median_ms)}): `,
      `${msText(c.excess_ms)} over, ${num(100 * c.share_of_excess, 1)} % of the excess`,
      tree(c.children))));
  }
  page.select = (i) => {
    page.selected = i;
    const o = outliers[i];
    detail.hidden = false;
    put(detail,
      el("h3", {}, `Outlier ${i + 1}: ${msText(o.duration_ms)} at ${msText(o.start_ms)}` +
        ` on ${o.thread}, ${msText(o.excess_ms)} above the median`),
      o.causes.length ? el("table", {}, el("thead", {}, el("tr", {},
        el("th", {}, "what overlapped it"), el("th", { class: "num" }, "overlap"),
        el("th", { class: "num" }, "events"))),
      el("tbody", {}, ...o.causes.map((c) => el("tr", {}, el("td", {}, c.cause,
        c.detail ? el("div", { class: "note" }, c.detail) : null),
        el("td", { class: "num" }, msText(c.overlap_ms)), el("td", { class: "num" }, c.events)))))
        : el("p", {}, "Nothing recorded overlaps it."),
      o.children && o.children.length ? el("h4", {}, "The ranges inside it that deviated")
        : el("p", { class: "note" }, "No range inside it took longer than its own median."),
      tree(o.children));
    for (const tr of document.querySelectorAll("#outlier-table tbody tr"))
      tr.classList.toggle("selected", Number(tr.dataset.index) === i);
    const pad = Math.max(o.duration_ms * 3, duration / 200);
    const g = page.charts.latency;
    if (g) g.updateOptions({ dateWindow: [o.start_ms - pad, o.start_ms + o.duration_ms + pad] });
  };
  // Why a range has no outliers: too few instances for a P99 below the slowest, or none above
  // the threshold.
  function whyNone(c) {
    if (!c) {
      return "No outliers: no range repeats often enough to look for them " +
        "(gpuprobe report --latency NAME picks one).";
    }
    const slowest = c.points.reduce((m, p) => Math.max(m, p[1]), 0);
    if (c.instances < 100 && c.threshold_ms >= slowest * (1 - 1e-9)) {
      return `No outliers: "${c.name}" ran ${c.instances} times, too few — below 100 ` +
        `instances the P99 is the slowest instance itself (${msText(c.threshold_ms)}), so none ` +
        "lies above it. " + (c.own ? "--threshold-ms MS sets a threshold of your own."
        : `gpuprobe report --latency "${c.name}" --threshold-ms MS sets one.`);
    }
    return `No outliers: none of the ${c.instances} instances of "${c.name}" took longer than ` +
      `the threshold, ${msText(c.threshold_ms)}.`;
  }
  function drawOutliers() {
    const c = current;
    outlierTitle.textContent = `Outliers of "${c ? c.name : jitter.range || "–"}"` +
      (c && c.threshold_ms !== undefined ? ` above ${msText(c.threshold_ms)}` : "");
    put(outlierAbout, outliers.length === 0 ? el("span", { id: "outliers-empty" }, whyNone(c))
      : c && !c.own ? `Each breakdown lists the recorded events the outlier overlapped and the ` +
        `ranges inside it; GPU idle and the CPU gap are worked out for the report's own range ` +
        `("${choices[0].name}") — gpuprobe report --latency "${c.name}" for this one's.` : null);
    outlierAbout.hidden = outlierAbout.childNodes.length === 0;
    put(outlierTable, table("outlier-table", [
      { key: "index", label: "#", num: true, digits: 0 },
      { key: "start_ms", label: "at (ms)", num: true },
      { key: "duration_ms", label: "duration (ms)", num: true },
      { key: "excess_ms", label: "over the median (ms)", num: true },
      { key: "thread", label: "thread" },
      { key: "cause", label: "largest cause" },
    ], outliers.map((o, i) => ({
      index: i + 1, start_ms: o.start_ms, duration_ms: o.duration_ms, excess_ms: o.excess_ms,
      thread: o.thread, cause: o.causes.length ? o.causes[0].cause : "",
      rowId: i, onclick: () => page.select(i),
    })), 500, "No rows: see above."));
    put(detail, outliers.length ? "Click an outlier (here or on the chart) for its breakdown." : null);
    detail.hidden = outliers.length === 0;
  }
  drawOutliers();

  // Plots choice `i` instead: the latency chart, its marks and the outlier table redrawn from
  // what the page carries, the zoom reset.
  page.choose = (i) => {
    if (!choices[i] || choices[i] === current) return;
    current = choices[i];
    outliers = current.outliers;
    page.range = current.name;
    page.selected = -1;
    thinMarks();
    describe();
    const chooser = document.getElementById("range-choice");
    if (chooser) chooser.value = String(i);
    page.charts.latency.updateOptions({ file: latencyRows(current), ...latencyOptions(current) });
    for (const c of Object.values(page.charts)) c.updateOptions({ dateWindow: [0, duration] });
    drawOutliers();
  };

  // ---- Kernel time, by class and by name.
  const kernels = data.kernels || [];
  const kernelTotal = kernels.reduce((s, k) => s + k.total_ms, 0);
  const byClass = {};
  for (const k of kernels) byClass[k.class] = (byClass[k.class] || 0) + k.total_ms;
  const bar = (share) => el("span", { class: "bar" },
    el("span", { style: `width:${(100 * share).toFixed(1)}%` }));
  const kernelSection = kernels.length === 0 ? [el("p", {}, "No GPU kernels in this trace.")] : [
    el("div", { class: "classes" }, ...Object.entries(byClass).sort((a, b) => b[1] - a[1])
      .map(([c, t]) => el("div", {}, el("span", { class: "label" }, c), bar(t / kernelTotal),
        ` ${msText(t)} (${num(100 * t / kernelTotal, 1)} %)`))),
    table("kernel-table", [
      { key: "name", label: "kernel" },
      { key: "class", label: "class" },
      { key: "calls", label: "calls", num: true, digits: 0 },
      { key: "total_ms", label: "total (ms)", num: true },
      { key: "share", label: "share", num: true, cell: (r) => el("span", {}, bar(r.share),
        ` ${num(100 * r.share, 1)} %`) },
      { key: "mean_us", label: "mean (µs)", num: true, digits: 2 },
      { key: "p99_us", label: "P99 (µs)", num: true, digits: 2 },
    ], kernels.map((k) => ({ ...k, share: kernelTotal > 0 ? k.total_ms / kernelTotal : 0,
      mean_us: k.mean_ms * 1e3, p99_us: k.p99_ms * 1e3 }))),
  ];

  const ranges = table("range-table", [
    { key: "name", label: "range" },
    { key: "calls", label: "calls", num: true, digits: 0 },
    { key: "total_ms", label: "total (ms)", num: true },
    { key: "self_ms", label: "self (ms)", num: true },
    { key: "p50_ms", label: "P50 (ms)", num: true },
    { key: "p99_ms", label: "P99 (ms)", num: true },
    { key: "max_ms", label: "max (ms)", num: true },
    { key: "gpu_ms", label: "GPU (ms)", num: true },
  ], data.ranges || []);

  // Data loading and the compiles: the report's own text for them (sections.js), or why there
  // is none.
  const { described } = window.gpuprobeSections;
  const or = (shown, why) => (shown.length ? shown : [el("p", { class: "empty" }, why)]);
  sections.append(
    outlierSection,
    section("kernels", "GPU kernel time", ...kernelSection),
    section("ranges", "Ranges", ranges),
    section("data-loading", "Data loading", ...or(described(data, ["data_loading"]),
      "No data loading recorded: gpuprobe.torch.instrument_dataloader(loader) records the " +
      "wait for each batch.")),
    section("compile", "Compiles", ...or(described(data, ["eager_fallbacks", "torch_compile",
      "jax_compile", "triton_compile"]), "No compiles in this trace.")));
  document.body.dataset.ready = "1";
})();
