// A timing-cache file shared by any number of builds, in this process and in others, for any
// backend: the store knows files, locks and sidecars; the backend knows its format and supplies
// a merge callback (the simulated backend parses its own entries; the TensorRT adapter would
// createTimingCache() + combine()).
//
// Reading never blocks and never reads without bound: the file is opened O_NONBLOCK (a FIFO at
// the path would otherwise hang open(2) until a writer appears), must be a regular file, and is
// read only up to a size cap.
//
// Saving protocol (why several processes can share one file without losing entries):
//   1. Take an exclusive flock on "<cache>.lock" (FileLock), waiting at most lockTimeoutMs.
//      Every saver of this path, in any process, goes through the same lock file, so steps 2-4
//      never interleave between savers.
//   2. Re-read the cache as it is now (other builds may have saved since this one loaded it),
//      and every pending sidecar "<cache>.pending-<pid>-<n>".
//   3. merge(current, pending..., mine) -> new content. The merge may refuse (the file is not a
//      cache of this backend), and the current file may be unusable (it became a FIFO, grew past
//      the cap): then nothing is written, the file stays as it is, and this build's entries go
//      to a sidecar like in step 6, so that nothing measured is lost.
//   4. Write the new content atomically (temp file + fsync + rename), so a reader without the
//      lock sees the old file or the new one, never a mix. Only then delete the sidecars that
//      were merged. A crash between the rename and the deletes leaves sidecars whose entries are
//      already in the cache; merging them again is harmless (a merge is a union).
//   5. Release the lock.
//   6. When the lock cannot be had in time (another process holds it, maybe stuck), this build
//      does not give up its entries: it writes its own contribution atomically to a new sidecar
//      "<cache>.pending-<pid>-<n>" and reports that path. A sidecar name is only ever created by
//      the process whose pid it carries, never rewritten, and (being renamed into place) never
//      seen half-written, so a saver in step 2 reads either all of it or none of it, and only
//      deletes what it read. The next save that gets the lock folds it in (step 2).
// A sidecar that the merge cannot use (damaged, another backend's format) is renamed to
// "<sidecar>.rejected" and kept, so it is neither lost nor retried on every build.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tbs {

// Two GiB: far above any real timing cache (NVIDIA's large models produce tens of MiB), low
// enough that a wrong path (a disk image, a dataset) fails with a clear error instead of
// exhausting memory.
constexpr int64_t kMaxCacheFileBytes = int64_t{2} << 30;

struct CacheFileRead {
  enum class State : uint8_t { kAbsent = 0, kRead, kError };
  State state = State::kAbsent;
  std::string bytes;     // kRead: the whole file (may be empty)
  std::string error;     // kError: names the path and the reason (not a regular file, too large...)
  bool symlink = false;  // the path itself is a symbolic link (to `bytes`' file)
};

// Reads a cache (or sidecar) file: open(O_RDONLY|O_NONBLOCK) -> fstat must say S_ISREG -> clear
// O_NONBLOCK -> read at most maxBytes. A missing file is kAbsent; a dangling symlink, a FIFO,
// socket, device or directory, a file above maxBytes, or an OS error is kError.
CacheFileRead readCacheFile(std::string const& path, int64_t maxBytes = kMaxCacheFileBytes);

// Pending sidecars of `cachePath` ("<cache>.pending-<pid>-<n>"), full paths, sorted by name.
std::vector<std::string> listPendingCacheFiles(std::string const& cachePath);

// What the merge callback sees during a save (all under the lock).
struct CacheMergeInput {
  bool currentExists = false;
  std::string const* current = nullptr;               // the cache file now ("" when absent)
  std::vector<std::string> const* pending = nullptr;  // sidecar contents, in listPending order
  std::string const* mine = nullptr;                  // this build's serialized cache
};

struct CacheMergeResult {
  // The current file is not a cache of this backend: nothing is written, the file is left as it
  // is, and the save reports `error`.
  bool refuse = false;
  std::string error;
  // The current file is this backend's cache but damaged: the store keeps it as
  // "<cache>.corrupt" (or ".corrupt-<n>" if taken) before replacing it, so nothing is destroyed.
  bool keepCurrentCopy = false;
  std::string bytes;     // new content of the cache file (ignored when refuse)
  int64_t entries = -1;  // entries in `bytes`; -1 when the backend cannot count them
  // One flag per pending sidecar: false = it could not be used (kept as "<sidecar>.rejected").
  // Shorter than `pending` means the missing ones were merged.
  std::vector<bool> pendingMerged;
  std::string warning;  // anything the user should hear (joined into the save's warning)
};

using CacheMerge = std::function<CacheMergeResult(CacheMergeInput const&)>;

struct CacheSaveOptions {
  int lockTimeoutMs = 30000;
  int64_t maxBytes = kMaxCacheFileBytes;
  // False when `mine` adds nothing (a warm build that measured no tactic): the save still folds
  // pending sidecars in when it gets the lock, but writes no sidecar of its own, and a lock not
  // had is no warning (kDeferred with an empty deferredPath and warning).
  bool mineHasEntries = true;
};

struct CacheSaveResult {
  enum class Outcome : uint8_t {
    kSaved = 0,  // the cache file now holds the merge
    kDeferred,   // the file could not be updated now (lock not had in time, write failed): this
                 // build's entries are in deferredPath
    kRefused,    // the file is not a usable cache (error says why) and was left untouched; this
                 // build's entries are in deferredPath unless that write failed too (see warning)
    kFailed,     // nothing could be kept (error says why; e.g. the directory is not writable)
  };
  Outcome outcome = Outcome::kFailed;
  int64_t entriesAfter = -1;    // kSaved: the merge's `entries`
  int64_t fileBytes = -1;       // kSaved: size of the new cache file
  int32_t pendingMerged = 0;    // sidecars folded in and deleted
  std::string deferredPath;     // kDeferred/kRefused: the sidecar holding this build's entries
  std::string corruptCopyPath;  // where a damaged cache was kept, when it was
  std::string warning;          // user-facing notes (deferral, rejected sidecars, corrupt copy)
  std::string error;            // kRefused/kFailed: why the cache file was not updated
};

// Saves `mine` into `cachePath` by the protocol above. Never throws.
CacheSaveResult saveCache(std::string const& cachePath, std::string const& mine, CacheMerge const& merge,
                          CacheSaveOptions const& options = {});

// Lock timeout from the environment variable TBS_TIMING_CACHE_LOCK_TIMEOUT_MS (non-negative
// integer) or `fallbackMs`. Lets tests and operators shorten the 30 s default without a rebuild.
int cacheLockTimeoutMs(int fallbackMs);

}  // namespace tbs
