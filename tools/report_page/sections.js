// The report page's sections that are the report's own text: the JSON's "sections", each an
// analysis's description (lib/analysis/section.h) — the lines and tables the terminal prints,
// drawn here as HTML, so that their wording is written once, in the analysis. A section's
// first line (indent 0) is its heading; deeper lines nest as lists, long ones shortened at a word
// with the whole a click away; tables sort and filter. window.gpuprobeSections.described(data,
// ids) gives the elements of the sections named, in the report's order.
(function () {
  "use strict";
  const { el, longText, table } = window.gpuprobeUtil;

  // A figure cell ("2.037", "12.5%", "never", "-") as a number to sort by: "never" above every
  // figure, "-" (unknown) below; a name stays text.
  const NUMBER = /^-?\d+(\.\d+)?(e[-+]?\d+)?%?$/i;
  const value = (cell, left) => left ? cell : NUMBER.test(cell) ? parseFloat(cell)
    : cell === "never" ? Infinity : -Infinity;

  function describedTable(id, t) {
    // Each cell's text shown and filtered (t<i>), its value sorted by (c<i>).
    const columns = t.columns.map((c, i) => ({
      key: `t${i}`, sortKey: `c${i}`, label: c.heading || " ", num: !c.left,
      cell: (r) => r[`t${i}`],
    }));
    const withNotes = t.rows.some((r) => r.notes.length > 0);
    if (withNotes) columns.push({ key: "notes", label: "notes", cell: (r) => r.notes });
    const rows = t.rows.map((r) => {
      const row = { notes: r.notes.join("; ") };
      r.cells.forEach((cell, i) => {
        row[`c${i}`] = value(cell, (t.columns[i] || {}).left);
        row[`t${i}`] = cell;
      });
      return row;
    });
    return el("div", { class: "described-table" },
      t.lead ? el("p", {}, t.lead.replace(/:\s*$/, "")) : null, table(id, columns, rows));
  }

  // One section's blocks: the heading, then its lines as nested lists and its tables.
  function render(section) {
    const out = [];
    const lists = [];  // the open lists, one per indent below the heading
    let tables = 0;
    for (const b of section.blocks) {
      if (b.table) {
        lists.length = 0;
        out.push(describedTable(`${section.id}-table-${tables++}`, b.table));
        continue;
      }
      if (b.indent === 0) {
        lists.length = 0;
        out.push(el("h3", {}, longText(b.text)));
        continue;
      }
      const depth = b.indent - 1;
      lists.length = Math.min(lists.length, depth + 1);
      while (lists.length <= depth) {
        // A list one level deeper nests in the last item of the one above (an empty item when a
        // line skips a level).
        const list = el("ul", { class: "texts" });
        if (lists.length === 0) {
          out.push(list);
        } else {
          const above = lists[lists.length - 1];
          if (!above.lastElementChild) above.append(el("li", { class: "holder" }));
          above.lastElementChild.append(list);
        }
        lists.push(list);
      }
      lists[depth].append(el("li", {}, longText(b.text)));
    }
    return el("div", { class: "described", id: `section-${section.id}` }, ...out);
  }

  function described(data, ids) {
    return (data.sections || []).filter((s) => ids.includes(s.id)).map(render);
  }

  window.gpuprobeSections = { described, render };
})();
