#include "analysis/step_window.h"

#include <algorithm>

namespace gpuprobe::analysis {

Status StepWindow::write(const EventBatch& batch) {
  for (const Event& e : batch) {
    if (e.type != EventType::kRange || e.site->category != Category::kStep) continue;
    const auto n = static_cast<std::int64_t>(e.value);
    if (n < first_ || n > last_) continue;
    begin_ns = std::min(begin_ns, batch.time->wall_ns(e.begin));
    end_ns = std::max(end_ns, batch.time->wall_ns(e.end));
  }
  return {};
}

}  // namespace gpuprobe::analysis
