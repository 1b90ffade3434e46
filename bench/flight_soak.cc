// The always-on configuration left running for a long time at full event rate: producer threads
// record ranges (64 names, nested two deep) and counters as fast as they can, the flight
// recorder keeps the last 30 s in at most 64 MiB, the metrics file is rewritten every second.
// Every 30 s it prints the process's resident memory (/proc/self/status) beside gpuprobe's own
// figures (from the metrics file: flight recorder and ring bytes, events, drops, overwrites),
// and at the end the largest of each after the first minute against the caps.
//   flight_soak [MINUTES=10] [THREADS=1]
// Exits non-zero if the flight recorder ever held more than flight_mb, or if the resident
// memory grew by more than 16 MiB between the end of the first minute and the end.
#include <gpuprobe/gpuprobe.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr double kFlightMb = 64;

double resident_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return -1;
}

// The value of one sample line of the metrics file ("NAME{LABELS} VALUE"), or -1.
double metric(const std::string& path, const std::string& sample) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(sample + " ", 0) == 0) return std::strtod(line.c_str() + sample.size(), nullptr);
  }
  return -1;
}

void produce(const std::atomic<bool>* stop) {
  static const char* kNames[64];
  static std::string storage[64];
  for (int i = 0; i < 64; ++i) {
    storage[i] = "work " + std::to_string(i);
    kNames[i] = storage[i].c_str();
  }
  std::uint64_t n = 0;
  while (!stop->load(std::memory_order_relaxed)) {
    gpuprobe::ScopedRange outer(kNames[n % 64]);
    for (int k = 0; k < 8; ++k) {
      gpuprobe::ScopedRange inner(kNames[(n + k + 1) % 64]);
    }
    if (++n % 128 == 0) gpuprobe::counter("soak iterations", static_cast<double>(n));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double minutes = argc > 1 ? std::strtod(argv[1], nullptr) : 10;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const std::string prom = "/tmp/gpuprobe_flight_soak.prom";
  gpuprobe::Session session("flight=30,flight_mb=64,metrics_file=" + prom +
                            ",dump=/tmp/gpuprobe_flight_soak_dumps");
  if (!session.ok()) {
    std::printf("session failed: %s\n", session.error().c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> producers;
  for (int i = 0; i < threads; ++i) producers.emplace_back(produce, &stop);
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double, std::ratio<60>>(minutes);
  double rss_after_first_minute = -1, max_rss = 0, max_flight = 0, max_rings = 0;
  std::printf("%8s %10s %10s %10s %14s %14s %14s\n", "minute", "RSS MiB", "flight MiB", "rings MiB",
              "events", "dropped", "overwritten");
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    const double t =
        std::chrono::duration<double, std::ratio<60>>(std::chrono::steady_clock::now() - start)
            .count();
    const double rss = resident_mb();
    const double flight = metric(prom, "gpuprobe_memory_bytes{part=\"flight\"}") / (1 << 20);
    const double rings = metric(prom, "gpuprobe_memory_bytes{part=\"rings\"}") / (1 << 20);
    const double overwritten =
        metric(prom, "gpuprobe_flight_events_overwritten_total{reason=\"age\"}") +
        metric(prom, "gpuprobe_flight_events_overwritten_total{reason=\"memory\"}");
    std::printf("%8.1f %10.1f %10.1f %10.1f %14.0f %14.0f %14.0f\n", t, rss, flight, rings,
                metric(prom, "gpuprobe_events_total"),
                metric(prom, "gpuprobe_events_dropped_total"), overwritten);
    std::fflush(stdout);
    if (t >= 1 && rss_after_first_minute < 0) rss_after_first_minute = rss;
    if (t >= 1) max_rss = std::max(max_rss, rss);
    max_flight = std::max(max_flight, flight);
    max_rings = std::max(max_rings, rings);
  }
  stop = true;
  for (std::thread& t : producers) t.join();
  const double final_rss = resident_mb();
  (void)session.stop();
  std::printf(
      "after %.0f min: RSS %.1f MiB at 1 min, at most %.1f after it, %.1f at the end; flight "
      "recorder at most %.1f MiB (cap %.0f); rings at most %.1f MiB\n",
      minutes, rss_after_first_minute, max_rss, final_rss, max_flight, kFlightMb, max_rings);
  const bool bounded = max_flight <= kFlightMb && final_rss - rss_after_first_minute <= 16;
  return bounded ? 0 : 3;
}
