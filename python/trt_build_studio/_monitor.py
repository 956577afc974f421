"""The progress monitor the probe puts on a builder config.

It subclasses the installed `tensorrt.IProgressMonitor` (made on first use, so importing this
package never imports TensorRT). Its callbacks run on TensorRT's builder threads: they record
into the channel (a deque append or a dict store, no I/O, no lock) and then forward the callback
to the program's own monitor when there is one, returning that monitor's answer unchanged unless
the studio asked to cancel.

An exception raised by the program's monitor is not caught here: it reaches NVIDIA's trampoline
(python/src/infer/pyCore.cpp, PyProgressMonitor) exactly as it would without the probe, which
prints "[ERROR] Exception caught in step_complete(): ..." and returns false, i.e. cancels the
build (and only prints, for phase_start/phase_finish). Watching changes nothing there.
"""

from . import _channel

_perf = _channel._perf
_classes = {}


def _phase_start(self, phase_name, parent_phase, num_steps):
    try:
        b = self._tbs_build
        if b is None and self._tbs_auto and parent_phase is None:
            b = self._tbs_open_auto(phase_name)
        ch = self._tbs_channel
        if b is not None and ch.alive:
            slot = [None, None, b, phase_name]
            b.slots[phase_name] = slot
            ch.queue.append(("s", b, _perf(), phase_name, parent_phase, num_steps, slot))
    except Exception as e:
        _channel.warn_once("the monitor failed: %s" % (e,))
    f = self._tbs_forward
    if f is not None:
        f.phase_start(phase_name, parent_phase, num_steps)


def _step_complete(self, phase_name, step):
    b = self._tbs_build
    if b is not None:
        slot = b.slots.get(phase_name)
        if slot is not None:
            slot[0] = (_perf(), step)
    f = self._tbs_forward
    ok = True if f is None else f.step_complete(phase_name, step)
    if b is not None and b.cancel:
        b.honoured = True
        return False
    return ok


def _phase_finish(self, phase_name):
    try:
        b = self._tbs_build
        if b is not None:
            ch = self._tbs_channel
            if ch.alive:
                ch.queue.append(("f", b, _perf(), phase_name, b.slots.pop(phase_name, None)))
            if self._tbs_auto and b.root == phase_name:
                self._tbs_build = None
                if ch.alive:
                    # A drop-in cannot see what the build call returned (only the hook can):
                    # JSON null, "not known" (docs/watch.md), as the C++ drop-in says it.
                    ch.end_build(b, "null" if b.honoured else None)
                    if getattr(ch.writer, "flush_at_end", False):
                        # The build's last callback, drawing in the program's own terminal: out
                        # before the program prints again (a redraw's cursor moves would
                        # overwrite its lines; plain lines would land inside them).
                        ch.flush()
    except Exception as e:
        _channel.warn_once("the monitor failed: %s" % (e,))
    f = self._tbs_forward
    if f is not None:
        f.phase_finish(phase_name)


def _open_auto(self, root):
    ch = self._tbs_channel
    if ch is None or not ch.alive:
        return None
    b = ch.begin_build("IProgressMonitor", None, self._tbs_forward is not None)
    b.root = root
    self._tbs_build = b
    return b


def _init(self, channel, forward_to=None, build=None, auto=False):
    self._tbs_base.__init__(self)
    self._tbs_channel = channel
    self._tbs_forward = forward_to
    self._tbs_build = build
    self._tbs_auto = auto


def monitor_class(trt):
    """The probe's monitor class for this `tensorrt` module (one per module, made once)."""
    base = trt.IProgressMonitor
    cls = _classes.get(id(base))
    if cls is None:
        cls = type(
            "StudioProgressMonitor",
            (base,),
            {
                "__doc__": "TRT Build Studio's progress monitor: streams the build to the studio, watch or the terminal, and forwards every callback to forward_to.",
                "_tbs_probe": True,
                "_tbs_base": base,
                "__init__": _init,
                "phase_start": _phase_start,
                "step_complete": _step_complete,
                "phase_finish": _phase_finish,
                "_tbs_open_auto": _open_auto,
            },
        )
        _classes[id(base)] = cls
    return cls


def is_probe(obj):
    return getattr(type(obj), "_tbs_probe", False) is True
