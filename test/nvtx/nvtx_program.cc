// A program annotated with plain NVTX3 calls and not linked with gpuprobe: run with
// NVTX_INJECTION64_PATH naming libgpuprobe_nvtx.so and GPUPROBE=chrome=FILE, its annotations
// become gpuprobe's ranges and instants (test/python/test_nvtx_injection.py checks the trace).
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <thread>

namespace {

void wait_a_little() { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF76B900;
  a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
  a.payload.llValue = 42;
  return a;
}

}  // namespace

int main() {
  nvtxNameOsThreadA(0, "ignored: not this thread");
  // Push/pop, nested, default domain.
  nvtxRangePushA("outer");
  wait_a_little();
  nvtxRangePushA("inner");
  wait_a_little();
  nvtxMarkA("a mark");
  nvtxRangePop();
  nvtxRangePop();
  nvtxRangePop();  // unbalanced: ignored

  // A wide-string message.
  nvtxRangePushW(L"wide \u00e9t\u00e9");
  wait_a_little();
  nvtxRangePop();

  // A domain, a registered string, and an attribute message.
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("mylib");
  const nvtxStringHandle_t step = nvtxDomainRegisterStringA(domain, "registered step");
  for (int i = 0; i < 3; ++i) {
    nvtxEventAttributes_t a = attributes();
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = step;
    nvtxDomainRangePushEx(domain, &a);
    wait_a_little();
    nvtxDomainRangePop(domain);
  }
  nvtxEventAttributes_t m = attributes();
  m.messageType = NVTX_MESSAGE_TYPE_ASCII;
  m.message.ascii = "domain mark";
  nvtxDomainMarkEx(domain, &m);

  // A start/end range started here and ended on another thread, overlapping one that is not.
  nvtxEventAttributes_t s = attributes();
  s.messageType = NVTX_MESSAGE_TYPE_ASCII;
  s.message.ascii = "handed over";
  const nvtxRangeId_t handed = nvtxRangeStartEx(&s);
  const nvtxRangeId_t local = nvtxRangeStartA("local start/end");
  wait_a_little();
  std::thread worker([handed] {
    nvtxRangePushA("worker range");
    wait_a_little();
    nvtxRangePop();
    nvtxRangeEnd(handed);
  });
  worker.join();
  nvtxRangeEnd(local);
  nvtxRangeEnd(local);  // twice: ignored
  nvtxDomainDestroy(domain);
  return 0;
}
