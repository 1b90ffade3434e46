#include "session/control_socket.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/private_dir.h"

namespace gpuprobe::session {
namespace {

std::string socket_name(pid_t pid) { return std::to_string(pid) + ".sock"; }

// The socket `name` in the directory `dir_fd`, as a sun_path that never follows a link to the
// directory: /proc/self/fd/N/NAME goes through the descriptor already checked.
bool address_in(int dir_fd, const std::string& name, sockaddr_un* address) {
  const std::string path = "/proc/self/fd/" + std::to_string(dir_fd) + "/" + name;
  if (path.size() >= sizeof(address->sun_path)) return false;
  std::memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  std::memcpy(address->sun_path, path.c_str(), path.size() + 1);
  return true;
}

std::string process_name(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? std::string() : " (" + name + ")";
}

// Reads one line of at most kMaxControlLine bytes from `fd` by `deadline`; false on timeout,
// end of stream or error (`*why` says which).
bool read_line(int fd, std::string* pending, std::chrono::steady_clock::time_point deadline,
               std::string* line, std::string* why) {
  for (;;) {
    const std::size_t nl = pending->find('\n');
    if (nl != std::string::npos) {
      *line = pending->substr(0, nl);
      pending->erase(0, nl + 1);
      return true;
    }
    if (pending->size() >= kMaxControlLine) {
      *why = "the reply is longer than a control line may be";
      return false;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      *why = "no answer in time";
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      *why = std::strerror(errno);
      return false;
    }
    if (ready <= 0) continue;
    char buffer[512];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = "the process closed the connection without an answer (did it stop?)";
      return false;
    }
    pending->append(buffer, static_cast<std::size_t>(n));
  }
}

// Whether a process listens on the socket at `address` (anything but a refused connection counts
// as one: the socket is left alone).
bool answers(const sockaddr_un& address) {
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (probe < 0) return true;
  const bool refused =
      ::connect(probe, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 &&
      errno == ECONNREFUSED;
  ::close(probe);
  return !refused;
}

// Removes the sockets of processes that ended without removing theirs (killed, _exit()): a
// PID.sock of this user's whose pid does not exist here and on which nobody listens (a process
// of another PID namespace sharing the directory still answers, and keeps its socket). At most
// kMaxScanned entries are looked at, so that a huge directory costs a session start little.
void remove_stale_sockets(int dir_fd) {
  constexpr int kMaxScanned = 256;
  const int fd = ::dup(dir_fd);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (d == nullptr) {
    if (fd >= 0) ::close(fd);
    return;
  }
  int scanned = 0;
  while (const dirent* e = ::readdir(d)) {
    if (++scanned > kMaxScanned) break;
    const std::string name = e->d_name;
    const std::size_t dot = name.find(".sock");
    if (dot == 0 || dot == std::string::npos || dot + 5 != name.size() ||
        name.find_first_not_of("0123456789") != dot) {
      continue;
    }
    const long pid = std::strtol(name.c_str(), nullptr, 10);
    if (pid <= 0 || pid > 0x7fffffff || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) {
      continue;
    }
    struct stat st {};
    sockaddr_un address{};
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode) ||
        st.st_uid != geteuid() || !address_in(dir_fd, name, &address)) {
      continue;
    }
    if (!answers(address)) unlinkat(dir_fd, name.c_str(), 0);
  }
  ::closedir(d);
}

}  // namespace

std::vector<std::string> control_directories(uid_t uid) {
  if (const char* dir = std::getenv(kControlDirVariable); dir != nullptr && *dir != '\0') {
    return {dir};
  }
  std::vector<std::string> dirs;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (uid == geteuid() && runtime != nullptr && runtime[0] == '/') {
    dirs.push_back(std::string(runtime) + "/gpuprobe");
  }
  // Where a session of a login session of that user puts it when its environment has no
  // XDG_RUNTIME_DIR (a client with one, or root asking, looks there too).
  const std::string user_runtime = "/run/user/" + std::to_string(uid) + "/gpuprobe";
  if (dirs.empty() || dirs.front() != user_runtime) dirs.push_back(user_runtime);
  dirs.push_back("/tmp/gpuprobe-" + std::to_string(uid));
  return dirs;
}

bool peer_allowed(uid_t peer, uid_t own) noexcept { return peer == own || peer == 0; }

