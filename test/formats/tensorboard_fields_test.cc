// The field numbers the TensorBoard sink writes by (formats/tensorboard_fields.h), against the
// numbers protoc compiled from TensorBoard's and XProf's schemas.
#include "formats/tensorboard_fields.h"

#include <google/protobuf/descriptor.h>

#include <string>

#include "support/catch.hpp"
#include "tensorboard_event.pb.h"
#include "xplane.pb.h"

namespace gpuprobe {
namespace {

using google::protobuf::Descriptor;

int field(const Descriptor* message, const std::string& name) {
  const google::protobuf::FieldDescriptor* f = message->FindFieldByName(name);
  INFO(message->full_name() << "." << name);
  REQUIRE(f != nullptr);
  return f->number();
}

TEST_CASE("TensorBoard's Event, Summary and HistogramProto") {
  namespace tb = formats::tensorboard;
  const Descriptor* e = tensorboard::Event::descriptor();
  CHECK(field(e, "wall_time") == tb::event::kWallTime);
  CHECK(field(e, "step") == tb::event::kStep);
  CHECK(field(e, "file_version") == tb::event::kFileVersion);
  CHECK(field(e, "summary") == tb::event::kSummary);
  CHECK(field(e, "source_metadata") == tb::event::kSourceMetadata);
  CHECK(field(tensorboard::SourceMetadata::descriptor(), "writer") == tb::event::kSourceWriter);
  CHECK(field(tensorboard::Summary::descriptor(), "value") == tb::summary::kValue);
  const Descriptor* v = tensorboard::Summary::Value::descriptor();
  CHECK(field(v, "tag") == tb::summary::kTag);
  CHECK(field(v, "simple_value") == tb::summary::kSimpleValue);
  CHECK(field(v, "histo") == tb::summary::kHisto);
  CHECK(field(v, "metadata") == tb::summary::kMetadata);
  const Descriptor* m = tensorboard::SummaryMetadata::descriptor();
  CHECK(field(m, "plugin_data") == tb::summary::kPluginData);
  CHECK(field(m, "summary_description") == tb::summary::kDescription);
  CHECK(field(m, "data_class") == tb::summary::kDataClass);
  CHECK(field(tensorboard::SummaryMetadata::PluginData::descriptor(), "plugin_name") ==
        tb::summary::kPluginName);
  const Descriptor* h = tensorboard::HistogramProto::descriptor();
  CHECK(field(h, "min") == tb::histo::kMin);
  CHECK(field(h, "max") == tb::histo::kMax);
  CHECK(field(h, "num") == tb::histo::kNum);
  CHECK(field(h, "sum") == tb::histo::kSum);
  CHECK(field(h, "sum_squares") == tb::histo::kSumSquares);
  CHECK(field(h, "bucket_limit") == tb::histo::kBucketLimit);
  CHECK(field(h, "bucket") == tb::histo::kBucket);
}

TEST_CASE("XProf's XSpace, XPlane, XLine, XEvent, XStat and their metadata") {
  namespace xp = formats::xplane;
  namespace tp = tensorflow::profiler;
  const Descriptor* space = tp::XSpace::descriptor();
  CHECK(field(space, "planes") == xp::xspace::kPlanes);
  CHECK(field(space, "warnings") == xp::xspace::kWarnings);
  CHECK(field(space, "hostnames") == xp::xspace::kHostnames);
  const Descriptor* plane = tp::XPlane::descriptor();
  CHECK(field(plane, "id") == xp::plane::kId);
  CHECK(field(plane, "name") == xp::plane::kName);
  CHECK(field(plane, "lines") == xp::plane::kLines);
  CHECK(field(plane, "event_metadata") == xp::plane::kEventMetadata);
  CHECK(field(plane, "stat_metadata") == xp::plane::kStatMetadata);
  CHECK(field(plane, "stats") == xp::plane::kStats);
  const Descriptor* entry = plane->FindFieldByName("event_metadata")->message_type();
  CHECK(field(entry, "key") == xp::plane::kMapKey);
  CHECK(field(entry, "value") == xp::plane::kMapValue);
  for (const Descriptor* m : {tp::XEventMetadata::descriptor(), tp::XStatMetadata::descriptor()}) {
    CHECK(field(m, "id") == xp::metadata::kId);
    CHECK(field(m, "name") == xp::metadata::kName);
  }
  const Descriptor* line = tp::XLine::descriptor();
  CHECK(field(line, "id") == xp::line::kId);
  CHECK(field(line, "name") == xp::line::kName);
  CHECK(field(line, "timestamp_ns") == xp::line::kTimestampNs);
  CHECK(field(line, "events") == xp::line::kEvents);
  CHECK(field(line, "duration_ps") == xp::line::kDurationPs);
  CHECK(field(line, "display_id") == xp::line::kDisplayId);
  const Descriptor* event = tp::XEvent::descriptor();
  CHECK(field(event, "metadata_id") == xp::event::kMetadataId);
  CHECK(field(event, "offset_ps") == xp::event::kOffsetPs);
  CHECK(field(event, "duration_ps") == xp::event::kDurationPs);
  CHECK(field(event, "stats") == xp::event::kStats);
  const Descriptor* stat = tp::XStat::descriptor();
  CHECK(field(stat, "metadata_id") == xp::stat::kMetadataId);
  CHECK(field(stat, "double_value") == xp::stat::kDouble);
  CHECK(field(stat, "int64_value") == xp::stat::kInt64);
  CHECK(field(stat, "str_value") == xp::stat::kStr);
}

}  // namespace
}  // namespace gpuprobe
