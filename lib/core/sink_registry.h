// Config keys that create sinks. The registry knows no sink of its own: the session layer
// registers the built-in formats (session/builtin_sinks.cc) before anything reads a config, and
// programs add theirs with register_sink().
#pragma once

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
  };

  // The process-wide registry.
  static SinkRegistry& get();

  Status add(Entry entry);
  bool contains(std::string_view key) const;
  // A copy of the entries, in registration order.
  std::vector<Entry> entries() const;
  // Creates the sink for `key=value`; an error if the key is unknown or the factory fails.
  Status create(std::string_view key, std::string_view value, std::unique_ptr<Sink>* out) const;
  // The same from one "key=value" string (tools and tests name one output this way).
  Status create(std::string_view key_value, std::unique_ptr<Sink>* out) const;

 private:
  SinkRegistry() = default;

  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

}  // namespace gpuprobe::core
