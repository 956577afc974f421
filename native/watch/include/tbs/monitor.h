// tbs/monitor.h — a TensorRT progress monitor that streams a build to TRT Build Studio.
//
//   #include "tbs/monitor.h"
//   tbs::StudioMonitor monitor;                 // or tbs::StudioMonitor monitor(&myOwnMonitor);
//   config->setProgressMonitor(&monitor);
//
// Header-only (Linux, C++17). Compiles against the NvInfer.h of TensorRT 10.x or 11.x
// (IProgressMonitor is the same in both). The protocol is docs/watch.md ("probe protocol").
//
// Where the build goes (decided once per process, by the first monitor):
//   1. TBS_WATCH_SOCKET (set by `trt-build-studio watch`), else
//   2. the probe socket of a running studio, read from its discovery file
//      ($XDG_RUNTIME_DIR/trt-build-studio/studio-<pid>.json; folder and file must be ours and
//      private, the studio's pid alive), else
//   3. the terminal: a live tree when stdout is a TTY, plain lines when it is not.
//
// Why it is built this way: TensorRT calls the monitor from its builder threads thousands of
// times per build, so a callback only appends to an in-memory batch under a short lock (a step
// overwrites the pending step of its phase: steps are coalesced) and reads one atomic flag; a
// flusher thread formats JSON, writes, and reads `cancel` lines from the sink. Nothing here throws
// into the program: a failure of its own prints one warning to stderr and the build goes on.
#pragma once

#include <NvInfer.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

