#include "readers/pickle_value.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_map>

namespace gpuprobe::readers {
namespace {

// While reading, values are shared nodes: the memo and the stack refer to the same list, and
// items appended after a BINPUT must show through a later BINGET.
struct Node {
  PickleValue::Kind kind = PickleValue::Kind::kNone;
  bool builder = false;  // a torch.jit._pickle list builder, to be applied by REDUCE
  bool boolean = false;
  std::int64_t integer = 0;
  double number = 0;
  std::string text;
  std::vector<std::shared_ptr<Node>> items, keys;
};
using NodePtr = std::shared_ptr<Node>;

constexpr int kMaxDepth = 200;

// The builders TorchScript's pickler wraps typed lists in (`build_intlist([1, 2])`), and the
// type tag it restores on dicts and lists: each returns its first argument as far as the data go.
bool is_list_builder(std::string_view module, std::string_view name) {
  if (module != "torch.jit._pickle") return false;
  return name == "build_intlist" || name == "build_doublelist" || name == "build_boollist" ||
         name == "restore_type_tag";
}

class Unpickler {
 public:
  Unpickler(std::string_view data, const std::string& name) : data_(data), name_(name) {}
  ~Unpickler() {
    // Break any cycle a hostile pickle built (a list appended to itself) so the nodes are freed.
    for (const NodePtr& n : containers_) {
      n->items.clear();
      n->keys.clear();
    }
  }

  Status run(PickleValue* out) {
    while (true) {
      if (pos_ >= data_.size()) return error("STOP (the pickle ends early)");
      const std::size_t at = pos_;
      const auto op = static_cast<unsigned char>(data_[pos_++]);
      Status s = step(op, at);
      if (!s.ok()) return s;
      if (op == '.') break;
    }
    if (result_->builder) return error_at(pos_ - 1, "a value to STOP at, not a callable");
    std::size_t budget = 16 * data_.size() + 1024;
    return convert(*result_, 0, &budget, out);
  }

 private:
  Status error(const std::string& what) const { return error_at(pos_, what); }
  Status error_at(std::size_t at, const std::string& what) const {
    return Status::Error(name_ + ": byte " + std::to_string(at) + ": expected " + what);
  }

  bool take(std::size_t n, std::string_view* out) {
    if (data_.size() - pos_ < n) return false;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  // An unsigned little-endian integer of `n` bytes.
  bool take_le(std::size_t n, std::uint64_t* out) {
    std::string_view b;
    if (!take(n, &b)) return false;
    std::uint64_t v = 0;
    for (std::size_t i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[i]);
    *out = v;
    return true;
  }
  bool take_line(std::string_view* out) {
    const std::size_t nl = data_.find('\n', pos_);
    if (nl == std::string_view::npos) return false;
    *out = data_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return true;
  }

  NodePtr make(PickleValue::Kind kind) {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    if (kind == PickleValue::Kind::kList || kind == PickleValue::Kind::kDict)
      containers_.push_back(n);
    return n;
  }
  void push(NodePtr n) { stack_.push_back(std::move(n)); }
  bool pop(NodePtr* out) {
    const std::size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) return false;
    *out = std::move(stack_.back());
    stack_.pop_back();
    return true;
  }
  // The values since the last MARK, which is removed.
  bool pop_mark(std::vector<NodePtr>* out) {
    if (marks_.empty()) return false;
    const std::size_t m = marks_.back();
    marks_.pop_back();
    out->assign(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return true;
  }
  NodePtr top(PickleValue::Kind kind) const {
    const std::size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor || stack_.back()->kind != kind || stack_.back()->builder)
      return nullptr;
    return stack_.back();
  }
  static void add_items(const NodePtr& list, std::vector<NodePtr>& values) {
    for (NodePtr& v : values) list->items.push_back(std::move(v));
  }
  Status add_pairs(const NodePtr& dict, std::vector<NodePtr>& values, std::size_t at) {
    if (values.size() % 2 != 0) return error_at(at, "keys and values in pairs");
    for (std::size_t i = 0; i < values.size(); i += 2) {
      dict->keys.push_back(std::move(values[i]));
      dict->items.push_back(std::move(values[i + 1]));
    }
    return Status();
  }
  Status string_of(std::size_t len_bytes, std::size_t at) {
    std::uint64_t len = 0;
    std::string_view b;
    if (!take_le(len_bytes, &len) || len > data_.size() - pos_ || !take(len, &b))
      return error_at(at, "a string within the file");
    NodePtr n = make(PickleValue::Kind::kString);
    n->text.assign(b);
    push(std::move(n));
    return Status();
  }
  Status integer_of(std::size_t len_bytes, std::size_t at) {
    std::uint64_t len = 0;
    if (!take_le(len_bytes, &len) || len > 8) return error_at(at, "an integer of 64 bits at most");
    std::uint64_t v = 0;
    if (len > 0 && !take_le(len, &v)) return error_at(at, "the integer's bytes");
    if (len > 0 && len < 8 && (v >> (8 * len - 1)) != 0) v |= ~0ull << (8 * len);  // its sign
    NodePtr n = make(PickleValue::Kind::kInt);
    n->integer = static_cast<std::int64_t>(v);
    push(std::move(n));
    return Status();
  }
  Status memo_put(std::uint64_t index, std::size_t at) {
    if (stack_.empty()) return error_at(at, "a value to memoize");
    if (memo_.size() > data_.size()) return error_at(at, "fewer memo entries than bytes");
    memo_[index] = stack_.back();
    return Status();
  }
  Status memo_get(std::uint64_t index, std::size_t at) {
    auto it = memo_.find(index);
    if (it == memo_.end()) return error_at(at, "a memo entry put before it is got");
    push(it->second);
    return Status();
  }
  Status global(std::string_view module, std::string_view name, std::size_t at) {
    if (!is_list_builder(module, name))
      return error_at(at, "plain data, not a reference to " + std::string(module) + "." +
                              std::string(name) + " (objects are not built)");
    NodePtr n = make(PickleValue::Kind::kNone);
    n->builder = true;
    push(std::move(n));
    return Status();
  }

