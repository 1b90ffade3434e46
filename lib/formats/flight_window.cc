#include "formats/flight_window.h"

#include <cstring>

namespace gpuprobe::formats::flight_window {
namespace {

using flight_events::ByteCursor;
using flight_events::put_double;
using flight_events::put_signed;
using flight_events::put_varint;

// A count of table entries, bounded, and never more than the bytes left could hold.
bool read_count(ByteCursor& r, std::uint64_t* n) {
  *n = r.varint();
  return r.ok() && *n <= kMaxTableEntries && *n <= static_cast<std::uint64_t>(r.end - r.p);
}

int read_int(ByteCursor& r) { return static_cast<int>(r.signed_varint()); }

}  // namespace

void put_string(std::vector<std::uint8_t>* out, const std::string& s) {
  put_varint(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

void put_record(std::vector<std::uint8_t>* out, Tag tag, const std::vector<std::uint8_t>& body) {
  put_varint(out, tag);
  put_varint(out, body.size());
  out->insert(out->end(), body.begin(), body.end());
}

bool read_string(ByteCursor& r, std::string* out) {
  const std::uint64_t n = r.varint();
  if (!r.ok() || n > static_cast<std::uint64_t>(r.end - r.p)) return false;
  out->assign(reinterpret_cast<const char*>(r.p), n);
  r.p += n;
  return true;
}

std::vector<std::uint8_t> info_record(const TraceInfo& info) {
  std::vector<std::uint8_t> b;
  put_signed(&b, info.pid);
  put_string(&b, info.process_name);
  put_signed(&b, info.start_wall_ns);
  put_signed(&b, info.rank);
  put_signed(&b, info.world_size);
  put_string(&b, info.clock);
  b.push_back(info.nvtx ? 1 : 0);
  put_string(&b, info.config);
  put_varint(&b, info.category_names.size());
  for (const std::string& name : info.category_names) put_string(&b, name);
  put_varint(&b, info.devices.size());
  for (const DeviceInfo& d : info.devices) {
    put_signed(&b, d.id);
    put_string(&b, d.name);
    put_varint(&b, d.total_global_mem);
    for (int v : {d.compute_major, d.compute_minor, d.max_threads_per_block,
                  d.max_threads_per_multiprocessor, d.regs_per_block, d.regs_per_multiprocessor,
                  d.warp_size, d.shared_mem_per_block, d.shared_mem_per_multiprocessor, d.num_sms,
                  d.shared_mem_per_block_optin}) {
      put_signed(&b, v);
    }
  }
  return b;
}

bool read_info(ByteCursor& r, TraceInfo* out) {
  out->pid = r.signed_varint();
  if (!read_string(r, &out->process_name)) return false;
  out->start_wall_ns = r.signed_varint();
  out->rank = read_int(r);
  out->world_size = read_int(r);
  if (!read_string(r, &out->clock)) return false;
  out->nvtx = r.byte() != 0;
  if (!read_string(r, &out->config)) return false;
  std::uint64_t n = 0;
  if (!read_count(r, &n)) return false;
  out->category_names.resize(n);
  for (std::string& name : out->category_names) {
    if (!read_string(r, &name)) return false;
  }
  if (!read_count(r, &n)) return false;
  out->devices.resize(n);
  for (DeviceInfo& d : out->devices) {
    d.id = read_int(r);
    if (!read_string(r, &d.name)) return false;
    d.total_global_mem = r.varint();
    for (int* v : {&d.compute_major, &d.compute_minor, &d.max_threads_per_block,
                   &d.max_threads_per_multiprocessor, &d.regs_per_block, &d.regs_per_multiprocessor,
                   &d.warp_size, &d.shared_mem_per_block, &d.shared_mem_per_multiprocessor,
                   &d.num_sms, &d.shared_mem_per_block_optin}) {
      *v = read_int(r);
    }
  }
  return r.ok();
}

std::vector<std::uint8_t> time_record(const TimeBase& time) {
  std::vector<std::uint8_t> b;
  put_varint(&b, time.lines());
  time.for_each_line([&](std::uint64_t ticks, std::int64_t wall_ns, double ns_per_tick) {
    put_varint(&b, ticks);
    put_signed(&b, wall_ns);
    put_double(&b, ns_per_tick);
  });
  return b;
}

bool read_time(ByteCursor& r, TimeBase* out) {
  std::uint64_t n = 0;
  if (!read_count(r, &n) || n == 0) return false;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t ticks = r.varint();
    const std::int64_t wall_ns = r.signed_varint();
    const double ns_per_tick = r.real();
    if (!r.ok() || !(ns_per_tick > 0 && ns_per_tick < 1e9)) return false;
    *out = i == 0 ? TimeBase(ticks, wall_ns, ns_per_tick) : TimeBase(*out, ticks, ns_per_tick);
  }
  return true;
}

std::vector<std::uint8_t> threads_record(const std::vector<ThreadInfo>& threads) {
  std::vector<std::uint8_t> b;
  put_varint(&b, threads.size());
  for (const ThreadInfo& t : threads) {
    put_signed(&b, t.os_tid);
    put_string(&b, t.name);
    put_varint(&b, t.written);
    put_varint(&b, t.dropped);
    put_varint(&b, t.peak_fill);
  }
  return b;
}

bool read_threads(ByteCursor& r, std::vector<ThreadInfo>* out) {
  std::uint64_t n = 0;
  if (!read_count(r, &n)) return false;
  out->resize(n);
  for (ThreadInfo& t : *out) {
    t.os_tid = r.signed_varint();
    if (!read_string(r, &t.name)) return false;
    t.written = r.varint();
    t.dropped = r.varint();
    t.peak_fill = r.varint();
  }
  return r.ok();
}

std::vector<std::uint8_t> sites_record(const std::vector<const CallSite*>& sites) {
  std::vector<std::uint8_t> b;
  put_varint(&b, sites.size());
  const auto text = [](const char* s) { return std::string(s != nullptr ? s : ""); };
  for (const CallSite* s : sites) {
    const CallSite none{"", "", "", 0, 0, Category::kApp};
    const CallSite& site = s != nullptr ? *s : none;
    put_string(&b, text(site.name));
    put_string(&b, text(site.function));
    put_string(&b, text(site.file));
    put_varint(&b, site.line);
    put_varint(&b, site.color);
    b.push_back(static_cast<std::uint8_t>(site.category));
  }
  return b;
}

bool read_sites(ByteCursor& r, std::vector<SiteText>* out) {
  std::uint64_t n = 0;
  if (!read_count(r, &n)) return false;
  out->resize(n);
  for (SiteText& s : *out) {
    if (!read_string(r, &s.name) || !read_string(r, &s.function) || !read_string(r, &s.file)) {
      return false;
    }
    s.line = static_cast<std::uint32_t>(r.varint());
    s.color = static_cast<std::uint32_t>(r.varint());
    const std::uint8_t category = r.byte();
    if (category >= 32) return false;  // the categories are the bits of a 32-bit mask
    s.category = static_cast<Category>(category);
  }
  return r.ok();
}

std::vector<std::uint8_t> names_record(const std::vector<const char*>& names) {
  std::vector<std::uint8_t> b;
  put_varint(&b, names.size());
  for (const char* name : names) put_string(&b, name != nullptr ? name : "");
  return b;
}

bool read_names(ByteCursor& r, std::vector<std::string>* out) {
  std::uint64_t n = 0;
  if (!read_count(r, &n)) return false;
  out->resize(n);
  for (std::string& name : *out) {
    if (!read_string(r, &name)) return false;
  }
  return true;
}

std::vector<std::uint8_t> stats_record(const Stats& s) {
  std::vector<std::uint8_t> b;
  for (std::uint64_t v :
       {s.written, s.dropped, s.dropped_no_ring, s.ring_capacity, s.names_overflowed}) {
    put_varint(&b, v);
  }
  put_string(&b, s.gpu.status);
  for (std::uint64_t v : {s.gpu.records, s.gpu.dropped, s.gpu.buffers_exhausted, s.gpu.filtered,
                          s.gpu.starts_before_launch, s.gpu.attributed, s.gpu.unattributed,
                          s.gpu.untimed, s.gpu.bursts}) {
    put_varint(&b, v);
  }
  b.push_back(s.gpu.sampled ? 1 : 0);
  put_signed(&b, s.gpu.recorded_ns);
  return b;
}

bool read_stats(ByteCursor& r, Stats* s) {
  for (std::uint64_t* v :
       {&s->written, &s->dropped, &s->dropped_no_ring, &s->ring_capacity, &s->names_overflowed}) {
    *v = r.varint();
  }
  if (!read_string(r, &s->gpu.status)) return false;
  for (std::uint64_t* v : {&s->gpu.records, &s->gpu.dropped, &s->gpu.buffers_exhausted,
                           &s->gpu.filtered, &s->gpu.starts_before_launch, &s->gpu.attributed,
                           &s->gpu.unattributed, &s->gpu.untimed, &s->gpu.bursts}) {
    *v = r.varint();
  }
  s->gpu.sampled = r.byte() != 0;
  s->gpu.recorded_ns = r.signed_varint();
  return r.ok();
}

std::vector<std::uint8_t> window_record(std::uint64_t from_tick, std::uint64_t to_tick) {
  std::vector<std::uint8_t> b;
  put_varint(&b, from_tick);
  put_varint(&b, to_tick);
  return b;
}

bool read_window(ByteCursor& r, std::uint64_t* from_tick, std::uint64_t* to_tick) {
  *from_tick = r.varint();
  *to_tick = r.varint();
  return r.ok();
}

std::vector<std::uint8_t> chunk_header(const flight_events::Chunk& chunk) {
  std::vector<std::uint8_t> b;
  put_varint(&b, chunk.first_tick);
  put_varint(&b, chunk.min_tick);
  put_varint(&b, chunk.max_tick);
  put_varint(&b, chunk.events);
  return b;
}

bool read_chunk_header(ByteCursor& r, flight_events::Chunk* out) {
  out->first_tick = r.varint();
  out->min_tick = r.varint();
  out->max_tick = r.varint();
  const std::uint64_t events = r.varint();
  // An event takes at least 4 bytes: a count beyond that is not what the writer wrote.
  if (!r.ok() || events > static_cast<std::uint64_t>(r.end - r.p) / 4 + 1) return false;
  out->events = static_cast<std::uint32_t>(events);
  return true;
}

}  // namespace gpuprobe::formats::flight_window
