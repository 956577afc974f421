"""bench:watch's Python half (bench/watch.ts runs it): what a progress monitor costs TensorRT's
builder thread per callback, side by side in one process.

The callbacks are those of a TensorRT-10-shaped build (recorded once from the stand-in `tensorrt`
in test/support/fake-tensorrt, ~8,000 callbacks), replayed on one builder thread against:
  none  - no call at all (the timer's own cost),
  pass  - a minimal pass-through IProgressMonitor (the method call itself; with real TensorRT the
          pybind11 trampoline and GIL acquisition come on top, for every variant alike),
  rich  - NVIDIA's samples/python/simple_progress_monitor (a dict and a whole-tree terminal
          redraw per callback) plus the tutorial's lock, writing to /dev/null,
  ours  - the watch probe's monitor on a live connection to a sink that reads (bench/watch.ts),
          its flusher thread running as in a real build.
Prints one JSON object (per-callback nanoseconds: median and p99 of each, and of the added cost
over pass).
"""

import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "support", "fake-tensorrt"))
sys.path.insert(0, os.path.join(ROOT, "python"))

import tensorrt as trt  # noqa: E402  the stand-in (this machine has no TensorRT)

from trt_build_studio import _channel, _monitor  # noqa: E402


class Recorder(trt.IProgressMonitor):
    def __init__(self):
        trt.IProgressMonitor.__init__(self)
        self.calls = []

    def phase_start(self, phase_name, parent_phase, num_steps):
        self.calls.append((0, phase_name, parent_phase, num_steps))

    def step_complete(self, phase_name, step):
        self.calls.append((1, phase_name, step))
        return True

    def phase_finish(self, phase_name):
        self.calls.append((2, phase_name))


class PassThrough(trt.IProgressMonitor):
    def __init__(self):
        trt.IProgressMonitor.__init__(self)

    def phase_start(self, phase_name, parent_phase, num_steps):
        pass

    def step_complete(self, phase_name, step):
        return True

    def phase_finish(self, phase_name):
        pass


class RichProgressMonitor(trt.IProgressMonitor):
    """NVIDIA's SimpleProgressMonitor (samples/python/simple_progress_monitor, release/10.16),
    with the tutorial's lock around the shared dict; it redraws the whole tree each callback."""

    def __init__(self, stream):
        trt.IProgressMonitor.__init__(self)
        self._active_phases = {}
        self._step_result = True
        self._lock = threading.Lock()
        self._out = stream

    def phase_start(self, phase_name, parent_phase, num_steps):
        with self._lock:
            if parent_phase is not None:
                nbIndents = 1 + self._active_phases[parent_phase]["nbIndents"]
            else:
                nbIndents = 0
            self._active_phases[phase_name] = {"title": phase_name, "steps": 0, "num_steps": num_steps, "nbIndents": nbIndents}
            self._redraw()

    def phase_finish(self, phase_name):
        with self._lock:
            del self._active_phases[phase_name]
            self._redraw(blank_lines=1)

    def step_complete(self, phase_name, step):
        with self._lock:
            self._active_phases[phase_name]["steps"] = step
            self._redraw()
            return self._step_result

    def _redraw(self, *, blank_lines=0):
        out = self._out

        def clear_line():
            print("\x1B[2K", end="", file=out)

        def move_to_start_of_line():
            print("\x1B[0G", end="", file=out)

        def move_cursor_up(lines):
            print("\x1B[{}A".format(lines), end="", file=out)

        def progress_bar(steps, num_steps):
            INNER_WIDTH = 10
            completed_bar_chars = int(INNER_WIDTH * steps / float(num_steps))
            return "[{}{}]".format("=" * completed_bar_chars, "-" * (INNER_WIDTH - completed_bar_chars))

        max_cols = 200  # the sample's value when stdout is not a terminal
        move_to_start_of_line()
        for phase in self._active_phases.values():
            phase_prefix = "{indent}{bar} {title}".format(indent=" " * phase["nbIndents"], bar=progress_bar(phase["steps"], phase["num_steps"]), title=phase["title"])
            phase_suffix = "{steps}/{num_steps}".format(**phase)
            allowable_prefix_chars = max_cols - len(phase_suffix) - 2
            if allowable_prefix_chars < len(phase_prefix):
                phase_prefix = phase_prefix[0 : allowable_prefix_chars - 3] + "..."
            clear_line()
            print(phase_prefix, phase_suffix, file=out)
        for line in range(blank_lines):
            clear_line()
            print(file=out)
        move_cursor_up(len(self._active_phases) + blank_lines)
        out.flush()


