#include "analysis/section.h"

#include <nlohmann/json.hpp>

namespace gpuprobe::analysis {
namespace {

// `text` padded to `c.width` on the side away from its alignment, or shortened when it clips.
std::string cell_text(const std::string& text, const Column& c) {
  const std::size_t width = c.width > 0 ? static_cast<std::size_t>(c.width) : 0;
  if (text.size() > width) {
    if (!c.clip) return text;
    return width > 3 ? text.substr(0, width - 3) + "..." : text.substr(0, width);
  }
  const std::string pad(width - text.size(), ' ');
  return c.left ? text + pad : pad + text;
}

void write_row(std::FILE* out, const std::string& prefix, const Table& t,
               const std::vector<std::string>& cells) {
  std::size_t shown = cells.size();
  while (shown > 0 && cells[shown - 1].empty()) --shown;  // trailing empty cells: nothing
  std::string line = prefix;
  for (std::size_t i = 0; i < shown && i < t.columns.size(); ++i) {
    if (i > 0) line += t.separator;
    line += cell_text(cells[i], t.columns[i]);
  }
  line += '\n';
  std::fputs(line.c_str(), out);
}

}  // namespace

Section& Section::line(int indent, std::string text) {
  Block b;
  b.indent = indent;
  b.text = std::move(text);
  blocks.push_back(std::move(b));
  return *this;
}

Table& Section::table(int indent, std::vector<Column> columns) {
  Block b;
  b.indent = indent;
  b.table.columns = std::move(columns);
  blocks.push_back(std::move(b));
  return blocks.back().table;
}

void write_text(const Section& section, std::FILE* out) {
  if (section.empty()) return;
  if (section.spaced) std::fputc('\n', out);
  for (const Block& b : section.blocks) {
    const std::string indent(2 * static_cast<std::size_t>(b.indent), ' ');
    if (!b.is_table()) {
      std::fprintf(out, "%s%s\n", indent.c_str(), b.text.c_str());
      continue;
    }
    const Table& t = b.table;
    std::vector<std::string> headings;
    for (const Column& c : t.columns) headings.push_back(c.heading);
    write_row(out, indent + t.lead, t, headings);
    const std::string row_prefix = indent + std::string(t.lead.size(), ' ');
    const std::string note_indent = indent + "  ";
    for (const Row& r : t.rows) {
      write_row(out, row_prefix, t, r.cells);
      for (const std::string& note : r.notes)
        std::fprintf(out, "%s%s\n", note_indent.c_str(), note.c_str());
    }
  }
}

nlohmann::json to_json(const Section& section) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const Block& b : section.blocks) {
    if (!b.is_table()) {
      blocks.push_back({{"indent", b.indent}, {"text", b.text}});
      continue;
    }
    nlohmann::json columns = nlohmann::json::array(), rows = nlohmann::json::array();
    for (const Column& c : b.table.columns)
      columns.push_back({{"heading", c.heading}, {"width", c.width}, {"left", c.left}});
    for (const Row& r : b.table.rows) rows.push_back({{"cells", r.cells}, {"notes", r.notes}});
    blocks.push_back({{"indent", b.indent},
                      {"table", {{"lead", b.table.lead}, {"columns", columns}, {"rows", rows}}}});
  }
  return {{"id", section.id}, {"blocks", blocks}};
}

}  // namespace gpuprobe::analysis
