// Config keys that create sinks. The registry knows no sink of its own: the session layer
// registers the built-in formats (session/builtin_sinks.cc) before anything reads a config, and
// programs add theirs with register_sink().
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpuprobe/sink.hpp"

namespace gpuprobe::core {

class SinkRegistry {
 public:
  struct Entry {
    std::string key;
    std::string value_hint;
    std::string help;
    SinkFactory factory;
    // False for an output that writes no trace (the live metrics): a dump cannot write it.
    bool writes_trace = true;
  };

  // Tells whether a key is a config option, which no sink may take.
  using IsOptionKey = std::function<bool(std::string_view key)>;

  // The process-wide registry.
  static SinkRegistry& get();

  // Registers `entry`; refused when its key is malformed, taken by a sink or an option
  // (`is_option_key`, from the layer that knows every component's options), or it has no factory.
  Status add(Entry entry, const IsOptionKey& is_option_key);
  bool contains(std::string_view key) const;
  // True if `key` is registered and writes a trace (Entry::writes_trace).
  bool writes_trace(std::string_view key) const;
  // A copy of the entries, in registration order.
  std::vector<Entry> entries() const;
  // Creates the sink for `key=value`; an error if the key is unknown or the factory fails.
  Status create(std::string_view key, std::string_view value, std::unique_ptr<Sink>* out) const;
  // The same from one "key=value" string (tools and tests name one output this way).
  Status create(std::string_view key_value, std::unique_ptr<Sink>* out) const;
  // Creates the sink for `key=value` with `factory` instead of the registered one, with the same
  // errors (a factory that throws or returns no sink).
  static Status create_with(const SinkFactory& factory, std::string_view key,
                            std::string_view value, std::unique_ptr<Sink>* out);

 private:
  SinkRegistry() = default;

  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

}  // namespace gpuprobe::core
