// What a trace reader hands to a Sink: the events it decodes, batched, with the names, threads
// and GPU records they point to kept alive as the Sink interface requires. Times are wall-clock
// nanoseconds; the batches' TimeBase maps them to ticks exactly (one tick per nanosecond,
// counted from the trace's start, so doubles never round them).
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "formats/saturate.h"
#include "gpuprobe/sink.hpp"

namespace gpuprobe::readers {

using formats::saturate;

// The direction a copy's name gives, as CUPTI's decoder names them ("Memcpy HtoD (Pinned ->
// Device)", Kineto's too); kUnknown for other names.
MemcpyKind memcpy_kind_from_name(const char* name);

class TraceBuilder {
 public:
  explicit TraceBuilder(Sink& sink, std::size_t batch_size = 4096);

  // Opens the sink; every other call comes after this.
  Status open(const TraceInfo& info);
  bool is_open() const noexcept { return open_; }

  // The category a trace's `cat` names (formats::category_from_trace_name). A name it does not
  // know takes the next user category the trace has not used, named so for the sink (through
  // update_info(), before the event that uses it), so that a conversion writes it back; once all
  // eight are taken, app.
  Category category(std::string_view name);
  // A call site for `name` in `category`, alive as long as the builder.
  const CallSite* site(std::string_view name, Category category);
  // The thread index of (pid, tid), created on first use.
  std::uint32_t thread(std::int64_t pid, std::int64_t tid);
  // Names (pid, tid), whether or not it has had events yet.
  void name_thread(std::int64_t pid, std::int64_t tid, std::string name);
  // A name kept alive as long as the builder, for GpuActivity::name.
  const char* text(std::string_view s);

  Status range(std::uint32_t thread, const CallSite* site, std::int64_t begin_ns,
               std::int64_t end_ns);
  Status step(std::uint32_t thread, std::int64_t number, std::int64_t begin_ns,
              std::int64_t end_ns);
  Status instant(std::uint32_t thread, const CallSite* site, std::int64_t ns);
  Status counter(std::uint32_t thread, const CallSite* site, std::int64_t ns, double value);
  // GPU work or an API call: fill in the record returned by gpu(), then commit it.
  GpuActivity& gpu();
  Status commit_gpu(std::int64_t start_ns, std::int64_t end_ns);

  // Ends reading with `read`, the reader's result: opens the sink with `info` if no event came,
  // flushes, gives it `info` again (what the file said at its end), and closes it with `stats`
  // (from the file, where it records them; the per-thread event counts are the builder's own).
  // Returns `read` if it is an error, else the close's result: a damaged file still yields what was
  // read before the damage.
  Status finish(const Status& read, const TraceInfo& info, Stats stats);

  std::uint64_t events() const noexcept { return events_; }

  // Memory bounds on untrusted files: distinct names (range, kernel and counter names), threads,
  // and arguments per event a reader keeps. Past them names become kTooManyNames, threads one
  // thread, arguments are skipped; each is counted (note_capped()) and the count is added to
  // Stats::names_overflowed at finish().
  static constexpr std::size_t kMaxNames = 65536;
  static constexpr std::size_t kMaxThreads = 65536;
  static constexpr std::size_t kMaxArgsPerEvent = 64;
  static constexpr std::string_view kTooManyNames = "<too many distinct names>";
  void note_capped() noexcept { ++capped_; }

 private:
  std::uint64_t ticks(std::int64_t ns) const {
    return kOrigin + (static_cast<std::uint64_t>(ns) - static_cast<std::uint64_t>(origin_ns_));
  }
  Status push(Event e);
  Status flush();

  static constexpr std::uint64_t kOrigin = std::uint64_t{1} << 62;

  Sink& sink_;
  std::size_t batch_size_;
  bool open_ = false;
  std::int64_t origin_ns_ = 0;
  TimeBase time_;
  std::vector<Event> events_batch_;
  std::vector<GpuActivity> gpu_batch_;  // reserved to batch_size_: Event::gpu points into it
  std::vector<ThreadInfo> threads_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> thread_ids_;
  // Names given before a thread's first event (or to threads that never have one).
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names_;
  std::deque<CallSite> sites_;
  // By name (viewing the stored text), then category.
  std::unordered_map<std::string_view, std::vector<const CallSite*>> site_ids_;
  std::deque<std::string> texts_;
  std::unordered_map<std::string_view, const char*> text_ids_;
  std::uint64_t events_ = 0;
  std::uint64_t capped_ = 0;
  TraceInfo info_;                           // as given to the sink
  std::vector<std::string> category_names_;  // TraceInfo::category_names of this trace
  std::uint32_t users_seen_ = 0;             // user categories taken, as Category bits
  unsigned next_user_ = 0;
};

}  // namespace gpuprobe::readers
