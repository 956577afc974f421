// Whole-file writes that never leave a half-written file at the final path: bytes go to a temp
// file in the same directory (same filesystem, so rename(2) is atomic), are fsync'ed, then
// renamed over the target. A reader sees either the old file or the complete new one.
//
// Nothing is replaced that is not a regular file: a target that is a device node, a FIFO, a
// socket or a directory is refused, and a symbolic link is written through (the temp file goes
// into the folder of the link's target and is renamed over the target; the link stays a link).
// The folder written into must be owned by the user (or root) and not writable by others unless
// it has the sticky bit, so that nobody else can swap the file after it is written. These checks
// are made up front (checkWritableTarget) and again on the opened folder at the moment of
// creating and renaming (openat/fstatat relative to one directory descriptor, O_NOFOLLOW, and a
// rename that refuses to replace what appeared meanwhile), so there is no window between check
// and use that another user could step into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tbs {

struct AtomicWriteResult {
  bool ok = false;
  std::string error;   // user-facing, names the path and the OS reason
  std::string target;  // on success of checkWritableTarget: the file that will be replaced (a link resolved)
};

// Checks up front that `path` could be written: the file (after following a symbolic link) is
// absent or a regular file, its folder exists, is a directory the user may trust (see above) and
// is writable. Lets a build fail before hours of work.
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

  // Creates the temp file. False with error() set when the target or its folder is refused.
  bool open();
  bool write(void const* data, size_t size);
  // fsync + rename + fsync of the directory (so the rename itself survives a power loss).
  bool commit();
  void discard();

  std::string const& error() const { return error_; }
  std::string tempPath() const { return tempName_.empty() ? std::string() : dir_ + "/" + tempName_; }
  // The file written: `path`, or the target of `path` when it is a symbolic link.
  std::string const& targetPath() const { return target_; }
  int64_t bytesWritten() const { return written_; }

 private:
  bool fail(std::string what, int err);

  std::string path_;
  std::string target_;
  std::string dir_;
  std::string name_;
  std::string tempName_;
  std::string error_;
  int dirFd_ = -1;
  int fd_ = -1;
  int64_t written_ = 0;
  bool committed_ = false;
};

}  // namespace tbs
