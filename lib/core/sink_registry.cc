#include "core/sink_registry.h"

namespace gpuprobe::core {

SinkRegistry& SinkRegistry::get() {
  static SinkRegistry* registry = new SinkRegistry;
  return *registry;
}

Status SinkRegistry::add(Entry entry, const IsOptionKey& is_option_key) {
  if (entry.key.empty() || entry.key.find_first_of(",=+ ") != std::string::npos) {
    return Status::Error("sink key '" + entry.key +
                         "' must be non-empty without ',', '=', '+' or spaces");
  }
  if (!entry.factory) return Status::Error("sink '" + entry.key + "' has no factory");
  if (is_option_key && is_option_key(entry.key)) {
    return Status::Error("sink key '" + entry.key + "' is already a config option");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.key == entry.key)
      return Status::Error("sink key '" + entry.key + "' is already registered");
  }
  entries_.push_back(std::move(entry));
  return {};
}

bool SinkRegistry::contains(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.key == key) return true;
  }
  return false;
}

bool SinkRegistry::writes_trace(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.key == key) return e.writes_trace;
  }
  return false;
}

std::vector<SinkRegistry::Entry> SinkRegistry::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

Status SinkRegistry::create(std::string_view key_value, std::unique_ptr<Sink>* out) const {
  const std::size_t eq = key_value.find('=');
  if (eq == std::string_view::npos)
    return Status::Error("'" + std::string(key_value) + "' is not key=value");
  return create(key_value.substr(0, eq), key_value.substr(eq + 1), out);
}

Status SinkRegistry::create(std::string_view key, std::string_view value,
                            std::unique_ptr<Sink>* out) const {
  SinkFactory factory;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) {
      if (e.key == key) factory = e.factory;
    }
  }
  if (!factory) {
    return Status::Error("sink " + std::string(key) + "=" + std::string(value) +
                         ": unknown sink key");
  }
  return create_with(factory, key, value, out);
}

Status SinkRegistry::create_with(const SinkFactory& factory, std::string_view key,
                                 std::string_view value, std::unique_ptr<Sink>* out) {
  const std::string label = std::string(key) + "=" + std::string(value);
  try {
    *out = factory(value);
  } catch (const std::exception& e) {
    return Status::Error("sink " + label + ": factory threw: " + e.what());
  } catch (...) {
    return Status::Error("sink " + label + ": factory threw");
  }
  if (*out == nullptr) return Status::Error("sink " + label + ": factory returned no sink");
  return {};
}

}  // namespace gpuprobe::core