namespace tbs {
namespace watch_detail {

inline double nowMs() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

inline void appendJsonString(std::string& out, char const* s) {
  out += '"';
  for (; s != nullptr && *s != '\0'; ++s) {
    auto c = static_cast<unsigned char>(*s);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}
inline std::string jsonString(std::string const& s) {
  std::string out;
  appendJsonString(out, s.c_str());
  return out;
}
// "[+   1.234s] ", the terminal lines' time stamp (seconds since the build began).
inline std::string stamp(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "[+%8.3fs] ", ms / 1000.0);
  return buf;
}
inline std::string jsonNumber(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// One warning per process for the probe's own failures (docs/watch.md: "one warning").
inline std::atomic<bool>& warnedFlag() {
  static std::atomic<bool> warned{false};
  return warned;
}
inline void warnOnce(std::string const& message) noexcept {
  if (warnedFlag().exchange(true)) return;
  std::string line = "trt-build-studio: " + message + " (the build goes on unwatched)\n";
  ssize_t ignored = ::write(2, line.data(), line.size());
  (void)ignored;
}

inline std::string readFile(char const* path) {
  std::string out;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// The value of "key" in a flat JSON object: a string (unescaped for the simple cases the
// discovery file holds) or a number, as text; empty when absent.
inline std::string jsonField(std::string const& text, char const* key) {
  std::string k = std::string("\"") + key + "\"";
  size_t at = text.find(k);
  if (at == std::string::npos) return {};
  at = text.find(':', at + k.size());
  if (at == std::string::npos) return {};
  ++at;
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r')) ++at;
  if (at >= text.size()) return {};
  if (text[at] == '"') {
    std::string v;
    for (size_t i = at + 1; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        v += text[++i];
      } else if (text[i] == '"') {
        return v;
      } else {
        v += text[i];
      }
    }
    return {};
  }
  size_t end = at;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-' || text[end] == '.')) ++end;
  return text.substr(at, end - at);
}

// A folder or file of the discovery area is trusted only when it is ours, not a link, and
// private (docs/watch.md "Finding the studio").
inline bool privateAndOurs(char const* path, bool wantDir, std::string* why) {
  struct stat st{};
  if (::lstat(path, &st) != 0) {
    if (why) *why = std::string(path) + ": " + std::strerror(errno);
    return false;
  }
  if (wantDir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    if (why) *why = std::string(path) + (wantDir ? " is not a folder" : " is not a regular file");
    return false;
  }
  if (st.st_uid != ::getuid()) {
    if (why) *why = std::string(path) + " belongs to another user";
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    if (why) *why = std::string(path) + " is open to other users";
    return false;
  }
  return true;
}

// The studio's probe socket from its discovery file, or empty. `why` says why a file that was
// there was refused (empty when there was simply no studio).
inline std::string discoverStudioSocket(std::string* why) {
  std::string dir;
  if (char const* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0') {
    dir = std::string(xdg) + "/trt-build-studio";
  } else {
    dir = "/tmp/trt-build-studio-" + std::to_string(::getuid());
  }
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return {};
  if (!privateAndOurs(dir.c_str(), true, why)) return {};
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return {};
  std::string best;
  time_t bestTime = 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("studio-", 0) != 0 || name.size() < 12 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    std::string path = dir + "/" + name;
    if (!privateAndOurs(path.c_str(), false, why)) continue;
    std::string text = readFile(path.c_str());
    long pid = std::atol(jsonField(text, "pid").c_str());
    std::string sock = jsonField(text, "probeSocket");
    // The socket must sit in the same private folder: that folder's mode is its access control.
    if (pid <= 0 || sock.empty() || sock.rfind(dir + "/", 0) != 0 || sock.find("/..") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) continue;
    struct stat fst{};
    ::lstat(path.c_str(), &fst);
    if (best.empty() || fst.st_mtime > bestTime) {
      best = sock;
      bestTime = fst.st_mtime;
    }
  }
  ::closedir(d);
  return best;
}

inline int connectUnix(std::string const& path, std::string* why) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    *why = "socket path too long: " + path;
    return -1;
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = std::string("socket(): ") + std::strerror(errno);
    return -1;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *why = "cannot connect to " + path + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

inline std::string helloLine(char const* probe, int32_t version) {
  std::string argv = "[";
  std::string cmd = readFile("/proc/self/cmdline");
  bool first = true;
  for (size_t at = 0; at < cmd.size();) {
    size_t end = cmd.find('\0', at);
    if (end == std::string::npos) end = cmd.size();
    if (!first) argv += ',';
    first = false;
    argv += jsonString(cmd.substr(at, end - at));
    at = end + 1;
  }
  argv += ']';
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  std::string cwd = ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string();
  std::string line = "{\"type\":\"hello\",\"v\":1,\"probe\":" + jsonString(probe) + ",\"pid\":" + std::to_string(::getpid()) +
                     ",\"ppid\":" + std::to_string(::getppid()) + ",\"argv\":" + argv;
  if (!exe.empty()) line += ",\"exe\":" + jsonString(exe);
  if (!cwd.empty()) line += ",\"cwd\":" + jsonString(cwd);
  // The library's version, not the headers': the program may run on a newer libnvinfer.
  using VersionFn = int32_t (*)();
  if (version <= 0) {
    if (auto fn = reinterpret_cast<VersionFn>(::dlsym(RTLD_DEFAULT, "getInferLibVersion")); fn != nullptr) version = fn();
  }
  if (version > 0) {
    int32_t v = version;
    line += ",\"trtVersion\":\"" + std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100) + "\"";
  }
  return line + "}";
}

// What a callback leaves for the flusher. Begin/End/Text carry their line already made (they
// come from the program's thread around a build, or once per build).
struct Record {
  enum Kind : uint8_t { kStart, kStep, kFinish, kBegin, kEnd } kind;
  int build;
  int32_t n;  // steps (start) or step (step)
  double t;
  std::string name;
  std::string parent;
  bool hasParent = false;
  std::string json;   // kBegin/kEnd: the whole NDJSON line (without newline)
  std::string human;  // kBegin/kEnd: the terminal line
};

struct OpenPhase {
  std::string name;
  size_t pendingStep = SIZE_MAX;  // index in the current batch of this phase's step record
  uint64_t batch = 0;             // the batch that index belongs to
};

// The one connection of this process (docs/watch.md: "one connection per process"), its batch
// and its flusher thread. Leaked on purpose: builds may run while static objects are destroyed.
class Channel {
 public:
  enum class Sink { kNone, kSocket, kTty, kPlain };

  struct Options {
    char const* probe = "cpp";
    bool terminalFallback = true;  // the drop-in draws in the terminal; the shim stays silent
    int32_t libVersion = 0;        // getInferLibVersion() when the caller knows it (else looked up)
  };

  // The process's channel; a forked child gets its own (its parent's flusher is not running in it).
  static Channel* get(Options const& o) noexcept {
    static std::mutex mu;
    static Channel* current = nullptr;
    std::lock_guard<std::mutex> lock(mu);
    if (current == nullptr || current->pid_ != ::getpid()) {
      try {
        current = new Channel(o);
      } catch (...) {
        current = nullptr;
        warnOnce("the watch probe could not start");
      }
    }
    return current;
  }

  Sink sink() const noexcept { return sink_.load(); }
  std::mutex& mutex() noexcept { return mu_; }
  uint64_t batchNumber() const noexcept { return batch_; }
  std::vector<Record>& records() noexcept { return records_; }

