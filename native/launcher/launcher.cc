// trt-build-studio: the command users run (package.json "bin"), a small native launcher that
// starts `node <repo>/bin/trt-build-studio.js args...` and owns the moments Node cannot.
//
// Why a native process in front of Node: Node resets every signal's disposition and its signal
// mask when it starts (before any JavaScript runs), so a SIGINT or SIGTERM during Node's own
// start-up (tens of ms idle, up to ~0.5 s on a busy 2-core machine) kills it the default way,
// printing nothing: `build --json` would end without its build.finished line. This launcher
// blocks the signals as its first statement; the only window left is its own start before main
// (the exec and a static binary's C library set-up: microseconds, no dynamic loader).
//
// What it does:
// - The child is Node, with stdin/stdout/stderr inherited (no pipes, no extra hop) and in the same
//   process group (terminal job control, Ctrl-Z, SIGWINCH work as before).
// - A SIGINT/SIGTERM/SIGHUP/SIGQUIT from the terminal (si_code SI_KERNEL) went to the whole
//   foreground group, the child included: not forwarded (it would arrive twice). One sent to the
//   launcher's pid (kill(2), sigqueue: si_code <= 0, as `kill PID`, a test or `docker stop` send)
//   is forwarded to the child once. A user-sent group kill reaches both and arrives twice at Node:
//   the CLI's second-signal rule applies (still exit 130 and a build.finished).
// - A handled signal that came before the child existed (none reached the child) ends the
//   launcher as the child would have ended, without starting Node.
// - The child exits: same exit code. Killed by SIGINT/SIGTERM: it died before its first JavaScript
//   line (from that line on the CLI is never killed by them, apps/process/process-signals.ts), so
//   it printed nothing; for `build`/`trtexec` with `--json`, the launcher writes the line the CLI
//   writes for "no build yet" (apps/cli/commands/build.ts, noBuildFinished) and exits 130/143;
//   other commands exit 128+n. Killed by another signal: the launcher dies by the same signal
//   (no second core dump).
// - The child gets SIGTERM if the launcher dies (PR_SET_PDEATHSIG), even by SIGKILL.
// Linux only (/proc/self/exe, prctl); elsewhere `node bin/trt-build-studio.js` is the command.
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace {

// The signals the CLI (or the shell) cares about; SIGCHLD tells the launcher the child ended.
const int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

const char kCli[] = "bin/trt-build-studio.js";

struct timespec g_started;

void writeAll(int fd, const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;  // The reader is gone: nothing to end.
    }
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void say(const char* a, const char* b = "", const char* c = "") {
  writeAll(2, "trt-build-studio: ", 18);
  writeAll(2, a, strlen(a));
  writeAll(2, b, strlen(b));
  writeAll(2, c, strlen(c));
  writeAll(2, "\n", 1);
}

// The same rule the CLI applies before it parses its arguments (build.ts: argv.includes('--json')):
// the command is the first argument, and `--json` is any later argument.
bool jsonBuildCommand(int argc, char** argv) {
  if (argc < 2 || (strcmp(argv[1], "build") != 0 && strcmp(argv[1], "trtexec") != 0)) return false;
  for (int i = 2; i < argc; i++)
    if (strcmp(argv[i], "--json") == 0) return true;
  return false;
}

// The line noBuildFinished(durationMs) gives through JSON.stringify: t is durationMs / 1000 in
// JavaScript's shortest form (0.005, 0.12, 1, 1.5). Compared with the JavaScript line by
// apps/cli/test/launcher.test.ts.
void writeNoBuildFinished() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  long long ms = (now.tv_sec - g_started.tv_sec) * 1000LL + (now.tv_nsec - g_started.tv_nsec) / 1000000LL;
  if (ms < 0) ms = 0;
  char t[40];
  int frac = static_cast<int>(ms % 1000);
  if (frac == 0) {
    snprintf(t, sizeof t, "%lld", ms / 1000);
  } else {
    char digits[4];
    snprintf(digits, sizeof digits, "%03d", frac);
    int len = 3;
    while (digits[len - 1] == '0') digits[--len] = '\0';
    snprintf(t, sizeof t, "%lld.%s", ms / 1000, digits);
  }
  char line[256];
  int n = snprintf(
      line, sizeof line,
      "{\"v\":1,\"buildId\":\"\",\"seq\":0,\"t\":%s,\"type\":\"build.finished\",\"status\":\"cancelled\",\"durationMs\":%lld}\n", t, ms);
  signal(SIGPIPE, SIG_IGN);  // A reader that left must not kill the launcher with another signal.
  writeAll(1, line, static_cast<size_t>(n));
}

