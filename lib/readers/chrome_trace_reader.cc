#include "readers/chrome_trace_reader.h"

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formats/device_properties.h"
#include "formats/gpu_args.h"
#include "formats/kineto.h"
#include "formats/steps.h"
#include "readers/json_cursor.h"
#include "readers/trace_builder.h"

namespace gpuprobe::readers {
namespace {

using namespace std::string_view_literals;

// One event object, fields kept as read; reused from event to event.
struct ChromeEvent {
  std::string ph, name, cat;
  std::int64_t ts = 0, dur = 0;  // exact ns, as written (readers/exact_decimal.h)
  bool has_ts = false;
  std::int64_t pid = 0, tid = 0;
  std::vector<std::pair<std::string, double>> numbers;       // numeric args
  std::vector<std::pair<std::string, std::string>> strings;  // string args
  std::int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};

  void clear() {
    ph.clear();
    name.clear();
    cat.clear();
    ts = dur = 0;
    has_ts = false;
    pid = tid = 0;
    numbers.clear();
    strings.clear();
    std::memset(grid, 0, sizeof grid);
    std::memset(block, 0, sizeof block);
  }
  const std::string* string(std::string_view key) const {
    for (const auto& [k, v] : strings) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

// Kineto names threads "thread <tid> (<name>)"; gpuprobe's own files say the name alone too.
std::string plain_thread_name(const std::string& name, std::int64_t tid) {
  const std::string prefix = "thread " + std::to_string(tid) + " (";
  if (name.size() > prefix.size() + 1 && name.compare(0, prefix.size(), prefix) == 0 &&
      name.back() == ')') {
    return name.substr(prefix.size(), name.size() - prefix.size() - 1);
  }
  return name;
}

class ChromeReader {
 public:
  ChromeReader(ByteSource& in, Sink& sink, const ProgressFn& progress)
      : in_(in), json_(in), builder_(sink), progress_(progress) {}

  Status run() {
    Status s = read_top();
    if (s.ok() && json_.peek() >= 0) s = json_.error("the end of the file after the trace");
    return builder_.finish(s, info_, stats_);
  }

 private:
  Status read_top() {
    if (json_.peek() == '[') return read_events();  // the bare-array form of the format
    return read_object(
        [&](const std::string& key) -> Status {
          if (key == "traceEvents"sv) return read_events();
          if (key == "deviceProperties"sv) return read_devices();
          if (key == "gpuprobe"sv) return read_gpuprobe_stats();
          if (key == "distributedInfo"sv) {
            return read_object([&](const std::string& k) -> Status {
              double v;
              if (k != "rank"sv && k != "world_size"sv) return json_.skip_value();
              if (Status n = json_.number(&v); !n.ok()) return n;
              (k == "rank"sv ? info_.rank : info_.world_size) = saturate<int>(v);
              return {};
            });
          }
          if (key == "baseTimeNanoseconds"sv) {
            json_.peek();  // past whitespace, so the offset is the number's
            const std::uint64_t at = json_.offset();
            if (Status s =
                    json_.scaled(0, &base_ns_, "baseTimeNanoseconds within 146 years of 1970");
                !s.ok())
              return s;
            // Within ±2^62 ns (146 years) of 1970, so that adding event times never overflows.
            constexpr std::int64_t kLimit = std::int64_t{1} << 62;
            if (base_ns_ < -kLimit || base_ns_ > kLimit)
              return in_.error_at(at, "baseTimeNanoseconds within 146 years of 1970");
            return {};
          }
          return json_.skip_value();
        },
        "'{' or '[' starting a Chrome trace");
  }

  template <class OnKey>
  Status read_object(OnKey on_key, const char* what = "'{'") {
    if (Status s = json_.expect('{', what); !s.ok()) return s;
    if (json_.consume('}')) return {};
    std::string key;
    for (;;) {
      Status s = json_.string(&key);
      if (s.ok()) s = json_.expect(':', "':'");
      if (s.ok()) s = on_key(key);
      if (!s.ok()) return s;
      bool more;
      if (!(s = json_.next('}', &more)).ok()) return s;
      if (!more) return {};
    }
  }

  template <class OnElement>
  Status read_array(OnElement on_element) {
    if (Status s = json_.expect('[', "'['"); !s.ok()) return s;
    if (json_.consume(']')) return {};
    for (;;) {
      if (Status s = on_element(); !s.ok()) return s;
      bool more;
      if (Status s = json_.next(']', &more); !s.ok()) return s;
      if (!more) return {};
    }
  }

  Status read_int(std::int64_t* out) { return json_.integer(out); }

  Status read_devices() {
    return read_array([&]() {
      DeviceInfo d;
      const Status s = read_object([&](const std::string& k) -> Status {
        if (k == "name"sv) return json_.string(&d.name);
        std::int64_t v = 0;
        if (json_.peek() != '-' && (json_.peek() < '0' || json_.peek() > '9'))
          return json_.skip_value();
        if (Status n = read_int(&v); !n.ok()) return n;
        // Every property the writers write (formats/device_properties.h).
        if (const formats::DeviceProperty* p = formats::find_device_property(k.c_str()))
          p->set(d, v);
        return {};
      });
      info_.devices.push_back(std::move(d));
      return s;
    });
  }

  Status read_gpuprobe_stats() {
    return read_object([&](const std::string& k) -> Status {
      std::int64_t v = 0;
      if (k == "threads"sv) {
        return read_array([&]() {
          ThreadInfo t;
          const Status s = read_object([&](const std::string& tk) -> Status {
            if (tk == "name"sv) return json_.string(&t.name);
            std::int64_t n = 0;
            if (Status r = read_int(&n); !r.ok()) return r;
            if (tk == "tid"sv) t.os_tid = n;
            if (tk == "written"sv) t.written = static_cast<std::uint64_t>(n);
            if (tk == "dropped"sv) t.dropped = static_cast<std::uint64_t>(n);
            if (tk == "peak_fill"sv) t.peak_fill = static_cast<std::uint64_t>(n);
            return {};
          });
          stats_.threads.push_back(std::move(t));
          return s;
        });
      }
      if (k == "gpu"sv) {
        return read_object([&](const std::string& gk) -> Status {
          if (gk == "status"sv) return json_.string(&stats_.gpu.status);
          std::int64_t n = 0;
          if (Status r = read_int(&n); !r.ok()) return r;
          const auto u = static_cast<std::uint64_t>(n);
          if (gk == "records"sv) stats_.gpu.records = u;
          if (gk == "dropped"sv) stats_.gpu.dropped = u;
          if (gk == "buffers_exhausted"sv) stats_.gpu.buffers_exhausted = u;
          if (gk == "filtered"sv) stats_.gpu.filtered = u;
          if (gk == "starts_before_launch"sv) stats_.gpu.starts_before_launch = u;
          if (gk == "attributed"sv) stats_.gpu.attributed = u;
          if (gk == "unattributed"sv) stats_.gpu.unattributed = u;
          if (gk == "untimed"sv) stats_.gpu.untimed = u;
          if (gk == "sampled"sv) stats_.gpu.sampled = n != 0;
          if (gk == "bursts"sv) stats_.gpu.bursts = u;
          if (gk == "recorded_ns"sv) stats_.gpu.recorded_ns = n;
          return {};
        });
      }
      if (k == "clock"sv) return json_.string(&info_.clock);
      if (k == "config"sv) return json_.string(&info_.config);
      if (k == "nvtx"sv) return json_.boolean(&info_.nvtx);
      if (k != "events_dropped"sv && k != "events_dropped_no_ring"sv && k != "ring_capacity"sv &&
          k != "names_overflowed"sv)
        return json_.skip_value();
      if (Status r = read_int(&v); !r.ok()) return r;
      const auto u = static_cast<std::uint64_t>(v);
      if (k == "events_dropped"sv) stats_.dropped = u;
      if (k == "events_dropped_no_ring"sv) stats_.dropped_no_ring = u;
      if (k == "ring_capacity"sv) stats_.ring_capacity = u;
      if (k == "names_overflowed"sv) stats_.names_overflowed = u;
      return {};
    });
  }

  // pid and tid are numbers in most traces, strings in some: a string of digits is its number
  // (Kineto of PyTorch 1.8-1.9 quoted thread ids, "tid": "12345"), any other a stable number.
  Status read_id(std::int64_t* out) {
    if (json_.peek() != '"') return read_int(out);
    std::string text;
    if (Status s = json_.string(&text); !s.ok()) return s;
    if (!text.empty() && text.size() <= 18 &&
        text.find_first_not_of("0123456789") == std::string::npos) {
      *out = std::stoll(text);
      return {};
    }
    *out = static_cast<std::int64_t>(std::hash<std::string>()(text) & 0x7FFFFFFFFFFFull);
    return {};
  }

  Status read_dim3(std::int32_t* out) {
    int i = 0;
    return read_array([&]() -> Status {
      std::int64_t v = 0;
      if (Status s = read_int(&v); !s.ok()) return s;
      if (i < 3) out[i] = static_cast<std::int32_t>(v);
      ++i;
      return {};
    });
  }

  Status read_args() {
    return read_object([&](const std::string& k) -> Status {
      if (ev_.numbers.size() + ev_.strings.size() >= TraceBuilder::kMaxArgsPerEvent) {
        builder_.note_capped();
        return json_.skip_value();
      }
      const int c = json_.peek();
      if (c == '"') {
        ev_.strings.emplace_back(k, std::string());
        return json_.string(&ev_.strings.back().second);
      }
      if (c == '-' || (c >= '0' && c <= '9')) {
        double v;
        if (Status s = json_.number(&v); !s.ok()) return s;
        ev_.numbers.emplace_back(k, v);
        return {};
      }
      if (c == '[' && (k == "grid"sv || k == "block"sv))
        return read_dim3(k == "grid"sv ? ev_.grid : ev_.block);
      return json_.skip_value();
    });
  }

  Status read_event() {
    ev_.clear();
    return read_object([&](const std::string& k) -> Status {
      if (k == "ph"sv) return json_.string(&ev_.ph);
      if (k == "name"sv) return json_.peek() == '"' ? json_.string(&ev_.name) : json_.skip_value();
      if (k == "cat"sv) return json_.peek() == '"' ? json_.string(&ev_.cat) : json_.skip_value();
      if (k == "ts"sv) {
        ev_.has_ts = true;
        return json_.scaled(3, &ev_.ts, "a time in microseconds (\"ts\") that int64 ns hold");
      }
      if (k == "dur"sv) {
        json_.peek();  // past whitespace, so the offset is the number's
        const std::uint64_t at = json_.offset();
        if (Status s = json_.scaled(3, &ev_.dur, "a duration in microseconds (\"dur\")"); !s.ok())
          return s;
        if (ev_.dur < 0) return in_.error_at(at, "a non-negative duration (\"dur\")");
        return {};
      }
      if (k == "pid"sv) return read_id(&ev_.pid);
      if (k == "tid"sv) return read_id(&ev_.tid);
      if (k == "args"sv) return read_args();
      return json_.skip_value();
    });
  }

  // The event's begin and end as wall-clock ns: baseTimeNanoseconds plus "ts" (plus "dur"), in
  // integers. False for times beyond 146 years of 1970 or of the trace's first event, which no
  // clock writes and whose ticks would wrap (TraceBuilder counts from the first event).
  bool wall_times(std::int64_t* begin, std::int64_t* end) const {
    constexpr std::int64_t kLimit = std::int64_t{1} << 62;
    const auto sane = [&](std::int64_t t) {
      return t >= -kLimit && t <= kLimit &&
             (!builder_.is_open() ||
              (t - info_.start_wall_ns <= kLimit && info_.start_wall_ns - t <= kLimit));
    };
    return !__builtin_add_overflow(base_ns_, ev_.ts, begin) &&
           !__builtin_add_overflow(*begin, ev_.dur, end) && sane(*begin) && sane(*end);
  }

  Status read_events() {
    return read_array([&]() -> Status {
      json_.peek();  // past whitespace, so the offset is the event's '{'
      const std::uint64_t at = json_.offset();
      if (Status s = read_event(); !s.ok()) return s;
      if (!builder_.is_open() && ev_.ph != "M"sv) {
        std::int64_t begin, end;
        if (!wall_times(&begin, &end))
          return in_.error_at(at, "times within 146 years of 1970 (\"ts\" + \"dur\")");
        info_.start_wall_ns = begin;  // the first event's: files say no better
        info_.pid = ev_.pid;
        if (Status s = builder_.open(info_); !s.ok()) return s;
      }
      if (Status s = emit(at); !s.ok()) return s;
      if (progress_ && (++seen_ & 0xFFFF) == 0) progress_(in_.progress(), builder_.events());
      return {};
    });
  }

  Status emit(std::uint64_t at) {
    const std::string& ph = ev_.ph;
    if (ph == "M"sv) {
      const std::string* name = ev_.string("name");
      if (name == nullptr) return {};
      if (ev_.name == "thread_name"sv)
        builder_.name_thread(ev_.pid, ev_.tid, plain_thread_name(*name, ev_.tid));
      return {};
    }
    if (ph.empty()) return in_.error_at(at, "an event with a \"ph\" field");
    if (ph == "s"sv || ph == "f"sv || ph == "t"sv)
      return {};  // flows: drawn again from correlations
    if (!ev_.has_ts) return in_.error_at(at, "an event with a \"ts\" field");
    std::int64_t begin, end;
    if (!wall_times(&begin, &end)) {
      return in_.error_at(
          at, "times within 146 years of 1970 and of the first event (\"ts\" + \"dur\")");
    }
    if (ph == "X"sv) {
      GpuActivityKind kind;
      if (formats::gpu_kind_of_category(ev_.cat, &kind)) return emit_gpu(kind, begin, end);
      const std::uint32_t thread = builder_.thread(ev_.pid, ev_.tid);
      const Category category = builder_.category(ev_.cat);
      long long step;
      if (category != Category::kCuda && formats::step_number(ev_.name.c_str(), &step))
        return builder_.step(thread, step, begin, end);
      return builder_.range(thread, builder_.site(ev_.name, category), begin, end);
    }
    const std::uint32_t thread = builder_.thread(ev_.pid, ev_.tid);
    if (ph == "B"sv) {
      auto& stack = open_[{ev_.pid, ev_.tid}];
      if (stack.size() >= 1024)
        return in_.error_at(at, "at most 1024 nested \"B\" events per thread");
      stack.push_back({builder_.site(ev_.name, builder_.category(ev_.cat)), begin});
      return {};
    }
    if (ph == "E"sv) {
      auto& stack = open_[{ev_.pid, ev_.tid}];
      if (stack.empty()) return {};  // its "B" came before the trace started
      const auto [site, from] = stack.back();
      stack.pop_back();
      return builder_.range(thread, site, from, begin);
    }
    if (ph == "i"sv || ph == "I"sv || ph == "R"sv || ph == "n"sv) {
      return builder_.instant(thread, builder_.site(ev_.name, builder_.category(ev_.cat)), begin);
    }
    if (ph == "C"sv) {
      for (const auto& [key, value] : ev_.numbers) {
        const std::string series = key == ev_.name ? ev_.name : ev_.name + "." + key;
        if (Status s = builder_.counter(thread, builder_.site(series, builder_.category(ev_.cat)),
                                        begin, value);
            !s.ok())
          return s;
      }
      return {};
    }
    ++skipped_;  // async, object and other phases: not part of gpuprobe's model
    return {};
  }

  Status emit_gpu(GpuActivityKind kind, std::int64_t begin, std::int64_t end) {
    GpuActivity& a = builder_.gpu();
    a.kind = kind;
    a.name = builder_.text(ev_.name);
    if (kind == GpuActivityKind::kMemcpy) a.copy_kind = memcpy_kind_from_name(a.name);
    if (kind == GpuActivityKind::kSync) a.sync_kind = formats::sync_kind_from_name(a.name);
    const bool api = kind == GpuActivityKind::kRuntimeApi || kind == GpuActivityKind::kDriverApi;
    if (api) {
      builder_.thread(ev_.pid, ev_.tid);  // shown among the thread's ranges
      a.os_tid = ev_.tid;
      a.thread_id = static_cast<std::uint32_t>(ev_.tid);
      a.process_id = static_cast<std::uint32_t>(ev_.pid);
    } else {
      a.device = static_cast<std::uint32_t>(ev_.pid);  // Kineto: pid = device, tid = stream
      a.stream = static_cast<std::uint32_t>(ev_.tid);
    }
    std::memcpy(a.grid, ev_.grid, sizeof a.grid);
    std::memcpy(a.block, ev_.block, sizeof a.block);
    // One pass over the args, through the table the writers write from (formats/gpu_args.h);
    // grid and block came as arrays, above.
    for (const auto& [k, v] : ev_.numbers) {
      int component = 0;
      const formats::GpuArg* arg = formats::find_gpu_arg(k, &component);
      if (arg != nullptr && arg->set != nullptr && arg->type != formats::GpuArgType::kDim3)
        arg->set(a, component, v);
    }
    if (const std::string* range = ev_.string("range"))
      a.range = builder_.site(*range, Category::kApp);
    return builder_.commit_gpu(begin, end);
  }

  struct Open {
    const CallSite* site;
    std::int64_t begin;
  };

  ByteSource& in_;
  JsonCursor json_;
  TraceBuilder builder_;
  const ProgressFn& progress_;
  TraceInfo info_;
  Stats stats_;
  std::int64_t base_ns_ = 0;
  ChromeEvent ev_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Open>> open_;
  std::uint64_t seen_ = 0, skipped_ = 0;
};

}  // namespace

Status read_chrome_trace(ByteSource& in, Sink& sink, const ProgressFn& progress) {
  return ChromeReader(in, sink, progress).run();
}

}  // namespace gpuprobe::readers
