// The events gpuprobe's framework watchers record — gpuprobe.torch (compile, data loading,
// allocator), gpuprobe.jax, gpuprobe.triton, gpuprobe.watch_gc — and the report and the metrics
// read. One list: the readers use these constants, and the Python side takes them from
// gpuprobe._core.event_names rather than retyping them (a recompile-limit warning was once
// counted as a recompile because the two sides' strings shared a prefix). (Named
// torch_events.h until it held JAX's, Triton's and the GC's too.)
#pragma once

#include <string_view>

namespace gpuprobe::formats::framework_events {

// torch.compile (category compile). A prefix is followed by the compile id as PyTorch writes it.
inline constexpr char kCompile[] = "torch.compile ";         // range over one frame compile
inline constexpr char kRecompile[] = "recompile ";           // instant: "recompile <id>: <guard>"
inline constexpr char kEagerFallback[] = "eager fallback ";  // "<id>: <frame>: <exception>"
inline constexpr char kGraphBreak[] = "graph break: ";       // "<cause> [in <frame>]"
inline constexpr char kRecompileLimitHit[] = "recompile limit hit: ";  // Dynamo gave up
// "compile restart <id>: <reason>": Dynamo began the frame's analysis again (attempt 1, ...),
// most often to compile up to a graph break.
inline constexpr char kRestart[] = "compile restart ";
// A compile cache's outcome, from PyTorch's structured trace: "cache miss <id> <layer>: <what
// changed since the frame's last compile>" and "cache hit <id> <layer>"; layers "FX graph",
// "AOTAutograd".
inline constexpr char kCacheMiss[] = "cache miss ";
inline constexpr char kCacheHit[] = "cache hit ";
// From the structured trace too: a range per phase of a compile, "compile phase: <Dynamo's
// dynamo_timed name>" (inside the compile's range; never counted as a compile), counters
// "compile phase seconds: <group>" (Dynamo, AOTAutograd, Inductor, code generation, kernel
// compile: each phase's own time, totals since watching), and an instant per generated module,
// "generated code <id>: <path of its source>: <kernel>, <kernel>, ...".
inline constexpr char kCompilePhase[] = "compile phase: ";
// The phase groups, in the order a compile goes through them (the order the report lists them).
inline constexpr const char* kCompilePhaseGroups[] = {"Dynamo", "AOTAutograd", "Inductor",
                                                      "code generation", "kernel compile"};
inline constexpr char kCompilePhaseSeconds[] = "compile phase seconds: ";
inline constexpr char kGeneratedCode[] = "generated code ";
// The wait for the next batch (category torch): a range over each next() of an iterator that
// gpuprobe.torch.instrument_dataloader() wraps.
inline constexpr char kDataWait[] = "dataloader next";
// Each run of an Inductor-compiled graph (category torch).
inline constexpr char kCompiledGraph[] = "compiled graph";
inline constexpr char kCompiledGraphForward[] = "compiled graph (forward)";
inline constexpr char kCompiledGraphBackward[] = "compiled graph (backward)";
// A compiled call's dispatch (category compile, recorded by watch_compile(guards=True)): "dynamo
// guards: [<frame id>] <function>", from torch.compile's wrapper turning Dynamo on to the start of
// the call's first forward graph — Dynamo's cache lookup (its guards, and the decision to
// recompile) and the frame's code before the graph. torch.profiler records the cache lookup alone
// as kDynamoCacheLookup; the report counts both.
inline constexpr char kDynamoGuards[] = "dynamo guards: ";
inline constexpr char kDynamoCacheLookup[] = "TorchDynamo Cache Lookup";
// The eager code a graph break sends a call back to (category torch): a range from the end of
// a forward graph to the start of the next one, of the resume function Dynamo made for the code
// after the break, on the same thread — T_fallback, once per break the program runs through.
inline constexpr char kGraphBreakEager[] = "eager after graph break";
// Counters (category compile): totals since the watcher opened, and compare()'s speedup.
inline constexpr char kCacheHits[] = "compile cache hits";
inline constexpr char kCacheMisses[] = "compile cache misses";
inline constexpr char kGraphOps[] = "compile graph ops";
inline constexpr char kKernelsGenerated[] = "compile kernels generated";
inline constexpr char kSpeedup[] = "compile speedup";
// gpuprobe.torch.compare_modes(): a row per torch.compile mode, as counters "compile mode:
// <mode>: <mark>", a counter per column of kModeColumns.
inline constexpr char kCompileMode[] = "compile mode: ";

// compare_modes()'s columns, the one description its writer and every reader share: the field
// of gpuprobe.torch.modes.ModeResult the column comes from (gpuprobe._core.mode_columns), the
// mark its counter is named by, the key of the report's JSON row (compile.modes[]), which holds
// the value times `scale`, the heading the report's text and page show (the page reads them
// from compile.mode_columns), and whether a negative value means unknown ("never" for the
// break-even count) — null in the JSON.
struct ModeColumn {
  const char* field;
  const char* mark;
  const char* key;
  const char* heading;
  double scale;
  bool negative_unknown;
};
inline constexpr ModeColumn kModeColumns[] = {
    {"compile_seconds", "compile seconds", "compile_seconds", "T_compile (s)", 1, false},
    {"execute_seconds", "execute seconds", "execute_ms", "T_execute (ms)", 1e3, false},
    {"speedup", "speedup", "speedup", "S", 1, false},
    {"break_even_calls", "break-even calls", "break_even_calls", "break-even (calls)", 1, true},
    {"max_abs_error", "max abs error", "max_abs_error", "max abs error", 1, false},
    {"passed", "passed", "passed", "passed", 1, false},
    {"graph_breaks", "graph breaks", "graph_breaks", "graph breaks", 1, false},
    {"compiles", "compiles", "compiles", "compiles", 1, false},
};
// The column whose key is `key` (a reader's special cases name their column once); nullptr for
// none.
inline const ModeColumn* mode_column(std::string_view key) {
  for (const ModeColumn& c : kModeColumns) {
    if (key == c.key) return &c;
  }
  return nullptr;
}

// JAX (gpuprobe.jax.watch_compile(), category compile): a range "jax <phase>: <function>" per
// phase of each compile — phases "trace", "lower", "backend compile", and "cache load" for a
// backend compile the persistent cache answered — and an instant per cache answer.
inline constexpr char kJax[] = "jax ";
inline constexpr char kJaxTrace[] = "trace";
inline constexpr char kJaxLower[] = "lower";
inline constexpr char kJaxBackendCompile[] = "backend compile";
inline constexpr char kJaxCacheLoad[] = "cache load";
// The phases in the order a compile runs them, the order the report lists them in (its text and
// its JSON's compile.jax.phase_order, which the page follows).
inline constexpr const char* kJaxPhases[] = {kJaxTrace, kJaxLower, kJaxBackendCompile,
                                             kJaxCacheLoad};
inline constexpr char kJaxCacheHit[] = "jax compilation cache hit";
inline constexpr char kJaxCacheMiss[] = "jax compilation cache miss";

// Triton (gpuprobe.triton.watch_compile(), category compile): a range per JIT compile of a
// kernel, "triton compile: <kernel>", or "triton cache load: <kernel>" when Triton's on-disk
// cache had it; and counters "triton stage seconds: <stage>" (the IR's creation "ir", each
// lowering stage — ttir, ttgir, llir, ptx, cubin — and "store": totals since watching).
inline constexpr char kTritonCompile[] = "triton compile: ";
inline constexpr char kTritonCacheLoad[] = "triton cache load: ";
inline constexpr char kTritonStageSeconds[] = "triton stage seconds: ";
// The stages in the order a compile runs them (the order the report lists them).
inline constexpr const char* kTritonStages[] = {"ir",  "ttir",  "ttgir", "llir",
                                                "ptx", "cubin", "store"};

// The CUDA caching allocator (counters, category alloc).
inline constexpr char kAllocatedBytes[] = "cuda allocated bytes";
inline constexpr char kReservedBytes[] = "cuda reserved bytes";
inline constexpr char kInactiveSplitBytes[] = "cuda inactive split bytes";
inline constexpr char kAllocRetries[] = "cuda alloc retries";
inline constexpr char kOoms[] = "cuda ooms";

// Python's garbage collector (category gc): a range "gc gen<N>" per collection, and counters.
inline constexpr char kGcGeneration[] = "gc gen";
inline constexpr char kGcCollected[] = "gc collected";
inline constexpr char kGcUncollectable[] = "gc uncollectable";

// Every name above with its key in gpuprobe._core.event_names.
struct NamedEvent {
  const char* key;
  const char* name;
};
inline constexpr NamedEvent kAll[] = {
    {"compile", kCompile},
    {"recompile", kRecompile},
    {"eager_fallback", kEagerFallback},
    {"graph_break", kGraphBreak},
    {"recompile_limit_hit", kRecompileLimitHit},
    {"dynamo_guards", kDynamoGuards},
    {"restart", kRestart},
    {"cache_miss", kCacheMiss},
    {"cache_hit", kCacheHit},
    {"compile_phase", kCompilePhase},
    {"compile_phase_seconds", kCompilePhaseSeconds},
    {"generated_code", kGeneratedCode},
    {"data_wait", kDataWait},
    {"compiled_graph_forward", kCompiledGraphForward},
    {"compiled_graph_backward", kCompiledGraphBackward},
    {"graph_break_eager", kGraphBreakEager},
    {"cache_hits", kCacheHits},
    {"cache_misses", kCacheMisses},
    {"graph_ops", kGraphOps},
    {"kernels_generated", kKernelsGenerated},
    {"speedup", kSpeedup},
    {"compile_mode", kCompileMode},
    {"jax", kJax},
    {"jax_trace", kJaxTrace},
    {"jax_lower", kJaxLower},
    {"jax_backend_compile", kJaxBackendCompile},
    {"jax_cache_load", kJaxCacheLoad},
    {"jax_cache_hit", kJaxCacheHit},
    {"jax_cache_miss", kJaxCacheMiss},
    {"triton_compile", kTritonCompile},
    {"triton_cache_load", kTritonCacheLoad},
    {"triton_stage_seconds", kTritonStageSeconds},
    {"allocated_bytes", kAllocatedBytes},
    {"reserved_bytes", kReservedBytes},
    {"inactive_split_bytes", kInactiveSplitBytes},
    {"alloc_retries", kAllocRetries},
    {"ooms", kOoms},
    {"gc_generation", kGcGeneration},
    {"gc_collected", kGcCollected},
    {"gc_uncollectable", kGcUncollectable},
};

}  // namespace gpuprobe::formats::framework_events
