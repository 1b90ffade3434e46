// The Perfetto sink's GPU side: CUPTI's activity on one track per device and stream, API calls
// on their threads' tracks with the flows that link them to their work, and the devices.
#include <string>
#include <vector>

#include "formats/device_properties.h"
#include "formats/gpu_args.h"
#include "formats/kineto.h"
#include "formats/perfetto_fields.h"
#include "sinks/perfetto_sink.h"
#include "sinks/perfetto_tracks.h"

namespace gpuprobe::sinks {

using namespace formats::perfetto;  // field numbers
using namespace perfetto_tracks;
using formats::api_thread_tid;
using formats::starts_flow;

std::uint64_t PerfettoSink::gpu_stream_track(std::uint32_t device, std::uint32_t stream) {
  if (gpus_.insert(device).second) {
    track_descriptor(gpu_track(device), kProcessTrack, "GPU " + std::to_string(device), nullptr, 0,
                     false, true);
  }
  if (streams_.emplace(device, stream).second) {
    track_descriptor(stream_track(device, stream), gpu_track(device),
                     "stream " + std::to_string(stream), nullptr, 0, false, true);
  }
  return stream_track(device, stream);
}

std::uint64_t PerfettoSink::api_thread_track(std::int64_t tid, bool known_thread) {
  // A thread gpuprobe knows: its calls go on its own track, among its ranges.
  if (known_thread) {
    if (const auto it = thread_index_.find(tid); it != thread_index_.end())
      return thread_track(it->second);
  }
  if (api_threads_.insert(tid).second) {
    const std::string name = known_thread
                                 ? "thread " + std::to_string(tid)
                                 : "CUDA API thread (CUPTI id " + std::to_string(tid) + ")";
    track_descriptor(api_track(tid), kProcessTrack, name, nullptr, 0, false, false);
  }
  return api_track(tid);
}

void PerfettoSink::write_gpu_event(const GpuActivity& a, const TimeBase& time) {
  if (!process_seq_.started) start_sequence(process_seq_, 0);
  std::uint64_t track;
  std::uint64_t flow = 0, terminating = 0;
  const bool api = a.kind == GpuActivityKind::kRuntimeApi || a.kind == GpuActivityKind::kDriverApi;
  if (api) {
    track = api_thread_track(api_thread_tid(a), a.os_tid != 0);
    if (starts_flow(a.name)) flow = a.correlation;
  } else if (a.kind == GpuActivityKind::kOverhead) {
    if (!overhead_track_) {
      overhead_track_ = true;
      track_descriptor(kOverheadTrack, kProcessTrack, "CUPTI Overhead", nullptr, 0, false, true);
    }
    track = kOverheadTrack;
  } else {
    track = gpu_stream_track(a.device, a.stream);
    if (a.correlation != 0) terminating = a.correlation;
  }
  // The arguments, from the table both readers read back (formats/gpu_args.h).
  const std::int64_t start_ns = time.wall_ns(a.start), end_ns = time.wall_ns(a.end);
  const std::int64_t dur_ns = end_ns - start_ns;
  std::vector<Annotation>& args = gpu_annotations_;
  args.clear();
  for (const formats::GpuArg& arg : formats::gpu_args()) {
    if (!arg.carried(a)) continue;
    switch (arg.type) {
      case formats::GpuArgType::kInt:
        args.push_back({arg.name, Annotation::kInt, arg.get_int(a, dur_ns, 0), 0, nullptr});
        break;
      case formats::GpuArgType::kDouble:
        args.push_back({arg.name, Annotation::kDouble, 0, arg.get_double(a, dur_ns), nullptr});
        break;
      case formats::GpuArgType::kString:
        args.push_back({arg.name, Annotation::kString, 0, 0, arg.get_string(a)});
        break;
      case formats::GpuArgType::kDim3:
        for (int i = 0; i < 3; ++i)
          args.push_back(
              {arg.components[i], Annotation::kInt, arg.get_int(a, dur_ns, i), 0, nullptr});
        break;
    }
  }
  static const std::vector<Annotation> kNone;
  const int category = kGpuCategories + static_cast<int>(a.kind);
  const std::uint64_t name_iid = interned_name(process_seq_, a.name);
  const auto category_iid = process_seq_.categories.find(category);
  if (name_iid == 0 || category_iid == process_seq_.categories.end() || start_ns < base_ns_ ||
      !append_annotated_event(process_seq_, static_cast<std::uint64_t>(start_ns - base_ns_),
                              event::kSliceBegin, track, name_iid, category_iid->second, args, flow,
                              terminating)) {
    // What is new to the sequence is interned in the packet of its first use.
    track_event(process_seq_, start_ns, event::kSliceBegin, track, a.name, true, category, args,
                flow, terminating, nullptr);
  }
  track_event(process_seq_, end_ns, event::kSliceEnd, track, nullptr, false, -1, kNone, 0, 0,
              nullptr);
}

void PerfettoSink::write_devices() {
  if (info_.devices.empty() || devices_written_) return;
  devices_written_ = true;
  for (const DeviceInfo& d : info_.devices) {
    std::vector<Annotation> properties;
    properties.push_back({"name", Annotation::kString, 0, 0, d.name.c_str()});
    for (const formats::DeviceProperty& p : formats::device_properties())
      properties.push_back({p.key, Annotation::kInt, p.get(d), 0, nullptr});
    track_event(process_seq_, base_ns_, event::kInstant, kProcessTrack, formats::kDeviceEventName,
                false, -1, properties, 0, 0, nullptr);
  }
}

}  // namespace gpuprobe::sinks
