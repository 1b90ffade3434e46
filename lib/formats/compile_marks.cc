#include "formats/compile_marks.h"

#include "formats/framework_events.h"

namespace gpuprobe::formats {

bool parse_cache_mark(std::string_view name, CacheMark* mark) {
  namespace fe = framework_events;
  const std::string_view hit(fe::kCacheHit), miss(fe::kCacheMiss);
  CacheMark m;
  if (name.substr(0, hit.size()) == hit) {
    const std::string_view rest = name.substr(hit.size());
    const std::size_t space = rest.find(' ');
    if (space == std::string_view::npos) return false;
    m.hit = true;
    m.compile_id = rest.substr(0, space);
    m.layer = rest.substr(space + 1);
  } else if (name.substr(0, miss.size()) == miss) {
    const std::string_view rest = name.substr(miss.size());
    const std::size_t space = rest.find(' '), colon = rest.find(": ");
    if (space == std::string_view::npos || colon == std::string_view::npos || colon < space)
      return false;
    m.compile_id = rest.substr(0, space);
    m.layer = rest.substr(space + 1, colon - space - 1);
    m.what = rest.substr(colon + 2);
    m.bypass = m.what.substr(0, 10) == "bypassed: ";
  } else {
    return false;
  }
  *mark = m;
  return true;
}

bool parse_recompile_mark(std::string_view name, RecompileMark* mark) {
  namespace fe = framework_events;
  const std::string_view prefix(fe::kRecompile), limit(fe::kRecompileLimitHit);
  if (name.substr(0, prefix.size()) != prefix || name.substr(0, limit.size()) == limit)
    return false;
  const std::string_view rest = name.substr(prefix.size());
  const std::size_t colon = rest.find(": ");
  mark->compile_id = rest.substr(0, colon);
  mark->reason = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 2);
  return true;
}

std::string_view jax_phase(std::string_view name) {
  const std::string_view prefix(framework_events::kJax);
  if (name.substr(0, prefix.size()) != prefix) return {};
  const std::string_view rest = name.substr(prefix.size());
  return rest.substr(0, rest.find(": "));
}

const char* recompile_reason_class(std::string_view reason) {
  const auto has = [&](std::string_view s) { return reason.find(s) != std::string_view::npos; };
  // Tensor guards first: their text names the property that changed.
  if (has("size mismatch")) return "size";
  if (has("stride mismatch")) return "stride";
  if (has("dtype mismatch")) return "dtype";
  if (has("device mismatch") || has("dispatch key set mismatch")) return "device";
  if (has("requires_grad mismatch")) return "requires_grad";
  if (has("BACKEND_MATCH")) return "backend";
  if (has("___check_obj_id") || has("ID_MATCH")) return "object identity";
  if (has("___check_type_id") || has("TYPE_MATCH")) return "type";
  if (has("len(") || has("LENGTH_CHECK")) return "length";
  if (has(" == ") || has("EQUALS_MATCH")) return "value";
  return "other";
}

}  // namespace gpuprobe::formats
