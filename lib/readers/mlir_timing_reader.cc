#include "readers/mlir_timing_reader.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "readers/exact_decimal.h"
#include "readers/json_cursor.h"
#include "readers/trace_builder.h"

namespace gpuprobe::readers {
namespace {

// A report is kilobytes; a larger file is not one.
constexpr std::size_t kMaxReport = 64 << 20;
constexpr std::size_t kMaxNodes = 1 << 20;
constexpr int kMaxDepth = 64;

struct Node {
  std::string name;
  std::int64_t wall_ns = 0;  // exact: read from the text, never through a double
  std::vector<Node> children;
};

std::string_view skip_space(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  return s;
}

// ---- The text table: "  0.0006 ( 31.1%)    0.0006 ( 33.5%)  Parser", its name indented two
// spaces a level under the "----Name----" header, the wall time the column before the name.
class TextReport {
 public:
  explicit TextReport(ByteSource& in) : in_(in) {}

  Status read(Node* total) {
    std::string text;
    for (std::string_view chunk = in_.available(); !chunk.empty(); chunk = in_.available()) {
      if (text.size() + chunk.size() > kMaxReport)
        return in_.error_at(in_.offset(), "an MLIR timing report under 64 MiB");
      text.append(chunk);
      in_.advance(chunk.size());
    }
    if (!in_.status().ok()) return in_.status();
    std::size_t name_column = std::string::npos;
    int wall_column = -1, columns = 0;  // which "(…%)" group is the wall time
    std::vector<Node*> stack;
    std::size_t nodes = 0, line_no = 0;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = std::min(text.find('\n', at), text.size());
      const std::string_view line(text.data() + at, end - at);
      ++line_no;
      at = end + 1;
      if (name_column == std::string::npos) {
        const std::size_t name = line.find("----Name----");
        if (name == std::string::npos) continue;
        name_column = name;
        for (std::size_t p = 0; p < name; p = line.find("Time----", p) + 8) {
          const std::size_t found = line.find("Time----", p);
          if (found == std::string::npos || found > name) break;
          if (line.compare(line.rfind("----", found) + 4, found - line.rfind("----", found) - 4,
                           "Wall ") == 0)
            wall_column = columns;
          ++columns;
        }
        if (wall_column < 0) return error(line_no, "a \"----Wall Time----\" column");
        continue;
      }
      if (skip_space(line).empty()) continue;
      if (line.size() <= name_column) return error(line_no, "a row with a name");
      // The figures: `columns` groups of "SECONDS ( PERCENT%)".
      std::int64_t wall = 0;
      std::string_view rest = line.substr(0, name_column);
      for (int c = 0; c < columns; ++c) {
        rest = skip_space(rest);
        std::int64_t ns = -1;
        const std::size_t close = rest.find(')');
        if (!decimal_to_scaled(rest.substr(0, rest.find(' ')), 9, &ns) || ns < 0 ||
            close == std::string_view::npos)
          return error(line_no, "a time in seconds and its share, \"0.0012 ( 3.4%)\"");
        if (c == wall_column) wall = ns;
        rest.remove_prefix(close + 1);
      }
      std::size_t indent = 0;
      while (name_column + indent < line.size() && line[name_column + indent] == ' ') ++indent;
      std::string name(line.substr(name_column + indent));
      while (!name.empty() && (name.back() == '\r' || name.back() == ' ')) name.pop_back();
      if (name == "Total" && indent == 0) {
        total->wall_ns = wall;
        break;
      }
      if (nodes == 0 && name == "root")  // the list display: aggregates, their nesting lost
        return error(line_no,
                     "the tree display (-mlir-timing-display=tree, the default), not the list");
      if (++nodes > kMaxNodes) return error(line_no, "at most a million passes");
      const std::size_t depth = indent / 2;
      if (depth > stack.size() || depth >= static_cast<std::size_t>(kMaxDepth))
        return error(line_no, "a pass nested at most one level below the row above it");
      stack.resize(depth);
      std::vector<Node>& siblings = depth == 0 ? total->children : stack.back()->children;
      siblings.push_back({std::move(name), wall, {}});
      stack.push_back(&siblings.back());
    }
    if (name_column == std::string::npos)
      return in_.error_at(0, "an MLIR timing report (its \"----Name----\" header)");
    return {};
  }

 private:
  Status error(std::size_t line, const std::string& what) const {
    return Status::Error(in_.name() + ": line " + std::to_string(line) + ": expected " + what);
  }
  ByteSource& in_;
};

// ---- The JSON: [{"user": {...}, "wall": {"duration": S, "percentage": P}, "name": N,
// "passes": [...]}, ...], where a pass list ends with an empty object.
class JsonReport {
 public:
  explicit JsonReport(ByteSource& in) : in_(in), json_(in) {}

