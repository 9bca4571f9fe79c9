#include "io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "maroon/error.h"
#include "maroon/settings.h"

namespace maroon::io {

namespace {

std::string reason(int err) { return std::strerror(err); }

std::string dir_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Retries on EINTR; a signal handler that returns must not turn into a short write.
bool write_all(int fd, const char* p, size_t n, int& err) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      err = errno;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

uint64_t max_file_bytes() {
  constexpr uint64_t kDefault = uint64_t{16} << 30;
  std::optional<std::string> v_text = setting(SettingId::MAROON_MAX_FILE_BYTES);
  if (!v_text) return kDefault;
  const char* s = v_text->c_str();
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno || *end || s[0] == '-' || v == 0) return kDefault;
  return v;
}

int open_bounded(const std::string& path, const std::string& who, uint64_t max_bytes, uint64_t* size) {
  auto fail = [&](const std::string& what) { return FormatError(who + " '" + path + "': " + what); };
  // O_NONBLOCK: opening a FIFO with no writer must not block; it is refused just below. (On a
  // regular file the flag changes nothing.)
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw fail("cannot open: " + reason(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw fail("cannot stat: " + reason(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw fail(S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  if (*size > max_bytes) {
    ::close(fd);
    throw fail("is " + std::to_string(*size) + " bytes, over the limit of " + std::to_string(max_bytes) +
               " (MAROON_MAX_FILE_BYTES)");
  }
  return fd;
}

BoundedFile::BoundedFile(const std::string& path, std::string who, uint64_t max_bytes)
    : path_(path), who_(std::move(who)) {
  fd_ = open_bounded(path_, who_, max_bytes, &size_);
}

BoundedFile::~BoundedFile() {
  if (fd_ >= 0) ::close(fd_);
}

int BoundedFile::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void BoundedFile::read_at(void* to, size_t n, uint64_t at) const {
  auto* p = static_cast<char*>(to);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, p + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw FormatError(who_ + " '" + path_ + "': " + (r < 0 ? "read failed: " + reason(errno) : "shrank while being read"));
    got += static_cast<size_t>(r);
  }
}

std::string read_file(const std::string& path, const std::string& who, uint64_t max_bytes) {
  BoundedFile f(path, who, max_bytes);
  std::string out(static_cast<size_t>(f.size()), '\0');
  f.read_at(out.data(), out.size(), 0);
  return out;
}

void check_writable(const std::string& path, const std::string& who) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(who + " cannot write '" + path + "': it is a directory");
  std::string dir = dir_of(path);
  if (::stat(dir.c_str(), &st) != 0) throw Error(who + " cannot write '" + path + "': directory '" + dir + "': " + reason(errno));
  if (!S_ISDIR(st.st_mode)) throw Error(who + " cannot write '" + path + "': '" + dir + "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(who + " cannot write '" + path + "': directory '" + dir + "': " + reason(errno));
}

AtomicFile::AtomicFile(std::string path, std::string who) : path_(std::move(path)), who_(std::move(who)) {
  static std::atomic<uint64_t> counter{0};
  tmp_ = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    int err = errno;
    throw Error(who_ + " cannot write '" + path_ + "': " + reason(err));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  throw Error(who_ + " cannot write '" + path_ + "': " + what + (err ? ": " + reason(err) : ""));
}

void AtomicFile::write(const void* data, size_t n) {
  if (fd_ < 0 || committed_) throw Error(who_ + " '" + path_ + "': write after commit or failure");
  if (n < kSmall) {
    if (pending_.size() + n > kGather) flush();
    pending_.append(static_cast<const char*>(data), n);
    return;
  }
  flush();
  int err = 0;
  if (!write_all(fd_, static_cast<const char*>(data), n, err)) fail("write failed", err);
}

void AtomicFile::flush() {
  int err = 0;
  if (!pending_.empty() && !write_all(fd_, pending_.data(), pending_.size(), err)) fail("write failed", err);
  pending_.clear();
}

void AtomicFile::commit() {
  if (fd_ < 0 || committed_) throw Error(who_ + " '" + path_ + "': commit after commit or failure");
  flush();
  if (::fsync(fd_) != 0) fail("fsync failed", errno);
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail("close failed", errno);
  }
  fd_ = -1;
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename failed", errno);
  committed_ = true;
  // The rename is durable only once the directory entry is: fsync the directory (best effort;
  // some filesystems refuse fsync on a directory, and the file itself is already complete).
  int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& who) {
  AtomicFile f(path, who);
  f.write(bytes);
  f.commit();
}

}  // namespace maroon::io