Status ControlSocket::listen() {
  close();
  std::string refused;
  for (const std::string& dir : control_directories(geteuid())) {
    int dir_fd = -1;
    if (Status s = base::open_private_directory(dir, true, geteuid(), &dir_fd); !s.ok()) {
      refused += (refused.empty() ? "" : "; ") + s.message();
      continue;
    }
    remove_stale_sockets(dir_fd);
    name_ = socket_name(getpid());
    sockaddr_un address{};
    if (!address_in(dir_fd, name_, &address)) {
      ::close(dir_fd);
      refused += (refused.empty() ? "" : "; ") + dir + ": path too long";
      continue;
    }
    // A socket of this name is a dead process's of this pid (this one has none yet): replaced,
    // unless something answers on it (a process of the same pid in another pid namespace that
    // shares the directory), whose socket is left alone.
    struct stat st {};
    if (fstatat(dir_fd, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode)) {
      if (answers(address)) {
        ::close(dir_fd);
        refused +=
            (refused.empty() ? "" : "; ") + dir + "/" + name_ + ": another process listens there";
        continue;
      }
      unlinkat(dir_fd, name_.c_str(), 0);
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      ::close(dir_fd);
      return Status::Error(std::string("control socket: ") + std::strerror(errno));
    }
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd, 8) != 0 || fstatat(dir_fd, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      refused += (refused.empty() ? "" : "; ") + dir + "/" + name_ + ": " + std::strerror(errno);
      ::close(fd);
      ::close(dir_fd);
      continue;
    }
    fd_ = fd;
    dir_fd_ = dir_fd;
    path_ = dir + "/" + name_;
    dev_ = static_cast<unsigned long long>(st.st_dev);
    ino_ = static_cast<unsigned long long>(st.st_ino);
    return {};
  }
  return Status::Error("no control socket (gpuprobe capture cannot reach this process): " +
                       refused);
}

void ControlSocket::close() noexcept {
  if (fd_ < 0) return;
  struct stat st {};
  if (fstatat(dir_fd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      static_cast<unsigned long long>(st.st_dev) == dev_ &&
      static_cast<unsigned long long>(st.st_ino) == ino_) {
    unlinkat(dir_fd_, name_.c_str(), 0);
  }
  forget();
}

void ControlSocket::forget() noexcept {
  if (fd_ >= 0) ::close(fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
  fd_ = dir_fd_ = -1;
}

Status request_capture(pid_t pid, double seconds, const std::string& outputs,
                       std::chrono::seconds grace,
                       const std::function<void(std::string_view)>& started, std::string* paths) {
  const std::string who = "process " + std::to_string(pid);
  struct stat proc {};
  if (pid <= 0 || ::stat(("/proc/" + std::to_string(pid)).c_str(), &proc) != 0) {
    return Status::Error("no " + who + " (it is not running)");
  }
  const std::string named = who + process_name(pid);
  const uid_t owner = proc.st_uid;
  if (!peer_allowed(geteuid(), owner)) {
    return Status::Error(named + " belongs to uid " + std::to_string(owner) +
                         ": gpuprobe capture reaches only your own processes (any, as root)");
  }
  // to_chars: a decimal point whatever the caller's LC_NUMERIC (to_string follows it).
  char number[64];
  const auto written = std::to_chars(number, number + sizeof number, seconds);
  const std::string request = "capture " + std::string(number, written.ptr) + " " + outputs + "\n";
  if (request.size() > kMaxControlLine || outputs.find('\n') != std::string::npos) {
    return Status::Error("the outputs are too long for a control request");
  }
  std::string looked, refused;
  for (const std::string& dir : control_directories(owner)) {
    looked += (looked.empty() ? "" : ", ") + dir;
    int dir_fd = -1;
    if (Status s = base::open_private_directory(dir, false, owner, &dir_fd); !s.ok()) {
      if (s.message().find("No such file") == std::string::npos) refused = s.message();
      continue;
    }
    sockaddr_un address{};
    const std::string name = socket_name(pid);
    struct stat st {};
    const bool exists = fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (!exists || !S_ISSOCK(st.st_mode) || !address_in(dir_fd, name, &address)) {
      ::close(dir_fd);
      continue;
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int rc =
        fd < 0 ? -1 : ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    const int err = errno;
    ::close(dir_fd);
    if (rc != 0) {
      if (fd >= 0) ::close(fd);
      return Status::Error(named + ": its control socket " + dir + "/" + name +
                           " does not answer (" + std::strerror(err) +
                           "): a stale socket, or its session is stopping");
    }
    const ssize_t sent = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    if (sent != static_cast<ssize_t>(request.size())) {
      ::close(fd);
      return Status::Error(named + ": cannot send the request (" + std::strerror(errno) + ")");
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long long>(seconds * 1000)) + grace;
    std::string pending, line, why;
    Status result = Status::Error(named + ": no answer");
    while (read_line(fd, &pending, deadline, &line, &why)) {
      const std::size_t space = line.find(' ');
      const std::string word = line.substr(0, space);
      const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
      if (word == "started") {
        if (started) started(rest);
        continue;
      }
      if (word == "ok") {
        if (paths != nullptr) *paths = rest;
        result = {};
      } else {
        result = Status::Error(named + (word == "busy" ? " is busy: " : ": ") + rest);
      }
      why.clear();
      break;
    }
    ::close(fd);
    if (!why.empty()) return Status::Error(named + ": " + why);
    return result;
  }
  if (!refused.empty()) return Status::Error(named + ": " + refused);
  return Status::Error(named + " has no gpuprobe control socket (looked in " + looked +
                       "): it runs no gpuprobe session, or one with control=off");
}

}  // namespace gpuprobe::session