  Status step(unsigned char op, std::size_t at) {
    using K = PickleValue::Kind;
    std::uint64_t u = 0;
    std::string_view b;
    std::vector<NodePtr> values;
    NodePtr a, c;
    switch (op) {
      case 0x80:  // PROTO
        if (!take_le(1, &u) || u < 2 || u > 5) return error_at(at, "pickle protocol 2 to 5");
        return Status();
      case 0x95:  // FRAME: a length we need not follow
        return take_le(8, &u) ? Status() : error_at(at, "a frame length");
      case '.':  // STOP
        if (!pop(&result_)) return error_at(at, "a value to STOP at");
        return Status();
      case '(':  // MARK
        marks_.push_back(stack_.size());
        return Status();
      case '}':  // EMPTY_DICT
        push(make(K::kDict));
        return Status();
      case ']':  // EMPTY_LIST
      case ')':  // EMPTY_TUPLE
        push(make(K::kList));
        return Status();
      case 'l':  // LIST
      case 't':  // TUPLE
        if (!pop_mark(&values)) return error_at(at, "a MARK before the list");
        a = make(K::kList);
        add_items(a, values);
        push(std::move(a));
        return Status();
      case 'd':  // DICT
        if (!pop_mark(&values)) return error_at(at, "a MARK before the dict");
        a = make(K::kDict);
        if (Status s = add_pairs(a, values, at); !s.ok()) return s;
        push(std::move(a));
        return Status();
      case 0x85:  // TUPLE1
      case 0x86:  // TUPLE2
      case 0x87:  // TUPLE3
        values.resize(op - 0x84);
        for (std::size_t i = values.size(); i-- > 0;)
          if (!pop(&values[i])) return error_at(at, "the tuple's items");
        a = make(K::kList);
        add_items(a, values);
        push(std::move(a));
        return Status();
      case 'a':  // APPEND
        if (!pop(&c) || !(a = top(K::kList))) return error_at(at, "a list and an item");
        a->items.push_back(std::move(c));
        return Status();
      case 'e':  // APPENDS
        if (!pop_mark(&values) || !(a = top(K::kList))) return error_at(at, "a list, MARK, items");
        add_items(a, values);
        return Status();
      case 's':  // SETITEM
        if (!pop(&c) || !pop(&a) || !top(K::kDict)) return error_at(at, "a dict, key, value");
        values = {a, c};
        return add_pairs(top(K::kDict), values, at);
      case 'u':  // SETITEMS
        if (!pop_mark(&values) || !(a = top(K::kDict))) return error_at(at, "a dict, MARK, pairs");
        return add_pairs(a, values, at);
      case 'N':  // NONE
        push(make(K::kNone));
        return Status();
      case 0x88:  // NEWTRUE
      case 0x89:  // NEWFALSE
        a = make(K::kBool);
        a->boolean = op == 0x88;
        push(std::move(a));
        return Status();
      case 'J':  // BININT: 4 bytes, signed
        if (!take_le(4, &u)) return error_at(at, "4 bytes of integer");
        a = make(K::kInt);
        a->integer = static_cast<std::int32_t>(static_cast<std::uint32_t>(u));
        push(std::move(a));
        return Status();
      case 'K':  // BININT1
      case 'M':  // BININT2
        if (!take_le(op == 'K' ? 1 : 2, &u)) return error_at(at, "the integer's bytes");
        a = make(K::kInt);
        a->integer = static_cast<std::int64_t>(u);
        push(std::move(a));
        return Status();
      case 0x8a:  // LONG1
        return integer_of(1, at);
      case 0x8b:  // LONG4
        return integer_of(4, at);
      case 'G': {  // BINFLOAT: 8 bytes, big-endian
        if (!take(8, &b)) return error_at(at, "8 bytes of float");
        std::uint64_t bits = 0;
        for (char ch : b) bits = (bits << 8) | static_cast<unsigned char>(ch);
        a = make(K::kFloat);
        std::memcpy(&a->number, &bits, sizeof bits);
        push(std::move(a));
        return Status();
      }
      case 0x8c:  // SHORT_BINUNICODE
      case 'C':   // SHORT_BINBYTES
        return string_of(1, at);
      case 'X':  // BINUNICODE
      case 'B':  // BINBYTES
        return string_of(4, at);
      case 0x8d:  // BINUNICODE8
      case 0x8e:  // BINBYTES8
        return string_of(8, at);
      case 'q':  // BINPUT
        return take_le(1, &u) ? memo_put(u, at) : error_at(at, "a memo index");
      case 'r':  // LONG_BINPUT
        return take_le(4, &u) ? memo_put(u, at) : error_at(at, "a memo index");
      case 0x94:  // MEMOIZE
        return memo_put(memo_.size(), at);
      case 'h':  // BINGET
        return take_le(1, &u) ? memo_get(u, at) : error_at(at, "a memo index");
      case 'j':  // LONG_BINGET
        return take_le(4, &u) ? memo_get(u, at) : error_at(at, "a memo index");
      case 'c': {  // GLOBAL: "module\nname\n"
        std::string_view module, name;
        if (!take_line(&module) || !take_line(&name)) return error_at(at, "a module and a name");
        return global(module, name, at);
      }
      case 0x93:  // STACK_GLOBAL
        if (!pop(&c) || !pop(&a) || a->kind != K::kString || c->kind != K::kString)
          return error_at(at, "a module and a name");
        return global(a->text, c->text, at);
      case 'R':  // REDUCE: only a list builder, whose first argument is the result
        if (!pop(&c) || !pop(&a) || !a->builder || c->kind != K::kList || c->items.empty())
          return error_at(at, "a list builder and its arguments");
        push(c->items.front());
        return Status();
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        return error_at(at, std::string("an opcode of plain data, not ") + hex);
      }
    }
  }

