// The hand-kept field numbers of formats/perfetto_fields.h, which the sink writes and the reader
// reads by, against the numbers protoc compiled from Perfetto's schema: a renumbered or mistyped
// constant fails here rather than producing traces that only our own reader accepts.
#include "formats/perfetto_fields.h"

#include <google/protobuf/descriptor.h>

#include <string>

#include "perfetto_trace.pb.h"
#include "support/catch.hpp"

namespace gpuprobe {
namespace {

namespace fp = formats::perfetto;
using google::protobuf::Descriptor;

int field(const Descriptor* message, const std::string& name) {
  const google::protobuf::FieldDescriptor* f = message->FindFieldByName(name);
  INFO(message->full_name() << "." << name);
  REQUIRE(f != nullptr);
  return f->number();
}

TEST_CASE("TracePacket and Trace") {
  const Descriptor* p = perfetto::protos::TracePacket::descriptor();
  CHECK(field(perfetto::protos::Trace::descriptor(), "packet") == fp::kTracePacket);
  CHECK(field(p, "timestamp") == fp::packet::kTimestamp);
  CHECK(field(p, "timestamp_clock_id") == fp::packet::kTimestampClockId);
  CHECK(field(p, "trusted_packet_sequence_id") == fp::packet::kSequenceId);
  CHECK(field(p, "clock_snapshot") == fp::packet::kClockSnapshot);
  CHECK(field(p, "track_event") == fp::packet::kTrackEvent);
  CHECK(field(p, "track_descriptor") == fp::packet::kTrackDescriptor);
  CHECK(field(p, "interned_data") == fp::packet::kInternedData);
  CHECK(field(p, "sequence_flags") == fp::packet::kSequenceFlags);
  CHECK(field(p, "trace_packet_defaults") == fp::packet::kDefaults);
}

TEST_CASE("TrackEvent") {
  const Descriptor* e = perfetto::protos::TrackEvent::descriptor();
  CHECK(field(e, "type") == fp::event::kType);
  CHECK(field(e, "track_uuid") == fp::event::kTrackUuid);
  CHECK(field(e, "name_iid") == fp::event::kNameIid);
  CHECK(field(e, "name") == fp::event::kName);
  CHECK(field(e, "category_iids") == fp::event::kCategoryIids);
  CHECK(field(e, "categories") == fp::event::kCategories);
  CHECK(field(e, "counter_value") == fp::event::kCounterValue);
  CHECK(field(e, "double_counter_value") == fp::event::kDoubleCounterValue);
  CHECK(field(e, "flow_ids") == fp::event::kFlowIds);
  CHECK(field(e, "terminating_flow_ids") == fp::event::kTerminatingFlowIds);
  CHECK(field(e, "debug_annotations") == fp::event::kDebugAnnotations);
  CHECK(perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN == fp::event::kSliceBegin);
  CHECK(perfetto::protos::TrackEvent::TYPE_SLICE_END == fp::event::kSliceEnd);
  CHECK(perfetto::protos::TrackEvent::TYPE_INSTANT == fp::event::kInstant);
  CHECK(perfetto::protos::TrackEvent::TYPE_COUNTER == fp::event::kCounter);
}

TEST_CASE("TrackDescriptor and the process and thread descriptors") {
  const Descriptor* d = perfetto::protos::TrackDescriptor::descriptor();
  CHECK(field(d, "uuid") == fp::descriptor::kUuid);
  CHECK(field(d, "name") == fp::descriptor::kName);
  CHECK(field(d, "process") == fp::descriptor::kProcess);
  CHECK(field(d, "thread") == fp::descriptor::kThread);
  CHECK(field(d, "parent_uuid") == fp::descriptor::kParentUuid);
  CHECK(field(d, "counter") == fp::descriptor::kCounter);
  CHECK(field(d, "sibling_merge_behavior") == fp::descriptor::kSiblingMergeBehavior);
  CHECK(perfetto::protos::TrackDescriptor::SIBLING_MERGE_BEHAVIOR_NONE ==
        static_cast<int>(fp::descriptor::kSiblingMergeNone));
  const Descriptor* process = perfetto::protos::ProcessDescriptor::descriptor();
  CHECK(field(process, "pid") == fp::descriptor::kProcessPid);
  CHECK(field(process, "process_name") == fp::descriptor::kProcessName);
  const Descriptor* thread = perfetto::protos::ThreadDescriptor::descriptor();
  CHECK(field(thread, "pid") == fp::descriptor::kThreadPid);
  CHECK(field(thread, "tid") == fp::descriptor::kThreadTid);
  CHECK(field(thread, "thread_name") == fp::descriptor::kThreadName);
}

TEST_CASE("InternedData and its entries") {
  const Descriptor* i = perfetto::protos::InternedData::descriptor();
  CHECK(field(i, "event_categories") == fp::interned::kEventCategories);
  CHECK(field(i, "event_names") == fp::interned::kEventNames);
  CHECK(field(i, "debug_annotation_names") == fp::interned::kDebugAnnotationNames);
  for (const Descriptor* entry :
       {perfetto::protos::EventCategory::descriptor(), perfetto::protos::EventName::descriptor(),
        perfetto::protos::DebugAnnotationName::descriptor()}) {
    CHECK(field(entry, "iid") == fp::interned::kIid);
    CHECK(field(entry, "name") == fp::interned::kEntryName);
  }
}

TEST_CASE("DebugAnnotation, ClockSnapshot and the packet defaults") {
  const Descriptor* a = perfetto::protos::DebugAnnotation::descriptor();
  CHECK(field(a, "name_iid") == fp::annotation::kNameIid);
  CHECK(field(a, "name") == fp::annotation::kName);
  CHECK(field(a, "bool_value") == fp::annotation::kBoolValue);
  CHECK(field(a, "uint_value") == fp::annotation::kUintValue);
  CHECK(field(a, "int_value") == fp::annotation::kIntValue);
  CHECK(field(a, "double_value") == fp::annotation::kDoubleValue);
  CHECK(field(a, "string_value") == fp::annotation::kStringValue);
  CHECK(field(perfetto::protos::ClockSnapshot::descriptor(), "clocks") ==
        fp::clock_snapshot::kClocks);
  const Descriptor* clock = perfetto::protos::ClockSnapshot::Clock::descriptor();
  CHECK(field(clock, "clock_id") == fp::clock_snapshot::kClockId);
  CHECK(field(clock, "timestamp") == fp::clock_snapshot::kTimestamp);
  const Descriptor* defaults = perfetto::protos::TracePacketDefaults::descriptor();
  CHECK(field(defaults, "timestamp_clock_id") == fp::defaults::kTimestampClockId);
  CHECK(field(defaults, "track_event_defaults") == fp::defaults::kTrackEventDefaults);
  CHECK(field(perfetto::protos::TrackEventDefaults::descriptor(), "track_uuid") ==
        fp::defaults::kTrackUuid);
}

}  // namespace
}  // namespace gpuprobe
