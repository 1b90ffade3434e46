#include "flight/dump_directory.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "base/utc_time.h"

namespace gpuprobe::flight {
namespace fs = std::filesystem;

std::string dump_name(std::int64_t wall_ns, const std::string& host, std::int64_t pid, int rank) {
  const std::string stamp = base::utc_time(wall_ns, base::UtcStyle::kBasic);
  std::string safe_host = host.substr(0, 64);
  for (char& c : safe_host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.';
    if (!ok) c = '-';
  }
  std::string name = "gpuprobe_dump_" + stamp + "_" + safe_host + "_pid" + std::to_string(pid);
  if (rank >= 0) name += "_rank" + std::to_string(rank);
  return name;
}

namespace {

std::uint64_t tree_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

}  // namespace

int enforce_disk_cap(const std::string& dir, std::uint64_t max_bytes, const std::string& keep,
                     std::uint64_t* bytes_left) {
  struct Dump {
    std::string name;
    std::uint64_t bytes;
  };
  std::vector<Dump> dumps;
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_directory(entry_ec) || !fs::exists(it->path() / "dump.json", entry_ec)) continue;
    const std::string name = it->path().filename().string();
    if (name.empty() || name.front() == '.') continue;  // one being written
    dumps.push_back(Dump{name, tree_bytes(it->path())});
    total += dumps.back().bytes;
  }
  std::sort(dumps.begin(), dumps.end(),
            [](const Dump& a, const Dump& b) { return a.name < b.name; });
  int deleted = 0;
  for (const Dump& d : dumps) {
    if (total <= max_bytes) break;
    if (d.name == keep) continue;
    std::error_code rm_ec;
    fs::remove_all(fs::path(dir) / d.name, rm_ec);
    if (rm_ec) continue;
    total -= d.bytes;
    ++deleted;
  }
  if (bytes_left != nullptr) *bytes_left = total;
  return deleted;
}

}  // namespace gpuprobe::flight
