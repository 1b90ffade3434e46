#include "readers/flight_window_reader.h"

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "formats/flight_window.h"

namespace gpuprobe::readers {
namespace {

namespace fe = formats::flight_events;
namespace fw = formats::flight_window;

constexpr std::size_t kMaxThreads = 65536;

class FlightWindowReader {
 public:
  FlightWindowReader(ByteSource& in, Sink& sink, const ProgressFn& progress)
      : in_(in), sink_(sink), progress_(progress) {}

  Status run() {
    Status s = read_all();
    if (!open_ && s.ok()) s = open();
    if (open_) {
      stats_.threads = threads_;
      const Status closed = sink_.close(stats_, time_);
      if (s.ok()) s = closed;
    }
    return s;
  }

 private:
  Status read_all() {
    char magic[sizeof fw::kMagic];
    if (in_.read(magic, sizeof magic) != sizeof magic ||
        std::memcmp(magic, fw::kMagic, sizeof magic) != 0) {
      return in_.error_at(0, "a flight window file (\"GPWINDOW\")");
    }
    std::uint64_t version = 0;
    if (!varint(&version) || version != fw::kVersion) {
      return in_.error_at(sizeof magic, "format version " + std::to_string(fw::kVersion));
    }
    while (true) {
      const std::uint64_t at = in_.offset();
      std::uint64_t tag = 0, length = 0;
      if (!varint(&tag)) {
        if (!in_.status().ok()) return in_.status();
        return in_.error_at(at, "a record, or the end record (the file is cut short)");
      }
      if (!varint(&length) || length > fw::kMaxRecordBytes) {
        return in_.error_at(at, "a record length up to " + std::to_string(fw::kMaxRecordBytes));
      }
      body_.resize(length);
      if (in_.read(reinterpret_cast<char*>(body_.data()), length) != length) {
        if (!in_.status().ok()) return in_.status();
        return in_.error_at(at, "a record of " + std::to_string(length) + " bytes");
      }
      if (tag == fw::kEnd) return {};
      if (Status s = record(tag, at); !s.ok()) return s;
    }
  }

  Status record(std::uint64_t tag, std::uint64_t at) {
    fe::ByteCursor r{body_.data(), body_.data() + body_.size()};
    bool ok = true;
    switch (tag) {
      case fw::kInfo:
        ok = fw::read_info(r, &info_);
        break;
      case fw::kTime:
        ok = fw::read_time(r, &time_);
        have_time_ = ok;
        break;
      case fw::kThreads:
        ok = fw::read_threads(r, &threads_) && threads_.size() <= kMaxThreads;
        break;
      // One table of each per file: the events handed to the sink point into them.
      case fw::kSites:
        ok = !have_sites_ && fw::read_sites(r, &site_text_);
        have_sites_ = true;
        if (ok) build_sites();
        break;
      case fw::kNames:
        ok = !have_names_ && fw::read_names(r, &name_text_);
        have_names_ = true;
        if (ok) {
          for (const std::string& n : name_text_) set_.names.push_back(n.c_str());
        }
        break;
      case fw::kStats:
        ok = fw::read_stats(r, &stats_);
        break;
      case fw::kWindow:
        ok = fw::read_window(r, &from_, &to_);
        break;
      case fw::kChunk:
        return chunk(r, at);
      default:
        return {};  // a newer writer's record
    }
    if (!ok) return in_.error_at(at, record_name(tag) + " as the format describes it");
    return {};
  }

  static std::string record_name(std::uint64_t tag) {
    switch (tag) {
      case fw::kInfo:
        return "the trace's facts";
      case fw::kTime:
        return "the clock's lines";
      case fw::kThreads:
        return "the threads (at most 65536)";
      case fw::kSites:
        return "the call sites";
      case fw::kNames:
        return "the names";
      case fw::kStats:
        return "the statistics";
      case fw::kWindow:
        return "the window";
      default:
        return "a record";
    }
  }

  void build_sites() {
    for (const fw::SiteText& t : site_text_) {
      sites_.push_back(CallSite{t.name.c_str(), t.function.c_str(), t.file.c_str(), t.line, t.color,
                                t.category});
    }
    for (const CallSite& s : sites_) set_.sites.push_back(&s);
  }

  Status open() {
    if (!have_time_) return in_.error_at(in_.offset(), "the clock's lines before the events");
    open_ = true;
    return sink_.open(info_);
  }

  Status chunk(fe::ByteCursor& r, std::uint64_t at) {
    if (!open_) {
      if (Status s = open(); !s.ok()) return s;
    }
    auto chunk = std::make_shared<fe::Chunk>();
    if (!fw::read_chunk_header(r, chunk.get())) {
      return in_.error_at(at, "a chunk's header as the format describes it");
    }
    chunk->bytes.assign(r.p, r.end);
    set_.chunks.assign(1, std::move(chunk));
    Status written;
    bool bad_thread = false;
    const std::uint64_t damaged = fe::decode(set_, from_, to_, [&](const std::vector<Event>& b) {
      if (!written.ok()) return;
      for (const Event& e : b) {
        if (e.type == EventType::kGpu) continue;
        if (e.thread >= kMaxThreads) {
          bad_thread = true;
          return;
        }
        if (e.thread >= threads_.size()) threads_.resize(e.thread + 1);
      }
      written = sink_.write(EventBatch{b.data(), b.size(), &time_, &threads_});
    });
    if (!written.ok()) return written;
    if (bad_thread) return in_.error_at(at, "events of threads below 65536");
    if (damaged > 0) return in_.error_at(at, "a chunk of events as the format describes it");
    if (progress_ && (++chunks_ & 0xFF) == 0) progress_(in_.progress(), 0);
    return {};
  }

  bool varint(std::uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const int b = in_.get();
      if (b < 0) return false;
      *v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  ByteSource& in_;
  Sink& sink_;
  const ProgressFn& progress_;
  std::vector<std::uint8_t> body_;
  TraceInfo info_;
  TimeBase time_;
  bool have_time_ = false;
  bool have_sites_ = false;
  bool have_names_ = false;
  std::vector<ThreadInfo> threads_;
  Stats stats_;
  std::vector<fw::SiteText> site_text_;
  std::deque<CallSite> sites_;  // point into site_text_, which no longer changes
  std::vector<std::string> name_text_;
  fe::ChunkSet set_;
  std::uint64_t from_ = 0;
  std::uint64_t to_ = ~std::uint64_t{0};
  bool open_ = false;
  std::uint64_t chunks_ = 0;
};

}  // namespace

Status read_flight_window(ByteSource& in, Sink& sink, const ProgressFn& progress) {
  return FlightWindowReader(in, sink, progress).run();
}

}  // namespace gpuprobe::readers
