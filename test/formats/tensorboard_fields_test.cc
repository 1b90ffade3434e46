// The field numbers the TensorBoard sink writes by (formats/tensorboard_fields.h), against the
// numbers protoc compiled from TensorBoard's and XProf's schemas.
#include "formats/tensorboard_fields.h"

#include <google/protobuf/descriptor.h>

#include <string>

#include "support/catch.hpp"
#include "support/proto_field.h"
#include "tensorboard_event.pb.h"
#include "xplane.pb.h"

namespace gpuprobe {
namespace {

using google::protobuf::Descriptor;

using testing::proto_field;

TEST_CASE("TensorBoard's Event, Summary and HistogramProto") {
  namespace tb = formats::tensorboard;
  const Descriptor* e = tensorboard::Event::descriptor();
  CHECK(proto_field(e, "wall_time") == tb::event::kWallTime);
  CHECK(proto_field(e, "step") == tb::event::kStep);
  CHECK(proto_field(e, "file_version") == tb::event::kFileVersion);
  CHECK(proto_field(e, "summary") == tb::event::kSummary);
  CHECK(proto_field(e, "source_metadata") == tb::event::kSourceMetadata);
  CHECK(proto_field(tensorboard::SourceMetadata::descriptor(), "writer") ==
        tb::event::kSourceWriter);
  CHECK(proto_field(tensorboard::Summary::descriptor(), "value") == tb::summary::kValue);
  const Descriptor* v = tensorboard::Summary::Value::descriptor();
  CHECK(proto_field(v, "tag") == tb::summary::kTag);
  CHECK(proto_field(v, "simple_value") == tb::summary::kSimpleValue);
  CHECK(proto_field(v, "histo") == tb::summary::kHisto);
  CHECK(proto_field(v, "metadata") == tb::summary::kMetadata);
  const Descriptor* m = tensorboard::SummaryMetadata::descriptor();
  CHECK(proto_field(m, "plugin_data") == tb::summary::kPluginData);
  CHECK(proto_field(m, "summary_description") == tb::summary::kDescription);
  CHECK(proto_field(m, "data_class") == tb::summary::kDataClass);
  CHECK(proto_field(tensorboard::SummaryMetadata::PluginData::descriptor(), "plugin_name") ==
        tb::summary::kPluginName);
  const Descriptor* h = tensorboard::HistogramProto::descriptor();
  CHECK(proto_field(h, "min") == tb::histo::kMin);
  CHECK(proto_field(h, "max") == tb::histo::kMax);
  CHECK(proto_field(h, "num") == tb::histo::kNum);
  CHECK(proto_field(h, "sum") == tb::histo::kSum);
  CHECK(proto_field(h, "sum_squares") == tb::histo::kSumSquares);
  CHECK(proto_field(h, "bucket_limit") == tb::histo::kBucketLimit);
  CHECK(proto_field(h, "bucket") == tb::histo::kBucket);
}

TEST_CASE("XProf's XSpace, XPlane, XLine, XEvent, XStat and their metadata") {
  namespace xp = formats::xplane;
  namespace tp = tensorflow::profiler;
  const Descriptor* space = tp::XSpace::descriptor();
  CHECK(proto_field(space, "planes") == xp::xspace::kPlanes);
  CHECK(proto_field(space, "warnings") == xp::xspace::kWarnings);
  CHECK(proto_field(space, "hostnames") == xp::xspace::kHostnames);
  const Descriptor* plane = tp::XPlane::descriptor();
  CHECK(proto_field(plane, "id") == xp::plane::kId);
  CHECK(proto_field(plane, "name") == xp::plane::kName);
  CHECK(proto_field(plane, "lines") == xp::plane::kLines);
  CHECK(proto_field(plane, "event_metadata") == xp::plane::kEventMetadata);
  CHECK(proto_field(plane, "stat_metadata") == xp::plane::kStatMetadata);
  CHECK(proto_field(plane, "stats") == xp::plane::kStats);
  const Descriptor* entry = plane->FindFieldByName("event_metadata")->message_type();
  CHECK(proto_field(entry, "key") == xp::plane::kMapKey);
  CHECK(proto_field(entry, "value") == xp::plane::kMapValue);
  for (const Descriptor* m : {tp::XEventMetadata::descriptor(), tp::XStatMetadata::descriptor()}) {
    CHECK(proto_field(m, "id") == xp::metadata::kId);
    CHECK(proto_field(m, "name") == xp::metadata::kName);
  }
  const Descriptor* line = tp::XLine::descriptor();
  CHECK(proto_field(line, "id") == xp::line::kId);
  CHECK(proto_field(line, "name") == xp::line::kName);
  CHECK(proto_field(line, "timestamp_ns") == xp::line::kTimestampNs);
  CHECK(proto_field(line, "events") == xp::line::kEvents);
  CHECK(proto_field(line, "duration_ps") == xp::line::kDurationPs);
  CHECK(proto_field(line, "display_id") == xp::line::kDisplayId);
  const Descriptor* event = tp::XEvent::descriptor();
  CHECK(proto_field(event, "metadata_id") == xp::event::kMetadataId);
  CHECK(proto_field(event, "offset_ps") == xp::event::kOffsetPs);
  CHECK(proto_field(event, "duration_ps") == xp::event::kDurationPs);
  CHECK(proto_field(event, "stats") == xp::event::kStats);
  const Descriptor* stat = tp::XStat::descriptor();
  CHECK(proto_field(stat, "metadata_id") == xp::stat::kMetadataId);
  CHECK(proto_field(stat, "double_value") == xp::stat::kDouble);
  CHECK(proto_field(stat, "int64_value") == xp::stat::kInt64);
  CHECK(proto_field(stat, "str_value") == xp::stat::kStr);
}

}  // namespace
}  // namespace gpuprobe
