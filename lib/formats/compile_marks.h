// Reading back the compile marks gpuprobe's Python side writes (framework_events.h), one parser for
// every reader of them (the report's compile analysis and jitter, the metrics).
#pragma once

#include <string_view>

namespace gpuprobe::formats {

// "cache hit <id> <layer>" or "cache miss <id> <layer>: <what changed>" (or "...: bypassed:
// <why>"), split; false for any other name.
struct CacheMark {
  std::string_view compile_id, layer, what;  // what: empty for a hit
  bool hit = false, bypass = false;
};
[[nodiscard]] bool parse_cache_mark(std::string_view name, CacheMark* mark);

// "recompile <id>: <reason>" split (reason empty when the mark has none); false for any other
// name — the recompile-limit warning ("recompile limit hit: ...") included, which shares the
// prefix and is not a recompile.
struct RecompileMark {
  std::string_view compile_id, reason;
};
[[nodiscard]] bool parse_recompile_mark(std::string_view name, RecompileMark* mark);

// The phase of a JAX compile range "jax <phase>: <function>" ("trace", "lower", "backend
// compile", "cache load"); empty for any other name.
std::string_view jax_phase(std::string_view name);

// What kind of guard failed, from a recompile's reason ("tensor 'x' size mismatch at index 0
// ..." is "size"): one of a bounded set — size, stride, dtype, device, requires_grad, backend,
// object identity, type, length, value — or "other". For labels that must stay few.
const char* recompile_reason_class(std::string_view reason);

}  // namespace gpuprobe::formats
