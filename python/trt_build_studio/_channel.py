"""The probe's one connection per process (docs/watch.md, "The probe protocol").

TensorRT calls the monitor on its builder threads; those calls only append a tuple to a deque
(phase start and finish) or store the latest step into the phase's slot (both atomic under the
GIL). A daemon flusher thread
turns them into protocol lines and writes them every FLUSH_INTERVAL seconds, so the builder
never waits on I/O. A reader thread takes `cancel` lines from the sink and sets the flag that
`step_complete` reads.

Any failure of the probe's own (socket closed, sink gone, a write error) prints ONE warning to
stderr and the channel goes quiet: the builds go on unwatched, and a monitor the program set
still gets every callback.
"""

import atexit
import collections
import json
import os
import socket
import sys
import threading
import time

_perf = time.perf_counter

# How often the flusher writes a batch. 50 ms keeps the studio's tree live (its own renderers
# coalesce to ~60 fps) while a build's ~6,400 callbacks become a few dozen writes a second.
FLUSH_INTERVAL = 0.05
# Lines encoded and written at a time before the flusher yields the GIL.
FLUSH_CHUNK = 256

_warned = False
_warn_lock = threading.Lock()


def warn_once(message):
    """The probe's single warning of this process; later failures stay silent."""
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    try:
        sys.stderr.write("trt-build-studio: %s; the build goes on unwatched\n" % message)
        sys.stderr.flush()
    except Exception:
        pass


class Build(object):
    """One build of a connection: its number, clock origin, latest steps and cancel flag."""

    __slots__ = ("id", "t0", "slots", "cancel", "honoured", "root")

    def __init__(self, build_id):
        self.id = build_id
        self.t0 = _perf()
        # Open phase name -> its slot, one per phase instance: [latest (perf time, step) or None,
        # the value last written (flusher only), build, name]. step_complete only stores into
        # slot[0] (steps coalesce); the flusher writes a value it has not written yet, and before
        # the phase's finish, so a step is never lost nor given to another instance of the name.
        self.slots = {}
        # Set by a `cancel` line (reader thread), read by step_complete (builder threads).
        self.cancel = False
        # step_complete returned False because of `cancel` (reported as build.end's `cancelled`).
        self.honoured = False
        # Drop-in builds: the top-level phase whose finish ends the build.
        self.root = None


def _ms(b, t):
    return round((t - b.t0) * 1000.0, 3)


class Channel(object):
    """Records callbacks cheaply; a flusher thread hands them to the writer in batches."""

    def __init__(self, writer, probe):
        self.pid = os.getpid()
        self.writer = writer
        self.probe = probe
        self.alive = True
        self.queue = collections.deque()
        self.builds = {}
        self._next_id = 1
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._wake = threading.Event()
        self._live = {}  # slots of the phases whose start was written (flusher only)
        self.queue.append(("raw", None, hello(probe)))
        t = threading.Thread(target=self._flush_loop, name="trt-build-studio-flush", daemon=True)
        t.start()
        writer.start_reader(self)
        atexit.register(self.close)

    # --- the program's thread (build entry points) and the builder threads -------------------

    def begin_build(self, api, facts=None, chained=False):
        with self._lock:
            b = Build(self._next_id)
            self._next_id += 1
            self.builds[b.id] = b
        ev = {"type": "build.begin", "build": b.id, "api": api}
        if facts:
            ev.update(facts)
        ev["chained"] = bool(chained)
        self.queue.append(("raw", b, ev))
        self._wake.set()
        return b

    def end_build(self, b, result, nbytes=None, error=None):
        ev = {"type": "build.end", "build": b.id, "t": _ms(b, _perf()), "result": result, "cancelled": b.honoured}
        if nbytes is not None:
            ev["bytes"] = nbytes
        if error is not None:
            ev["error"] = error
        self.queue.append(("raw", b, ev))
        with self._lock:
            self.builds.pop(b.id, None)
        self._wake.set()

    # --- the reader thread ---------------------------------------------------------------

    def on_cancel(self, which):
        with self._lock:
            if which == "*":
                targets = list(self.builds.values())
            else:
                b = self.builds.get(which) if isinstance(which, int) else None
                targets = [b] if b is not None else []
        for b in targets:
            b.cancel = True

    # --- the flusher thread --------------------------------------------------------------

    def _flush_loop(self):
        while self.alive:
            self._wake.wait(FLUSH_INTERVAL)
            self._wake.clear()
            self.flush()

    def flush(self):
        """Writes what was recorded since the last flush. Never raises."""
        if not self.alive or os.getpid() != self.pid:
            return  # a forked child's copy: the connection and its records are the parent's
        with self._flush_lock:
            try:
                self._flush()
            except Exception as e:
                self.fail("could not write to the sink: %s" % (e,))

    def _flush(self):
        events = []
        q = self.queue
        live = self._live
        wrote = False
        while q:
            item = q.popleft()
            kind = item[0]
            if kind == "s":
                slot = item[6]
                live[id(slot)] = slot
                events.append(_event(item))
            elif kind == "f":
                slot = live.pop(id(item[4]), None) if item[4] is not None else None
                if slot is not None:
                    _latest_step(slot, events)
                events.append(_event(item))
            else:
                ev = item[2]
                if ev.get("type") == "build.end":
                    for key, slot in list(live.items()):
                        if slot[2] is item[1]:
                            _latest_step(slot, events)
                            del live[key]
                events.append(ev)
            if len(events) >= FLUSH_CHUNK:
                self.writer.write(events)
                events = []
                wrote = True
                # Let a builder thread waiting for the GIL in (a callback) go first: encoding a
                # whole burst at once would hold it for milliseconds.
                time.sleep(0)
        for slot in list(live.values()):
            _latest_step(slot, events)
        if events:
            self.writer.write(events)
        elif not wrote:
            self.writer.tick()

    def fail(self, message):
        if not self.alive:
            return
        self.alive = False
        self.queue.clear()
        warn_once(message)
        try:
            self.writer.close()
        except Exception:
            pass

    def close(self):
        """At exit: the last batch, bounded (a sink that stopped reading cannot hold the exit)."""
        if not self.alive or os.getpid() != self.pid:
            return  # a forked child exiting must not write to, or shut down, its parent's socket
        self.flush()
        self.alive = False  # before closing: the reader's end-of-stream is no failure now
        try:
            self.writer.close()
        except Exception:
            pass


