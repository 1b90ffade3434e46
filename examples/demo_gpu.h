// The demo's GPU stage: per worker thread, a batch is copied to the device, each layer runs a
// kernel on it, and the result is copied back. Built from demo_gpu.cu where nvcc is, else from
// demo_no_gpu.cc, whose stage never opens, so the demo stays CPU-only.
#pragma once

struct GpuStage;

// A stage for the calling thread, or nullptr without CUDA or without a device.
GpuStage* gpu_stage_open();
void gpu_stage_upload(GpuStage* stage);
void gpu_stage_layer(GpuStage* stage, int layer);
void gpu_stage_download(GpuStage* stage);  // waits for the stage's work
void gpu_stage_close(GpuStage* stage);
