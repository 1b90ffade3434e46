#include "session/dump_control.h"

#include <mutex>

namespace gpuprobe::session {
namespace {

std::mutex g_mu;
// Shared: a request that holds it finishes with the recorder even if the session stops.
// Allocated once and never freed: a request may come while the process exits.
std::shared_ptr<flight::FlightRecorder>* g_current = nullptr;
bool g_accepting = false;

std::shared_ptr<flight::FlightRecorder> current(bool for_request) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_current == nullptr || (for_request && !g_accepting)) return nullptr;
  return *g_current;
}

}  // namespace

void set_active_flight(std::shared_ptr<flight::FlightRecorder> recorder) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_current == nullptr) g_current = new std::shared_ptr<flight::FlightRecorder>();
  *g_current = std::move(recorder);
  g_accepting = *g_current != nullptr;
}

void stop_accepting_dumps() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_accepting = false;
}

Status request_dump(std::string_view source, std::string_view reason, std::string* path) {
  const std::shared_ptr<flight::FlightRecorder> recorder = current(true);
  if (!recorder) {
    return Status::Error(
        "no flight recorder: no session is recording, or it was started without flight=SECONDS");
  }
  std::string where;
  Status s = recorder->request(source, reason, &where);
  if (s.ok() && path != nullptr) *path = where;
  return s;
}

metrics::SessionHooks flight_hooks() {
  metrics::SessionHooks hooks;
  hooks.figures = [] {
    metrics::FlightFigures f;
    const std::shared_ptr<flight::FlightRecorder> recorder = current(false);
    if (!recorder) return f;
    const flight::FlightCounters c = recorder->counters();
    f.enabled = true;
    f.dumps_written = c.dumps_written;
    f.dumps_failed = c.dumps_failed;
    f.dumps_deleted = c.dumps_deleted;
    f.triggers_fired = c.triggers_fired;
    f.suppressed_cooldown = c.suppressed_cooldown;
    f.suppressed_hourly = c.suppressed_hourly;
    f.suppressed_pending = c.suppressed_pending;
    f.events_kept = c.store.events;
    f.bytes = c.store.bytes;
    f.overwritten_age = c.store.overwritten_age;
    f.overwritten_memory = c.store.overwritten_memory;
    return f;
  };
  hooks.dump = [](std::string_view reason) {
    metrics::DumpReply reply;
    if (!current(true)) {
      reply.http_status = 404;
      reply.body = "not found: this session has no flight recorder (flight=SECONDS)\n";
      return reply;
    }
    std::string path;
    const Status s = request_dump("http", reason, &path);
    reply.http_status = s.ok() ? 200 : 429;
    reply.body = (s.ok() ? path : s.message()) + "\n";
    return reply;
  };
  return hooks;
}

void forget_flight_in_child() noexcept {
  // The child's copy of the pointer is dropped without running the recorder's destructor,
  // which would join a thread that does not exist here.
  if (g_current != nullptr) new std::shared_ptr<flight::FlightRecorder>(std::move(*g_current));
  g_accepting = false;
}

}  // namespace gpuprobe::session