  int beginBuild(std::atomic<bool>* cancelFlag) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    int b = ++builds_;
    try {
      active_.push_back({b, cancelFlag});
    } catch (...) {
    }
    return b;
  }
  void endBuild(int build) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < active_.size(); ++i) {
      if (active_[i].build == build) {
        active_.erase(active_.begin() + static_cast<long>(i));
        break;
      }
    }
  }
  void push(Record&& r) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    pushLocked(std::move(r));
  }
  void pushLocked(Record&& r) noexcept {
    try {
      records_.push_back(std::move(r));
    } catch (...) {
    }
  }
  // Waits (bounded) until everything pushed so far was written: for build.end, so that a program
  // exiting right after its build still reports it.
  void flushNow(int timeoutMs) noexcept {
    std::unique_lock<std::mutex> lock(mu_);
    uint64_t want = batch_ + 1;
    wake_ = true;
    cv_.notify_all();
    cv_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return written_ >= want || stopped_; });
  }

 private:
  struct Active {
    int build;
    std::atomic<bool>* cancel;
  };

  explicit Channel(Options const& o) : pid_(::getpid()) {
    std::string why;
    std::string path;
    if (char const* env = std::getenv("TBS_WATCH_SOCKET"); env != nullptr && *env != '\0') {
      path = env;
    } else {
      path = discoverStudioSocket(&why);
      if (path.empty() && !why.empty()) warnOnce("studio discovery file refused: " + why);
    }
    if (!path.empty()) {
      fd_ = connectUnix(path, &why);
      if (fd_ < 0) warnOnce("watch sink unreachable: " + why);
    }
    if (fd_ >= 0) {
      sink_ = Sink::kSocket;
      outbuf_ = helloLine(o.probe, o.libVersion) + "\n";
    } else if (o.terminalFallback) {
      sink_ = ::isatty(1) ? Sink::kTty : Sink::kPlain;
    } else {
      sink_ = Sink::kNone;
    }
    if (sink_ == Sink::kNone) return;  // nothing to write to: the monitors only forward
    thread_ = std::thread([this] { run(); });
    thread_.detach();
    std::atexit(&Channel::atExit);
    exitChannel() = this;
  }

  static Channel*& exitChannel() {
    static Channel* c = nullptr;
    return c;
  }
  // Drains the last batch at exit (not after fork: the child's channel is a new one).
  static void atExit() {
    Channel* c = exitChannel();
    if (c == nullptr || c->pid_ != ::getpid()) return;
    std::unique_lock<std::mutex> lock(c->mu_);
    c->stop_ = true;
    c->cv_.notify_all();
    c->cv_.wait_for(lock, std::chrono::seconds(2), [&] { return c->stopped_; });
  }

  void run() {
    std::vector<Record> batch;
    std::string inbuf;
    for (;;) {
      bool stopping;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return wake_ || stop_; });
        wake_ = false;
        stopping = stop_;
        batch.swap(records_);
        ++batch_;
      }
      if (sink_ == Sink::kSocket) readCancels(inbuf);
      try {
        write(batch);
      } catch (...) {
        warnOnce("the watch probe failed to write");
      }
      batch.clear();
      {
        std::lock_guard<std::mutex> lock(mu_);
        written_ = batch_;
        if (stopping) stopped_ = true;
      }
      cv_.notify_all();
      if (stopping) return;
    }
  }

  void readCancels(std::string& inbuf) {
    char buf[1024];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        inbuf.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) lost("the watch sink closed the connection");
      break;
    }
    for (size_t nl; (nl = inbuf.find('\n')) != std::string::npos;) {
      std::string line = inbuf.substr(0, nl);
      inbuf.erase(0, nl + 1);
      if (jsonField(line, "type") != "cancel") continue;
      std::string which = jsonField(line, "build");
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& a : active_) {
        if (which == "*" || which == std::to_string(a.build)) a.cancel->store(true);
      }
    }
  }

  void lost(char const* why) {
    if (sink_ != Sink::kSocket) return;
    sink_ = Sink::kNone;
    warnOnce(why);
  }

  void sendAll(std::string const& s) {
    size_t at = 0;
    while (at < s.size() && sink_ == Sink::kSocket) {
      ssize_t n = ::send(fd_, s.data() + at, s.size() - at, MSG_NOSIGNAL);
      if (n > 0) {
        at += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        pollfd p{fd_, POLLOUT, 0};
        ::poll(&p, 1, 100);
      } else {
        lost("the watch sink went away");
      }
    }
  }

  void write(std::vector<Record> const& batch) {
    Sink s = sink_;
    if (s == Sink::kSocket) {
      for (auto const& r : batch) outbuf_ += json(r) + "\n";
      if (!outbuf_.empty()) sendAll(outbuf_);
      outbuf_.clear();
    } else if (s == Sink::kPlain || s == Sink::kTty) {
      terminal(batch, s == Sink::kTty);
    }
  }

  static std::string json(Record const& r) {
    std::string b = ",\"build\":" + std::to_string(r.build) + ",\"t\":" + jsonNumber(r.t) + ",\"name\":" + jsonString(r.name);
    switch (r.kind) {
      case Record::kStart:
        return "{\"type\":\"phase.start\"" + b + ",\"parent\":" + (r.hasParent ? jsonString(r.parent) : std::string("null")) +
               ",\"steps\":" + std::to_string(r.n) + "}";
      case Record::kStep:
        return "{\"type\":\"phase.step\"" + b + ",\"step\":" + std::to_string(r.n) + "}";
      case Record::kFinish:
        return "{\"type\":\"phase.finish\"" + b + "}";
      default:
        return r.json;
    }
  }

  // --- the terminal (no sink): a live tree on a TTY, plain lines otherwise ---
  struct TermPhase {
    int build;
    std::string name;
    int depth;
    int32_t steps;
    int32_t done;
  };
  static void out(std::string const& s) {
    size_t at = 0;
    while (at < s.size()) {
      ssize_t n = ::write(1, s.data() + at, s.size() - at);
      if (n <= 0 && errno != EINTR) return;
      if (n > 0) at += static_cast<size_t>(n);
    }
  }
  TermPhase* findOpen(int build, std::string const& name) {
    for (size_t i = open_.size(); i-- > 0;) {
      if (open_[i].build == build && open_[i].name == name) return &open_[i];
    }
    return nullptr;
  }
  std::string pathOf(TermPhase const& p) {
    // The open ancestors of `p` are the earlier entries of smaller depth, latest first.
    std::vector<std::string const*> names{&p.name};
    int depth = p.depth;
    for (size_t i = static_cast<size_t>(&p - open_.data()); i-- > 0 && depth > 0;) {
      if (open_[i].build == p.build && open_[i].depth == depth - 1) {
        names.push_back(&open_[i].name);
        --depth;
      }
    }
    std::string s;
    for (size_t i = names.size(); i-- > 0;) s += *names[i] + (i ? " > " : "");
    return s;
  }
  void terminal(std::vector<Record> const& batch, bool tty) {
    std::string text;
    for (auto const& r : batch) {
      std::string stamp = watch_detail::stamp(r.t);
      switch (r.kind) {
        case Record::kStart: {
          TermPhase* parent = r.hasParent ? findOpen(r.build, r.parent) : nullptr;
          open_.push_back({r.build, r.name, parent ? parent->depth + 1 : 0, r.n, 0});
          if (!tty) text += stamp + pathOf(open_.back()) + "  start 0/" + std::to_string(r.n) + "\n";
          break;
        }
        case Record::kStep:
          if (TermPhase* p = findOpen(r.build, r.name)) p->done = r.n + 1;  // step k done means k+1 of n
          break;
        case Record::kFinish:
          if (TermPhase* p = findOpen(r.build, r.name)) {
            if (!tty) {
              text += stamp + pathOf(*p) + (p->done >= p->steps ? "  done " : "  finished early at ") + std::to_string(p->done) + "/" +
                      std::to_string(p->steps) + "\n";
            }
            open_.erase(open_.begin() + (p - open_.data()));
          }
          break;
        default:
          if (!tty) text += r.human + "\n";
      }
    }
    if (!tty) {
      out(text);
      return;
    }
    // Redraw the open phases in place of the previous drawing; endings stay above it.
    std::string draw = drawn_ > 0 ? "\x1b[" + std::to_string(drawn_) + "A\r\x1b[J" : std::string("\r\x1b[J");
    for (auto const& r : batch) {
      if (r.kind == Record::kBegin || r.kind == Record::kEnd) draw += r.human + "\n";
    }
    drawn_ = 0;
    for (auto const& p : open_) {
      int width = 20;
      int fill = p.steps > 0 ? static_cast<int>(static_cast<int64_t>(width) * p.done / p.steps) : 0;
      draw += std::string(static_cast<size_t>(p.depth) * 2, ' ') + "[" + std::string(static_cast<size_t>(fill), '#') +
              std::string(static_cast<size_t>(width - fill), '.') + "] " + p.name + " " + std::to_string(p.done) + "/" +
              std::to_string(p.steps) + "\n";
      ++drawn_;
    }
    out(draw);
  }

  pid_t pid_;
  std::atomic<Sink> sink_{Sink::kNone};
  int fd_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;
  bool stop_ = false;
  bool stopped_ = false;
  uint64_t batch_ = 1;
  uint64_t written_ = 0;
  int builds_ = 0;
  std::vector<Record> records_;
  std::vector<Active> active_;
  std::string outbuf_;
  std::vector<TermPhase> open_;  // flusher thread only
  int drawn_ = 0;                // flusher thread only
};

}  // namespace watch_detail

