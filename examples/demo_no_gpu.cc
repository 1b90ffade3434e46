// The demo's GPU stage where gpuprobe was built without nvcc: there is none.
#include "demo_gpu.h"

GpuStage* gpu_stage_open() { return nullptr; }
void gpu_stage_upload(GpuStage*) {}
void gpu_stage_layer(GpuStage*, int) {}
void gpu_stage_download(GpuStage*) {}
void gpu_stage_close(GpuStage*) {}
