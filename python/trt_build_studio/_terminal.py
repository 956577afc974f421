"""The drop-in's own view when no studio or watch listens: the tree in the terminal.

It runs on the flusher thread (never the builder's), from the same batches a sink would get. On a
terminal it redraws the open phases in place, at most every REDRAW_INTERVAL; when stdout is not a
terminal (a log file, a CI job: the tutorial's "do not redirect stdout" problem) it writes plain
lines instead: builds, the phases of the top three levels as they start and finish, and no
escape sequences.
"""

import sys
import time

REDRAW_INTERVAL = 0.1
# Plain lines for phases this deep or less (0 = "Building engine"); deeper phases start ~1,100
# times in a small build and would bury the log.
PLAIN_DEPTH = 2
BAR = 10


class TerminalWriter(object):
    def __init__(self, stream=None):
        self._stream = stream
        self.builds = {}  # build -> {"t0": float, "phases": {name: [depth, steps, step]}}
        self._drawn = 0
        self._last_draw = 0.0
        self._dirty = False

    # The drop-in writes its last lines in the builder's last callback (see _monitor.py).
    flush_at_end = True

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stdout

    def tty(self):
        try:
            return self.stream.isatty()
        except Exception:
            return False

    def start_reader(self, channel):
        pass

    def write(self, events):
        tty = self.tty()
        out = []
        for ev in events:
            self._apply(ev, None if tty else out)
        if tty:
            self._dirty = True
            self.tick()
        elif out:
            self.stream.write("".join(out))
            self.stream.flush()

    def tick(self):
        if not self._dirty or not self.tty():
            return
        now = time.monotonic()
        if now - self._last_draw < REDRAW_INTERVAL and self.builds:
            return
        self._last_draw = now
        self._dirty = False
        self._redraw()

    def close(self):
        if self._drawn and self.tty():
            self._redraw(final=True)

    def _apply(self, ev, out):
        t = ev.get("type")
        bid = ev.get("build")
        b = self.builds.get(bid)
        if t == "build.begin":
            self.builds[bid] = {"phases": {}}
            if out is not None:
                out.append("[trt-build-studio] build %s started\n" % bid)
        elif b is None:
            return
        elif t == "phase.start":
            parent = b["phases"].get(ev.get("parent"))
            depth = parent[0] + 1 if parent is not None else 0
            b["phases"][ev["name"]] = [depth, ev.get("steps") or 0, 0]
            if out is not None and depth <= PLAIN_DEPTH:
                out.append("[trt-build-studio] %8.1fs %s%s (%s steps)\n" % (ev["t"] / 1000.0, "  " * depth, ev["name"], ev.get("steps")))
        elif t == "phase.step":
            p = b["phases"].get(ev["name"])
            if p is not None:
                p[2] = ev["step"]
        elif t == "phase.finish":
            p = b["phases"].pop(ev["name"], None)
            if out is not None and p is not None and p[0] <= PLAIN_DEPTH:
                out.append("[trt-build-studio] %8.1fs %s%s done\n" % (ev["t"] / 1000.0, "  " * p[0], ev["name"]))
        elif t == "build.end":
            self.builds.pop(bid, None)
            how = "cancelled" if ev.get("cancelled") else "finished"
            line = "[trt-build-studio] build %s %s after %.1fs\n" % (bid, how, ev["t"] / 1000.0)
            if out is not None:
                out.append(line)
            else:
                self._redraw(final=True)
                self.stream.write(line)
                self._drawn = 0

    def _redraw(self, final=False):
        lines = []
        if not final:
            for bid, b in self.builds.items():
                for name, (depth, steps, step) in b["phases"].items():
                    done = int(BAR * step / float(steps)) if steps > 0 else 0
                    done = max(0, min(BAR, done))
                    lines.append("%s[%s%s] %s %s/%s" % (" " * depth, "=" * done, "-" * (BAR - done), name, step, steps))
        s = self.stream
        buf = []
        if self._drawn:
            buf.append("\x1b[%dA" % self._drawn)
        for ln in lines:
            buf.append("\x1b[2K" + ln + "\n")
        for _ in range(max(0, self._drawn - len(lines))):
            buf.append("\x1b[2K\n")
        extra = max(0, self._drawn - len(lines))
        if extra:
            buf.append("\x1b[%dA" % extra)
        s.write("".join(buf))
        s.flush()
        self._drawn = len(lines)