// The progress monitor. Every callback is forwarded to `forwardTo` first (when given), whose
// `false` from stepComplete still cancels; the studio's Stop (a `cancel` line) cancels too.
//
// Builds: the LD_PRELOAD shim marks each build with beginBuild/endBuild (it knows the call and
// its result). Used on its own, a build is the span from the first phaseStart to the phaseFinish
// that closes the last open phase, and its end says `"result": null` (the monitor never sees what
// buildSerializedNetwork returned); call endBuild yourself to report it.
class StudioMonitor : public nvinfer1::IProgressMonitor {
 public:
  using Options = watch_detail::Channel::Options;

  explicit StudioMonitor(nvinfer1::IProgressMonitor* forwardTo = nullptr) noexcept : StudioMonitor(forwardTo, Options{}) {}
  StudioMonitor(nvinfer1::IProgressMonitor* forwardTo, Options const& options) noexcept
      : forward_(forwardTo), channel_(watch_detail::Channel::get(options)) {
    if (channel_ != nullptr && channel_->sink() == watch_detail::Channel::Sink::kNone) channel_ = nullptr;
  }
  StudioMonitor(StudioMonitor const&) = delete;
  StudioMonitor& operator=(StudioMonitor const&) = delete;
  ~StudioMonitor() noexcept override {
    if (build_ != 0) endBuild(nullptr, -1, nullptr);
  }

