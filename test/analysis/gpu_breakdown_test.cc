// The GPU's time per device over its active span: compute, non-compute, idle, communication that
// overlaps compute, and memsets, on traces whose answers are known exactly.
#include "analysis/gpu_breakdown.h"

#include <nlohmann/json.hpp>

#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

// Device 0: GEMMs on stream 1 at [0, 100) and [200, 300) us, an all-reduce on stream 2 at
// [50, 250) us (half of it under the GEMMs), a memset of 4 KiB at [400, 410) us and a copy at
// [500, 520) us. Device 1: one GEMM at [0, 10) us and no communication.
Trace two_devices() {
  Trace t;
  const auto kernel = [&t](const char* name, std::uint32_t device, std::uint32_t stream,
                           std::int64_t from_us, std::int64_t to_us) -> GpuActivity& {
    GpuActivity& a = t.activity(GpuActivityKind::kKernel, name, from_us * kUs, to_us * kUs);
    a.device = device;
    a.stream = stream;
    return a;
  };
  kernel("sm90_xmma_gemm_bf16", 0, 1, 0, 100);
  kernel("sm90_xmma_gemm_bf16", 0, 1, 200, 300);
  kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0, 2, 50, 250);
  GpuActivity& set = t.activity(GpuActivityKind::kMemset, "Memset (Device)", 400 * kUs, 410 * kUs);
  set.stream = 1;
  set.bytes = 4096;
  GpuActivity& copy = t.activity(GpuActivityKind::kMemcpy, "Memcpy HtoD", 500 * kUs, 520 * kUs);
  copy.stream = 1;
  copy.bytes = 1 << 20;
  copy.copy_kind = MemcpyKind::kHtoD;
  kernel("sm90_xmma_gemm_bf16", 1, 7, 0, 10);
  return t;
}

TEST_CASE("the active span splits into compute, non-compute and idle, as HTA's breakdown") {
  Trace t = two_devices();
  const analysis::GpuBreakdownResult& r = t.run().breakdown;
  REQUIRE(r.devices.size() == 2);
  const analysis::DeviceBreakdown& d = r.devices[0];
  CHECK(d.device == 0);
  CHECK(d.span_ns() == 520 * kUs);
  CHECK(d.busy_ns == 330 * kUs);  // [0, 300), the set, the copy
  CHECK(d.idle_ns() == 190 * kUs);
  CHECK(d.compute_ns == 200 * kUs);
  CHECK(d.non_compute_ns() == 130 * kUs);  // all-reduce alone [100, 200), the set, the copy
  CHECK(d.percent_of_span(d.idle_ns()) == Approx(100.0 * 190 / 520));
  CHECK(d.percent_of_span(d.idle_ns()) + d.percent_of_span(d.compute_ns) +
            d.percent_of_span(d.non_compute_ns()) ==
        Approx(100.0));
  const analysis::DeviceBreakdown& other = r.devices[1];
  CHECK(other.device == 1);
  CHECK(other.span_ns() == 10 * kUs);
  CHECK(other.idle_ns() == 0);
  CHECK(other.compute_ns == 10 * kUs);
}

TEST_CASE("communication overlap is the share of communication under compute kernels") {
  Trace t = two_devices();
  const analysis::GpuBreakdownResult& r = t.run().breakdown;
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].communication_ns == 200 * kUs);
  CHECK(r.devices[0].overlap_ns == 100 * kUs);  // [50, 100) and [200, 250)
  CHECK(r.devices[0].overlap_percent() == Approx(50.0));
  // No communication kernels: no figure, in the JSON too (null, not 0).
  CHECK(r.devices[1].overlap_percent() < 0);
  const auto j = nlohmann::json::parse(t.report->json());
  CHECK(j["gpu"]["breakdown"]["0"]["comm_compute_overlap_percent"].get<double>() == Approx(50.0));
  CHECK(j["gpu"]["breakdown"]["1"]["comm_compute_overlap_percent"].is_null());
  CHECK(j["gpu"]["breakdown"]["0"]["idle_percent_of_span"].get<double>() ==
        Approx(100.0 * 190 / 520));
}

TEST_CASE("memsets are counted per device beside the copies, and memory time holds both") {
  Trace t = two_devices();
  const analysis::ReportResult& report = t.run();
  const analysis::DeviceBreakdown& d = report.breakdown.devices[0];
  CHECK(d.memsets == 1);
  CHECK(d.memset_bytes == 4096);
  CHECK(d.memset_ns == 10 * kUs);
  CHECK(d.copies == 1);
  CHECK(d.memory_ns() == 30 * kUs);
  CHECK(report.breakdown.devices[1].memsets == 0);
  const auto j = nlohmann::json::parse(t.report->json());
  REQUIRE(j["memsets"].size() == 1);
  CHECK(j["memsets"][0]["device"] == 0);
  CHECK(j["memsets"][0]["sets"] == 1);
  CHECK(j["memsets"][0]["ms"].get<double>() == Approx(0.010));
  CHECK(j["gpu"]["breakdown"]["0"]["memory_ms"].get<double>() == Approx(0.030));
}

TEST_CASE("overlapping communication kernels count once, and so does overlapping compute") {
  Trace t;
  // Two all-reduces at [0, 100) and [50, 150) us on two streams; compute at [20, 40) and
  // [30, 60) us: communication 150 us, of which [20, 60) under compute.
  const struct {
    const char* name;
    std::uint32_t stream;
    std::int64_t from, to;
  } kernels[] = {{"ncclKernel_AllReduce", 1, 0, 100},
                 {"ncclKernel_AllReduce", 2, 50, 150},
                 {"triton_poi_fused_add_0", 3, 20, 40},
                 {"ampere_sgemm_128x64_nn", 4, 30, 60}};
  for (const auto& k : kernels)
    t.activity(GpuActivityKind::kKernel, k.name, k.from * kUs, k.to * kUs).stream = k.stream;
  const analysis::DeviceBreakdown& d = t.run().breakdown.devices.at(0);
  CHECK(d.communication_ns == 150 * kUs);
  CHECK(d.compute_ns == 40 * kUs);
  CHECK(d.overlap_ns == 40 * kUs);
  CHECK(d.busy_ns == 150 * kUs);
  CHECK(d.non_compute_ns() == 110 * kUs);
}

}  // namespace
}  // namespace gpuprobe::test
