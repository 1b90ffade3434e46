#include "core/collector.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "core/name_table.h"

namespace gpuprobe::core {
namespace {

// The thread id a track is shown under: kTrackTidBase + its number. Above every kernel thread id
// (pid_max is at most 2^22) and within the 32 bits Perfetto's and Kineto's readers give a tid.
constexpr std::int64_t kTrackTidBase = std::int64_t{1} << 30;
// gpuprobe's own row (the GPU recording counter) is shown under kTrackTidBase - 1.

// Events per sink call: large enough to amortize the call, small enough to stay in cache.
constexpr std::size_t kBatchCapacity = 16384;

Event decode(const detail::Record& r, std::uint32_t thread) noexcept {
  Event e{EventType::kRange, thread, r.site, r.begin, r.begin, 0.0};
  switch (r.kind) {
    case detail::RecordKind::kRange:
      e.end = r.end;
      break;
    case detail::RecordKind::kInstant:
      e.type = EventType::kInstant;
      break;
    case detail::RecordKind::kCounter:
      e.type = EventType::kCounter;
      std::memcpy(&e.value, &r.end, sizeof e.value);
      break;
    case detail::RecordKind::kStep:  // a range whose number is in the record
      e.end = r.end;
      e.value = r.arg;
      break;
    case detail::RecordKind::kTrackName:  // not events: drain() handles them before decoding
    case detail::RecordKind::kGpuCall:
      break;
  }
  return e;
}

}  // namespace

Collector::Collector(std::vector<SinkSlot> sinks, const Calibration& calibration,
                     const CollectorOptions& options, ErrorLog* errors)
    : sinks_(std::move(sinks)),
      calibration_(calibration),
      time_(calibration.time_base()),
      options_(options),
      errors_(errors),
      range_observer_(options.gpu != nullptr && options.gpu->wants_ranges() ? options.gpu
                                                                            : nullptr) {
  batch_.reserve(kBatchCapacity);
  gpu_stats_.status = options.gpu_status;
}

Collector::~Collector() {
  if (thread_.joinable()) stop();
}

void Collector::start() {
  // The collector thread blocks every signal, so that the program's handlers run on the
  // program's threads (where they expect to), never inside gpuprobe's drain. It inherits the
  // mask of the thread that creates it, so the mask is set around its creation.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] {
    // Named, so that top -H, perf and /proc/PID/task show what gpuprobe's own cost is.
    pthread_setname_np(pthread_self(), "gpuprobe");  // at most 15 characters
    run();
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ThreadRegistry::get().set_pressure_hook(&Collector::wake_for_rings, this);
}

void Collector::wake_for_rings(void* self) {
  // Called under the registry's lock, which stop() takes to clear the hook before this object
  // goes: the collector is alive. The collector never takes that lock while holding wake_mu_.
  Collector* collector = static_cast<Collector*>(self);
  {
    std::lock_guard<std::mutex> lock(collector->wake_mu_);
    collector->drain_requested_ = true;
  }
  collector->wake_.notify_one();
}

void Collector::run() {
  std::unique_lock<std::mutex> lock(wake_mu_);
  while (!stopping_) {
    wake_.wait_for(lock, options_.period, [this] { return stopping_ || drain_requested_; });
    if (stopping_) break;
    drain_requested_ = false;
    lock.unlock();
    drain();
    lock.lock();
  }
}

void Collector::stop() {
  ThreadRegistry::get().set_pressure_hook(nullptr, nullptr);
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  drain(true);
  const Stats final_stats = stats();
  std::lock_guard<std::mutex> lock(drain_mu_);
  if (options_.gpu != nullptr && options_.info.devices.empty() &&
      !options_.gpu->devices().empty()) {
    TraceInfo info = options_.info;
    info.devices = options_.gpu->devices();
    call_sinks([&](Sink& sink) {
      sink.update_info(info);
      return Status{};
    });
  }
  call_sinks([&](Sink& sink) { return sink.close(final_stats, time_); });
}

void Collector::drain(bool final) {
  std::lock_guard<std::mutex> lock(drain_mu_);
  calibration_.refresh();
  time_ = calibration_.time_base();
  ThreadRegistry& registry = ThreadRegistry::get();
  registry.snapshot(&rings_);
  for (ThreadState* ring : rings_) {
    // Read before draining: once released, everything the owner wrote is already published.
    const bool released = ring->released.load(std::memory_order_acquire);
    if (ring->epoch.load(std::memory_order_relaxed) != options_.epoch) {
      ring->ring.discard();  // left over from a session that has ended
    } else {
      // The row exists before any of its events reaches a sink.
      prepare_row(*ring);
      if (range_observer_ != nullptr) {
        // Read before draining: with no range open now, every range that ended before now is in
        // the ring (the depth drops after the record is published).
        const std::uint64_t now = read_ticks(calibration_.source());
        const bool idle = ring->depth.load(std::memory_order_acquire) == 0;
        range_observer_->thread_state(ring->os_tid, idle, now);
      }
      const std::uint32_t index = ring->index;
      const std::int64_t os_tid = ring->os_tid;
      const std::uint32_t pthread_id = ring->pthread_id;
      std::uint64_t elsewhere = 0;  // records that are not events of this thread's own row
      const std::uint64_t n = ring->ring.drain([&](const detail::Record& r) {
        std::uint32_t row = index;
        if (r.kind == detail::RecordKind::kTrackName) {
          ++elsewhere;
          const std::uint32_t named = track_row(r.arg);
          std::lock_guard<std::mutex> lock(stats_mu_);
          rows_[named].name = r.site->name;
          return;
        }
        if (r.kind == detail::RecordKind::kGpuCall) {
          // The GPU source turns it into an API record, delivered with the GPU work it launched.
          ++elsewhere;
          if (options_.gpu != nullptr)
            options_.gpu->add_api_call(os_tid, pthread_id, r.begin, r.end, r.site, r.arg);
          return;
        }
        if (r.kind == detail::RecordKind::kRange) {
          // GPU work launched inside a track's range happened on this thread.
          if (range_observer_ != nullptr)
            range_observer_->add_range(os_tid, r.begin, r.end, r.site);
          if (r.arg != 0) {
            row = track_row(r.arg);
            ++elsewhere;
            if (track_written_[row]++ == 0) tracks_touched_.push_back(row);
          }
        }
        batch_.push_back(decode(r, row));
        if (batch_.size() == kBatchCapacity) deliver();
      });
      std::lock_guard<std::mutex> lock(stats_mu_);
      for (const std::uint32_t row : tracks_touched_) {
        rows_[row].written += track_written_[row];
        track_written_[row] = 0;
      }
      tracks_touched_.clear();
      ThreadInfo& row = rows_[index];
      row.written += n - elsewhere;
      row.dropped = ring->ring.dropped();
      // Only the collector removes records, so the fill level it finds is the peak since its
      // previous visit.
      row.peak_fill = std::max(row.peak_fill, n);
    }
    if (released) registry.recycle(ring);
  }
  collect_gpu(final);
  deliver();
}

void Collector::collect_gpu(bool final) {
  if (options_.gpu == nullptr) return;
  gpu_records_.clear();
  options_.gpu->collect(read_ticks(calibration_.source()), final, &gpu_records_);
  for (const GpuActivity& a : gpu_records_) {
    batch_.push_back(Event::from_gpu(a));
    if (batch_.size() == kBatchCapacity) deliver();
  }
  switches_.clear();
  options_.gpu->take_switches(&switches_);
  for (const RecordingSwitch& s : switches_) {
    batch_.push_back(Event{EventType::kCounter, gpuprobe_row(), &kGpuRecordingSite, s.tick, s.tick,
                           s.on ? 1.0 : 0.0});
    if (batch_.size() == kBatchCapacity) deliver();
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  gpu_stats_.records += gpu_records_.size();
  if (!switches_.empty()) rows_[gpuprobe_row_].written += switches_.size();
  options_.gpu->fill_stats(&gpu_stats_);
}

void Collector::prepare_row(const ThreadState& ring) {
  const std::uint32_t index = ring.index;
  const std::uint32_t version = ring.name_version.load(std::memory_order_relaxed);
  std::string name;
  const bool renamed = index >= name_versions_.size() || name_versions_[index] != version;
  if (renamed) name = ThreadRegistry::get().name_of(&ring);
  std::lock_guard<std::mutex> lock(stats_mu_);
  if (index >= rows_.size()) {
    rows_.resize(index + 1);
    name_versions_.resize(index + 1, ~0u);
    if (range_observer_ != nullptr) range_observer_->add_thread(ring.pthread_id, ring.os_tid);
  }
  ThreadInfo& row = rows_[index];
  row.os_tid = ring.os_tid;
  if (renamed) {
    row.name = std::move(name);
    name_versions_[index] = version;
  }
}

std::uint32_t Collector::track_row(std::uint32_t track) {
  if (const auto it = track_rows_.find(track); it != track_rows_.end()) return it->second;
  const std::uint32_t index = ThreadRegistry::get().reserve_index();
  track_rows_.emplace(track, index);
  std::lock_guard<std::mutex> lock(stats_mu_);
  if (index >= rows_.size()) {
    rows_.resize(index + 1);
    name_versions_.resize(index + 1, ~0u);
  }
  if (index >= track_written_.size()) track_written_.resize(index + 1, 0);
  ThreadInfo& row = rows_[index];
  row.os_tid = kTrackTidBase + track;
  row.name = "track " + std::to_string(track);
  return index;
}

std::uint32_t Collector::gpuprobe_row() {
  if (gpuprobe_row_ != kNoRow) return gpuprobe_row_;
  gpuprobe_row_ = ThreadRegistry::get().reserve_index();
  std::lock_guard<std::mutex> lock(stats_mu_);
  if (gpuprobe_row_ >= rows_.size()) {
    rows_.resize(gpuprobe_row_ + 1);
    name_versions_.resize(gpuprobe_row_ + 1, ~0u);
  }
  ThreadInfo& row = rows_[gpuprobe_row_];
  row.os_tid = kTrackTidBase - 1;
  row.name = "gpuprobe";
  return gpuprobe_row_;
}

void Collector::deliver() {
  if (batch_.empty()) return;
  const EventBatch batch{batch_.data(), batch_.size(), &time_, &rows_};
  call_sinks([&](Sink& sink) { return sink.write(batch); });
  batch_.clear();
}

template <class Call>
void Collector::call_sinks(Call&& call) {
  for (SinkSlot& slot : sinks_) {
    if (slot.failed) continue;
    Status status;
    try {
      status = call(*slot.sink);
    } catch (const std::exception& e) {
      status = Status::Error(std::string("threw: ") + e.what());
    } catch (...) {
      status = Status::Error("threw an exception");
    }
    if (!status.ok()) {
      slot.failed = true;
      errors_->add("sink " + slot.label + ": " + status.message() + " (sink disabled)");
    }
  }
}

Stats Collector::stats() const {
  Stats s;
  s.ring_capacity = options_.ring_capacity;
  s.names_overflowed = NameTable::get().overflowed();
  s.dropped_no_ring = ThreadRegistry::get().lost_without_ring();
  s.dropped = s.dropped_no_ring;
  std::lock_guard<std::mutex> lock(stats_mu_);
  s.threads = rows_;
  s.gpu = gpu_stats_;
  for (const ThreadInfo& t : rows_) {
    s.written += t.written;
    s.dropped += t.dropped;
  }
  return s;
}

}  // namespace gpuprobe::core