  // True when something streams or draws this monitor's builds (false: it only forwards).
  bool watching() const noexcept { return channel_ != nullptr; }
  bool cancelRequested() const noexcept { return cancel_.load(std::memory_order_relaxed); }
  // The build number of the open build (0: none).
  int build() const noexcept { return build_.load(); }

  // Opens a build; `fields` are extra JSON members of build.begin without braces, e.g.
  // "\"api\":\"IBuilder::buildSerializedNetwork\",\"chained\":false".
  void beginBuild(std::string const& fields) noexcept {
    if (channel_ == nullptr) return;
    if (build_ != 0) endBuild(nullptr, -1, nullptr);
    explicit_ = true;
    open(fields);
  }
  // Closes the open build. result: "engine", "null", "exception" or nullptr (not known);
  // bytes < 0: not known.
  void endBuild(char const* result, long long bytes, char const* error) noexcept { end(result, bytes, error, true); }

 private:
  void end(char const* result, long long bytes, char const* error, bool wait) noexcept {
    if (channel_ == nullptr || build_ == 0) return;
    try {
      watch_detail::Record r{watch_detail::Record::kEnd, build_, 0, watch_detail::nowMs() - t0_, {}, {}, false, {}, {}};
      bool cancelled = cancel_.load() || forwardRefused_.load();
      r.json = "{\"type\":\"build.end\",\"build\":" + std::to_string(build_) + ",\"t\":" + watch_detail::jsonNumber(r.t) +
               ",\"result\":" + (result ? watch_detail::jsonString(result) : std::string("null")) +
               (bytes >= 0 ? ",\"bytes\":" + std::to_string(bytes) : std::string()) + ",\"cancelled\":" + (cancelled ? "true" : "false") +
               (error ? ",\"error\":" + watch_detail::jsonString(error) : std::string()) + "}";
      r.human = watch_detail::stamp(r.t) + "build " + std::to_string(build_) + " ended: " +
                (cancelled ? std::string("cancelled")
                 : result  ? std::string(result)
                           : std::string("result not known")) +
                (bytes >= 0 ? ", " + std::to_string(bytes) + " bytes" : std::string());
      channel_->push(std::move(r));
    } catch (...) {
    }
    channel_->endBuild(build_);
    {
      std::lock_guard<std::mutex> lock(channel_->mutex());
      open_.clear();
      build_ = 0;
    }
    // Waiting for the write is for the program's thread after a build, never a builder thread.
    if (wait) channel_->flushNow(2000);
  }

