// A component's config options, declared beside its code as Perfetto's data sources own their
// config sections: each key with its value hint, its default (as help() shows it), its help line
// and how its value is parsed into the component's own options struct, plus one check of the
// options together once the whole config string is read. The session layer binds each table to
// the struct it fills (OptionSet) and parses the config string and writes help() through all of
// them; no component knows another's keys.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/status.hpp"

namespace gpuprobe::base {

// The option keys one config string gives, in the order given.
class GivenKeys {
 public:
  // True if `key` was given.
  bool has(std::string_view key) const;
  // Records that `key` was given.
  void add(std::string_view key) { keys_.push_back(key); }

 private:
  std::vector<std::string_view> keys_;
};

// One option of a component whose options are the struct `Options`.
template <class Options>
struct OptionSpec {
  std::string_view key;
  std::string_view value_hint;  // after "key=" in help(): "MS", "on|off", "KEY+KEY..."
  // The default, shown in help() (empty: none shown), read from a default-constructed Options,
  // where every default is written once.
  std::string (*default_value)(const Options& defaults);
  std::string_view help;
  // Parses `value` into its field of `options`; the error names the key and the value.
  Status (*apply)(std::string_view value, Options& options);
};

// A component's options: its specs, in the order help() lists them, and the check that runs once
// every key of the config string is applied (keys that need one another; defaults that come
// from the environment). `check` may be null.
template <class Options>
struct OptionTable {
  const OptionSpec<Options>* specs = nullptr;
  std::size_t size = 0;
  Status (*check)(Options& options, const GivenKeys& given) = nullptr;
};

// Appends one line of help(): "  key=HINT" padded to 30 columns, the help, and the default.
void append_help_line(std::string* out, std::string_view key, std::string_view value_hint,
                      std::string_view default_value, std::string_view help);

// Tables bound to the structs they fill, in the order added: what parses a config string.
class OptionSet {
 public:
  // Called for a key that is no option (an output, or a mistake), with its value.
  using OtherKey = std::function<Status(std::string_view key, std::string_view value)>;

  // Adds `table`'s options, parsed into `*target`, which must outlive this set.
  template <class Options>
  void add(const OptionTable<Options>& table, Options* target) {
    const Options defaults{};
    for (std::size_t i = 0; i < table.size; ++i) {
      const OptionSpec<Options>& spec = table.specs[i];
      options_.push_back(Bound{
          spec.key, spec.value_hint, spec.default_value(defaults), spec.help,
          [apply = spec.apply, target](std::string_view value) { return apply(value, *target); }});
    }
    if (table.check != nullptr) {
      checks_.push_back(
          [check = table.check, target](const GivenKeys& given) { return check(*target, given); });
    }
  }

  // True if `key` is one of the options.
  bool contains(std::string_view key) const { return find(key) != nullptr; }

  // Parses `text`, `key=value` items separated by commas (spaces around either trimmed): each
  // option's value goes to its table, any other key to `other`; then every table's check runs,
  // in the order added. An option given twice is refused; outputs may repeat. On error the
  // targets are unspecified and the message names the offending key and value.
  Status parse(std::string_view text, const OtherKey& other) const;

  // Appends a help line per option, in the order added.
  void append_help(std::string* out) const;

 private:
  struct Bound {
    std::string_view key;
    std::string_view value_hint;
    std::string default_value;
    std::string_view help;
    std::function<Status(std::string_view value)> apply;
  };

  const Bound* find(std::string_view key) const;

  std::vector<Bound> options_;
  std::vector<std::function<Status(const GivenKeys&)>> checks_;
};

}  // namespace gpuprobe::base