  Status read(Node* total) {
    std::vector<Node> top;
    if (Status s = list(&top, 0); !s.ok()) return s;
    for (Node& n : top) {
      if (n.name == "Total") {
        total->wall_ns = n.wall_ns;
      } else {
        total->children.push_back(std::move(n));
      }
    }
    if (json_.peek() != -1) return json_.error("the end of the report after its array");
    return {};
  }

 private:
  Status list(std::vector<Node>* out, int depth) {
    if (depth >= kMaxDepth) return json_.error("passes nested at most 64 deep");
    if (Status s = json_.expect('[', "'[' (a list of passes)"); !s.ok()) return s;
    if (json_.consume(']')) return {};
    for (bool more = true; more;) {
      Node node;
      bool named = false;
      if (Status s = json_.expect('{', "'{' (a pass)"); !s.ok()) return s;
      if (!json_.consume('}')) {
        for (bool fields = true; fields;) {
          std::string key;
          if (Status s = json_.string(&key); !s.ok()) return s;
          if (Status s = json_.expect(':', "':'"); !s.ok()) return s;
          Status s;
          if (key == "name") {
            s = json_.string(&node.name);
            named = true;
          } else if (key == "wall") {
            s = duration(&node.wall_ns);
          } else if (key == "passes") {
            s = list(&node.children, depth + 1);
          } else {
            s = json_.skip_value();
          }
          if (!s.ok()) return s;
          if (Status n = json_.next('}', &fields); !n.ok()) return n;
        }
      }
      if (named) {  // the empty object that ends a list is no pass
        if (++nodes_ > kMaxNodes) return json_.error("at most a million passes");
        out->push_back(std::move(node));
      }
      if (Status s = json_.next(']', &more); !s.ok()) return s;
    }
    return {};
  }

  Status duration(std::int64_t* ns) {
    if (Status s = json_.expect('{', "'{' (a time: duration and percentage)"); !s.ok()) return s;
    if (json_.consume('}')) return {};
    for (bool more = true; more;) {
      std::string key;
      if (Status s = json_.string(&key); !s.ok()) return s;
      if (Status s = json_.expect(':', "':'"); !s.ok()) return s;
      if (key == "duration") {
        json_.peek();
        const std::uint64_t at = json_.offset();
        if (Status s = json_.scaled(9, ns, "a duration in seconds"); !s.ok()) return s;
        if (*ns < 0) return in_.error_at(at, "a duration of 0 seconds or more");
      } else if (Status s = json_.skip_value(); !s.ok()) {
        return s;
      }
      if (Status s = json_.next('}', &more); !s.ok()) return s;
    }
    return {};
  }

  ByteSource& in_;
  JsonCursor json_;
  std::size_t nodes_ = 0;
};

// Sums of lengths stop at 2^62 ns (146 years): a million passes of absurd times cannot wrap.
std::int64_t add_capped(std::int64_t a, std::int64_t b) {
  constexpr std::int64_t kCap = std::int64_t{1} << 62;
  return std::min(std::min(a, kCap) + std::min(b, kCap), kCap);
}

// A node's length: its own, or its children's laid end to end if they are longer.
std::int64_t length(const Node& n) {
  std::int64_t children = 0;
  for (const Node& c : n.children) children = add_capped(children, length(c));
  return std::max(add_capped(n.wall_ns, 0), children);
}

Status emit(TraceBuilder& b, std::uint32_t thread, Category category, const Node& n,
            std::int64_t begin) {
  std::int64_t at = begin;
  for (const Node& c : n.children) {
    if (Status s = emit(b, thread, category, c, at); !s.ok()) return s;
    at = add_capped(at, length(c));
  }
  return b.range(thread, b.site(n.name, category), begin, add_capped(begin, length(n)));
}

}  // namespace

bool looks_like_mlir_timing(const char* head, std::size_t n) {
  std::string_view s = skip_space(std::string_view(head, n));
  if (s.substr(0, 4) == "===-") return true;
  if (s.empty() || s.front() != '[') return false;
  s = skip_space(s.substr(1));
  if (s.empty() || s.front() != '{') return false;
  s = skip_space(s.substr(1));
  return s.substr(0, 6) == "\"user\"" || s.substr(0, 6) == "\"wall\"";
}

Status read_mlir_timing(ByteSource& in, Sink& sink, const ProgressFn& progress) {
  TraceBuilder builder(sink);
  TraceInfo info;
  info.process_name = "MLIR pass timing";
  Node total{"MLIR pass pipeline (total)", 0, {}};
  const bool json = in.peek() == '[' || skip_space(in.available()).substr(0, 1) == "[";
  Status read = json ? JsonReport(in).read(&total) : TextReport(in).read(&total);
  if (read.ok()) {
    read = builder.open(info);
    const Category category = builder.category("mlir");
    const std::uint32_t thread = builder.thread(0, 1);
    builder.name_thread(0, 1, "MLIR passes");
    if (read.ok()) read = emit(builder, thread, category, total, 0);
  }
  if (progress) progress(1.0, builder.events());
  return builder.finish(read, info, Stats{});
}

}  // namespace gpuprobe::readers
