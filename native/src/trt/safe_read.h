// Reads a whole file that the user named (a timing cache) without ever blocking on it: the file
// is opened with O_NONBLOCK and must be a regular file by fstat on that same descriptor, so a
// FIFO or a device at the path fails at once instead of hanging a build, and no check-then-open
// race can swap the file in between.
#pragma once

#include <cstdint>
#include <string>

namespace tbs::trt {

enum class ReadStatus : uint8_t { kOk = 0, kMissing, kError };

// Whole file into `bytes`. A missing file is kMissing (not an error); anything else that fails
// (not a regular file, permission, I/O) is kError with `error` naming the path and the reason.
ReadStatus readRegularFile(std::string const& path, std::string& bytes, std::string& error);

}  // namespace tbs::trt
