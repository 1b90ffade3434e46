#include "analysis/ranges_at.h"

#include <algorithm>

namespace gpuprobe::analysis {
namespace {

std::string thread_name(const EventBatch& batch, std::uint32_t thread) {
  const auto& threads = *batch.threads;
  if (thread < threads.size() && !threads[thread].name.empty()) return threads[thread].name;
  return "thread " + std::to_string(thread);
}

}  // namespace

Status RangesAt::open(const TraceInfo& info) {
  rank_ = info.rank;
  return {};
}

Status RangesAt::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    if (e.type == EventType::kGpu) continue;
    const std::int64_t begin = batch.time->wall_ns(e.begin), end = batch.time->wall_ns(e.end);
    first_ns_ = std::min(first_ns_, begin);
    last_ns_ = std::max(last_ns_, end);
    if (e.type != EventType::kRange || end <= at_ns_) continue;
    if (begin > at_ns_) {
      if (next_.name.empty() || begin < next_.begin_ns)
        next_ = {thread_name(batch, e.thread), e.site->name, begin, end};
      continue;
    }
    if (open_.size() <= e.thread) open_.resize(e.thread + 1);
    Open& o = open_[e.thread];
    // The innermost: ranges nest, so it is the one that began last.
    if (!o.name.empty() && begin < o.begin_ns) continue;
    o = {thread_name(batch, e.thread), e.site->name, begin, end};
  }
  return {};
}

Status RangesAt::close(const Stats&, const TimeBase&) {
  open_.erase(
      std::remove_if(open_.begin(), open_.end(), [](const Open& o) { return o.name.empty(); }),
      open_.end());
  return {};
}

}  // namespace gpuprobe::analysis
