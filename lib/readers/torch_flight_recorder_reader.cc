#include "readers/torch_flight_recorder_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "readers/pickle_value.h"
#include "readers/regular_file.h"

namespace gpuprobe::readers {
namespace {

namespace fr = formats::torch_fr;
using K = PickleValue::Kind;

// A dump holds the last TORCH_FR_BUFFER_SIZE entries (2000 by default) of a few KiB each.
constexpr std::size_t kMaxDumpBytes = std::size_t{1} << 30;

// The rank in a file name "<prefix><rank>", or -1.
int rank_of(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  std::size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size() || name.size() - i > 9) return -1;
  return std::stoi(name.substr(i));
}

std::int64_t int_of(const PickleValue& dict, const char* key, std::int64_t otherwise) {
  const PickleValue* v = dict.find(key);
  std::int64_t out = otherwise;
  if (v != nullptr && v->as_int(&out)) return out;
  return otherwise;
}

std::string text_of(const PickleValue& dict, const char* key) {
  const PickleValue* v = dict.find(key);
  return v == nullptr ? std::string() : v->as_text();
}

// "[0, 1]" (as pg_config writes it) or a list of integers.
std::vector<int> ranks_of(const PickleValue* v) {
  std::vector<int> out;
  if (v == nullptr) return out;
  if (v->kind == K::kList) {
    for (const PickleValue& r : v->items)
      if (std::int64_t i = 0; r.as_int(&i)) out.push_back(static_cast<int>(i));
    return out;
  }
  const std::string& s = v->text;
  for (std::size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && j - i < 9) ++j;
    out.push_back(std::stoi(s.substr(i, j - i)));
    i = j;
  }
  return out;
}

fr::Entry entry_of(const PickleValue& e) {
  fr::Entry out;
  if (const PickleValue* pg = e.find("process_group"); pg != nullptr && pg->kind == K::kList) {
    if (!pg->items.empty()) out.pg_name = pg->items[0].as_text();
    if (pg->items.size() > 1) out.pg_desc = pg->items[1].as_text();
  }
  out.collective_seq_id = int_of(e, "collective_seq_id", int_of(e, "seq_id", -1));
  out.p2p_seq_id = int_of(e, "p2p_seq_id", -1);
  out.record_id = int_of(e, "record_id", -1);
  out.is_p2p = int_of(e, "is_p2p", 0) != 0;
  out.profiling_name = text_of(e, "profiling_name");
  out.state = text_of(e, "state");
  out.input_sizes = text_of(e, "input_sizes");
  out.output_sizes = text_of(e, "output_sizes");
  out.input_dtypes = text_of(e, "input_dtypes");
  out.output_dtypes = text_of(e, "output_dtypes");
  out.time_created_ns = int_of(e, "time_created_ns", 0);
  out.time_started_ns = int_of(e, "time_discovered_started_ns", 0);
  out.time_completed_ns = int_of(e, "time_discovered_completed_ns", 0);
  if (const PickleValue* d = e.find("duration_ms"); d != nullptr) {
    if (d->kind == K::kFloat) out.duration_ms = d->number;
    if (d->kind == K::kInt) out.duration_ms = static_cast<double>(d->integer);
  }
  out.timeout_ms = int_of(e, "timeout_ms", 0);
  out.retired = int_of(e, "retired", 0) != 0;
  if (const PickleValue* frames = e.find("frames"); frames != nullptr && frames->kind == K::kList) {
    for (const PickleValue& f : frames->items)
      out.frames.push_back({text_of(f, "name"), text_of(f, "filename"), int_of(f, "line", 0)});
  }
  return out;
}

}  // namespace

bool looks_like_torch_fr_dump(const std::string& path) {
  if (rank_of(path) < 0) return false;
  int fd = -1;
  std::uint64_t size = 0;
  if (!open_regular_file(path, &fd, &size).ok()) return false;
  unsigned char head[2] = {};
  const bool read = pread(fd, head, 2, 0) == 2;
  ::close(fd);
  return read && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}

Status read_torch_fr_dump(const std::string& path, fr::Dump* out) {
  std::string bytes;
  if (Status s = read_regular_file(path, kMaxDumpBytes, &bytes); !s.ok()) return s;
  PickleValue dump;
  if (Status s = read_pickle(bytes, path, &dump); !s.ok()) return s;
  if (dump.kind != K::kDict) return Status::Error(path + ": expected a dict at the top");
  const PickleValue* entries = dump.find(fr::kEntries);
  if (entries == nullptr || entries->kind != K::kList)
    return Status::Error(path + ": expected a list under \"entries\" (a flight recorder dump)");
  out->file = path;
  out->rank = rank_of(path);
  out->version = text_of(dump, fr::kVersion);
  out->groups.clear();
  out->status.clear();
  out->entries.clear();
  if (const PickleValue* pgs = dump.find(fr::kPgConfig); pgs != nullptr && pgs->kind == K::kDict) {
    for (std::size_t i = 0; i < pgs->keys.size(); ++i) {
      const PickleValue& pg = pgs->items[i];
      fr::ProcessGroup g{text_of(pg, "name"), text_of(pg, "desc"), ranks_of(pg.find("ranks"))};
      if (g.name.empty()) g.name = pgs->keys[i].as_text();
      out->groups.push_back(std::move(g));
    }
  }
  if (const PickleValue* st = dump.find(fr::kPgStatus); st != nullptr && st->kind == K::kDict) {
    for (std::size_t i = 0; i < st->keys.size(); ++i) {
      const PickleValue& s = st->items[i];
      out->status.push_back({st->keys[i].as_text(), int_of(s, "last_enqueued_collective", -1),
                             int_of(s, "last_started_collective", -1),
                             int_of(s, "last_completed_collective", -1)});
    }
  }
  for (const PickleValue& e : entries->items) {
    if (e.kind != K::kDict)
      return Status::Error(path + ": expected a dict for each of \"entries\"");
    out->entries.push_back(entry_of(e));
  }
  return Status();
}

std::vector<std::string> torch_fr_dump_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string path = entry.path().string();
    if (entry.is_regular_file(ec) && looks_like_torch_fr_dump(path)) files.push_back(path);
  }
  return files;
}

Status read_torch_fr_dir(const std::string& dir, std::vector<fr::Dump>* out) {
  out->clear();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::Error(dir + ": " + (ec ? ec.message() : "not a directory"));
  for (const std::string& path : torch_fr_dump_files(dir)) {
    fr::Dump d;
    if (Status s = read_torch_fr_dump(path, &d); !s.ok()) return s;
    out->push_back(std::move(d));
  }
  if (out->empty())
    return Status::Error(dir +
                         ": no flight recorder dumps (files named <prefix><rank> holding a pickle, "
                         "as TORCH_FR_DUMP_TEMP_FILE names them)");
  std::sort(out->begin(), out->end(),
            [](const fr::Dump& a, const fr::Dump& b) { return a.rank < b.rank; });
  for (std::size_t i = 1; i < out->size(); ++i)
    if ((*out)[i].rank == (*out)[i - 1].rank)
      return Status::Error(dir + ": two dumps of rank " + std::to_string((*out)[i].rank) + ": " +
                           (*out)[i - 1].file + " and " + (*out)[i].file);
  return Status();
}

}  // namespace gpuprobe::readers
