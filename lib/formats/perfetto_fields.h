// Field numbers and enum values of Perfetto's trace format that gpuprobe writes and reads, one
// table for the writer (sinks/perfetto_sink) and the reader (readers/perfetto_trace_reader), from
// Perfetto's public protos (mirrored in third_party/perfetto/perfetto_trace.proto).
#pragma once

#include <cstdint>

namespace gpuprobe::formats::perfetto {

constexpr std::uint32_t kTracePacket = 1;  // Trace.packet

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

namespace descriptor {  // TrackDescriptor, and the process/thread descriptors it holds
constexpr std::uint32_t kUuid = 1, kName = 2, kProcess = 3, kThread = 4, kParentUuid = 5,
                        kCounter = 8, kSiblingMergeBehavior = 15;
constexpr std::uint32_t kSiblingMergeNone = 2;              // SIBLING_MERGE_BEHAVIOR_NONE
constexpr std::uint32_t kProcessPid = 1, kProcessName = 6;  // ProcessDescriptor
constexpr std::uint32_t kThreadPid = 1, kThreadTid = 2, kThreadName = 5;  // ThreadDescriptor
}  // namespace descriptor
namespace interned {  // InternedData; each entry (EventCategory, EventName, ...) is iid + name
constexpr std::uint32_t kEventCategories = 1, kEventNames = 2, kDebugAnnotationNames = 3;
constexpr std::uint32_t kIid = 1, kEntryName = 2;
}  // namespace interned
namespace annotation {  // DebugAnnotation
constexpr std::uint32_t kNameIid = 1, kBoolValue = 2, kUintValue = 3, kIntValue = 4,
                        kDoubleValue = 5, kStringValue = 6, kName = 10;
}
namespace clock_snapshot {  // ClockSnapshot and its Clock
constexpr std::uint32_t kClocks = 1, kClockId = 1, kTimestamp = 2;
}
namespace defaults {  // TracePacketDefaults and its TrackEventDefaults
constexpr std::uint32_t kTimestampClockId = 58, kTrackEventDefaults = 11, kTrackUuid = 11;
}

// TracePacket.sequence_flags.
constexpr std::uint32_t kSeqIncrementalStateCleared = 1, kSeqNeedsIncrementalState = 2;
// Builtin clocks.
constexpr std::uint32_t kClockRealtime = 1, kClockMonotonic = 3, kClockBoottime = 6;

}  // namespace gpuprobe::formats::perfetto
