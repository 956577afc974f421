"""The watch hook's work: wrap TensorRT's build entry points so every build is watched.

Loaded by python/watch_hook/sitecustomize.py only when `TBS_WATCH_SOCKET` is set. Each wrapped
call puts a probe monitor on the config for that call (chaining the program's monitor), sends
`build.begin` with what the objects say about themselves, calls the original, sends `build.end`
and puts the program's monitor back. The caller gets the original's return value or exception,
untouched; the probe's own failures print one warning and the call runs unwatched.
"""

import os
import sys
import threading

from . import _channel, _monitor

# (method, index of the network and config among the positional arguments). Every Builder
# method whose name starts with "build_" and takes a config is wrapped; these are the known ones:
# build_serialized_network (8.0+), build_engine_with_config (10.x), build_serialized_network_to_stream
# (10.13+), build_engine (8.x, removed in 10.0).
KNOWN = ("build_serialized_network", "build_engine_with_config", "build_serialized_network_to_stream", "build_engine")

_patched = set()
_local = threading.local()


def _writer():
    return _channel.SocketWriter(os.environ["TBS_WATCH_SOCKET"])


# The LD_PRELOAD shim (native/watch) is loaded into a Python program under watch too; this names
# the process whose builds the hook reports, and the shim leaves that process alone (one report
# per build, not two). Set again at each build: a forked child has another pid.
HOOKED_PID = "TBS_WATCH_HOOKED_PID"


def _claim():
    try:
        pid = str(os.getpid())
        if os.environ.get(HOOKED_PID) != pid:
            os.environ[HOOKED_PID] = pid
    except Exception:
        pass


def install(trt):
    """Wraps the build methods of trt.Builder. Idempotent; never raises."""
    _claim()
    try:
        builder = getattr(trt, "Builder", None)
        if builder is None or id(builder) in _patched:
            return
        _patched.add(id(builder))
        names = [n for n in dir(builder) if n.startswith("build_") or n in KNOWN]
        for name in names:
            orig = getattr(builder, name, None)
            if orig is None or not callable(orig) or getattr(orig, "_tbs_wrapped", False):
                continue
            setattr(builder, name, _wrap(trt, name, orig))
    except Exception as e:
        _channel.warn_once("could not attach to tensorrt: %s" % (e,))


def _args(args, kwargs):
    network = args[0] if len(args) > 0 else kwargs.get("network")
    config = args[1] if len(args) > 1 else kwargs.get("config")
    return network, config


def _wrap(trt, name, orig):
    api = "Builder." + name

    def wrapper(self, *args, **kwargs):
        # A build inside a build (a monitor that builds) is the outer one's business.
        if getattr(_local, "busy", False):
            return orig(self, *args, **kwargs)
        _claim()
        network, config = _args(args, kwargs)
        if config is None:
            return orig(self, *args, **kwargs)  # no config (8.x build_cuda_engine): nothing to attach to
        prepared = _prepare(trt, api, network, config)
        if prepared is None:
            return orig(self, *args, **kwargs)
        ch, b, program_monitor, ours = prepared
        _local.busy = True
        try:
            try:
                result = orig(self, *args, **kwargs)
            except BaseException as e:
                _end(ch, b, "exception", None, e)
                raise
            _end(ch, b, *_outcome(name, result))
            return result
        finally:
            _local.busy = False
            _restore(config, program_monitor, ours)

    wrapper._tbs_wrapped = True
    wrapper.__name__ = getattr(orig, "__name__", name)
    wrapper.__qualname__ = "Builder." + name
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    wrapper.__wrapped__ = orig
    return wrapper


def _prepare(trt, api, network, config):
    """Attaches the probe for one call: (channel, build, program's monitor, monitor set or None),
    or None (after the one warning) when the call is to run unwatched."""
    try:
        ch = _channel.get_channel("python-hook", _writer)
        if ch is None or not ch.alive:
            return None
        program_monitor = getattr(config, "progress_monitor", None)
        facts = read_facts(trt, network, config)
        b = ch.begin_build(api, facts, program_monitor is not None)
        if _monitor.is_probe(program_monitor):
            # The program uses the drop-in already: it records into this build for the call.
            program_monitor._tbs_build = b
            program_monitor._tbs_auto_saved = program_monitor._tbs_auto
            program_monitor._tbs_auto = False
            return ch, b, program_monitor, None
        if not hasattr(trt, "IProgressMonitor") or not hasattr(config, "progress_monitor"):
            return ch, b, program_monitor, None  # TensorRT before 10.0: begin and end only
        ours = _monitor.monitor_class(trt)(ch, program_monitor, b, False)
        config.progress_monitor = ours
        return ch, b, program_monitor, ours
    except Exception as e:
        _channel.warn_once("could not watch %s: %s" % (api, e))
        return None


