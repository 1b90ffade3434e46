#include "flight/dump_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/utc_time.h"
#include "formats/dump_description.h"

namespace gpuprobe::flight {
namespace dd = formats::dump_description;

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

constexpr int kMaxDepth = 8;  // a dump's deepest file: tensorboard/plugins/profile/RUN/FILE

// Opens `name` in `dirfd` as a directory, never through a link.
int open_dir_at(int dirfd, const char* name) {
  return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

// Bytes of the regular files under the directory `fd` (closed here); links are not followed.
std::uint64_t tree_bytes(int fd, int depth) {
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return 0;
  }
  std::uint64_t total = 0;
  while (const dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    struct stat st {};
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode)) total += static_cast<std::uint64_t>(st.st_size);
    if (S_ISDIR(st.st_mode) && depth < kMaxDepth) {
      const int sub = open_dir_at(dirfd(d), e->d_name);
      if (sub >= 0) total += tree_bytes(sub, depth + 1);
    }
  }
  closedir(d);
  return total;
}

// Removes everything under the directory `fd` (closed here), each entry by its name in its own
// directory's descriptor, so that a link swapped in meanwhile is removed, never followed.
bool remove_tree(int fd, int depth) {
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return false;
  }
  bool ok = true;
  while (const dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (unlinkat(dirfd(d), e->d_name, 0) == 0) continue;
    if (errno != EISDIR && errno != EPERM) {
      ok = false;
      continue;
    }
    const int sub = depth < kMaxDepth ? open_dir_at(dirfd(d), e->d_name) : -1;
    ok = sub >= 0 && remove_tree(sub, depth + 1) &&
         unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0 && ok;
  }
  closedir(d);
  return ok;
}

bool named_like_a_dump(const std::string& name) {
  const std::string prefix = "gpuprobe_dump_";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() < prefix.size() + 9) return false;
  for (std::size_t i = prefix.size(); i < prefix.size() + 8; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;  // the UTC date
  }
  return name[prefix.size() + 8] == 'T';
}

}  // namespace

bool is_own_dump(const std::string& dir, const std::string& name) {
  if (!named_like_a_dump(name)) return false;
  const int parent = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return false;
  const int fd = open_dir_at(parent, name.c_str());
  ::close(parent);
  if (fd < 0) return false;
  struct stat st {};
  bool own = fstat(fd, &st) == 0 && st.st_uid == geteuid();
  const int description =
      own ? openat(fd, dd::kFileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
  ::close(fd);
  if (description < 0) return false;
  // dump.json's first member, its format's name: what marks a directory as a gpuprobe dump.
  const std::string marker =
      std::string("{\n  \"") + dd::kFormat + "\": \"" + dd::kFormatName + "\"";
  char head[64] = {};
  own = fstat(description, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        ::read(description, head, marker.size()) == static_cast<ssize_t>(marker.size()) &&
        marker.compare(0, marker.size(), head, marker.size()) == 0;
  ::close(description);
  return own;
}

int enforce_disk_cap(const std::string& dir, std::uint64_t max_bytes, const std::string& keep,
                     std::uint64_t* bytes_left) {
  struct Dump {
    std::string name;
    std::uint64_t bytes;
  };
  std::vector<Dump> dumps;
  std::uint64_t total = 0;
  const int parent = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) {
    if (bytes_left != nullptr) *bytes_left = 0;
    return 0;
  }
  if (DIR* d = fdopendir(dup(parent)); d != nullptr) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (!is_own_dump(dir, name)) continue;
      const int fd = open_dir_at(parent, name.c_str());
      if (fd < 0) continue;
      dumps.push_back(Dump{name, tree_bytes(fd, 1)});
      total += dumps.back().bytes;
    }
    closedir(d);
  }
  std::sort(dumps.begin(), dumps.end(),
            [](const Dump& a, const Dump& b) { return a.name < b.name; });
  int deleted = 0;
  for (const Dump& d : dumps) {
    if (total <= max_bytes) break;
    if (d.name == keep) continue;
    const int fd = open_dir_at(parent, d.name.c_str());
    if (fd < 0 || !remove_tree(fd, 1) || unlinkat(parent, d.name.c_str(), AT_REMOVEDIR) != 0) {
      continue;
    }
    total -= d.bytes;
    ++deleted;
  }
  ::close(parent);
  if (bytes_left != nullptr) *bytes_left = total;
  return deleted;
}

}  // namespace gpuprobe::flight
