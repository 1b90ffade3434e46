// gpuprobe as an NVTX tool. NVTX's loader, at a module's first NVTX call, loads the library
// named by NVTX_INJECTION64_PATH (libgpuprobe_nvtx.so, or libgpuprobe.so in a program linked
// with it) and calls its InitializeInjectionNvtx2 with NVTX's export table, through which the
// tool sets the module's function pointers. Those set here turn the program's NVTX annotations
// into gpuprobe events on the calling thread, in the session that records now (the GPUPROBE
// environment's or a program's own):
//
//   push/pop (any domain)      ranges of the calling thread, nested with its other ranges;
//                              a pop with nothing pushed (in that domain) is ignored
//   start/end                  a range recorded when it ends, on whichever thread ends it, on a
//                              row of its own ("NVTX start/end", more rows while they overlap)
//   marks                      instants
//   domains                    the domain's name prefixes the message: "domain: message"
//   registered strings         interned once per session, then used by pointer
//   wide messages              converted to UTF-8
//   name thread                names the calling thread (other threads' names are ignored)
//
// Categories, colours and payloads are accepted and not recorded. With no session recording,
// each callback is a load of the gate and a branch (push/pop also keep the thread's stack, so that
// a pop always ends its own push). Only one NVTX tool runs in a process: NVTX's loader loads the
// one library NVTX_INJECTION64_PATH names, so under Nsight Systems gpuprobe sees no NVTX calls.
#include "core/nvtx_injection.h"

#if GPUPROBE_HAVE_NVTX

#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuprobe/detail/gate.hpp"
#include "gpuprobe/range.hpp"

