// The report page's building blocks, shared by its scripts (inlined before them): elements,
// numbers, sections, sortable and filterable tables, and long text shortened at a word boundary
// with the whole of it a click away. window.gpuprobeUtil holds them.
(function () {
  "use strict";

  // An element with attributes ("class", "onclick" and the like as listeners) and children;
  // null and undefined children are left out.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    return put(e, ...children);
  }
  // `e`'s children replaced by `children`, null and undefined left out (the DOM's own
  // replaceChildren would write them as the text "null").
  function put(e, ...children) {
    e.replaceChildren(...children.filter((c) => c !== null && c !== undefined)
      .map((c) => (c instanceof Node ? c : String(c))));
    return e;
  }
  const num = (v, digits) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits));
  const msText = (v) => num(v, v >= 100 ? 1 : 3) + " ms";
  const section = (id, title, ...children) =>
    el("section", { id }, el("h2", {}, title), ...children);

  // `text` whole when it is at most `limit` characters; else its start cut at the last word
  // boundary before `limit`, an ellipsis and a "more" toggle that shows the whole text (also the
  // element's title).
  function longText(text, limit = 240) {
    text = String(text);
    if (text.length <= limit) return el("span", { class: "long-text" }, text);
    const space = text.lastIndexOf(" ", limit);
    const cut = text.slice(0, space > limit / 2 ? space : limit).replace(/[\s,;:.]+$/, "");
    const shown = el("span", { class: "text" }, cut + "…");
    const toggle = el("button", { type: "button", class: "more" }, "more");
    toggle.addEventListener("click", () => {
      const whole = toggle.textContent === "more";
      shown.textContent = whole ? text : cut + "…";
      toggle.textContent = whole ? "less" : "more";
    });
    return el("span", { class: "long-text", title: text, "data-full": text }, shown, " ", toggle);
  }

  // A table with sortable headers, a filter box and at most `limit` rows drawn. Columns: {key,
  // label, num (right-aligned, `digits` decimals), cell (r => content), sortKey (the row's field
  // to sort by, when not `key`: the filter matches `key`)}; a row's onclick and rowId
  // (data-index) are kept. `empty`, when given, is what the table says with no rows.
  function table(id, columns, rows, limit = 500, empty = null) {
    let key = null, descending = true, filter = "";
    const body = el("tbody");
    const note = el("p", { class: "note" });
    const head = el("tr", {}, ...columns.map((c) => el("th", {
      class: c.num ? "num" : "", title: "sort",
      onclick: () => {
        const by = c.sortKey || c.key;
        descending = key === by ? !descending : true;
        key = by;
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
      put(body, ...shown.slice(0, limit).map((r) => el("tr", {
        class: r.onclick ? "clickable" : "", onclick: r.onclick || null,
        ...(r.rowId === undefined ? {} : { "data-index": r.rowId }),
      }, ...columns.map((c) => el("td", { class: c.num ? "num" : "" },
        c.cell ? c.cell(r) : c.num ? num(r[c.key], c.digits === undefined ? 3 : c.digits)
          : r[c.key])))));
      note.textContent = rows.length === 0 && empty ? empty
        : `${shown.length} of ${rows.length} rows` +
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

  // Facts as a two-column list: [[term, value, bad?]]; a bad value shows in red.
  const facts = (pairs) => el("dl", { class: "facts" }, ...pairs.flatMap(([k, v, bad]) =>
    [el("dt", {}, k), el("dd", { class: bad ? "bad" : "" }, v)]));

  window.gpuprobeUtil = { el, put, num, msText, section, longText, table, facts };
})();
