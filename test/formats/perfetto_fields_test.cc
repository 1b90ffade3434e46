// The hand-kept field numbers of formats/perfetto_fields.h, which the sink writes and the reader
// reads by, against the numbers protoc compiled from Perfetto's schema: a renumbered or mistyped
// constant fails here rather than producing traces that only our own reader accepts.
#include "formats/perfetto_fields.h"

#include <google/protobuf/descriptor.h>

#include <string>

#include "perfetto_trace.pb.h"
#include "support/catch.hpp"
#include "support/proto_field.h"

namespace gpuprobe {
namespace {

namespace fp = formats::perfetto;
using google::protobuf::Descriptor;

using testing::proto_field;

TEST_CASE("TracePacket and Trace") {
  const Descriptor* p = perfetto::protos::TracePacket::descriptor();
  CHECK(proto_field(perfetto::protos::Trace::descriptor(), "packet") == fp::kTracePacket);
  CHECK(proto_field(p, "timestamp") == fp::packet::kTimestamp);
  CHECK(proto_field(p, "timestamp_clock_id") == fp::packet::kTimestampClockId);
  CHECK(proto_field(p, "trusted_packet_sequence_id") == fp::packet::kSequenceId);
  CHECK(proto_field(p, "clock_snapshot") == fp::packet::kClockSnapshot);
  CHECK(proto_field(p, "track_event") == fp::packet::kTrackEvent);
  CHECK(proto_field(p, "track_descriptor") == fp::packet::kTrackDescriptor);
  CHECK(proto_field(p, "interned_data") == fp::packet::kInternedData);
  CHECK(proto_field(p, "sequence_flags") == fp::packet::kSequenceFlags);
  CHECK(proto_field(p, "trace_packet_defaults") == fp::packet::kDefaults);
}

TEST_CASE("TrackEvent") {
  const Descriptor* e = perfetto::protos::TrackEvent::descriptor();
  CHECK(proto_field(e, "type") == fp::event::kType);
  CHECK(proto_field(e, "track_uuid") == fp::event::kTrackUuid);
  CHECK(proto_field(e, "name_iid") == fp::event::kNameIid);
  CHECK(proto_field(e, "name") == fp::event::kName);
  CHECK(proto_field(e, "category_iids") == fp::event::kCategoryIids);
  CHECK(proto_field(e, "categories") == fp::event::kCategories);
  CHECK(proto_field(e, "counter_value") == fp::event::kCounterValue);
  CHECK(proto_field(e, "double_counter_value") == fp::event::kDoubleCounterValue);
  CHECK(proto_field(e, "flow_ids") == fp::event::kFlowIds);
  CHECK(proto_field(e, "terminating_flow_ids") == fp::event::kTerminatingFlowIds);
  CHECK(proto_field(e, "debug_annotations") == fp::event::kDebugAnnotations);
  CHECK(perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN == fp::event::kSliceBegin);
  CHECK(perfetto::protos::TrackEvent::TYPE_SLICE_END == fp::event::kSliceEnd);
  CHECK(perfetto::protos::TrackEvent::TYPE_INSTANT == fp::event::kInstant);
  CHECK(perfetto::protos::TrackEvent::TYPE_COUNTER == fp::event::kCounter);
}

TEST_CASE("TrackDescriptor and the process and thread descriptors") {
  const Descriptor* d = perfetto::protos::TrackDescriptor::descriptor();
  CHECK(proto_field(d, "uuid") == fp::descriptor::kUuid);
  CHECK(proto_field(d, "name") == fp::descriptor::kName);
  CHECK(proto_field(d, "process") == fp::descriptor::kProcess);
  CHECK(proto_field(d, "thread") == fp::descriptor::kThread);
  CHECK(proto_field(d, "parent_uuid") == fp::descriptor::kParentUuid);
  CHECK(proto_field(d, "counter") == fp::descriptor::kCounter);
  CHECK(proto_field(d, "sibling_merge_behavior") == fp::descriptor::kSiblingMergeBehavior);
  CHECK(perfetto::protos::TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE ==
        static_cast<int>(fp::descriptor::kSiblingMergeNone));
  const Descriptor* process = perfetto::protos::ProcessDescriptor::descriptor();
  CHECK(proto_field(process, "pid") == fp::descriptor::kProcessPid);
  CHECK(proto_field(process, "process_name") == fp::descriptor::kProcessName);
  const Descriptor* thread = perfetto::protos::ThreadDescriptor::descriptor();
  CHECK(proto_field(thread, "pid") == fp::descriptor::kThreadPid);
  CHECK(proto_field(thread, "tid") == fp::descriptor::kThreadTid);
  CHECK(proto_field(thread, "thread_name") == fp::descriptor::kThreadName);
}

TEST_CASE("InternedData and its entries") {
  const Descriptor* i = perfetto::protos::InternedData::descriptor();
  CHECK(proto_field(i, "event_categories") == fp::interned::kEventCategories);
  CHECK(proto_field(i, "event_names") == fp::interned::kEventNames);
  CHECK(proto_field(i, "debug_annotation_names") == fp::interned::kDebugAnnotationNames);
  for (const Descriptor* entry :
       {perfetto::protos::EventCategory::descriptor(), perfetto::protos::EventName::descriptor(),
        perfetto::protos::DebugAnnotationName::descriptor()}) {
    CHECK(proto_field(entry, "iid") == fp::interned::kIid);
    CHECK(proto_field(entry, "name") == fp::interned::kEntryName);
  }
}

TEST_CASE("DebugAnnotation, ClockSnapshot and the packet defaults") {
  const Descriptor* a = perfetto::protos::DebugAnnotation::descriptor();
  CHECK(proto_field(a, "name_iid") == fp::annotation::kNameIid);
  CHECK(proto_field(a, "name") == fp::annotation::kName);
  CHECK(proto_field(a, "bool_value") == fp::annotation::kBoolValue);
  CHECK(proto_field(a, "uint_value") == fp::annotation::kUintValue);
  CHECK(proto_field(a, "int_value") == fp::annotation::kIntValue);
  CHECK(proto_field(a, "double_value") == fp::annotation::kDoubleValue);
  CHECK(proto_field(a, "string_value") == fp::annotation::kStringValue);
  CHECK(proto_field(perfetto::protos::ClockSnapshot::descriptor(), "clocks") ==
        fp::clock_snapshot::kClocks);
  const Descriptor* clock = perfetto::protos::ClockSnapshot::Clock::descriptor();
  CHECK(proto_field(clock, "clock_id") == fp::clock_snapshot::kClockId);
  CHECK(proto_field(clock, "timestamp") == fp::clock_snapshot::kTimestamp);
  const Descriptor* defaults = perfetto::protos::TracePacketDefaults::descriptor();
  CHECK(proto_field(defaults, "timestamp_clock_id") == fp::defaults::kTimestampClockId);
  CHECK(proto_field(defaults, "track_event_defaults") == fp::defaults::kTrackEventDefaults);
  CHECK(proto_field(perfetto::protos::TrackEventDefaults::descriptor(), "track_uuid") ==
        fp::defaults::kTrackUuid);
}

}  // namespace
}  // namespace gpuprobe