  Status convert(const Node& n, int depth, std::size_t* budget, PickleValue* out) const {
    if (depth > kMaxDepth) return Status::Error(name_ + ": nested deeper than 200 levels");
    if (*budget == 0) return Status::Error(name_ + ": more values than the file could hold");
    --*budget;
    if (n.builder) return Status::Error(name_ + ": a list builder never applied");
    out->kind = n.kind;
    out->boolean = n.boolean;
    out->integer = n.integer;
    out->number = n.number;
    out->text = n.text;
    out->items.resize(n.items.size());
    out->keys.resize(n.keys.size());
    for (std::size_t i = 0; i < n.items.size(); ++i)
      if (Status s = convert(*n.items[i], depth + 1, budget, &out->items[i]); !s.ok()) return s;
    for (std::size_t i = 0; i < n.keys.size(); ++i)
      if (Status s = convert(*n.keys[i], depth + 1, budget, &out->keys[i]); !s.ok()) return s;
    return Status();
  }

  std::string_view data_;
  const std::string& name_;
  std::size_t pos_ = 0;
  std::vector<NodePtr> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, NodePtr> memo_;
  std::vector<NodePtr> containers_;
  NodePtr result_;
};

void append_text(const PickleValue& v, std::string* out) {
  using K = PickleValue::Kind;
  switch (v.kind) {
    case K::kNone:
      return;
    case K::kBool:
      *out += v.boolean ? "True" : "False";
      return;
    case K::kInt:
      *out += std::to_string(v.integer);
      return;
    case K::kFloat: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", v.number);
      *out += buf;
      return;
    }
    case K::kString:
      *out += v.text;
      return;
    case K::kList:
    case K::kDict:
      *out += v.kind == K::kList ? '[' : '{';
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (i > 0) *out += ", ";
        if (v.kind == K::kDict) {
          append_text(v.keys[i], out);
          *out += ": ";
        }
        append_text(v.items[i], out);
      }
      *out += v.kind == K::kList ? ']' : '}';
      return;
  }
}

}  // namespace

const PickleValue* PickleValue::find(std::string_view key) const {
  if (kind != Kind::kDict) return nullptr;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i].kind == Kind::kString && keys[i].text == key) return &items[i];
  return nullptr;
}

std::string PickleValue::as_text() const {
  std::string out;
  append_text(*this, &out);
  return out;
}

bool PickleValue::as_int(std::int64_t* out) const {
  if (kind != Kind::kInt && kind != Kind::kBool) return false;
  *out = kind == Kind::kInt ? integer : boolean;
  return true;
}

Status read_pickle(std::string_view data, const std::string& name, PickleValue* out) {
  return Unpickler(data, name).run(out);
}

}  // namespace gpuprobe::readers