namespace gpuprobe::core {
namespace {

// The category NVTX events record in: the program's own annotations, as Kineto's
// user_annotation is for torch.profiler.
constexpr Category kNvtxCategory = Category::kApp;

// A domain the program created; its handle is a pointer to it. Never freed: registered strings
// and open ranges may still name it after nvtxDomainDestroy, and programs create few.
struct Domain {
  std::string prefix;      // "name: ", or empty for a nameless domain
  bool ignored = false;    // gpuprobe's own ("gpuprobe"): never recorded again
  Domain* next = nullptr;  // on g_domains
};

// A registered string; its handle is a pointer to it. The site is interned on first use in each
// session, then reused by pointer.
struct RegisteredString {
  const Domain* domain = nullptr;
  std::string name;  // with the domain's prefix
  std::atomic<const CallSite*> site{nullptr};
  std::atomic<std::uint32_t> epoch{0};  // the session's (detail::epoch_of)
  RegisteredString* next = nullptr;     // on g_strings
};

// Every domain and registered string made, never freed (NVTX has no call to release a string,
// and open ranges may name a destroyed domain): kept on these lists so that they stay reachable
// (a leak checker reports an object nothing points to as a leak).
std::atomic<Domain*> g_domains{nullptr};
std::atomic<RegisteredString*> g_strings{nullptr};

template <typename T>
void keep(std::atomic<T*>& list, T* item) noexcept {
  item->next = list.load(std::memory_order_relaxed);
  while (!list.compare_exchange_weak(item->next, item, std::memory_order_release,
                                     std::memory_order_relaxed)) {
  }
}

const Domain* as_domain(nvtxDomainHandle_t handle) noexcept {
  return reinterpret_cast<const Domain*>(handle);
}

bool ignored(nvtxDomainHandle_t handle) noexcept {
  return handle != nullptr && as_domain(handle)->ignored;
}

// The epoch of the session recording now: sites interned in it stay valid while it records
// (the name table keeps a session's names until the one after it ends).
std::uint32_t session_epoch() noexcept {
  return detail::epoch_of(detail::g_gate.load(std::memory_order_relaxed));
}

// UTF-32 (Linux's wchar_t) as UTF-8; what is no character becomes U+FFFD.
void append_utf8(std::string& out, const wchar_t* text) {
  for (; *text != L'\0'; ++text) {
    auto c = static_cast<std::uint32_t>(*text);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
}

// The site of a registered string in this session.
const CallSite* registered_site(RegisteredString& s) noexcept {
  const std::uint32_t epoch = session_epoch();
  if (s.epoch.load(std::memory_order_acquire) == epoch)
    return s.site.load(std::memory_order_relaxed);
  const CallSite* site = detail::intern(s.name, kNvtxCategory);
  s.site.store(site, std::memory_order_relaxed);
  s.epoch.store(epoch, std::memory_order_release);
  return site;
}

// The site for a message in `domain` (nullptr: the default domain, no prefix).
const CallSite* message_site(nvtxDomainHandle_t domain, nvtxMessageType_t type,
                             const nvtxMessageValue_t& message) noexcept {
  if (type == NVTX_MESSAGE_TYPE_REGISTERED && message.registered != nullptr)
    return registered_site(*reinterpret_cast<RegisteredString*>(message.registered));
  // (Both arms string_views: `cond ? a_string : ""` would copy the prefix into a temporary that
  // dies with this statement.)
  const std::string_view prefix =
      domain != nullptr ? std::string_view(as_domain(domain)->prefix) : std::string_view();
  if (type == NVTX_MESSAGE_TYPE_ASCII && message.ascii != nullptr && prefix.empty())
    return detail::intern(message.ascii, kNvtxCategory);
  try {
    thread_local std::string name;
    name.assign(prefix);
    if (type == NVTX_MESSAGE_TYPE_ASCII && message.ascii != nullptr) {
      name += message.ascii;
    } else if (type == NVTX_MESSAGE_TYPE_UNICODE && message.unicode != nullptr) {
      append_utf8(name, message.unicode);
    } else if (!name.empty()) {
      name.resize(name.size() - 2);  // no message: the domain's name alone
    } else {
      name = "nvtx";
    }
    return detail::intern(name, kNvtxCategory);
  } catch (...) {
    return detail::intern("nvtx", kNvtxCategory);
  }
}

struct ThreadState;
ThreadState& this_thread() noexcept;
const CallSite* ascii_site(ThreadState& ts, nvtxDomainHandle_t domain,
                           const char* message) noexcept;

// The site for an event's attributes; `ts`: the calling thread's state (one TLS lookup a call,
// made by the caller).
const CallSite* attributes_site(ThreadState& ts, nvtxDomainHandle_t domain,
                                const nvtxEventAttributes_t* a) noexcept {
  if (a == nullptr) return message_site(domain, NVTX_MESSAGE_UNKNOWN, nvtxMessageValue_t{});
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return ascii_site(ts, domain, a->message.ascii);
  return message_site(domain, static_cast<nvtxMessageType_t>(a->messageType), a->message);
}

// ---- push/pop: a stack per thread, each entry a range of this thread ----

// One pushed range. Plain data in plain TLS (no constructor, no destructor, no TLS wrapper):
// the stack is one TLS address lookup per call. The open/close steps are ManualRange's (range.hpp)
// without its NVTX export: these ranges came from NVTX.
struct Pushed {
  const CallSite* site;  // nullptr: not recorded (no session when it was pushed)
  std::uint64_t gate;
  std::uint64_t begin;
  nvtxDomainHandle_t domain;
};

// Ranges deeper than this are counted, so that pops stay balanced, but not recorded.
constexpr std::uint32_t kMaxPushed = 128;

struct PushStack {
  std::uint32_t depth;  // may exceed kMaxPushed
  Pushed ranges[kMaxPushed];
};

// A site per ASCII message pointer and domain, checked against the text at each use (the
// pointer's text may change), valid for one session: a string literal's range
// costs a compare of its text instead of a hash and a lookup.
struct NameSlot {
  const char* message;
  nvtxDomainHandle_t domain;
  const CallSite* site;
  std::uint32_t epoch;  // the session's
};
constexpr std::size_t kNameSlots = 64;

// This thread's NVTX state, in one block of plain TLS: one address lookup per call.
struct ThreadState {
  PushStack stack;  // ranges still pushed when the thread exits are not recorded
  NameSlot names[kNameSlots];
};
__thread ThreadState t_state;

// This thread's state, its address computed once per call: without the empty asm, GCC computes a
// dynamic-TLS address again (a call through its TLS descriptor) at uses after an inline rdtsc.
ThreadState& this_thread() noexcept {
  ThreadState* ts = &t_state;
  asm("" : "+r"(ts));
  return *ts;
}

GPUPROBE_ALWAYS_INLINE void open_range(Pushed& p) noexcept {
  detail::ThreadRing* tr = detail::ring_for(p.gate);
  if (tr == nullptr) {
    p.site = nullptr;  // the session ended or memory ran out
    return;
  }
  // The thread's open-range count tells the GPU attribution that work launched now is inside.
  tr->depth.store(tr->depth.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  p.begin = detail::now_ticks(p.gate);
}

GPUPROBE_ALWAYS_INLINE void close_range(const Pushed& p) noexcept {
  const std::uint64_t end = detail::now_ticks(p.gate);
  detail::ThreadRing* tr = detail::ring_for(p.gate);
  if (tr == nullptr) return;
  detail::push(tr, detail::RecordKind::kRange, p.site, p.begin, end, 0);
  tr->depth.store(tr->depth.load(std::memory_order_relaxed) - 1, std::memory_order_release);
}

// NVTX's level of the range pushed: 0 for the outermost. The name is looked up only when a
// session records: name(thread state).
template <typename Name>
int push(nvtxDomainHandle_t domain, Name&& name) noexcept {
  if (ignored(domain)) return 0;
  ThreadState& ts = this_thread();
  PushStack& stack = ts.stack;
  const std::uint32_t level = stack.depth++;
  if (level >= kMaxPushed) return static_cast<int>(level);
  Pushed& p = stack.ranges[level];
  p.domain = domain;
  p.gate = detail::gate_for(kNvtxCategory);
  p.site = nullptr;
  if (p.gate != 0) {
    p.site = name(ts);
    open_range(p);
  }
  return static_cast<int>(level);
}

int pop(nvtxDomainHandle_t domain) noexcept {
  if (ignored(domain)) return 0;
  PushStack& stack = this_thread().stack;
  if (stack.depth == 0) return -1;  // unbalanced: nothing to pop
  if (stack.depth > kMaxPushed) return static_cast<int>(--stack.depth);
  // The innermost range of the domain: the top one unless domains interleave.
  std::uint32_t i = stack.depth;
  while (i-- > 0 && stack.ranges[i].domain != domain) {
  }
  if (i >= stack.depth) return -1;  // none of this domain: ignored
  if (stack.ranges[i].site != nullptr) close_range(stack.ranges[i]);
  for (std::uint32_t j = i + 1; j < stack.depth; ++j) stack.ranges[j - 1] = stack.ranges[j];
  --stack.depth;
  return static_cast<int>(i);
}

// Whether two texts are the same: inline, as the names compared are short (a call to strcmp
// cost more than the compare).
bool same_text(const char* a, const char* b) noexcept {
  for (; *a == *b; ++a, ++b) {
    if (*a == '\0') return true;
  }
  return false;
}

const CallSite* ascii_site(ThreadState& ts, nvtxDomainHandle_t domain,
                           const char* message) noexcept {
  if (message == nullptr) return message_site(domain, NVTX_MESSAGE_UNKNOWN, nvtxMessageValue_t{});
  const std::uint32_t epoch = session_epoch();
  NameSlot& slot = ts.names[(reinterpret_cast<std::uintptr_t>(message) >> 3) % kNameSlots];
  const std::size_t prefix = domain != nullptr ? as_domain(domain)->prefix.size() : 0;
  if (slot.message == message && slot.domain == domain && slot.epoch == epoch &&
      same_text(slot.site->name + prefix, message))
    return slot.site;
  nvtxMessageValue_t m;
  m.ascii = message;
  const CallSite* site = message_site(domain, NVTX_MESSAGE_TYPE_ASCII, m);
  if (std::strlen(site->name) >= prefix && std::strcmp(site->name + prefix, message) == 0)
    slot = NameSlot{message, domain, site, epoch};  // not a name the table changed
  return site;
}

int NVTX_API push_ex(const nvtxEventAttributes_t* a) noexcept {
  return push(nullptr, [a](ThreadState& ts) { return attributes_site(ts, nullptr, a); });
}
int NVTX_API push_a(const char* message) noexcept {
  return push(nullptr, [message](ThreadState& ts) { return ascii_site(ts, nullptr, message); });
}
int NVTX_API push_w(const wchar_t* message) noexcept {
  return push(nullptr, [message](ThreadState&) {
    nvtxMessageValue_t m;
    m.unicode = message;
    return message_site(nullptr, NVTX_MESSAGE_TYPE_UNICODE, m);
  });
}
int NVTX_API pop_default() noexcept { return pop(nullptr); }
int NVTX_API domain_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) noexcept {
  return push(domain, [domain, a](ThreadState& ts) { return attributes_site(ts, domain, a); });
}
int NVTX_API domain_pop(nvtxDomainHandle_t domain) noexcept { return pop(domain); }

// ---- start/end: open ranges by id, each on a row of its own while open ----

struct Started {
  const CallSite* site;
  std::uint64_t gate;
  std::uint64_t begin;
  std::uint32_t slot;
};

// A row for start/end ranges: one per range open at once, so that ranges on a row never
// overlap and viewers never draw a false nest.
struct Row {
  std::uint32_t track = 0;
  std::uint32_t named_epoch = 0;  // the session it was last named in
  bool busy = false;
};

struct StartEnd {
  std::mutex mu;
  std::unordered_map<std::uint64_t, Started> open;
  std::vector<Row> rows;
  std::uint64_t next_id = 1;
};

StartEnd& start_end() {
  static auto* state = new StartEnd;  // never destroyed: ranges may end during exit
  return *state;
}

nvtxRangeId_t start(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a,
                    nvtxMessageType_t type, nvtxMessageValue_t message) noexcept {
  if (ignored(domain)) return 0;
  const std::uint64_t gate = detail::gate_for(kNvtxCategory);
  if (gate == 0) return 0;  // id 0: its end does nothing
  const CallSite* site = a != nullptr ? attributes_site(this_thread(), domain, a)
                                      : message_site(domain, type, message);
  const std::uint64_t begin = detail::now_ticks(gate);
  StartEnd& s = start_end();
  try {
    std::lock_guard<std::mutex> lock(s.mu);
    std::uint32_t slot = 0;
    while (slot < s.rows.size() && s.rows[slot].busy) ++slot;
    if (slot == s.rows.size()) s.rows.push_back(Row{new_track(), 0, false});
    s.rows[slot].busy = true;
    const std::uint64_t id = s.next_id++;
    s.open.emplace(id, Started{site, gate, begin, slot});
    return id;
  } catch (...) {
    return 0;
  }
}

void end(nvtxRangeId_t id) noexcept {
  if (id == 0) return;
  const std::uint64_t now = detail::g_gate.load(std::memory_order_relaxed);
  StartEnd& s = start_end();
  Started r{};
  std::uint32_t track = 0;
  bool name_row = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    const auto it = s.open.find(id);
    if (it == s.open.end()) return;  // unknown or already ended
    r = it->second;
    s.open.erase(it);
    Row& row = s.rows[r.slot];
    row.busy = false;
    track = row.track;
    if (detail::epoch_of(now) == detail::epoch_of(r.gate) &&
        row.named_epoch != detail::epoch_of(now)) {
      row.named_epoch = detail::epoch_of(now);
      name_row = true;
    }
  }
  // Recorded only in the session it started in (emit finds no ring for an ended one).
  if (detail::epoch_of(now) != detail::epoch_of(r.gate)) return;
  if (name_row) {
    name_track(track, r.slot == 0 ? std::string("NVTX start/end")
                                  : "NVTX start/end " + std::to_string(r.slot + 1));
  }
  detail::emit(r.gate, detail::RecordKind::kRange, r.site, r.begin, detail::now_ticks(r.gate),
               track);
}

nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t* a) noexcept {
  return start(nullptr, a, NVTX_MESSAGE_UNKNOWN, nvtxMessageValue_t{});
}
nvtxRangeId_t NVTX_API start_a(const char* message) noexcept {
  nvtxMessageValue_t m;
  m.ascii = message;
  return start(nullptr, nullptr, NVTX_MESSAGE_TYPE_ASCII, m);
}
nvtxRangeId_t NVTX_API start_w(const wchar_t* message) noexcept {
  nvtxMessageValue_t m;
  m.unicode = message;
  return start(nullptr, nullptr, NVTX_MESSAGE_TYPE_UNICODE, m);
}
void NVTX_API end_default(nvtxRangeId_t id) noexcept { end(id); }
nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t domain,
                                       const nvtxEventAttributes_t* a) noexcept {
  return start(domain, a, NVTX_MESSAGE_UNKNOWN, nvtxMessageValue_t{});
}
void NVTX_API domain_end(nvtxDomainHandle_t, nvtxRangeId_t id) noexcept { end(id); }

