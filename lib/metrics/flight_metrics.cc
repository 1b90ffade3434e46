#include "metrics/flight_metrics.h"

namespace gpuprobe::metrics {

void FlightFigures::write(TextExposition* out) const {
  if (!enabled) return;
  const auto counter = [out](const char* name, const char* help, double v) {
    out->family(name, "counter", help);
    out->sample(name, {}, v);
  };
  counter("gpuprobe_dumps_written_total", "Flight recorder dumps written.",
          static_cast<double>(dumps_written));
  counter("gpuprobe_dumps_failed_total", "Flight recorder dumps that could not be written.",
          static_cast<double>(dumps_failed));
  counter("gpuprobe_dumps_deleted_total",
          "Dumps deleted to keep the dump directory within dump_max_mb.",
          static_cast<double>(dumps_deleted));
  counter("gpuprobe_triggers_fired_total", "Triggers that fired, written or not.",
          static_cast<double>(triggers_fired));
  out->family("gpuprobe_triggers_suppressed_total", "counter",
              "Triggers that fired but wrote no dump, by the limit that held them.");
  out->sample("gpuprobe_triggers_suppressed_total", {{"limit", "cooldown"}},
              static_cast<double>(suppressed_cooldown));
  out->sample("gpuprobe_triggers_suppressed_total", {{"limit", "max_per_hour"}},
              static_cast<double>(suppressed_hourly));
  out->sample("gpuprobe_triggers_suppressed_total", {{"limit", "dump_in_progress"}},
              static_cast<double>(suppressed_pending));
  out->family("gpuprobe_flight_events", "gauge", "Events the flight recorder holds now.");
  out->sample("gpuprobe_flight_events", {}, static_cast<double>(events_kept));
  out->family("gpuprobe_flight_events_overwritten_total", "counter",
              "Events the flight recorder let go, by why: older than its window, or for its "
              "memory cap while younger.");
  out->sample("gpuprobe_flight_events_overwritten_total", {{"reason", "age"}},
              static_cast<double>(overwritten_age));
  out->sample("gpuprobe_flight_events_overwritten_total", {{"reason", "memory"}},
              static_cast<double>(overwritten_memory));
}

}  // namespace gpuprobe::metrics
