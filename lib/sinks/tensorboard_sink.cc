#include "sinks/tensorboard_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "base/notice.h"
#include "formats/tensorboard_fields.h"
#include "sinks/crc32c.h"
#include "sinks/proto_writer.h"

namespace gpuprobe::sinks {
namespace {

using namespace formats::tensorboard;  // field numbers
using summary::kDataClassScalar;
using summary::kDataClassTensor;

std::string profile_run_name(std::int64_t start_wall_ns) {
  // XProf's run directories are named by their start time, local time.
  const std::time_t seconds = static_cast<std::time_t>(start_wall_ns / 1000000000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char name[32];
  std::strftime(name, sizeof name, "%Y_%m_%d_%H_%M_%S", &tm);
  return name;
}

}  // namespace

// One Summary.Value: a scalar, or the histogram of a range name's durations.
struct TensorBoardSink::Value {
  std::string tag;
  const char* description;
  float scalar = 0;
  const RangeSummary* histogram = nullptr;
};

TensorBoardSink::TensorBoardSink(std::string logdir) : logdir_(std::move(logdir)), scratch_(4) {
  while (logdir_.size() > 1 && logdir_.back() == '/') logdir_.pop_back();
}

TensorBoardSink::~TensorBoardSink() {
  if (fd_ >= 0) ::close(fd_);
}

Status TensorBoardSink::write_record(const std::string& data) {
  // TFRecord: length, masked CRC of the length's bytes, the data, masked CRC of the data.
  std::string record;
  record.reserve(data.size() + 16);
  const std::uint64_t length = data.size();
  char le[8];
  std::memcpy(le, &length, 8);  // little-endian hosts only
  record.append(le, 8);
  const std::uint32_t length_crc = mask_crc(crc32c(std::string_view(le, 8)));
  record.append(reinterpret_cast<const char*>(&length_crc), 4);
  record += data;
  const std::uint32_t data_crc = mask_crc(crc32c(data));
  record.append(reinterpret_cast<const char*>(&data_crc), 4);
  std::size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status::Error("cannot write '" + events_path_ +
                           "': " + std::strerror(n < 0 ? errno : EIO));
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Status TensorBoardSink::open(const TraceInfo& info) {
  info_ = info;
  std::error_code ec;
  std::filesystem::create_directories(logdir_, ec);
  if (ec) return Status::Error("cannot create directory '" + logdir_ + "': " + ec.message());
  char stamp[16];
  std::snprintf(stamp, sizeof stamp, "%010lld",
                static_cast<long long>(info.start_wall_ns / 1000000000));
  const std::string host = base::host_name();
  profile_path_ = logdir_ + "/plugins/profile/" + profile_run_name(info.start_wall_ns) + "/" +
                  host + ".xplane.pb";
  // Appended record by record (not a temporary file): TensorBoard reads event files while they
  // grow, and retries a record cut short. A new file of this process's own, never one that is
  // there (a link planted at a name it could guess, or another writer's file): the next name is
  // tried, as TensorFlow's writers make their names unique.
  const std::string stem =
      logdir_ + "/events.out.tfevents." + stamp + "." + host + "." + std::to_string(info.pid);
  Status created;
  for (int attempt = 0; attempt < 16; ++attempt) {
    events_path_ = stem + (attempt == 0 ? "" : "." + std::to_string(attempt)) + ".gpuprobe";
    created = base::create_new_file(events_path_, &fd_);
    if (created.ok() || errno != EEXIST) break;
  }
  if (!created.ok()) return created;
  std::string first;
  ProtoWriter w(&first, &scratch_);
  w.double_value(event::kWallTime, static_cast<double>(info.start_wall_ns) * 1e-9);
  w.bytes(event::kFileVersion, "brain.Event:2");
  w.message(event::kSourceMetadata,
            [](ProtoWriter& m) { m.bytes(event::kSourceWriter, "gpuprobe"); });
  xspace_.start(info);
  return write_record(first);
}

Status TensorBoardSink::write(const EventBatch& batch) {
  summaries_.add(batch);
  xspace_.add(batch);
  for (const StepSummary& step : summaries_.take_ready(false)) {
    if (Status s = write_step(step, {}); !s.ok()) return s;
  }
  return {};
}

Status TensorBoardSink::write_step(const StepSummary& step, const std::vector<Value>& extra) {
  std::vector<Value> values;
  values.push_back({"step/time_ms", "Time from the previous gpuprobe::step() to this one, ms",
                    static_cast<float>(step.time_ms)});
  for (const DeviceSummary& d : step.devices) {
    const std::string gpu = "gpu" + std::to_string(d.device);
    values.push_back({gpu + "/busy_percent",
                      "Share of the step with a kernel, copy or memset running on the GPU, %",
                      static_cast<float>(d.busy_percent)});
    values.push_back(
        {gpu + "/kernels", "Kernels that started during the step", static_cast<float>(d.kernels)});
  }
  values.push_back({"gpuprobe/events_dropped",
                    "Events lost to full per-thread rings since the previous step",
                    static_cast<float>(step.dropped)});
  for (const RangeSummary& r : step.ranges) {
    const std::string tag = "ranges/" + r.name;
    values.push_back(
        {tag + "/p50_ms", "Median duration within the step, ms", static_cast<float>(r.p50_ms)});
    values.push_back({tag + "/p99_ms", "99th-percentile duration within the step, ms",
                      static_cast<float>(r.p99_ms)});
    values.push_back(
        {tag + "/count", "Ranges that ended within the step", static_cast<float>(r.count)});
    values.push_back({tag, "Durations of the ranges that ended within the step, ms", 0, &r});
  }
  values.insert(values.end(), extra.begin(), extra.end());

  // TensorBoard keeps one point per step and tag: steps must rise strictly.
  const std::int64_t step_number = std::max(step.step, last_step_ + 1);
  last_step_ = step_number;
  std::string data;
  ProtoWriter w(&data, &scratch_, 0);
  w.double_value(event::kWallTime, static_cast<double>(step.end_ns) * 1e-9);
  w.varint(event::kStep, static_cast<std::uint64_t>(step_number));
  w.message(event::kSummary, [&](ProtoWriter& summary) {
    for (const Value& v : values) {
      summary.message(summary::kValue, [&](ProtoWriter& val) {
        val.bytes(summary::kTag, v.tag);
        if (tags_.insert(v.tag).second) {
          // Metadata travels with a tag's first value only.
          val.message(summary::kMetadata, [&](ProtoWriter& meta) {
            meta.message(summary::kPluginData, [&](ProtoWriter& plugin) {
              plugin.bytes(summary::kPluginName, v.histogram != nullptr ? "histograms" : "scalars");
            });
            meta.bytes(summary::kDescription, v.description);
            meta.varint(summary::kDataClass,
                        v.histogram != nullptr ? kDataClassTensor : kDataClassScalar);
          });
        }
        if (v.histogram == nullptr) {
          val.float_value(summary::kSimpleValue, v.scalar);
          return;
        }
        const RangeSummary& r = *v.histogram;
        val.message(summary::kHisto, [&](ProtoWriter& h) {
          h.double_value(histo::kMin, r.min_ms);
          h.double_value(histo::kMax, r.max_ms);
          h.double_value(histo::kNum, static_cast<double>(r.count));
          h.double_value(histo::kSum, r.sum_ms);
          h.double_value(histo::kSumSquares, r.sum_squares);
          std::vector<double> limits, counts;
          for (const auto& [limit, count] : r.buckets) {
            limits.push_back(limit);
            counts.push_back(count);
          }
          h.packed_doubles(histo::kBucketLimit, limits.data(), limits.size());
          h.packed_doubles(histo::kBucket, counts.data(), counts.size());
        });
      });
    }
  });
  return write_record(data);
}

Status TensorBoardSink::close(const Stats& stats, const TimeBase&) {
  Status status;
  std::vector<StepSummary> last = summaries_.take_ready(true);
  for (std::size_t i = 0; i < last.size() && status.ok(); ++i) {
    std::vector<Value> extra;
    if (i + 1 == last.size()) {
      // What the summaries could not include, on the last step.
      const std::uint64_t lost = stats.gpu.dropped;
      if (lost != 0)
        extra.push_back({"gpuprobe/gpu_records_lost",
                         "GPU activity records CUPTI dropped (for want of a buffer "
                         "included), whole session",
                         static_cast<float>(lost)});
      if (summaries_.samples_dropped() != 0)
        extra.push_back({"gpuprobe/summary_samples_dropped",
                         "Range durations left out of the summaries (too many names or pending "
                         "samples), whole session",
                         static_cast<float>(summaries_.samples_dropped())});
    }
    status = write_step(last[i], extra);
  }
  if (fd_ >= 0 && ::close(fd_) != 0 && status.ok())
    status = Status::Error("cannot write '" + events_path_ + "': " + std::strerror(errno));
  fd_ = -1;

  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(profile_path_).parent_path(), ec);
  if (ec) {
    return status.ok() ? Status::Error("cannot create directory for '" + profile_path_ +
                                       "': " + ec.message())
                       : status;
  }
  base::OutputFile profile;
  Status s = profile.open(profile_path_);
  if (s.ok()) s = xspace_.write_to(profile, stats);
  if (s.ok()) s = profile.commit();
  if (s.ok() && xspace_.dropped() != 0) {
    base::print_notice("tensorboard: " + std::to_string(xspace_.dropped()) +
                       " events left out of " + profile_path_ +
                       " (its size limit; the XSpace says so in its warnings); the Chrome and "
                       "Perfetto sinks keep every event");
  }
  return status.ok() ? s : status;
}

}  // namespace gpuprobe::sinks