def record_build():
    b = trt.Builder()
    c = b.create_builder_config()
    rec = Recorder()
    c.progress_monitor = rec
    b.build_serialized_network(b.create_network(), c)
    return rec.calls


def replay(calls, monitor, out):
    """On a thread of its own, as TensorRT's builder calls: the time of each callback (ns)."""
    ns = time.perf_counter_ns

    def run():
        append = out.append
        if monitor is None:
            for _ in calls:
                t0 = ns()
                append(ns() - t0)
            return
        ps, sc, pf = monitor.phase_start, monitor.step_complete, monitor.phase_finish
        for c in calls:
            k = c[0]
            if k == 1:
                t0 = ns()
                sc(c[1], c[2])
                append(ns() - t0)
            elif k == 0:
                t0 = ns()
                ps(c[1], c[2], c[3])
                append(ns() - t0)
            else:
                t0 = ns()
                pf(c[1])
                append(ns() - t0)

    t = threading.Thread(target=run, name="builder")
    t.start()
    t.join()


def pct(sorted_values, p):
    if not sorted_values:
        return None
    i = min(len(sorted_values) - 1, max(0, int(round(p / 100.0 * (len(sorted_values) - 1)))))
    return sorted_values[i]


def main():
    rounds = int(os.environ.get("BENCH_WATCH_ROUNDS", "7"))
    calls = record_build()
    sock = os.environ["TBS_WATCH_SOCKET"]
    ch = _channel.Channel(_channel.SocketWriter(sock), "python-hook")
    cls = _monitor.monitor_class(trt)
    devnull = open(os.devnull, "w")
    times = {"none": [], "pass": [], "rich": [], "ours": []}
    sent_starts = 0
    for r in range(rounds):
        # Interleaved, so a busy moment of the shared machine falls on every variant alike.
        for name in ("none", "pass", "rich", "ours"):
            if name == "none":
                m = None
            elif name == "pass":
                m = PassThrough()
            elif name == "rich":
                m = RichProgressMonitor(devnull)
            else:
                b = ch.begin_build("Builder.build_serialized_network", {"network": {"name": "bench round %d" % (r + 1)}}, False)
                m = cls(ch, None, b, False)
            replay(calls, m, times[name])
            if name == "ours":
                ch.end_build(b, "engine", 0)
                sent_starts += sum(1 for c in calls if c[0] == 0)
    ch.close()
    if not ch.alive and _channel._warned:
        raise SystemExit("the sink failed during the bench")
    stats = {}
    for name, v in times.items():
        v.sort()
        stats[name] = {"p50": pct(v, 50), "p99": pct(v, 99), "mean": round(sum(v) / len(v), 1), "n": len(v)}
    added = {}
    for name in ("rich", "ours"):
        added[name] = {p: stats[name][p] - stats["pass"][p] for p in ("p50", "p99")}
        added[name]["mean"] = round(stats[name]["mean"] - stats["pass"]["mean"], 1)
    print(json.dumps({
        "callbacksPerBuild": len(calls),
        "rounds": rounds,
        "python": sys.version.split()[0],
        "callbackNs": stats,
        "addedNs": added,
        "phaseStartsSent": sent_starts,
    }))


if __name__ == "__main__":
    main()
