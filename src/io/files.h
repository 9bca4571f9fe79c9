// Files that are never half-written and inputs that are never unbounded: every file Maroon
// writes (weights, run records, checkpoints, traces, downloaded data) goes through AtomicFile,
// and every file it reads through read_file. SQLite's rule: a crash, a full disk, a signal or a
// file-size limit at any moment leaves either the old file or the new one, never a mix.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace maroon::io {

// The default cap on a file read whole into memory (weights, records, checkpoints): 16 GiB.
// MAROON_MAX_FILE_BYTES overrides it (see the settings table in the README).
uint64_t max_file_bytes();

// Reads a whole regular file of at most `max_bytes` bytes. Refuses with maroon::FormatError,
// naming `who` and the path: a missing or unreadable file, a directory, a FIFO, a device or
// anything else that is not a regular file (so /dev/zero and a FIFO never hang or exhaust
// memory), and a file larger than the cap.
std::string read_file(const std::string& path, const std::string& who, uint64_t max_bytes = max_file_bytes());

// Opens `path` for reading with read_file's checks (a regular file of at most `max_bytes`,
// refused with the same FormatError otherwise), for a reader that streams rather than holding
// the bytes (the ONNX loader). Returns the descriptor, which the caller closes; *size receives
// the file's size.
int open_bounded(const std::string& path, const std::string& who, uint64_t max_bytes, uint64_t* size);

// A file opened with open_bounded's checks, read at offsets, closed when it goes out of scope:
// the one place for the pread loop (retried on EINTR and short reads) that read_file, the IDX
// loader, file digests and ONNX external data share. read_at refuses with maroon::FormatError
// naming `who` and the path: "read failed: <reason>", or "shrank while being read" when the file
// ends before the bytes asked for (it changed size since it was opened).
class BoundedFile {
 public:
  BoundedFile(const std::string& path, std::string who, uint64_t max_bytes = max_file_bytes());
  ~BoundedFile();
  BoundedFile(const BoundedFile&) = delete;
  BoundedFile& operator=(const BoundedFile&) = delete;

  uint64_t size() const { return size_; }
  void read_at(void* to, size_t n, uint64_t at) const;
  // Hands the descriptor to a caller that closes it (the ONNX loader's protobuf stream).
  int release();

 private:
  std::string path_, who_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Throws maroon::Error naming `who` and the path unless a file could be created at `path` now:
// its directory exists and is writable, and `path` is not a directory. Called before long work
// starts, so a read-only or missing output location is reported before training, not after.
void check_writable(const std::string& path, const std::string& who);

// A file written atomically: bytes go to a temporary file in the same directory
// ("<path>.tmp-<pid>-<n>"), and commit() flushes it (fsync), renames it over `path` and fsyncs
// the directory. Until commit() succeeds `path` is untouched; destroying an AtomicFile that was
// not committed (an exception, an early return) removes the temporary file. Errors (open, a
// short write, ENOSPC, EFBIG, EIO) throw maroon::Error naming `who`, the path and the reason.
// Small writes (under kSmall bytes) are gathered in memory (at most kGather) and go to the
// file together: a checkpoint's strided tensors arrive a row at a time (maroon train's step-0
// state was 47K writes of 12 bytes, on the thread beside the first step). A write error may then
// surface at a later write() or at commit(); either way `path` stays untouched.
class AtomicFile {
 public:
  AtomicFile(std::string path, std::string who);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t n);
  void write(std::string_view s) { write(s.data(), s.size()); }
  void commit();
  const std::string& path() const { return path_; }

 private:
  static constexpr size_t kSmall = size_t{64} << 10, kGather = size_t{1} << 20;
  [[noreturn]] void fail(const std::string& what, int err);
  void flush();
  std::string path_, tmp_, who_;
  std::string pending_;  // gathered small writes, not yet in the file
  int fd_ = -1;
  bool committed_ = false;
};

// write_file_atomic(p, bytes, who): AtomicFile f(p, who); f.write(bytes); f.commit().
void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& who);

}  // namespace maroon::io
