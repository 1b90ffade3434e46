// A minimal NVTX tool for tests: loaded through NVTX_INJECTION64_PATH like Nsight's, it records
// the domain ranges and marks it receives, which the test reads back with nvtx_recorder_log().
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>

namespace {

std::mutex g_mu;
std::string g_log;

struct Domain {
  std::string name;
};

nvtxDomainHandle_t create_domain(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(new Domain{name});
}

std::string describe(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  std::string out = domain ? reinterpret_cast<Domain*>(domain)->name : "(default)";
  out += " ";
  out += a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "(non-ascii)";
  out += " color=" + std::to_string(a->colorType == NVTX_COLOR_ARGB ? a->color : 0);
  return out;
}

int push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_log += "push " + describe(domain, a) + "\n";
  return 0;
}

int pop(nvtxDomainHandle_t domain) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_log +=
      "pop " + (domain ? reinterpret_cast<Domain*>(domain)->name : std::string("(default)")) + "\n";
  return 0;
}

void mark(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_log += "mark " + describe(domain, a) + "\n";
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&create_domain);
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&push);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  *table[NVTX_CBID_CORE2_DomainMarkEx] = reinterpret_cast<NvtxFunctionPointer>(&mark);
  return 1;
}

__attribute__((visibility("default"))) const char* nvtx_recorder_log() {
  std::lock_guard<std::mutex> lock(g_mu);
  static std::string copy;
  copy = g_log;
  return copy.c_str();
}

}  // extern "C"
