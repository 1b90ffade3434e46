// A described section (analysis/section.h) as the terminal prints it and as the JSON carries it:
// the padding and clipping rules the old printf formats had, byte for byte; and every section id
// the report can write is documented in docs/report.md.
#include "analysis/section.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "analysis/report_sections.h"
#include "analysis/trace_report.h"

namespace gpuprobe::test {
namespace {

std::string text_of(const analysis::Section& s) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&buffer, &size);
  analysis::write_text(s, f);
  std::fclose(f);
  std::string out(buffer, size);
  std::free(buffer);
  return out;
}

TEST_CASE("a section prints as printf's formats did") {
  analysis::Section s("demo");
  s.line(0, "demo (2 names)");
  analysis::Table& t = s.table(1, {{"name", 10, true, true}, {"calls", 6}, {"", 0, true}});
  t.rows.push_back({{"short", "12", ""}, {"note a", "note b"}});
  t.rows.push_back({{"a much longer name", "1234567", "(flag)"}, {}});
  s.line(2, "deeper");
  const std::string expected =
      "\n"
      "demo (2 names)\n"
      "  name        calls\n"  // the empty heading: nothing, no separator
      "  short          12\n"  // %-10s %6s
      "    note a\n"           // notes one indent deeper than the table
      "    note b\n"
      "  a much ... 1234567 (flag)\n"  // clipped to 10; a wider figure printed whole
      "    deeper\n";
  CHECK(text_of(s) == expected);
}

TEST_CASE("a table's lead heads it and indents its rows; its separator joins the cells") {
  analysis::Section s("modes", false);
  analysis::Table& t = s.table(1, {{"mode", 8, true}, {"S", 5}});
  t.lead = "modes: ";
  t.separator = "  ";
  t.rows.push_back({{"default", "0.69"}, {}});
  CHECK(text_of(s) ==
        "  modes: mode          S\n"
        "         default    0.69\n");
  CHECK(text_of(analysis::Section("empty")).empty());  // nothing, not even the blank line
}

TEST_CASE("the JSON holds a section's lines and cells unpadded and unclipped") {
  analysis::Section s("demo");
  s.line(0, "heading");
  analysis::Table& t = s.table(1, {{"name", 4, true, true}, {"n", 3}});
  t.rows.push_back({{"a long name", "7"}, {"why"}});
  const nlohmann::json j = analysis::to_json(s);
  CHECK(j["id"] == "demo");
  CHECK(j["blocks"][0] == nlohmann::json({{"indent", 0}, {"text", "heading"}}));
  const nlohmann::json& table = j["blocks"][1]["table"];
  CHECK(j["blocks"][1]["indent"] == 1);
  CHECK(table["columns"][0] == nlohmann::json({{"heading", "name"}, {"width", 4}, {"left", true}}));
  CHECK(table["rows"][0]["cells"] == nlohmann::json({"a long name", "7"}));
  CHECK(table["rows"][0]["notes"] == nlohmann::json({"why"}));
}

TEST_CASE("every section the report can write is documented, in the order it prints") {
  const std::vector<std::string> ids = analysis::section_ids();
  REQUIRE(ids.size() >= 16);
  std::ifstream file(GPUPROBE_REPORT_DOC);
  std::stringstream doc;
  doc << file.rdbuf();
  const std::string text = doc.str();
  REQUIRE(!text.empty());
  // docs/report.md lists the ids, in order, in the `sections` row of its JSON table.
  const std::size_t row = text.find("| `sections` |");
  REQUIRE(row != std::string::npos);
  std::size_t at = text.find("Ids, in order:", row);
  REQUIRE(at != std::string::npos);
  for (const std::string& id : ids) {
    CAPTURE(id);
    const std::size_t found = text.find("`" + id + "`", at);
    CHECK(found != std::string::npos);  // a new section: add its id to docs/report.md
    if (found != std::string::npos) at = found;
  }
}

TEST_CASE("the JSON's sections are the text's, in order") {
  analysis::ReportResult r;
  r.start_ns = 0;
  r.end_ns = 2'000'000;
  r.events = 3;
  r.verdict = "CPU only";
  r.data.batches = 4;
  r.data.wait_ns = 1'000'000;
  const std::vector<analysis::Section> sections = analysis::describe_report(r, {});
  REQUIRE(sections.size() == 2);
  CHECK(sections[0].id == "summary");
  CHECK(sections[1].id == "data_loading");
  CHECK(text_of(sections[0]) == "trace: 2.000 ms, 3 events\nverdict: CPU only\n");
  CHECK(text_of(sections[1]).rfind("\ndata loading: 4 batches, 1.000 ms waiting for them", 0) == 0);
}

}  // namespace
}  // namespace gpuprobe::test
