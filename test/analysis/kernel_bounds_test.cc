// What bounds the GPU's work: kernel classes by name, the roofline of kernels with declared
// costs, and copies against the link's peak.
#include "analysis/kernel_bounds.h"

#include "analysis/kernel_class.h"
#include "analysis/report_trace.h"

namespace gpuprobe::test {
namespace {

TEST_CASE("kernel names tell compute-, memory-bound and communication kernels apart") {
  const std::pair<const char*, const char*> kKernels[] = {
      {"ampere_sgemm_128x64_nn", "compute"},
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32", "compute"},
      {"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>", "compute"},
      {"flash_fwd_kernel", "compute"},
      {"triton_tem_fused_mm_0", "compute"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
       "memory"},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", "memory"},
      {"triton_poi_fused_add_relu_0", "memory"},
      {"triton_red_fused_sum_1", "memory"},
      {"void gemv2T_kernel_val<int, int, float, float, float, 128, 16>", "memory"},
      {"void at::native::unrolled_elementwise_kernel<convert_float_to_half>", "memory"},
      {"void at::native::cunn_SoftMaxForward<4, float>", "memory"},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "communication"},
      {"layer_kernel(float*, int, float)", ""},
      // ROCm, as rocprofiler/roctracer name them in Kineto traces: rocBLAS (Tensile) and
      // hipBLASLt GEMMs, MIOpen, composable kernel, RCCL.
      {"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB1_AFC1_GRVW8_ISA942_WG32_8_1",
       "compute"},
      {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_ISA942",
       "compute"},
      {"MIOpenCvD3x3_WSR0", "compute"},
      {"miopenSp3AsmConv_v30_3_1_gfx9_fp32_f2x3_stride1", "compute"},
      {"naive_conv_fwd_nchw_float_double_float", "compute"},
      {"MIOpenBatchNormFwdTrainSpatial", "memory"},
      {"MIOpenPoolingForward", "memory"},
      {"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<>, true, 2>",
       "compute"},
      {"void ck::kernel_grouped_conv_fwd_xdl_cshuffle<ck::GridwiseGemmMultipleD_xdl>", "compute"},
      {"void ck::kernel_elementwise<ck::GridwiseElementwise<ck::Tuple<>>>", "memory"},
      {"ncclDevKernel_Generic(ncclDevComm*, unsigned long, ncclWork*)", "communication"},
  };
  for (const auto& [name, expected] : kKernels) {
    CAPTURE(name);
    CHECK(analysis::kernel_class_from_name(name) == expected);
  }
}

TEST_CASE("kernels with declared costs on the roofline; copies against the link's peak") {
  Trace t;
  GpuActivity& streaming = t.activity(GpuActivityKind::kKernel, "stream_triad", 0, kMs);
  streaming.declared_bytes = 1e9;  // 1 GB in 1 ms: 1000 GB/s at 1 FLOP/byte
  streaming.declared_flops = 1e9;
  GpuActivity& gemm = t.activity(GpuActivityKind::kKernel, "gemm", 2 * kMs, 3 * kMs);
  gemm.declared_bytes = 1e6;  // 10 TFLOP/s at 10^4 FLOP/byte
  gemm.declared_flops = 1e10;
  t.activity(GpuActivityKind::kKernel, "undeclared", 4 * kMs, 5 * kMs);
  GpuActivity& copy =
      t.activity(GpuActivityKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 6 * kMs, 8 * kMs);
  copy.copy_kind = MemcpyKind::kHtoD;
  copy.bytes = 64'000'000;  // 32 GB/s
  TraceInfo info;
  DeviceInfo h200;
  h200.name = "NVIDIA H200";
  info.devices.push_back(h200);
  const analysis::KernelBoundsResult& r = t.run({}, info).bounds;
  CHECK(r.peaks.memory_gbps == 4800);
  REQUIRE(r.roofline.size() == 2);
  const analysis::RooflineRow& a =
      r.roofline[0].name == "stream_triad" ? r.roofline[0] : r.roofline[1];
  const analysis::RooflineRow& b = r.roofline[0].name == "gemm" ? r.roofline[0] : r.roofline[1];
  CHECK(a.bound == "memory");
  CHECK(a.achieved_gbps == Approx(1000));
  CHECK(a.percent_of_peak == Approx(100.0 * 1000 / 4800));
  CHECK(b.bound == "compute");
  CHECK(b.achieved_tflops == Approx(10));
  CHECK(b.percent_of_peak == Approx(100.0 * 10 / 67));
  REQUIRE(r.copies.size() == 1);
  CHECK(r.copies[0].kind == "HtoD");
  CHECK(r.copies[0].achieved_gbps == Approx(32));
  CHECK(r.copies[0].peak_gbps == 64);
}

TEST_CASE("kernel time splits by class; unknown devices have no peaks") {
  Trace t;
  t.activity(GpuActivityKind::kKernel, "ampere_sgemm_128x64_nn", 0, 3 * kMs);
  t.activity(GpuActivityKind::kKernel, "triton_poi_fused_add_0", 3 * kMs, 4 * kMs);
  t.activity(GpuActivityKind::kKernel, "ncclDevKernel_AllReduce", 4 * kMs, 6 * kMs);
  t.activity(GpuActivityKind::kKernel, "my_kernel", 6 * kMs, 10 * kMs);
  TraceInfo info;
  info.devices.emplace_back().name = "Some Future GPU";
  const analysis::KernelBoundsResult& r = t.run({}, info).bounds;
  CHECK(r.compute_class_ns == 3 * kMs);
  CHECK(r.memory_class_ns == kMs);
  CHECK(r.communication_class_ns == 2 * kMs);
  CHECK(r.unclassified_ns == 4 * kMs);
  CHECK(r.peaks.memory_gbps == 0);
  CHECK(analysis::device_peaks("NVIDIA H100 80GB HBM3").memory_gbps == 3350);
}

}  // namespace
}  // namespace gpuprobe::test
