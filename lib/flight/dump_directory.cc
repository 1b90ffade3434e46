#include "flight/dump_directory.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <vector>

namespace gpuprobe::flight {
namespace fs = std::filesystem;

std::string dump_name(std::int64_t wall_ns, const std::string& host, std::int64_t pid, int rank) {
  const std::time_t seconds = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "%04d%02d%02dT%02d%02d%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(wall_ns / 1'000'000 % 1000));
  std::string safe_host = host.substr(0, 64);
  for (char& c : safe_host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.';
    if (!ok) c = '-';
  }
  std::string name =
      "gpuprobe_dump_" + std::string(stamp) + "_" + safe_host + "_pid" + std::to_string(pid);
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
