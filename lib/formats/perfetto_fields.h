// Field numbers and enum values of Perfetto's trace format that gpuprobe writes and reads, one
// table for the writer (sinks/perfetto_sink) and the reader (readers/perfetto_trace_reader), from
// Perfetto's public protos (mirrored in third_party/perfetto/perfetto_trace.proto).
#pragma once

#include <cstdint>

namespace gpuprobe::formats::perfetto {

namespace packet {  // TracePacket
constexpr std::uint32_t kTimestamp = 8, kTimestampClockId = 58, kSequenceId = 10,
                        kClockSnapshot = 6, kTrackEvent = 11, kTrackDescriptor = 60,
                        kInternedData = 12, kSequenceFlags = 13, kDefaults = 59;
}
namespace event {  // TrackEvent
constexpr std::uint32_t kType = 9, kTrackUuid = 11, kNameIid = 10, kName = 23, kCategoryIids = 3,
                        kCategories = 22, kCounterValue = 30, kDoubleCounterValue = 44,
                        kFlowIds = 47, kTerminatingFlowIds = 48, kDebugAnnotations = 4;
constexpr int kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;
}  // namespace event

// TracePacket.sequence_flags.
constexpr std::uint32_t kSeqIncrementalStateCleared = 1, kSeqNeedsIncrementalState = 2;
// Builtin clocks.
constexpr std::uint32_t kClockRealtime = 1, kClockMonotonic = 3, kClockBoottime = 6;

}  // namespace gpuprobe::formats::perfetto
