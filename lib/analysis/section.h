// A section of `gpuprobe report` described once, for every reader: lines of text at an indent
// and tables whose cells are already worded. The terminal prints it (write_text); the report's
// JSON carries it under "sections" (to_json), and the report page draws the same lines and
// tables from there — no section's wording lives in two renderers. Each analysis describes its
// own section(s), from its result, in its .cc (a `describe_*` function), and report_sections.cc
// lists them in the order the report prints them.
#pragma once

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuprobe::analysis {

// How much of each table the text shows, and in which order (`gpuprobe report --limit/--sort`).
struct TextOptions {
  std::size_t limit = 15;      // rows per table
  std::string sort = "total";  // total, calls, mean, max, p99
};

// A column of a described table: its heading, the width the terminal pads it to (a wider cell
// is printed whole, as printf would), and how.
struct Column {
  std::string heading;
  int width = 0;
  bool left = false;  // left-aligned (names); else right-aligned (figures)
  bool clip = false;  // the terminal shortens a longer cell to `width`, ending it with "..."
};

// A row: its cells, one per column, and lines said beneath it (one indent deeper).
struct Row {
  std::vector<std::string> cells;
  std::vector<std::string> notes;
};

// A table. The terminal prints `lead` before the header and as many spaces before each row,
// then the cells joined by `separator`; a row's trailing empty cells print nothing.
struct Table {
  std::string lead;
  std::string separator = " ";
  std::vector<Column> columns;
  std::vector<Row> rows;
};

// One line of text, or a table, at `indent` levels (two spaces each in the terminal).
struct Block {
  int indent = 0;
  std::string text;  // a line, when `table` has no columns
  Table table;
  bool is_table() const { return !table.columns.empty(); }
};

// A section: `id` names it in the JSON (the page finds its sections by id); `spaced` puts a
// blank line before it in the terminal. Its first line, when it has one, is its heading.
struct Section {
  std::string id;
  bool spaced = true;
  std::deque<Block> blocks;  // a deque: a table() stays where it is as more blocks are added

  explicit Section(std::string section_id, bool blank_line_before = true)
      : id(std::move(section_id)), spaced(blank_line_before) {}
  // Adds a line of text at `indent` levels.
  Section& line(int indent, std::string text);
  // Adds a table at `indent` levels, with these columns; fill its rows through the result (it
  // stays valid while the section lives).
  Table& table(int indent, std::vector<Column> columns);
  bool empty() const { return blocks.empty(); }
};

// The section as the terminal shows it (nothing for an empty one).
void write_text(const Section& section, std::FILE* out);
// The section as the report's JSON holds it: {"id", "blocks": [{"indent", "text"} or
// {"indent", "table": {"lead", "columns": [{"heading", "width", "left"}], "rows": [{"cells",
// "notes"}]}}]} (docs/report.md).
nlohmann::json to_json(const Section& section);

// "s" after a count other than 1.
inline const char* plural(std::size_t n) { return n == 1 ? "" : "s"; }

}  // namespace gpuprobe::analysis
