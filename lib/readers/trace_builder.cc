#include "readers/trace_builder.h"

#include <cstdlib>
#include <cstring>

#include "formats/category_names.h"
#include "formats/steps.h"

namespace gpuprobe::readers {

TraceBuilder::TraceBuilder(Sink& sink, std::size_t batch_size)
    : sink_(sink), batch_size_(batch_size) {
  events_batch_.reserve(batch_size_);
  gpu_batch_.reserve(batch_size_);
}

Status TraceBuilder::open(const TraceInfo& info) {
  origin_ns_ = info.start_wall_ns;
  time_ = TimeBase(kOrigin, origin_ns_, 1.0);
  open_ = true;
  info_ = info;
  info_.category_names = category_names_;
  return sink_.open(info_);
}

Category TraceBuilder::category(std::string_view name) {
  if (const std::optional<Category> known =
          formats::category_from_trace_name(name, category_names_)) {
    users_seen_ |= 1u << static_cast<unsigned>(*known);
    return *known;
  }
  // A name gpuprobe gave with name_category(), or another tool's: the next user category this
  // trace has not named yet takes it, so that a conversion writes the same name back.
  while (next_user_ < 8) {
    const auto user = static_cast<Category>(static_cast<unsigned>(Category::kUser0) + next_user_++);
    if (users_seen_ & (1u << static_cast<unsigned>(user))) continue;  // used under its own name
    users_seen_ |= 1u << static_cast<unsigned>(user);
    category_names_.resize(32);
    category_names_[static_cast<unsigned>(user)] = std::string(name);
    if (open_) {
      info_.category_names = category_names_;
      sink_.update_info(info_);
    }
    return user;
  }
  return Category::kApp;
}

const CallSite* TraceBuilder::site(std::string_view name, Category category) {
  const auto it = site_ids_.find(name);
  if (it != site_ids_.end()) {
    for (const CallSite* s : it->second) {
      if (s->category == category) return s;
    }
  }
  // Keyed by the stored text, not `name`: past kMaxNames every new name is stored as
  // kTooManyNames, and looking that up again finds its one site per category, where a site per
  // new name would cost memory (and the sink's per-site state) for every such event.
  const char* stored = text(name);
  std::vector<const CallSite*>& same_name = site_ids_[std::string_view(stored)];
  for (const CallSite* s : same_name) {
    if (s->category == category) return s;
  }
  sites_.push_back(CallSite{stored, "", "", 0, 0, category});
  same_name.push_back(&sites_.back());
  return &sites_.back();
}

const char* TraceBuilder::text(std::string_view s) {
  const auto it = text_ids_.find(s);
  if (it != text_ids_.end()) return it->second;
  if (texts_.size() >= kMaxNames && s != kTooManyNames) {
    // Past the cap every new name is this one: memory stays bounded on hostile files (10 M
    // distinct names would cost the report gigabytes), and the loss is counted.
    ++capped_;
    return text(kTooManyNames);
  }
  texts_.emplace_back(s);
  const std::string& stored = texts_.back();
  text_ids_.emplace(stored, stored.c_str());
  return stored.c_str();
}

std::uint32_t TraceBuilder::thread(std::int64_t pid, std::int64_t tid) {
  if (threads_.size() >= kMaxThreads && thread_ids_.find({pid, tid}) == thread_ids_.end()) {
    ++capped_;
    pid = tid = -1;  // one thread stands for all the ones past the cap
  }
  const auto [it, inserted] =
      thread_ids_.try_emplace({pid, tid}, static_cast<std::uint32_t>(threads_.size()));
  if (inserted) {
    ThreadInfo t;
    t.os_tid = tid;
    const auto named = thread_names_.find({pid, tid});
    t.name = named != thread_names_.end() ? named->second : "thread " + std::to_string(tid);
    threads_.push_back(std::move(t));
  }
  return it->second;
}

void TraceBuilder::name_thread(std::int64_t pid, std::int64_t tid, std::string name) {
  const auto it = thread_ids_.find({pid, tid});
  if (it != thread_ids_.end()) threads_[it->second].name = name;
  if (thread_names_.size() >= kMaxThreads &&
      thread_names_.find({pid, tid}) == thread_names_.end()) {
    ++capped_;
    return;
  }
  thread_names_[{pid, tid}] = std::move(name);
}

Status TraceBuilder::push(Event e) {
  events_batch_.push_back(e);
  ++events_;
  if (e.type != EventType::kGpu) threads_[e.thread].written++;
  return events_batch_.size() >= batch_size_ ? flush() : Status();
}

Status TraceBuilder::flush() {
  Status s;
  if (!events_batch_.empty()) {
    s = sink_.write(EventBatch{events_batch_.data(), events_batch_.size(), &time_, &threads_});
  }
  events_batch_.clear();
  gpu_batch_.clear();
  return s;
}

Status TraceBuilder::range(std::uint32_t thread, const CallSite* site, std::int64_t begin_ns,
                           std::int64_t end_ns) {
  return push(Event{EventType::kRange, thread, site, ticks(begin_ns), ticks(end_ns), 0.0});
}

Status TraceBuilder::step(std::uint32_t thread, std::int64_t number, std::int64_t begin_ns,
                          std::int64_t end_ns) {
  return push(Event{EventType::kRange, thread, &formats::step_site(), ticks(begin_ns),
                    ticks(end_ns), static_cast<double>(number)});
}

Status TraceBuilder::instant(std::uint32_t thread, const CallSite* site, std::int64_t ns) {
  return push(Event{EventType::kInstant, thread, site, ticks(ns), ticks(ns), 0.0});
}

Status TraceBuilder::counter(std::uint32_t thread, const CallSite* site, std::int64_t ns,
                             double value) {
  return push(Event{EventType::kCounter, thread, site, ticks(ns), ticks(ns), value});
}

GpuActivity& TraceBuilder::gpu() {
  // Never reallocates: flush() empties it whenever the event batch is full, and it holds at
  // most one record per event.
  gpu_batch_.emplace_back();
  return gpu_batch_.back();
}

Status TraceBuilder::commit_gpu(std::int64_t start_ns, std::int64_t end_ns) {
  GpuActivity& a = gpu_batch_.back();
  a.start = ticks(start_ns);
  a.end = ticks(end_ns);
  return push(Event::from_gpu(a));
}

MemcpyKind memcpy_kind_from_name(const char* name) {
  static constexpr char kPrefix[] = "Memcpy ";
  if (std::strncmp(name, kPrefix, sizeof kPrefix - 1) != 0) return MemcpyKind::kUnknown;
  const char* kind = name + sizeof kPrefix - 1;
  for (int k = 1; k <= static_cast<int>(MemcpyKind::kPtoP); ++k) {
    if (std::strncmp(kind, memcpy_kind_name(static_cast<MemcpyKind>(k)), 4) == 0)
      return static_cast<MemcpyKind>(k);
  }
  return MemcpyKind::kUnknown;
}

Status TraceBuilder::finish(const Status& read, const TraceInfo& info, Stats stats) {
  if (!open_) {
    const Status opened = open(info);
    if (!opened.ok()) return read.ok() ? opened : read;
  }
  Status s = flush();
  // Thread names the file records at its end win over those known so far.
  std::vector<ThreadInfo> threads = threads_;
  for (ThreadInfo& t : threads) {
    for (const ThreadInfo& recorded : stats.threads) {
      if (recorded.os_tid == t.os_tid && !recorded.name.empty()) {
        t.name = recorded.name;
        t.dropped = recorded.dropped;
        t.peak_fill = recorded.peak_fill;
      }
    }
  }
  stats.threads = std::move(threads);
  stats.written = events_;
  stats.names_overflowed += capped_;
  TraceInfo final_info = info;
  final_info.category_names = category_names_;
  sink_.update_info(final_info);
  const Status closed = sink_.close(stats, time_);
  if (!read.ok()) return read;
  return s.ok() ? closed : s;
}

}  // namespace gpuprobe::readers
