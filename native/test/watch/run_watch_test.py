#!/usr/bin/env python3
"""One watch probe test case (ctest runs each as watch<major>_<case>, native/test/watch/tests.cmake).

Plays the sink of docs/watch.md (the probe protocol): a Unix socket server that records every
NDJSON line of every connection and can answer `cancel`. Runs watch_sample (a program shaped like
NVIDIA's sampleProgressMonitor) under the LD_PRELOAD shim over the fake libnvinfer of our own: no
real TensorRT library runs in these tests.

usage: run_watch_test.py <case> --shim S --sample P --sample-dlopen P --fake LIB --version X.Y.Z
"""
import argparse
import json
import os
import re
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


class Sink:
    """Accepts probe connections; each connection's lines in order. cancel_on_begin: the build
    number (or "*") to cancel when a build.begin arrives."""

    def __init__(self, path, cancel_on_begin=None):
        self.path = path
        self.cancel_on_begin = cancel_on_begin
        self.conns = []
        self.lock = threading.Lock()
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(8)
        # A timeout, so that close() can drain connections still waiting in the backlog (a
        # program may connect, write and exit before this thread got to accept it).
        self.server.settimeout(0.2)
        self.closing = False
        self.threads = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                if self.closing:
                    return
                continue
            except OSError:
                return
            conn.settimeout(None)
            lines = []
            with self.lock:
                self.conns.append(lines)
            t = threading.Thread(target=self._read, args=(conn, lines), daemon=True)
            t.start()
            self.threads.append(t)

    def _read(self, conn, lines):
        buf = b""
        while True:
            data = conn.recv(65536)
            if not data:
                break
            buf += data
            while b"\n" in buf:
                raw, buf = buf.split(b"\n", 1)
                line = json.loads(raw.decode("utf-8"))
                with self.lock:
                    lines.append(line)
                if line.get("type") == "build.begin" and self.cancel_on_begin is not None:
                    which = line["build"] if self.cancel_on_begin == "number" else "*"
                    conn.sendall((json.dumps({"type": "cancel", "build": which}) + "\n").encode())
        conn.close()

    def close(self):
        self.closing = True
        self.acceptor.join(10)
        for t in self.threads:
            t.join(10)
        self.server.close()


def run(args, env, timeout=30):
    return subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)


def base_env(tmp):
    env = {k: v for k, v in os.environ.items() if k not in ("TBS_WATCH_SOCKET", "LD_PRELOAD")}
    env["XDG_RUNTIME_DIR"] = os.path.join(tmp, "no-studio")  # no discovery file unless a case makes one
    return env


def check_build(lines, build, version, chained=False, result="engine", cancelled=False, api="IBuilder::buildSerializedNetwork"):
    """Every phase of `build` starts before it finishes, steps rise within range, begin and end present."""
    mine = [l for l in lines if l.get("build") == build]
    begins = [l for l in mine if l["type"] == "build.begin"]
    ends = [l for l in mine if l["type"] == "build.end"]
    check(len(begins) == 1 and mine[0] is begins[0], "build %d: one build.begin, first" % build)
    check(len(ends) == 1 and mine[-1] is ends[0], "build %d: one build.end, last" % build)
    if not begins or not ends:
        return None, None
    b, e = begins[0], ends[0]
    check(b.get("api", "").startswith(api), "build %d: api %s" % (build, b.get("api")))
    net = b.get("network", {})
    check(net.get("name") == "watch-sample" and net.get("layers") == 7, "build %d: network name and layer count read from the object" % build)
    check(net.get("inputs") == [{"name": "input", "shape": [1, 1, 28, 28], "dtype": "float32"}], "build %d: inputs %s" % (build, net.get("inputs")))
    cfg = b.get("config", {})
    check("REFIT" in cfg.get("flags", []) and cfg.get("optimizationLevel") == 2, "build %d: config flags %s, level %s" % (build, cfg.get("flags"), cfg.get("optimizationLevel")))
    check(b.get("chained") is chained, "build %d: chained=%s" % (build, chained))
    check(b.get("timingCache") == {"entries": 5}, "build %d: the attached timing cache's entry count (queryKeys): %s" % (build, b.get("timingCache")))
    check(e.get("result") == result and e.get("cancelled") is cancelled, "build %d: end %s" % (build, e))
    open_phases = []  # [name, steps, last step]
    starts = 0
    bad = []
    last_t = 0.0
    for l in mine:
        if "t" in l:
            if l["t"] + 1e-6 < 0:
                bad.append("negative t")
            last_t = max(last_t, l["t"])
        if l["type"] == "phase.start":
            starts += 1
            if l["steps"] <= 0:
                bad.append("steps %s" % l)
            if l["parent"] is not None and not any(p[0] == l["parent"] for p in open_phases):
                bad.append("parent not open: %s" % l)
            open_phases.append([l["name"], l["steps"], -1])
        elif l["type"] == "phase.step":
            p = next((p for p in reversed(open_phases) if p[0] == l["name"]), None)
            if p is None or not (0 <= l["step"] < p[1]) or l["step"] <= p[2]:
                bad.append("step %s (phase %s)" % (l, p))
            elif p:
                p[2] = l["step"]
        elif l["type"] == "phase.finish":
            p = next((p for p in reversed(open_phases) if p[0] == l["name"]), None)
            if p is None:
                bad.append("finish of a phase not open: %s" % l)
            else:
                open_phases.remove(p)
    check(not bad, "build %d: phases well formed %s" % (build, bad[:3]))
    check(not open_phases, "build %d: every phase.start has a phase.finish (left open: %s)" % (build, open_phases))
    if not cancelled:
        check(starts >= 5, "build %d: %d phases" % (build, starts))
    return b, e