// ---- marks ----

void mark(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a, nvtxMessageType_t type,
          nvtxMessageValue_t message) noexcept {
  if (ignored(domain) || detail::gate_for(kNvtxCategory) == 0) return;
  instant(a != nullptr ? *attributes_site(this_thread(), domain, a)
                       : *message_site(domain, type, message));
}

void NVTX_API mark_ex(const nvtxEventAttributes_t* a) noexcept {
  mark(nullptr, a, NVTX_MESSAGE_UNKNOWN, nvtxMessageValue_t{});
}
void NVTX_API mark_a(const char* message) noexcept {
  nvtxMessageValue_t m;
  m.ascii = message;
  mark(nullptr, nullptr, NVTX_MESSAGE_TYPE_ASCII, m);
}
void NVTX_API mark_w(const wchar_t* message) noexcept {
  nvtxMessageValue_t m;
  m.unicode = message;
  mark(nullptr, nullptr, NVTX_MESSAGE_TYPE_UNICODE, m);
}
void NVTX_API domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) noexcept {
  mark(domain, a, NVTX_MESSAGE_UNKNOWN, nvtxMessageValue_t{});
}

// ---- domains, registered strings, names ----

nvtxDomainHandle_t create_domain(std::string name) noexcept {
  try {
    auto* d = new Domain;
    d->ignored = name == "gpuprobe";
    if (!name.empty()) d->prefix = name + ": ";
    keep(g_domains, d);
    return reinterpret_cast<nvtxDomainHandle_t>(d);
  } catch (...) {
    return nullptr;
  }
}

nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) noexcept {
  return create_domain(name != nullptr ? name : "");
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) noexcept {
  try {
    std::string utf8;
    if (name != nullptr) append_utf8(utf8, name);
    return create_domain(std::move(utf8));
  } catch (...) {
    return nullptr;
  }
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) noexcept {}

nvtxStringHandle_t register_string(nvtxDomainHandle_t domain, const char* text,
                                   const wchar_t* wide) noexcept {
  try {
    auto* s = new RegisteredString;  // never freed: NVTX has no call to release one
    s->domain = domain != nullptr ? as_domain(domain) : nullptr;
    if (s->domain != nullptr) s->name = s->domain->prefix;
    if (text != nullptr) s->name += text;
    if (wide != nullptr) append_utf8(s->name, wide);
    keep(g_strings, s);
    return reinterpret_cast<nvtxStringHandle_t>(s);
  } catch (...) {
    return nullptr;
  }
}

nvtxStringHandle_t NVTX_API register_a(nvtxDomainHandle_t domain, const char* text) noexcept {
  return register_string(domain, text, nullptr);
}
nvtxStringHandle_t NVTX_API register_w(nvtxDomainHandle_t domain, const wchar_t* text) noexcept {
  return register_string(domain, nullptr, text);
}

void NVTX_API name_os_thread_a(std::uint32_t tid, const char* name) noexcept {
  if (name != nullptr && tid == static_cast<std::uint32_t>(syscall(SYS_gettid)))
    set_thread_name(name);
}
void NVTX_API name_os_thread_w(std::uint32_t tid, const wchar_t* name) noexcept {
  if (name == nullptr || tid != static_cast<std::uint32_t>(syscall(SYS_gettid))) return;
  try {
    std::string utf8;
    append_utf8(utf8, name);
    set_thread_name(utf8);
  } catch (...) {
  }
}