 public:
  void phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept override {
    if (forward_ != nullptr) forward_->phaseStart(phaseName, parentPhase, nbSteps);
    if (channel_ == nullptr) return;
    if (build_ == 0 && !explicit_)
      open("\"api\":\"IProgressMonitor (tbs::StudioMonitor)\",\"chained\":" + std::string(forward_ ? "true" : "false"));
    try {
      std::lock_guard<std::mutex> lock(channel_->mutex());
      if (build_ == 0) return;
      watch_detail::Record r{
          watch_detail::Record::kStart, build_, nbSteps, watch_detail::nowMs() - t0_, phaseName ? phaseName : "", {}, false, {}, {}};
      if (parentPhase != nullptr) {
        r.parent = parentPhase;
        r.hasParent = true;
      }
      channel_->pushLocked(std::move(r));
      open_.push_back({phaseName ? phaseName : "", SIZE_MAX, 0});
    } catch (...) {
    }
  }

  bool stepComplete(char const* phaseName, int32_t step) noexcept override {
    bool keep = true;
    if (forward_ != nullptr && !forward_->stepComplete(phaseName, step)) {
      keep = false;
      forwardRefused_.store(true, std::memory_order_relaxed);
    }
    if (channel_ == nullptr) return keep;
    try {
      std::lock_guard<std::mutex> lock(channel_->mutex());
      if (build_ != 0) {
        auto& records = channel_->records();
        uint64_t batch = channel_->batchNumber();
        watch_detail::OpenPhase* p = find(phaseName);
        if (p != nullptr && p->batch == batch && p->pendingStep < records.size()) {
          records[p->pendingStep].n = step;  // coalesced: only the latest step of a phase per flush
          records[p->pendingStep].t = watch_detail::nowMs() - t0_;
        } else {
          channel_->pushLocked(
              {watch_detail::Record::kStep, build_, step, watch_detail::nowMs() - t0_, phaseName ? phaseName : "", {}, false, {}, {}});
          if (p != nullptr) {
            p->pendingStep = records.size() - 1;
            p->batch = batch;
          }
        }
      }
    } catch (...) {
    }
    return keep && !cancel_.load(std::memory_order_relaxed);
  }

  void phaseFinish(char const* phaseName) noexcept override {
    if (forward_ != nullptr) forward_->phaseFinish(phaseName);
    if (channel_ == nullptr) return;
    bool last = false;
    try {
      std::lock_guard<std::mutex> lock(channel_->mutex());
      if (build_ == 0) return;
      channel_->pushLocked(
          {watch_detail::Record::kFinish, build_, 0, watch_detail::nowMs() - t0_, phaseName ? phaseName : "", {}, false, {}, {}});
      if (watch_detail::OpenPhase* p = find(phaseName)) open_.erase(open_.begin() + (p - open_.data()));
      last = open_.empty() && !explicit_;
    } catch (...) {
    }
    if (last) end(nullptr, -1, nullptr, false);  // on a builder thread: no waiting
  }

 private:
  watch_detail::OpenPhase* find(char const* name) {
    if (name == nullptr) return nullptr;
    for (size_t i = open_.size(); i-- > 0;) {
      if (open_[i].name == name) return &open_[i];
    }
    return nullptr;
  }

  void open(std::string const& fields) noexcept {
    cancel_.store(false);
    forwardRefused_.store(false);
    int b = channel_->beginBuild(&cancel_);
    try {
      t0_ = watch_detail::nowMs();
      watch_detail::Record r{watch_detail::Record::kBegin, b, 0, 0.0, {}, {}, false, {}, {}};
      r.json = "{\"type\":\"build.begin\",\"build\":" + std::to_string(b) + (fields.empty() ? std::string() : "," + fields) + "}";
      r.human = watch_detail::stamp(0) + "build " + std::to_string(b) + " started";
      std::lock_guard<std::mutex> lock(channel_->mutex());
      channel_->pushLocked(std::move(r));
      open_.clear();
      build_ = b;
    } catch (...) {
    }
  }

  nvinfer1::IProgressMonitor* forward_;
  watch_detail::Channel* channel_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> forwardRefused_{false};
  bool explicit_ = false;
  std::atomic<int> build_{0};
  double t0_ = 0;
  std::vector<watch_detail::OpenPhase> open_;  // guarded by the channel's mutex
};

}  // namespace tbs
