// The report page's sections drawn from the report's figures alone (no chart): data loading and
// the compiles. window.gpuprobeSections.dataLoading(data) and .compile(data) give each section's
// contents; page.js places them.
(function () {
  "use strict";
  const { el, num, msText, longText, table, facts } = window.gpuprobeUtil;

  // gpuprobe.torch.instrument_dataloader()'s batches: how long the program waited for them.
  function dataLoading(data) {
    const d = data.data_loading || {};
    if (!(d.batches > 0)) {
      return [el("p", { class: "empty" }, "No data loading recorded: " +
        "gpuprobe.torch.instrument_dataloader(loader) records the wait for each batch.")];
    }
    const of = d.steps_ms > 0 ? "the steps' time" : "the trace's time";
    return [
      el("p", {}, `${d.batches} batches; the program waited ${msText(d.wait_ms)} for them, ` +
        `${num(100 * d.share, 1)} % of ${of}.`),
      facts([
        ["batches", d.batches], ["waiting, in all", msText(d.wait_ms)],
        [`share of ${of}`, `${num(100 * d.share, 1)} %`, d.share >= 0.1],
        ["per batch P50", msText(d.p50_ms)], ["per batch P99", msText(d.p99_ms)],
        ["per batch max", msText(d.max_ms)],
      ]),
    ];
  }

  // Lists (recompiles, fallbacks, limit hits) and reason -> count maps (graph breaks).
  const count = (v) => Array.isArray(v) ? v.length
    : v && typeof v === "object" ? Object.values(v).reduce((a, b) => a + b, 0) : v;
  const known = (v, text) => (v === null || v === undefined ? "–" : text(v));

  function torchCompile(data, out) {
    const c = data.compile || {};
    out.push(facts([
      ["compiles", c.compiles], ["compile time", msText(c.compile_ms)],
      ["recompiles", count(c.recompiles)], ["graph breaks", count(c.graph_breaks)],
      ["eager fallbacks", count(c.eager_fallbacks), count(c.eager_fallbacks) > 0],
      ["recompile limit hits", count(c.recompile_limit_hits), count(c.recompile_limit_hits) > 0],
      ["restarts", count(c.restarts)],
      ["cache hits / misses", `${c.cache_hits ?? "–"} / ${c.cache_misses ?? "–"}`],
      ["compiled code ran", c.runs > 0 ? `${c.runs} times, ${msText(c.execute_ms)}` : "–"],
      ["compile time per run", known(c.amortised_ms, msText)],
      ["compiled share of the time outside compiles",
        known(c.compiled_share, (v) => `${num(100 * v, 1)} %`)],
      ["Amdahl's bound on faster compiled code", known(c.amdahl_bound, (v) => `${num(v, 2)}x`)],
      ["break-even runs", known(c.break_even_runs, (v) => num(v, 0))],
    ]));
    const lists = [["Recompiles and why", c.recompiles],
      ["Eager fallbacks", c.eager_fallbacks],
      ["Recompile limit hits", c.recompile_limit_hits],
      ["Restarts (Dynamo analysed a frame again)", c.restarts],
      ["Graph breaks by reason", Object.entries(c.graph_breaks || {})
        .map(([reason, n]) => `${n}× ${reason}`)]];
    for (const [title, items] of lists) {
      if (Array.isArray(items) && items.length) {
        out.push(el("h3", {}, title),
          el("ul", { class: "texts" }, ...items.map((x) => el("li", {}, longText(x)))));
      }
    }
    const phases = Object.entries(c.phase_seconds || {});
    if (phases.length) {
      out.push(el("h3", {}, "Compile time by phase"),
        table("phase-table", [{ key: "phase", label: "phase" },
          { key: "ms", label: "own time (ms)", num: true }],
        phases.map(([phase, s]) => ({ phase, ms: s * 1e3 }))));
    }
    if ((c.modes || []).length) {
      // The columns and their headings are the report's (compile.mode_columns, one list with
      // its text and the counters compare_modes() writes); "passed" is said in the error's cell.
      const digits = { execute_ms: 4, speedup: 2, graph_breaks: 0, compiles: 0 };
      const cells = {
        break_even_calls: (r) => (r.break_even === Infinity ? "never" : String(r.break_even)),
        max_abs_error: (r) => r.max_abs_error === null ? "–" : r.max_abs_error.toPrecision(3) +
          (r.passed === false ? " (fails)" : ""),
      };
      const columns = (c.mode_columns || []).filter((col) => col.key !== "passed")
        .map((col) => ({ key: col.key === "break_even_calls" ? "break_even" : col.key,
          label: col.heading, num: true, digits: digits[col.key], cell: cells[col.key] }));
      out.push(el("h3", {}, "Compile modes (compare_modes)"), table("mode-table",
        [{ key: "mode", label: "mode" }, ...columns], c.modes.map((m) => ({ ...m,
          break_even: m.break_even_calls === null ? Infinity : Math.ceil(m.break_even_calls) }))));
    }
    if ((c.cache_misses_explained || []).length) {
      out.push(el("h3", {}, "Cache misses and what changed"),
        el("ul", { class: "texts" }, ...c.cache_misses_explained.map((m) => el("li", {},
          longText(m)))));
    }
    if ((c.generated_code || []).length) {
      // Graph runs: gpuprobe.torch's compiled-graph ranges, where the trace tells each module's
      // apart; kernel launches: the GPU's records of its kernels (none for CPU code).
      const gpu = (data.kernels || []).length > 0;
      out.push(el("h3", {}, "Generated code"), table("generated-table", [
        { key: "compile_id", label: "compile" }, { key: "path", label: "source" },
        { key: "kernel_count", label: "kernels", num: true, digits: 0 },
        { key: "graph_runs", label: "graph runs", num: true, digits: 0,
          cell: (r) => r.graph_runs === null ? el("span", { title: "several compiles' " +
            "graphs share the recorded runs: the trace does not say which ran" }, "–")
            : String(r.graph_runs) },
        { key: "kernel_runs", label: "kernel launches (GPU)", num: true, digits: 0,
          cell: (r) => (gpu ? String(r.kernel_runs) : "–") },
        { key: "kernel_gpu_ms", label: "their GPU time (ms)", num: true,
          cell: (r) => (gpu ? num(r.kernel_gpu_ms, 3) : "–") },
      ], c.generated_code.map((m) => ({ ...m, kernel_count: m.kernels.length,
        graph_runs: m.graph_runs === undefined ? null : m.graph_runs }))),
      gpu ? null : el("p", { class: "note" },
        "No GPU kernels in this trace: the generated kernels ran on the CPU, or unrecorded."));
    }
  }

  function compile(data) {
    const c = data.compile || {};
    const out = [];
    if (c.compiles > 0 || count(c.graph_breaks) > 0 || count(c.eager_fallbacks) > 0) {
      torchCompile(data, out);
    }
    const jax = c.jax || {};
    if (jax.compiles + jax.cache_loads > 0) {
      const phases = jax.phase_seconds || {};
      out.push(el("h3", {}, "JAX"), facts([
        ["compiles", jax.compiles], ["loads from the persistent cache", jax.cache_loads],
        ["cache hits / misses", `${jax.cache_hits} / ${jax.cache_misses}`],
        ...(jax.phase_order || []).filter((p) => p in phases)
          .map((p) => [p, msText(phases[p] * 1e3)]),
      ]));
    }
    const triton = c.triton || {};
    if (triton.compiles + triton.cache_loads > 0) {
      const stages = triton.stage_seconds || {};
      out.push(el("h3", {}, "Triton"), facts([
        ["kernel compiles", `${triton.compiles}, ${msText(triton.compile_seconds * 1e3)}`],
        ["loads from its cache",
          `${triton.cache_loads}, ${msText(triton.cache_load_seconds * 1e3)}`],
        ...["ir", "ttir", "ttgir", "llir", "ptx", "cubin", "store"].filter((s) => s in stages)
          .map((s) => [s, msText(stages[s] * 1e3)]),
      ]));
    }
    if (out.length === 0) out.push(el("p", { class: "empty" }, "No compiles in this trace."));
    return out;
  }

  window.gpuprobeSections = { dataLoading, compile };
})();