def hello_of(lines, probe, version):
    h = lines[0] if lines else {}
    check(h.get("type") == "hello" and h.get("v") == 1 and h.get("probe") == probe, "hello first: %s" % {k: h.get(k) for k in ("type", "v", "probe")})
    check(h.get("trtVersion") == version, "hello trtVersion %s (the library's)" % h.get("trtVersion"))
    return h


def fake_counts(stderr):
    m = re.findall(r"fake: callbacks starts=(\d+) steps=(\d+) finishes=(\d+) cancelled=(\d)", stderr)
    return [tuple(int(x) for x in t) for t in m]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--shim", required=True)
    ap.add_argument("--sample", required=True)
    ap.add_argument("--sample-dlopen", required=True)
    ap.add_argument("--fake", required=True)
    ap.add_argument("--version", required=True)
    a = ap.parse_args()
    case = a.case
    with tempfile.TemporaryDirectory(prefix="tbs-watch-") as tmp:
        env = base_env(tmp)
        sock = os.path.join(tmp, "watch.sock")
        cancel = {"cancel": "number", "cancel_star": "*"}.get(case)
        sink = Sink(sock, cancel) if not case.startswith("dropin") and case not in ("inert", "unreachable") else None
        shim_env = dict(env, LD_PRELOAD=a.shim, TBS_WATCH_SOCKET=sock)
        sample = [a.sample]
        if case == "plain" or case == "stream":
            p = run(sample + [case], shim_env)
            print(p.stdout + p.stderr)
            sink.close()
            check(p.returncode == 0, "exit 0")
            check(len(sink.conns) == 1, "one connection")
            lines = sink.conns[0] if sink.conns else []
            h = hello_of(lines, "cpp-shim", a.version)
            check(h.get("pid") is not None and h.get("argv", [None])[-1] == case, "hello names the program: %s" % h.get("argv"))
            b, e = check_build(lines, 1, a.version)
            m = re.search(r"result engine (\d+)", p.stdout)
            check(m is not None, "the program got an engine")
            if case == "plain" and m and e:
                check(e.get("bytes") == int(m.group(1)), "build.end bytes = the program's engine size")
            check("monitor after build: the program's" in p.stdout, "the program's (absent) monitor is back on the config")
            check(p.stderr.count("trt-build-studio") == 0, "no warning")
            if case == "plain":
                # A process whose Python hook watches it (TBS_WATCH_HOOKED_PID = its pid) is left
                # to the hook: the shim opens no connection. Another pid in it changes nothing.
                hooked = Sink(sock + "2")
                q = subprocess.Popen(sample + ["plain"], env=dict(shim_env, TBS_WATCH_SOCKET=sock + "2", TBS_WATCH_HOOKED_PID="1"),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                q.communicate(timeout=30)
                hooked.close()
                check(len(hooked.conns) == 1, "a hooked-pid value of another process: still watched")
                r = run(["/bin/sh", "-c", 'TBS_WATCH_HOOKED_PID=$$ exec "$0" plain', a.sample], dict(shim_env, TBS_WATCH_SOCKET=sock + "3"))
                check(r.returncode == 0 and "result engine" in r.stdout and "trt-build-studio" not in r.stderr,
                      "the process the Python hook watches: built, nothing connected, nothing printed")
        elif case == "engine":
            p = run(sample + ["engine"], shim_env)
            print(p.stdout + p.stderr)
            sink.close()
            check(p.returncode == 0 and "result engine object" in p.stdout, "buildEngineWithConfig gave the program its engine")
            lines = sink.conns[0] if sink.conns else []
            hello_of(lines, "cpp-shim", a.version)
            check_build(lines, 1, a.version, api="IBuilder::buildEngineWithConfig")
        elif case == "killed":
            # The program dies mid-build: what was streamed so far is there, no build.end, the
            # connection closes (the sink makes it `crashed`). Shows the lines flow during the build.
            q = subprocess.Popen(sample + ["plain"], env=dict(shim_env, FAKE_WATCH_STEPS="200", FAKE_WATCH_STEP_US="20000"),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 30
            seen = False
            while time.time() < deadline and not seen:
                with sink.lock:
                    seen = any(l.get("type") == "phase.step" for c in sink.conns for l in c)
                time.sleep(0.01)
            q.kill()
            q.wait()
            sink.close()
            lines = sink.conns[0] if sink.conns else []
            check(seen, "steps arrived while the build ran")
            check(any(l["type"] == "build.begin" for l in lines) and not any(l["type"] == "build.end" for l in lines),
                  "build.begin and phases, no build.end: %d lines" % len(lines))
        elif case in ("chained", "chained_cancel"):
            p = run(sample + [case.replace("_", "-")], shim_env)
            print(p.stdout + p.stderr)
            sink.close()
            lines = sink.conns[0] if sink.conns else []
            hello_of(lines, "cpp-shim", a.version)
            fake = fake_counts(p.stderr)
            own = re.search(r"own monitor: starts=(\d+) steps=(\d+) finishes=(\d+) balanced=(\w+)", p.stdout)
            check(len(fake) == 1 and own is not None, "the fake and the program's monitor both reported")
            if fake and own:
                check(tuple(int(x) for x in own.groups()[:3]) == fake[0][:3], "the program's monitor saw every callback the library made (%s vs %s)" % (own.groups(), fake[0]))
                check(own.group(4) == "yes", "the program's monitor saw balanced phases")
            check("monitor after build: the program's" in p.stdout, "the program's monitor is back on the config")
            if case == "chained":
                check_build(lines, 1, a.version, chained=True)
                check("result engine" in p.stdout, "engine")
            else:
                check_build(lines, 1, a.version, chained=True, result="null", cancelled=True)
                check("result null" in p.stdout and fake and fake[0][3] == 1, "the program's false cancelled the build: nullptr")
        elif case == "twice":
            p = run(sample + ["twice"], shim_env)
            print(p.stdout + p.stderr)
            sink.close()
            check(len(sink.conns) == 1, "one connection for both builds")
            lines = sink.conns[0] if sink.conns else []
            hello_of(lines, "cpp-shim", a.version)
            check_build(lines, 1, a.version)
            check_build(lines, 2, a.version)
            check(p.stdout.count("result engine") == 2, "two engines")
        elif case == "child":
            p = run(sample + ["child"], shim_env)
            print(p.stdout + p.stderr)
            sink.close()
            check(p.returncode == 0 and re.search(r"child pid (\d+) exit 0", p.stdout), "the child built and exited 0")
            check(len(sink.conns) == 2, "two connections (%d): the child opens its own" % len(sink.conns))
            hellos = {c[0]["pid"]: c for c in sink.conns if c and c[0].get("type") == "hello"}
            child = re.search(r"child pid (\d+)", p.stdout)
            if child and len(hellos) == 2:
                cpid = int(child.group(1))
                check(cpid in hellos, "a connection from the child's pid")
                parent = [pid for pid in hellos if pid != cpid][0]
                check(hellos[cpid][0].get("ppid") == parent, "the child's hello names its parent")
                for lines in hellos.values():
                    check_build(lines, 1, a.version)
        elif case in ("cancel", "cancel_star"):
            env2 = dict(shim_env, FAKE_WATCH_STEPS="60", FAKE_WATCH_STEP_US="20000")
            p = run(sample + ["plain"], env2, timeout=50)
            print(p.stdout + p.stderr)
            sink.close()
            lines = sink.conns[0] if sink.conns else []
            check_build(lines, 1, a.version, result="null", cancelled=True)
            check("result null" in p.stdout, "buildSerializedNetwork returned nullptr after the sink's cancel")
            fake = fake_counts(p.stderr)
            check(bool(fake) and fake[0][3] == 1, "the library saw stepComplete answer false")
        elif case == "dlopen":
            p = run([a.sample_dlopen, "plain", a.fake], shim_env)
            print(p.stdout + p.stderr)
            sink.close()
            check(p.returncode == 0 and "result engine" in p.stdout, "the dlopen'ing program got its engine")
            lines = sink.conns[0] if sink.conns else []
            hello_of(lines, "cpp-shim", a.version)
            check_build(lines, 1, a.version)
        elif case in ("inert", "unreachable"):
            plain = run(sample + ["twice"], env)
            if case == "inert":
                p = run(sample + ["twice"], dict(env, LD_PRELOAD=a.shim))
            else:
                p = run(sample + ["twice"], dict(env, LD_PRELOAD=a.shim, TBS_WATCH_SOCKET=os.path.join(tmp, "nobody-listens.sock")))
            print(p.stdout + p.stderr)
            check(p.returncode == plain.returncode == 0 and p.stdout == plain.stdout, "same output and exit code as without the shim")
            check(fake_counts(p.stderr) == fake_counts(plain.stderr), "the library made the same callbacks")
            warnings = [l for l in p.stderr.splitlines() if l.startswith("trt-build-studio:")]
            if case == "inert":
                check(warnings == [], "nothing printed without TBS_WATCH_SOCKET")
            else:
                check(len(warnings) == 1 and "unreachable" in warnings[0], "one warning for two builds: %s" % warnings)
        elif case == "dropin_plain":
            p = run(sample + ["dropin"], env)
            print(p.stdout + p.stderr)
            out = p.stdout
            check(p.returncode == 0 and "result engine" in out, "the drop-in's build got its engine")
            check("\x1b" not in out, "no terminal control codes when stdout is not a terminal")
            check(re.search(r"^\[\+ *0\.000s\] build 1 started$", out, re.M) is not None, "a start line")
            check(re.search(r"\] Building engine  start 0/3$", out, re.M) is not None, "the root phase's start line")
            check(re.search(r"\] Building engine > Timing tactics > Timing graph nodes  start 0/12$", out, re.M) is not None, "nested phases by path")
            check(re.search(r"\] Building engine  done 3/3$", out, re.M) is not None, "the root's finish line with its steps")
            check(re.search(r"\] build 1 ended: result not known$", out, re.M) is not None, "an end line (the monitor cannot see the result)")
            starts = len(re.findall(r"  start 0/", out))
            fake = fake_counts(p.stderr)
            check(bool(fake) and starts == fake[0][0], "one start line per phase the library started (%d)" % starts)
            check("trt-build-studio:" not in p.stderr, "no warning")
        elif case == "dropin_tty":
            # stdout a terminal: the tree is redrawn in place (control codes), the ending stays.
            import pty
            pid, fd = pty.fork()
            if pid == 0:
                os.execve(a.sample, [a.sample, "dropin"], dict(env, FAKE_WATCH_STEP_US="3000"))
            out = b""
            while True:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break
                if not data:
                    break
                out += data
            _, status = os.waitpid(pid, 0)
            text = out.decode("utf-8", "replace")
            print(repr(text[-600:]))
            check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "exit 0")
            check("\x1b[" in text, "drawn with terminal control codes")
            check(re.search(r"\[[#.]{20}\] Building engine \d+/3", text) is not None, "a bar for the root phase")
            check("build 1 ended: result not known" in text, "the ending line stays")
            check("  start 0/" not in text, "no plain lines on a terminal")
        elif case == "dropin_discovery":
            # A studio's discovery file (docs/watch.md "Finding the studio"): used when private,
            # refused with one warning when the folder is open to others.
            xdg = os.path.join(tmp, "xdg")
            folder = os.path.join(xdg, "trt-build-studio")
            os.makedirs(folder)
            os.chmod(xdg, 0o700)
            os.chmod(folder, 0o700)
            psock = os.path.join(folder, "probe-%d.sock" % os.getpid())
            studio = Sink(psock)
            info = os.path.join(folder, "studio-%d.json" % os.getpid())
            with open(info, "w") as f:
                json.dump({"v": 1, "pid": os.getpid(), "url": "http://127.0.0.1:1", "token": "t", "probeSocket": psock, "kind": "serve"}, f)
            os.chmod(info, 0o600)
            p = run(sample + ["dropin"], dict(env, XDG_RUNTIME_DIR=xdg))
            print(p.stdout + p.stderr)
            studio.close()
            lines = studio.conns[0] if studio.conns else []
            hello_of(lines, "cpp", a.version)
            ends = [l for l in lines if l.get("type") == "build.end"]
            check(len(ends) == 1 and ends[0]["result"] is None, "the drop-in's build reached the studio (result not known to it)")
            check("start 0/" not in p.stdout, "nothing drawn on the terminal")
            os.chmod(folder, 0o755)
            p = run(sample + ["dropin"], dict(env, XDG_RUNTIME_DIR=xdg))
            print(p.stdout + p.stderr)
            warnings = [l for l in p.stderr.splitlines() if l.startswith("trt-build-studio:")]
            check(len(warnings) == 1 and "open to other users" in warnings[0], "an open folder is refused with one warning: %s" % warnings)
            check("Building engine  start 0/3" in p.stdout, "and the build is drawn on the terminal instead")
        else:
            print("unknown case %s" % case)
            return 2
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
