// Whole-file writes that never leave a half-written file at the final path: bytes go to a temp
// file in the same directory (same filesystem, so rename(2) is atomic), are fsync'ed, then
// renamed over the target. A reader sees either the old file or the complete new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tbs {

struct AtomicWriteResult {
  bool ok = false;
  std::string error;  // user-facing, names the path and the OS reason
};

// Checks up front that `path` could be written: parent directory exists, is a directory and is
// writable, and `path` itself is not a directory. Lets a build fail before hours of work.
AtomicWriteResult checkWritableTarget(std::string const& path);

// Writes `size` bytes as the complete new content of `path`. On failure nothing is left behind
// (the temp file is removed) and the previous content of `path`, if any, is untouched.
AtomicWriteResult atomicWriteFile(std::string const& path, void const* data, size_t size);
AtomicWriteResult atomicWriteFile(std::string const& path, std::string const& data);

// Incremental variant for producers that stream (e.g. an engine serialized in pieces):
// nothing appears at `path` until commit() succeeds; destruction without commit() discards.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(AtomicFile const&) = delete;
  AtomicFile& operator=(AtomicFile const&) = delete;

  // Creates the temp file. False with error() set when the directory is missing/read-only.
  bool open();
  bool write(void const* data, size_t size);
  // fsync + rename + fsync of the directory (so the rename itself survives a power loss).
  bool commit();
  void discard();

  std::string const& error() const { return error_; }
  std::string const& tempPath() const { return tempPath_; }
  int64_t bytesWritten() const { return written_; }

 private:
  bool fail(std::string what, int err);

  std::string path_;
  std::string tempPath_;
  std::string error_;
  int fd_ = -1;
  int64_t written_ = 0;
  bool committed_ = false;
};

}  // namespace tbs