def _restore(config, program_monitor, ours):
    try:
        if ours is not None:
            config.progress_monitor = program_monitor
        elif _monitor.is_probe(program_monitor):
            program_monitor._tbs_build = None
            program_monitor._tbs_auto = program_monitor._tbs_auto_saved
    except Exception as e:
        _channel.warn_once("could not put the program's progress monitor back: %s" % (e,))


def _outcome(name, result):
    if result is None:
        return "null", None, None
    if name == "build_serialized_network_to_stream":
        return ("engine" if result else "null"), None, None
    nbytes = None
    n = getattr(result, "nbytes", None)
    if isinstance(n, int):
        nbytes = n
    else:
        try:
            nbytes = memoryview(result).nbytes
        except Exception:
            pass
    return "engine", nbytes, None


def _end(ch, b, result, nbytes, error):
    try:
        if ch.alive:
            ch.end_build(b, result, nbytes, None if error is None else "%s: %s" % (type(error).__name__, error))
    except Exception as e:
        _channel.warn_once("could not report the end of a build: %s" % (e,))


def _enum_name(v):
    n = getattr(v, "name", None)
    if isinstance(n, str):
        return n
    s = str(v)
    return s.rsplit(".", 1)[-1]


def _tensor(t):
    d = {}
    try:
        d["name"] = str(t.name)
    except Exception:
        return None
    try:
        d["shape"] = [int(x) for x in tuple(t.shape)]
    except Exception:
        d["shape"] = []
    try:
        d["dtype"] = _enum_name(t.dtype)
    except Exception:
        d["dtype"] = "unknown"
    return d


def _tensors(network, count_attr, getter):
    out = []
    n = getattr(network, count_attr)
    for i in range(int(n)):
        t = _tensor(getattr(network, getter)(i))
        if t is not None:
            out.append(t)
    return out


def read_facts(trt, network, config):
    """What the objects handed to the build say about themselves. Every read may fail on some
    TensorRT version: what cannot be read stays absent, never guessed."""
    facts = {}
    net = {}
    if network is not None:
        for key, read in (
            ("name", lambda: str(network.name)),
            ("layers", lambda: int(network.num_layers)),
            ("inputs", lambda: _tensors(network, "num_inputs", "get_input")),
            ("outputs", lambda: _tensors(network, "num_outputs", "get_output")),
        ):
            try:
                net[key] = read()
            except Exception:
                pass
    if net:
        facts["network"] = net
    cfg = {}
    try:
        flags = []
        for fname, flag in trt.BuilderFlag.__members__.items():
            try:
                if config.get_flag(flag):
                    flags.append(fname)
            except Exception:
                pass
        cfg["flags"] = flags
    except Exception:
        pass
    try:
        cfg["optimizationLevel"] = int(config.builder_optimization_level)
    except Exception:
        pass
    try:
        cfg["workspaceBytes"] = int(config.get_memory_pool_limit(trt.MemoryPoolType.WORKSPACE))
    except Exception:
        pass
    try:
        cfg["profilingVerbosity"] = _enum_name(config.profiling_verbosity)
    except Exception:
        pass
    if cfg:
        facts["config"] = cfg
    try:
        cache = config.get_timing_cache()
        if cache is not None:
            tc = {}
            try:
                tc["entries"] = len(cache.queryKeys())  # 10.8+ (the binding's own spelling)
            except Exception:
                pass
            try:
                tc["bytes"] = int(memoryview(cache.serialize()).nbytes)
            except Exception:
                pass
            if tc:
                facts["timingCache"] = tc
    except Exception:
        pass
    return facts


def installed_in(module_name="tensorrt"):
    m = sys.modules.get(module_name)
    return m is not None and id(getattr(m, "Builder", None)) in _patched