def _event(item):
    kind, b = item[0], item[1]
    if kind == "s":
        return {"type": "phase.start", "build": b.id, "t": _ms(b, item[2]), "name": item[3], "parent": item[4], "steps": item[5]}
    if kind == "f":
        return {"type": "phase.finish", "build": b.id, "t": _ms(b, item[2]), "name": item[3]}
    return item[2]


def _latest_step(slot, events):
    v = slot[0]
    if v is not None and v is not slot[1]:
        slot[1] = v
        b = slot[2]
        events.append({"type": "phase.step", "build": b.id, "t": _ms(b, v[0]), "name": slot[3], "step": v[1]})


def hello(probe):
    ev = {"type": "hello", "v": 1, "probe": probe, "pid": os.getpid(), "ppid": os.getppid()}
    try:
        ev["argv"] = list(getattr(sys, "orig_argv", None) or sys.argv)
    except Exception:
        ev["argv"] = []
    ev["exe"] = sys.executable or ""
    try:
        ev["cwd"] = os.getcwd()
    except Exception:
        pass
    trt = sys.modules.get("tensorrt")
    v = getattr(trt, "__version__", None) if trt is not None else None
    if isinstance(v, str) and v:
        ev["trtVersion"] = v
    return ev


class SocketWriter(object):
    """NDJSON to a sink's Unix socket; `cancel` lines back."""

    def __init__(self, path, timeout=2.0):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(timeout)
            s.connect(path)
            # Writes block (the flusher's thread, never the builder's) but not forever: a sink
            # that stops reading for 10 s is treated as gone.
            s.settimeout(10.0)
        except Exception:
            s.close()
            raise
        self.sock = s
        self.path = path

    def start_reader(self, channel):
        t = threading.Thread(target=self._read_loop, args=(channel,), name="trt-build-studio-read", daemon=True)
        t.start()

    def _read_loop(self, channel):
        buf = b""
        try:
            r = self.sock.dup()
            r.settimeout(None)
        except Exception as e:
            channel.fail("could not read from the sink: %s" % (e,))
            return
        try:
            while channel.alive:
                chunk = r.recv(4096)
                if not chunk:
                    channel.fail("the sink closed the connection")
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    _handle_line(channel, line)
        except Exception as e:
            if channel.alive:
                channel.fail("lost the sink: %s" % (e,))
        finally:
            try:
                r.close()
            except Exception:
                pass

    def write(self, events):
        data = "".join(json.dumps(ev, separators=(",", ":")) + "\n" for ev in events)
        self.sock.sendall(data.encode("utf-8"))

    def tick(self):
        pass

    def close(self):
        # Our end first (the sink reads everything up to it), then what the sink still sends
        # (`cancel` lines nobody read): closing a socket with unread input makes Linux reset the
        # connection, and a reset can cost the sink the last lines it had not read yet.
        try:
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(0.5)
            while self.sock.recv(65536):
                pass
        except Exception:
            pass
        self.sock.close()


def _handle_line(channel, line):
    try:
        msg = json.loads(line.decode("utf-8"))
    except Exception:
        return  # a line this probe cannot read is not worth stopping the watch for
    if isinstance(msg, dict) and msg.get("type") == "cancel":
        which = msg.get("build")
        if which == "*" or (isinstance(which, int) and not isinstance(which, bool)):
            channel.on_cancel(which)


_channel = None
_channel_lock = threading.Lock()


def get_channel(probe, make_writer):
    """This process's channel (a forked child opens its own), made with make_writer() on first
    use. Returns None, after the one warning, when no writer can be made."""
    global _channel
    with _channel_lock:
        ch = _channel
        if ch is not None and ch.pid == os.getpid():
            return ch if ch.alive else None
        try:
            writer = make_writer()
        except Exception as e:
            warn_once("could not reach the sink: %s" % (e,))
            _channel = _Dead()
            return None
        if writer is None:
            _channel = _Dead()
            return None
        _channel = Channel(writer, probe)
        return _channel


class _Dead(object):
    """Stands for a channel this process could not open: no second attempt, no second warning."""

    alive = False

    def __init__(self):
        self.pid = os.getpid()
