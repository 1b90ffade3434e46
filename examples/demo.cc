// The gpuprobe demo: a small multi-threaded pipeline (loaders feeding workers through a queue,
// plus short-lived helper threads) traced to a Chrome/Perfetto JSON file. Where there is a GPU,
// the workers copy each batch to it and run a kernel per layer, and CUPTI records that work,
// attributed to the ranges that launched it. It prints where the trace is and a summary of what
// it holds, gathered by a custom sink.
//
//   demo [TRACE_PATH]        default: gpuprobe_demo_trace.json
//
// Open the trace at https://ui.perfetto.dev or chrome://tracing.
#include <gpuprobe/gpuprobe.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "demo_gpu.h"

namespace {

// A sink that counts events and sums range time per name: the summary the demo prints.
class SummarySink : public gpuprobe::Sink {
 public:
  struct Row {
    std::uint64_t count = 0;
    double total_ms = 0;
  };

  gpuprobe::Status open(const gpuprobe::TraceInfo&) override { return {}; }

  gpuprobe::Status write(const gpuprobe::EventBatch& batch) override {
    for (const gpuprobe::Event& e : batch) {
      Row& row = rows_[e.type == gpuprobe::EventType::kGpu ? e.gpu->name : e.site->name];
      ++row.count;
      if (e.type == gpuprobe::EventType::kRange || e.type == gpuprobe::EventType::kGpu) {
        row.total_ms += static_cast<double>(batch.time->duration_ns(e.begin, e.end)) / 1e6;
      }
    }
    return {};
  }

  gpuprobe::Status close(const gpuprobe::Stats&, const gpuprobe::TimeBase&) override { return {}; }

  const std::map<std::string, Row>& rows() const { return rows_; }

 private:
  std::map<std::string, Row> rows_;
};

// Burns CPU for about `us` microseconds, so ranges have real durations.
double spin(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  double x = 1.0;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 64; ++i) x = std::sqrt(x + i);
  }
  return x;
}

class BatchQueue {
 public:
  void push(int batch) {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(batch);
    gpuprobe::counter("queue_depth", static_cast<double>(items_.size()));
    ready_.notify_one();
  }
  // Returns -1 once closed and empty.
  int pop() {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return -1;
    const int batch = items_.front();
    items_.pop_front();
    gpuprobe::counter("queue_depth", static_cast<double>(items_.size()));
    return batch;
  }
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    ready_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<int> items_;
  bool closed_ = false;
};

void load_batches(BatchQueue& queue, int first, int count) {
  gpuprobe::set_thread_name("loader");
  for (int b = first; b < first + count; ++b) {
    GPUPROBE_RANGE("load_batch");
    {
      gpuprobe::ScopedRange decode(b % 3 == 0 ? "decode/png" : "decode/jpeg");
      spin(150);
    }
    queue.push(b);
  }
}

void process_batch(int batch, GpuStage* gpu) {
  GPUPROBE_FUNCTION();
  GPUPROBE_RANGE("forward");
  if (gpu != nullptr) gpu_stage_upload(gpu);
  for (int layer = 0; layer < 4; ++layer) {
    gpuprobe::ScopedRange r("layer_" + std::to_string(layer));
    spin(60 + 20 * layer);
    if (gpu != nullptr) gpu_stage_layer(gpu, layer);
  }
  if (gpu != nullptr) {
    GPUPROBE_RANGE("download");
    gpu_stage_download(gpu);
  }
  if (batch % 50 == 0) gpuprobe::instant("checkpoint");
}

void work(BatchQueue& queue, std::vector<std::thread>& helpers, std::mutex& helpers_mu) {
  gpuprobe::set_thread_name("worker");
  GpuStage* gpu = gpu_stage_open();
  for (int batch; (batch = queue.pop()) >= 0;) {
    process_batch(batch, gpu);
    if (batch % 40 == 0) {
      // A short-lived thread: its ring is handed back when it exits, nothing is lost.
      std::lock_guard<std::mutex> lock(helpers_mu);
      helpers.emplace_back([] {
        gpuprobe::set_thread_name("flush");
        GPUPROBE_RANGE("flush_metrics");
        spin(200);
      });
    }
  }
  gpu_stage_close(gpu);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "gpuprobe_demo_trace.json";
  auto summary = std::make_shared<SummarySink>();
  // Probe for a GPU before tracing starts; with one, CUPTI records all GPU activity.
  GpuStage* probe = gpu_stage_open();
  const bool gpu = probe != nullptr;
  gpu_stage_close(probe);
  gpuprobe::Session session("chrome=" + path + (gpu ? ",cupti=all" : ""), {summary});
  if (!session.ok()) {
    std::fprintf(stderr, "demo: could not start tracing: %s\n", session.error().c_str());
    return 1;
  }

  BatchQueue queue;
  std::vector<std::thread> helpers;
  std::mutex helpers_mu;
  {
    GPUPROBE_RANGE("pipeline");
    constexpr int kLoaders = 2, kWorkers = 3, kBatchesPerLoader = 200;
    std::vector<std::thread> loaders, workers;
    for (int i = 0; i < kWorkers; ++i) {
      workers.emplace_back([&] { work(queue, helpers, helpers_mu); });
    }
    for (int i = 0; i < kLoaders; ++i) {
      loaders.emplace_back(
          [&, i] { load_batches(queue, i * kBatchesPerLoader, kBatchesPerLoader); });
    }
    for (std::thread& t : loaders) t.join();
    queue.close();
    for (std::thread& t : workers) t.join();
    for (std::thread& t : helpers) t.join();
  }

  const gpuprobe::Status stopped = session.stop();
  const gpuprobe::Stats stats = session.stats();
  if (!stopped.ok()) {
    std::fprintf(stderr, "demo: tracing failed: %s\n", stopped.message().c_str());
    return 1;
  }

  std::printf("trace: %s\n", std::filesystem::absolute(path).c_str());
  std::printf("open it at https://ui.perfetto.dev or chrome://tracing\n\n");
  std::printf("%-36s %8s %12s\n", "name", "events", "time ms");
  for (const auto& [name, row] : summary->rows()) {
    std::printf("%-36.36s %8llu %12.2f\n", name.c_str(), static_cast<unsigned long long>(row.count),
                row.total_ms);
  }
  std::printf("\nGPU: %s", gpu ? stats.gpu.status.c_str() : "none found (CPU-only demo)");
  if (gpu) {
    std::printf(", %llu records, %llu attributed to ranges, %llu dropped",
                static_cast<unsigned long long>(stats.gpu.records),
                static_cast<unsigned long long>(stats.gpu.attributed),
                static_cast<unsigned long long>(stats.gpu.dropped));
  }
  std::uint64_t peak = 0;
  for (const gpuprobe::ThreadInfo& t : stats.threads) peak = std::max(peak, t.peak_fill);
  std::printf("\nthreads: %zu, events written: %llu, dropped: %llu, fullest ring: %llu of %llu\n",
              stats.threads.size(), static_cast<unsigned long long>(stats.written),
              static_cast<unsigned long long>(stats.dropped), static_cast<unsigned long long>(peak),
              static_cast<unsigned long long>(stats.ring_capacity));
  return 0;
}
