// The Perfetto sink's own numbering, shared by its two files (perfetto_sink.cc, the CPU side and
// the file; perfetto_gpu_events.cc, GPU activity and devices). Internal to the sink: never
// include this from elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuprobe::sinks::perfetto_tracks {

// A clock of our own, scoped to each sequence: nanoseconds since the session's start. Five-byte
// timestamps instead of nine, which is most of what keeps a range under 40 bytes.
inline constexpr std::uint32_t kSessionClock = 64;

// Track uuids: one space per kind of track, so they never collide.
inline constexpr std::uint64_t kProcessTrack = 1;
inline std::uint64_t thread_track(std::uint32_t index) { return (std::uint64_t{1} << 32) + index; }
inline std::uint64_t gpu_track(std::uint32_t device) { return (std::uint64_t{2} << 32) + device; }
inline std::uint64_t stream_track(std::uint32_t device, std::uint32_t stream) {
  return (std::uint64_t{3} << 56) + (std::uint64_t{device} << 32) + stream;
}
inline std::uint64_t api_track(std::int64_t tid) {
  return (std::uint64_t{4} << 56) + static_cast<std::uint32_t>(tid);
}
inline std::uint64_t counter_uuid(std::size_t index) { return (std::uint64_t{5} << 56) + index; }
inline constexpr std::uint64_t kOverheadTrack = std::uint64_t{6} << 56;

// GPU work and API calls carry Kineto's categories ("kernel", "gpu_memcpy", "cuda_runtime", ...),
// interned under these keys, past gpuprobe's own categories (0-31).
inline constexpr int kGpuCategories = 100;

}  // namespace gpuprobe::sinks::perfetto_tracks