// Ends the launcher the way the child ended (or would have, for a signal it never received).
[[noreturn]] void endAsKilledBy(int sig, bool json) {
  if (sig == SIGINT || sig == SIGTERM) {
    if (json) writeNoBuildFinished();
    _exit(128 + sig);
  }
  // The same death for the shell to see. The child already dumped core if it was to.
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, nullptr);
  raise(sig);
  _exit(128 + sig);  // A signal whose default is not to end the process.
}

// The repository root: the first folder above this executable (symlinks resolved, so an
// `npm link`ed command finds the checkout) that holds bin/trt-build-studio.js.
bool findRoot(char* root, size_t size) {
  ssize_t n = readlink("/proc/self/exe", root, size - 1);
  if (n <= 0) return false;
  root[n] = '\0';
  for (int up = 0; up < 8; up++) {
    char* slash = strrchr(root, '/');
    if (slash == nullptr) return false;
    *slash = '\0';
    char cli[PATH_MAX + sizeof kCli];
    snprintf(cli, sizeof cli, "%s/%s", root, kCli);
    if (access(cli, R_OK) == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // First: from here on a signal waits for sigwaitinfo below instead of ending the process.
  sigset_t watched, original;
  sigemptyset(&watched);
  for (int s : kForwarded) sigaddset(&watched, s);
  sigaddset(&watched, SIGCHLD);
  sigprocmask(SIG_BLOCK, &watched, &original);
  clock_gettime(CLOCK_MONOTONIC, &g_started);
  // An ignored SIGCHLD (inherited through exec) would reap the child before we could wait for it.
  signal(SIGCHLD, SIG_DFL);
  const bool json = jsonBuildCommand(argc, argv);

  char root[PATH_MAX];
  if (!findRoot(root, sizeof root)) {
    say("cannot find ", kCli, " above this executable (/proc/self/exe)");
    return 1;
  }
  char script[PATH_MAX + sizeof kCli];
  snprintf(script, sizeof script, "%s/%s", root, kCli);
  char** args = static_cast<char**>(calloc(static_cast<size_t>(argc) + 2, sizeof(char*)));
  if (args == nullptr) return 1;
  args[0] = const_cast<char*>("node");
  args[1] = script;
  for (int i = 1; i < argc; i++) args[i + 1] = argv[i];

  // A signal that came before the child exists reached only the launcher: end as the child would.
  // (A terminal's signal in the instant between this check and fork() also reaches only the
  // launcher, and is taken for one the child has too: like the start before main, a window of
  // microseconds that no check in user space can close.)
  sigset_t forwarded = watched;
  sigdelset(&forwarded, SIGCHLD);
  const struct timespec zero = {0, 0};
  siginfo_t info;
  int early = sigtimedwait(&forwarded, &info, &zero);
  if (early > 0) endAsKilledBy(early, json);

  const pid_t launcher = getpid();
  const pid_t child = fork();
  if (child < 0) {
    say("cannot start node: ", strerror(errno));
    return 1;
  }
  if (child == 0) {
    // The child ends (SIGTERM: the CLI cancels and stops its workers) when the launcher dies,
    // however it dies. If it died before this line, the parent is already someone else.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != launcher) _exit(128 + SIGTERM);
    sigprocmask(SIG_SETMASK, &original, nullptr);
    execvp("node", args);  // Found on PATH, as `#!/usr/bin/env node` finds it.
    say("cannot run node: ", strerror(errno), " (is Node.js on PATH?)");
    _exit(127);
  }

  for (;;) {
    int sig = sigwaitinfo(&watched, &info);
    if (sig < 0) continue;  // EINTR (a stop and continue).
    if (sig == SIGCHLD) {
      // Every ended child is reaped, not only Node: as a container's PID 1 the launcher also
      // inherits orphans, which would otherwise stay zombies.
      int status;
      pid_t r;
      while ((r = waitpid(-1, &status, WNOHANG)) > 0) {
        if (r != child) continue;
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) endAsKilledBy(WTERMSIG(status), json);
      }
      continue;  // Node stopped or continued, or another child ended.
    }
    // Sent to this pid by a process (kill, sigqueue, tgkill): forward. From the kernel (the
    // terminal's Ctrl-C, Ctrl-\, hang-up to the whole group): the child has its own copy.
    if (info.si_code <= 0) kill(child, sig);
  }
}