// ---- binding the module's function pointers ----

// Sets entry `id` of the module's table to `fn` when NVTX's table has that entry.
template <typename Fn>
void bind(NvtxFunctionTable table, unsigned size, unsigned id, Fn fn) noexcept {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

bool bind_core(const NvtxExportTableCallbacks& callbacks) noexcept {
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (!callbacks.GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || t == nullptr) return false;
  bind(t, n, NVTX_CBID_CORE_MarkEx, &mark_ex);
  bind(t, n, NVTX_CBID_CORE_MarkA, &mark_a);
  bind(t, n, NVTX_CBID_CORE_MarkW, &mark_w);
  bind(t, n, NVTX_CBID_CORE_RangeStartEx, &start_ex);
  bind(t, n, NVTX_CBID_CORE_RangeStartA, &start_a);
  bind(t, n, NVTX_CBID_CORE_RangeStartW, &start_w);
  bind(t, n, NVTX_CBID_CORE_RangeEnd, &end_default);
  bind(t, n, NVTX_CBID_CORE_RangePushEx, &push_ex);
  bind(t, n, NVTX_CBID_CORE_RangePushA, &push_a);
  bind(t, n, NVTX_CBID_CORE_RangePushW, &push_w);
  bind(t, n, NVTX_CBID_CORE_RangePop, &pop_default);
  bind(t, n, NVTX_CBID_CORE_NameOsThreadA, &name_os_thread_a);
  bind(t, n, NVTX_CBID_CORE_NameOsThreadW, &name_os_thread_w);
  return true;
}

bool bind_core2(const NvtxExportTableCallbacks& callbacks) noexcept {
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (!callbacks.GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || t == nullptr) return false;
  bind(t, n, NVTX_CBID_CORE2_DomainMarkEx, &domain_mark_ex);
  bind(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_start_ex);
  bind(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &domain_end);
  bind(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &domain_push_ex);
  bind(t, n, NVTX_CBID_CORE2_DomainRangePop, &domain_pop);
  bind(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, &register_a);
  bind(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, &register_w);
  bind(t, n, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
  bind(t, n, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
  bind(t, n, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
  return true;
}

}  // namespace

int bind_nvtx_tool(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (binding_own_nvtx() || get_export_table == nullptr) return 0;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr)
    return 0;
  const bool core = bind_core(*callbacks);
  const bool core2 = bind_core2(*callbacks);
  return core || core2 ? 1 : 0;
}

}  // namespace gpuprobe::core

#endif  // without the NVTX3 headers there is no tool interface to implement
