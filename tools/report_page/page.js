// The report page's script: draws `gpuprobe report --json`'s structure (the page's
// <script id="report-data"> block) with dygraphs, inlined beside it. Sections: the incident
// over time (each request's latency with rolling P50/P99, GPU busy per device, the caching
// allocator's memory and fragmentation, the cause events
// as marks on the same axis; drag to zoom, double-click to reset, both charts move together),
// the outliers with their explanation trees, kernel time, the ranges, the compile section.
// Every table sorts by a click on its header and filters by its search box.
//
// window.gpuprobePage holds the charts and the selected outlier, for whoever inspects the page
// (its tests do).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const page = { charts: {}, selected: -1, select: null };
  window.gpuprobePage = page;

  // The mark colours: one per cause the jitter analysis names, and graph breaks.
  const COLOURS = {
    "gc pause": "#e15759", compile: "#f28e2b", allocator: "#b07aa1",
    synchronization: "#76b7b2", "large copy": "#59a14f", "graph break": "#9c755f",
  };

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }
  const num = (v, digits) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits));
  const msText = (v) => num(v, v >= 100 ? 1 : 3) + " ms";
  const section = (id, title, ...children) =>
    el("section", { id }, el("h2", {}, title), ...children);

  // ---- Tables: sortable headers, a filter box, at most `limit` rows drawn.
  function table(id, columns, rows, limit = 500) {
    let key = null, descending = true, filter = "";
    const body = el("tbody");
    const note = el("p", { class: "note" });
    const head = el("tr", {}, ...columns.map((c) => el("th", {
      class: c.num ? "num" : "", title: "sort",
      onclick: () => {
        descending = key === c.key ? !descending : true;
        key = c.key;
        draw();
      },
    }, c.label)));
    function draw() {
      let shown = rows;
      if (filter) {
        shown = rows.filter((r) => columns.some((c) =>
          String(r[c.key] === undefined ? "" : r[c.key]).toLowerCase().includes(filter)));
      }
      if (key !== null) {
        const sign = descending ? -1 : 1;
        shown = shown.slice().sort((a, b) => {
          const x = a[key], y = b[key];
          if (typeof x === "number" && typeof y === "number") return sign * (x - y);
          return sign * String(x).localeCompare(String(y));
        });
      }
      body.replaceChildren(...shown.slice(0, limit).map((r) => el("tr", {
        class: r.onclick ? "clickable" : "", onclick: r.onclick || null,
        ...(r.rowId === undefined ? {} : { "data-index": r.rowId }),
      }, ...columns.map((c) => el("td", { class: c.num ? "num" : "" },
        c.cell ? c.cell(r) : c.num ? num(r[c.key], c.digits === undefined ? 3 : c.digits)
          : r[c.key])))));
      note.textContent = `${shown.length} of ${rows.length} rows` +
        (shown.length > limit ? `, the first ${limit} shown` : "");
    }
    const search = el("input", { type: "search", placeholder: "filter", class: "filter" });
    search.addEventListener("input", () => {
      filter = search.value.toLowerCase();
      draw();
    });
    draw();
    return el("div", { class: "table", id }, search, note,
      el("table", {}, el("thead", {}, head), body));
  }

  // ---- The incident over time.
  const timeline = data.timeline || {};
  const marks = timeline.marks || {};
  const shownKinds = new Set(Object.keys(marks));
  const outliers = (data.jitter && data.jitter.outliers) || [];
  const tip = el("div", { class: "mark-tip", id: "mark-tip" });
  document.body.append(tip);

  // The marks of the shown kinds within [t0, t1]. Each kind's marks are merged intervals in
  // time order, so their ends are ordered too: a binary search finds the first that reaches t0.
  function marksWithin(t0, t1) {
    const found = [];
    for (const kind of shownKinds) {
      const m = marks[kind];
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
      tip.replaceChildren(...found.slice(0, 6).map(([kind, t, d]) => el("div", {},
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

  // The charts are drawn into their section once it is in the document: dygraphs sizes them
  // from their container.
  const sections = document.getElementById("sections");
  const overTime = section("over-time", "Over time");
  sections.append(overTime);
  const duration = data.duration_ms || 0;
  if ((timeline.points || []).length > 0) {
    // One table of rows for dygraphs: each instance's latency, the rolling quantiles at their
    // sample times and the outliers, merged in time order.
    const points = timeline.points, rolling = timeline.rolling || [];
    const rows = [];
    const out = outliers.map((o) => [o.start_ms, o.duration_ms]).sort((a, b) => a[0] - b[0]);
    let i = 0, j = 0, k = 0;
    while (i < points.length || j < rolling.length || k < out.length) {
      const ti = i < points.length ? points[i][0] : Infinity;
      const tj = j < rolling.length ? rolling[j][0] : Infinity;
      const tk = k < out.length ? out[k][0] : Infinity;
      if (ti <= tj && ti <= tk) { rows.push([ti, points[i][1], null, null, null]); ++i; }
      else if (tj <= tk) { rows.push([tj, null, rolling[j][1], rolling[j][2], null]); ++j; }
      else { rows.push([tk, null, null, null, out[k][1]]); ++k; }
    }
    const name = timeline.range;
    const div = el("div", { class: "chart", id: "latency-chart" });
    const legendKinds = el("div", { class: "kinds" }, ...Object.keys(marks).map((kind) => {
      const box = el("input", { type: "checkbox", checked: "" });
      box.addEventListener("change", () => {
        if (box.checked) shownKinds.add(kind); else shownKinds.delete(kind);
        redrawAll();
      });
      return el("label", { class: "kind" }, box,
        el("span", { class: "swatch", style: `background:${COLOURS[kind] || "#888"}` }),
        `${kind} (${marks[kind].length})`);
    }));
    const log = el("input", { type: "checkbox" });
    const reset = el("button", { type: "button" }, "reset zoom");
    overTime.append(
      el("p", {}, `Each "${name}" (${timeline.instances} in all` +
        (timeline.one_in > 1 ? `, 1 in ${timeline.one_in} drawn` : "") +
        `), its P50 and P99 over a rolling ${msText(timeline.window_ms)}, and the outliers ` +
        "explained below; the shaded marks are the events that can cause latency. " +
        "Drag to zoom, double-click or the button to reset, click an outlier for its breakdown."),
      el("div", { class: "controls" }, legendKinds,
        el("label", {}, log, " log scale"), reset),
      div);
    const g = timeChart("latency", div, rows, {
      labels: ["time (ms)", `${name} (ms)`, "rolling P50", "rolling P99", "outlier"],
      ylabel: "latency (ms)",
      height: 320,
      connectSeparatedPoints: true,
      series: {
        [`${name} (ms)`]: { strokeWidth: 0, drawPoints: true, pointSize: 1.5, color: "#4e79a7" },
        "rolling P50": { strokeWidth: 1.5, color: "#59a14f" },
        "rolling P99": { strokeWidth: 1.5, color: "#e15759" },
        outlier: { strokeWidth: 0, drawPoints: true, pointSize: 4, color: "#d62728" },
      },
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

  // ---- Outliers and their explanation.
  const detail = el("div", { id: "outlier-detail", class: "detail" },
    outliers.length ? "Click an outlier (here or on the chart) for its breakdown." : "");
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
    detail.replaceChildren(
      el("h3", {}, `Outlier ${i + 1}: ${msText(o.duration_ms)} at ${msText(o.start_ms)}` +
        ` on ${o.thread}, ${msText(o.excess_ms)} above the median`),
      o.causes.length ? el("table", {}, el("thead", {}, el("tr", {},
        el("th", {}, "what overlapped it"), el("th", { class: "num" }, "overlap"),
        el("th", { class: "num" }, "events"))),
      el("tbody", {}, ...o.causes.map((c) => el("tr", {}, el("td", {}, c.cause,
        c.detail ? el("div", { class: "note" }, c.detail) : null),
        el("td", { class: "num" }, msText(c.overlap_ms)), el("td", { class: "num" }, c.events)))))
        : el("p", {}, "Nothing recorded overlaps it."),
      o.children && o.children.length ? el("h4", {}, "The ranges inside it that deviated") : null,
      tree(o.children));
    for (const tr of document.querySelectorAll("#outlier-table tbody tr"))
      tr.classList.toggle("selected", Number(tr.dataset.index) === i);
    const pad = Math.max(o.duration_ms * 3, duration / 200);
    const g = page.charts.latency;
    if (g) g.updateOptions({ dateWindow: [o.start_ms - pad, o.start_ms + o.duration_ms + pad] });
  };
  const outlierRows = outliers.map((o, i) => ({
    index: i + 1, start_ms: o.start_ms, duration_ms: o.duration_ms, excess_ms: o.excess_ms,
    thread: o.thread, cause: o.causes.length ? o.causes[0].cause : "",
    rowId: i, onclick: () => page.select(i),
  }));
  const outlierTable = table("outlier-table", [
    { key: "index", label: "#", num: true, digits: 0 },
    { key: "start_ms", label: "at (ms)", num: true },
    { key: "duration_ms", label: "duration (ms)", num: true },
    { key: "excess_ms", label: "over the median (ms)", num: true },
    { key: "thread", label: "thread" },
    { key: "cause", label: "largest cause" },
  ], outlierRows);

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

  // ---- Compiles.
  const compile = data.compile || {};
  const compileSection = [];
  if (compile.compiles > 0 || compile.graph_breaks > 0) {
    // Lists (recompiles, fallbacks, limit hits) and reason -> count maps (graph breaks).
    const count = (v) => Array.isArray(v) ? v.length
      : v && typeof v === "object" ? Object.values(v).reduce((a, b) => a + b, 0) : v;
    const facts = [
      ["compiles", compile.compiles], ["compile time", msText(compile.compile_ms)],
      ["recompiles", count(compile.recompiles)], ["graph breaks", count(compile.graph_breaks)],
      ["eager fallbacks", count(compile.eager_fallbacks)],
      ["recompile limit hits", count(compile.recompile_limit_hits)],
      ["restarts", count(compile.restarts)],
      ["cache hits / misses", `${compile.cache_hits ?? "–"} / ${compile.cache_misses ?? "–"}`],
    ];
    compileSection.push(el("dl", { class: "facts" }, ...facts.flatMap(([k, v]) =>
      [el("dt", {}, k), el("dd", { class: Number(v) > 0 && /fallback|limit/.test(k) ? "bad" : "" },
        v)])));
    const lists = [["Recompiles and why", compile.recompiles],
      ["Eager fallbacks", compile.eager_fallbacks],
      ["Recompile limit hits", compile.recompile_limit_hits],
      ["Restarts (Dynamo analysed a frame again)", compile.restarts],
      ["Graph breaks by reason", Object.entries(compile.graph_breaks || {})
        .map(([reason, n]) => `${n}× ${reason}`)]];
    for (const [title, items] of lists) {
      if (Array.isArray(items) && items.length) {
        compileSection.push(el("h3", {}, title), el("ul", {}, ...items.map((x) => el("li", {}, x))));
      }
    }
    const phases = Object.entries(compile.phase_seconds || {});
    if (phases.length) {
      compileSection.push(el("h3", {}, "Compile time by phase"),
        table("phase-table", [{ key: "phase", label: "phase" },
          { key: "ms", label: "own time (ms)", num: true }],
        phases.map(([phase, s]) => ({ phase, ms: s * 1e3 }))));
    }
    if ((compile.modes || []).length) {
      compileSection.push(el("h3", {}, "Compile modes (compare_modes)"), table("mode-table", [
        { key: "mode", label: "mode" },
        { key: "compile_seconds", label: "T_compile (s)", num: true },
        { key: "execute_ms", label: "T_execute (ms)", num: true, digits: 4 },
        { key: "speedup", label: "S", num: true, digits: 2 },
        { key: "break_even", label: "break-even (calls)", num: true,
          cell: (r) => (r.break_even === Infinity ? "never" : String(r.break_even)) },
        { key: "max_abs_error", label: "max abs error", num: true,
          cell: (r) => r.max_abs_error === null ? "–" : r.max_abs_error.toPrecision(3) +
            (r.passed === false ? " (fails)" : "") },
        { key: "graph_breaks", label: "graph breaks", num: true, digits: 0 },
      ], compile.modes.map((m) => ({ ...m,
        break_even: m.break_even_calls === null ? Infinity : Math.ceil(m.break_even_calls) }))));
    }
    if ((compile.cache_misses_explained || []).length) {
      compileSection.push(el("h3", {}, "Cache misses and what changed"),
        el("ul", {}, ...compile.cache_misses_explained.map((m) => el("li", {}, m))));
    }
    if ((compile.generated_code || []).length) {
      compileSection.push(el("h3", {}, "Generated code"), table("generated-table", [
        { key: "compile_id", label: "compile" }, { key: "path", label: "source" },
        { key: "kernel_count", label: "kernels", num: true, digits: 0 },
        { key: "kernel_gpu_ms", label: "their GPU time (ms)", num: true },
        { key: "kernel_runs", label: "runs", num: true, digits: 0 },
      ], compile.generated_code.map((m) => ({ ...m, kernel_count: m.kernels.length }))));
    }
  }
  const jax = compile.jax || {};
  if (jax.compiles + jax.cache_loads > 0) {
    const phases = jax.phase_seconds || {};
    compileSection.push(el("h3", {}, "JAX"), el("dl", { class: "facts" }, ...[
      ["compiles", jax.compiles], ["loads from the persistent cache", jax.cache_loads],
      ["cache hits / misses", `${jax.cache_hits} / ${jax.cache_misses}`],
      ...["trace", "lower", "backend compile", "cache load"].filter((p) => p in phases)
        .map((p) => [p, msText(phases[p] * 1e3)]),
    ].flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
  }
  const triton = compile.triton || {};
  if (triton.compiles + triton.cache_loads > 0) {
    const stages = triton.stage_seconds || {};
    compileSection.push(el("h3", {}, "Triton"), el("dl", { class: "facts" }, ...[
      ["kernel compiles", `${triton.compiles}, ${msText(triton.compile_seconds * 1e3)}`],
      ["loads from its cache", `${triton.cache_loads}, ${msText(triton.cache_load_seconds * 1e3)}`],
      ...["ir", "ttir", "ttgir", "llir", "ptx", "cubin", "store"].filter((s) => s in stages)
        .map((s) => [s, msText(stages[s] * 1e3)]),
    ].flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
  }
  if (compileSection.length === 0) {
    compileSection.push(el("p", {}, "No compiles in this trace."));
  }

  sections.append(
    section("outliers", `Outliers of "${(data.jitter && data.jitter.range) || "–"}"` +
      (data.jitter ? ` above ${msText(data.jitter.threshold_ms)}` : ""), outlierTable, detail),
    section("kernels", "GPU kernel time", ...kernelSection),
    section("ranges", "Ranges", ranges),
    section("compile", "Compiles", ...compileSection));
  document.body.dataset.ready = "1";
})();
