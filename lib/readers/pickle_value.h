// Reads a Python pickle of plain data — what PyTorch's C++ pickler writes for a flight recorder
// dump: dicts, lists, tuples, strings, bytes, integers, floats, booleans and None — into a tree
// of values. It builds no objects: any opcode that would import or call something (GLOBAL,
// REDUCE, BUILD, ...) is an error, except the few list builders of torch.jit._pickle that
// TorchScript's pickler writes around typed lists, which it reads as the list itself. So reading
// an untrusted file runs nothing, unlike Python's pickle.load.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::readers {

struct PickleValue {
  // Tuples read as lists; bytes as strings.
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kList, kDict };
  Kind kind = Kind::kNone;
  bool boolean = false;
  std::int64_t integer = 0;
  double number = 0;
  std::string text;
  std::vector<PickleValue> items;  // a list's items; a dict's values, in the order of `keys`
  std::vector<PickleValue> keys;   // a dict's keys

  // The value of string key `key` in a dict; null when this is no dict or has no such key.
  const PickleValue* find(std::string_view key) const;
  // The value as text, as Python's str() would write plain data ("" for None); as an integer
  // (false unless it is one, or a bool).
  std::string as_text() const;
  bool as_int(std::int64_t* out) const;
};

// Reads the pickle in `data` (a file `name`, for messages). Protocols 2 to 5. On bad input
// returns one error "<name>: byte N: expected ..." and leaves `out` unspecified. Nesting deeper
// than 200 levels and trees of more than 16 values per input byte are refused, so that a small
// hostile file cannot exhaust the stack or the memory through shared references.
Status read_pickle(std::string_view data, const std::string& name, PickleValue* out);

}  // namespace gpuprobe::readers
