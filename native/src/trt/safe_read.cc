#include "safe_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tbs::trt {

ReadStatus readRegularFile(std::string const& path, std::string& bytes, std::string& error) {
  bytes.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return ReadStatus::kMissing;
    error = "cannot open " + path + " (" + std::strerror(errno) + ")";
    return ReadStatus::kError;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = "cannot stat " + path + " (" + std::strerror(errno) + ")";
    ::close(fd);
    return ReadStatus::kError;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + " is not a regular file";
    ::close(fd);
    return ReadStatus::kError;
  }
  bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      bytes.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      error = "error while reading " + path + " (" + std::strerror(errno) + ")";
      ::close(fd);
      bytes.clear();
      return ReadStatus::kError;
    }
  }
  ::close(fd);
  return ReadStatus::kOk;
}

}  // namespace tbs::trt
