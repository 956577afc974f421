"""TRT Build Studio for Python TensorRT programs.

    import trt_build_studio as tbs
    config.progress_monitor = tbs.monitor()            # or tbs.monitor(forward_to=my_monitor)

The monitor streams the build to `trt-build-studio watch` (when the program runs under it), else
to a running studio (desktop app or `serve`, found through its discovery file), else draws the
tree in the terminal (plain lines when stdout is not a terminal). It never raises into the
program: a failure of its own prints one warning and the build goes on unwatched. See README.md.
"""

import os

from . import _channel, _discovery, _monitor

__all__ = ["monitor"]
__version__ = "0.1.0"


def _drop_in_writer():
    path = os.environ.get("TBS_WATCH_SOCKET")
    if path:
        return _channel.SocketWriter(path)
    for sock in _discovery.probe_sockets():
        try:
            return _channel.SocketWriter(sock)
        except Exception:
            continue  # a studio that exited without removing its file, or not yet listening
    from ._terminal import TerminalWriter

    return TerminalWriter()


def monitor(forward_to=None):
    """A progress monitor for `config.progress_monitor`.

    forward_to: the program's own `tensorrt.IProgressMonitor`, which gets every callback; its
    `False` from step_complete (or an exception it raises) still cancels the build.
    """
    import tensorrt as trt  # lazily: importing this package must not import TensorRT

    cls = _monitor.monitor_class(trt)
    try:
        ch = _channel.get_channel("python", _drop_in_writer)
    except Exception as e:  # never into the program
        _channel.warn_once("could not start: %s" % (e,))
        ch = None
    return cls(ch if ch is not None and ch.alive else _channel._Dead(), forward_to, None, True)
