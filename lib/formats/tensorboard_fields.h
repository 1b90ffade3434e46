// Field numbers of TensorBoard's event files and XProf's XSpace that the TensorBoard sink writes,
// from their public protos (mirrored in third_party/tensorboard/tensorboard_event.proto and
// third_party/xprof/xplane.proto); test/formats/tensorboard_fields_test checks them against
// protoc's descriptors.
#pragma once

#include <cstdint>

namespace gpuprobe::formats::tensorboard {

namespace event {  // Event, and the SourceMetadata it carries
constexpr std::uint32_t kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5,
                        kSourceMetadata = 10;
constexpr std::uint32_t kSourceWriter = 1;  // SourceMetadata.writer
}  // namespace event
namespace summary {  // Summary, its Value and the SummaryMetadata of a value
constexpr std::uint32_t kValue = 1;
constexpr std::uint32_t kTag = 1, kSimpleValue = 2, kHisto = 5, kMetadata = 9;  // Value
constexpr std::uint32_t kPluginData = 1, kDescription = 3, kDataClass = 4;      // SummaryMetadata
constexpr std::uint32_t kPluginName = 1;                                        // PluginData
constexpr int kDataClassScalar = 1, kDataClassTensor = 2;
}  // namespace summary
namespace histo {  // HistogramProto
constexpr std::uint32_t kMin = 1, kMax = 2, kNum = 3, kSum = 4, kSumSquares = 5, kBucketLimit = 6,
                        kBucket = 7;
}

}  // namespace gpuprobe::formats::tensorboard

namespace gpuprobe::formats::xplane {

namespace xspace {
constexpr std::uint32_t kPlanes = 1, kWarnings = 3, kHostnames = 4;
}
namespace plane {  // XPlane; its metadata maps are entries of key 1 and value 2
constexpr std::uint32_t kId = 1, kName = 2, kLines = 3, kEventMetadata = 4, kStatMetadata = 5,
                        kStats = 6;
constexpr std::uint32_t kMapKey = 1, kMapValue = 2;
}  // namespace plane
namespace metadata {  // XEventMetadata and XStatMetadata alike
constexpr std::uint32_t kId = 1, kName = 2;
}
namespace line {  // XLine
constexpr std::uint32_t kId = 1, kName = 2, kTimestampNs = 3, kEvents = 4, kDurationPs = 9,
                        kDisplayId = 10;
}
namespace event {  // XEvent
constexpr std::uint32_t kMetadataId = 1, kOffsetPs = 2, kDurationPs = 3, kStats = 4;
}
namespace stat {  // XStat
constexpr std::uint32_t kMetadataId = 1, kDouble = 2, kInt64 = 4, kStr = 5;
}

}  // namespace gpuprobe::formats::xplane
