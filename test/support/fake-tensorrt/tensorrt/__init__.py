"""A STAND-IN for NVIDIA's `tensorrt` Python module, for tests only. It is NOT NVIDIA's bindings.

Written from the documented Python API (docs.nvidia.com, "tensorrt.IProgressMonitor",
"tensorrt.Builder", "tensorrt.IBuilderConfig") and from NVIDIA's binding source
(python/src/infer/pyCore.cpp in NVIDIA/TensorRT, release/10.16), it reproduces what the watch
probe depends on and nothing more:

- `IProgressMonitor` with phase_start / step_complete / phase_finish, called the way NVIDIA's
  trampoline (PyProgressMonitor) calls them: an exception raised in a callback is caught and
  printed as "[ERROR] Exception caught in <callback>(): <Type>: <text>" on stderr (NVIDIA's adds
  the Python traceback after it); in step_complete it counts as False, i.e. cancels the build.
- `Builder.build_serialized_network` / `build_engine_with_config` /
  `build_serialized_network_to_stream` drive a TensorRT-10-shaped phase tree (the one a real
  10.16 build of a small model reports, docs/tensorrt.md) from SEVERAL threads in turn,
  as TensorRT's builder does, and return None when a step_complete answered False (after
  finishing the open phases, innermost first: what TensorRT does there is not documented), an
  `IHostMemory` (bytes with `nbytes`) otherwise.
- The builder config's `progress_monitor` property, flags, optimization level, memory pools,
  profiling verbosity and timing cache; the network's name, layers, inputs and outputs.

Knobs for tests (environment): FAKE_TRT_SCALE (float, default 1: about 6,400 callbacks),
FAKE_TRT_STEP_DELAY (seconds to sleep per step, default 0), FAKE_TRT_SEED.
"""

import enum
import os
import random
import sys
import threading
import time

__version__ = "10.16.0+standin"
STAND_IN = True


class DataType(enum.Enum):
    FLOAT = 0
    HALF = 1
    INT8 = 2
    INT32 = 3
    BOOL = 4
    BF16 = 7
    INT64 = 8


class BuilderFlag(enum.Enum):
    FP16 = 0
    INT8 = 2
    DEBUG = 3
    REFIT = 5
    TF32 = 8
    SPARSE_WEIGHTS = 9
    BF16 = 17
    EDITABLE_TIMING_CACHE = 21


class MemoryPoolType(enum.Enum):
    WORKSPACE = 0
    DLA_MANAGED_SRAM = 1
    TACTIC_DRAM = 4


class ProfilingVerbosity(enum.Enum):
    LAYER_NAMES_ONLY = 0
    NONE = 1
    DETAILED = 2


class NetworkDefinitionCreationFlag(enum.Enum):
    EXPLICIT_BATCH = 0
    STRONGLY_TYPED = 1


class Logger(object):
    INTERNAL_ERROR = 0
    ERROR = 1
    WARNING = 2
    INFO = 3
    VERBOSE = 4

    def __init__(self, min_severity=WARNING):
        self.min_severity = min_severity


class IProgressMonitor(object):
    def __init__(self):
        pass

    def phase_start(self, phase_name, parent_phase, num_steps):
        raise RuntimeError("Tried to call pure virtual function IProgressMonitor::phase_start")

    def step_complete(self, phase_name, step):
        raise RuntimeError("Tried to call pure virtual function IProgressMonitor::step_complete")

    def phase_finish(self, phase_name):
        raise RuntimeError("Tried to call pure virtual function IProgressMonitor::phase_finish")


class ITensor(object):
    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = tuple(shape)


class INetworkDefinition(object):
    def __init__(self, flags=0):
        self.name = "Unnamed Network 0"
        self.num_layers = 0
        self._inputs = []
        self._outputs = []

    def add_input(self, name, dtype, shape):
        t = ITensor(name, dtype, shape)
        self._inputs.append(t)
        return t

    def add_identity(self, tensor):
        self.num_layers += 1
        return _Layer(ITensor("(Unnamed Layer* %d) [Identity]_output" % (self.num_layers - 1), tensor.dtype, tensor.shape))

    def mark_output(self, tensor):
        self._outputs.append(tensor)

    @property
    def num_inputs(self):
        return len(self._inputs)

    @property
    def num_outputs(self):
        return len(self._outputs)

    def get_input(self, i):
        return self._inputs[i]

    def get_output(self, i):
        return self._outputs[i]


class _Layer(object):
    def __init__(self, out):
        self._out = out

    def get_output(self, i):
        return self._out


class ITimingCache(object):
    def __init__(self, blob=b""):
        self._keys = [bytes(16)] * (len(blob) // 32)

    def serialize(self):
        return IHostMemory(b"\0" * (32 * len(self._keys)))

    def queryKeys(self):  # sic: NVIDIA's binding spells this one in camelCase (pyCore.cpp)
        return list(self._keys)


class IBuilderConfig(object):
    def __init__(self):
        self.progress_monitor = None
        self.builder_optimization_level = 3
        self.profiling_verbosity = ProfilingVerbosity.LAYER_NAMES_ONLY
        self._flags = {BuilderFlag.TF32}
        self._pools = {MemoryPoolType.WORKSPACE: 1 << 33}
        self._cache = None

    def set_flag(self, flag):
        self._flags.add(flag)

    def clear_flag(self, flag):
        self._flags.discard(flag)

    def get_flag(self, flag):
        return flag in self._flags

    def set_memory_pool_limit(self, pool, size):
        self._pools[pool] = int(size)

    def get_memory_pool_limit(self, pool):
        return self._pools.get(pool, 0)

    def create_timing_cache(self, blob):
        return ITimingCache(bytes(blob))

    def set_timing_cache(self, cache, ignore_mismatch):
        self._cache = cache
        return True

    def get_timing_cache(self):
        return self._cache


class IHostMemory(bytes):
    @property
    def nbytes(self):
        return len(self)


class ICudaEngine(object):
    def __init__(self, plan):
        self._plan = plan

    def serialize(self):
        return self._plan


class _Cancelled(Exception):
    pass


class _Driver(object):
    """Calls a monitor the way TensorRT's builder does, through NVIDIA's trampoline semantics."""

    def __init__(self, monitor):
        self.m = monitor
        self.open = []  # open phase names, outermost first
        self.lock = threading.Lock()
        self.cancelled = False

    def start(self, name, parent, steps):
        with self.lock:
            self.open.append(name)
        if self.m is not None:
            try:
                self.m.phase_start(name, parent, steps)
            except Exception as e:
                sys.stderr.write("[ERROR] Exception caught in phase_start(): %s: %s\n" % (type(e).__name__, e))

    def step(self, name, i):
        if self.m is None:
            return
        delay = _STEP_DELAY
        if delay:
            time.sleep(delay)
        try:
            ok = bool(self.m.step_complete(name, i))
        except Exception as e:
            sys.stderr.write("[ERROR] Exception caught in step_complete(): %s: %s\n" % (type(e).__name__, e))
            ok = False
        if not ok:
            self.cancelled = True
            raise _Cancelled()

    def finish(self, name):
        with self.lock:
            if name in self.open:
                self.open.remove(name)
        if self.m is not None:
            try:
                self.m.phase_finish(name)
            except Exception as e:
                sys.stderr.write("[ERROR] Exception caught in phase_finish(): %s: %s\n" % (type(e).__name__, e))

    def unwind(self):
        for name in list(reversed(self.open)):
            self.finish(name)


_STEP_DELAY = float(os.environ.get("FAKE_TRT_STEP_DELAY", "0") or 0)


def _in_thread(fn, *args):
    """Runs fn on a thread of its own and waits: TensorRT's callbacks come from several threads."""
    box = {}

    def run():
        try:
            fn(*args)
        except BaseException as e:
            box["e"] = e

    t = threading.Thread(target=run, name="fake-trt-builder")
    t.start()
    t.join()
    if "e" in box:
        raise box["e"]


def _phase(d, name, parent, steps, body=None, finish_at=None):
    """A phase of `steps` steps; body(i) runs the children of step i; finish_at ends it early."""
    d.start(name, parent, steps)
    last = steps if finish_at is None else finish_at
    for i in range(last):
        if body is not None:
            body(i)
        d.step(name, i)
    d.finish(name)


def _drive(d, rng, scale):
    nodes = max(1, int(round(12 * scale)))

    def timing_graph_nodes(_):
        def node(_i):
            n = rng.randint(1, max(1, int(153 * scale)))

            def tactic(_j):
                _phase(d, "Measuring tactic time", "Evaluating tactic times", rng.choice((2, 4)))

            _phase(d, "Evaluating tactic times", "Timing graph nodes", n, tactic)

        _phase(d, "Timing graph nodes", "Timing tactics", nodes, node)

    def reformats():
        def node(_i):
            n = rng.randint(1, 9)

            def cost(_j):
                def ev(_k):
                    _phase(d, "Measuring tactic time", "Evaluating tactic times", 4)

                _phase(d, "Evaluating tactic times", "Computing reformatting costs", 3, ev)

            _phase(d, "Computing reformatting costs", "Timing tensor reformats", n, cost)

        _phase(d, "Timing tensor reformats", "Timing tactics", nodes, node)

    def profile_costs(i):
        if i == 0:
            def tactics(j):
                if j == 0:
                    _in_thread(timing_graph_nodes, 0)
                    _in_thread(reformats)

            _phase(d, "Timing tactics", "Computing profile costs", 3, tactics, finish_at=1)
        elif i == 2:
            # A parent advances while its child is open (seen in real builds).
            d.start("Determining refit engines", "Computing profile costs", 5)
            d.step("Determining refit engines", 0)
            d.step("Computing profile costs", 2)
            d.step("Computing profile costs", 3)
            for k in range(1, 5):
                d.step("Determining refit engines", k)
            d.finish("Determining refit engines")

    def subgraph(i):
        _phase(d, "Optimizing graph", "Building engine from subgraph", 33, finish_at=28)
        _in_thread(_phase, d, "Computing profile costs", "Building engine from subgraph", 10, profile_costs)

    def top(i):
        if i == 0:
            _in_thread(_phase, d, "Cloning network graph", "Building engine", 30)
        elif i == 1:
            _phase(d, "Preparing graph for optimization", "Building engine", 4)
        elif i == 2:
            _in_thread(_phase, d, "Building engine from subgraph", "Building engine", 1, subgraph)

    _phase(d, "Building engine", None, 6, top, finish_at=4)


class Builder(object):
    def __init__(self, logger=None):
        self.logger = logger
        self.builds = 0

    def create_network(self, flags=0):
        return INetworkDefinition(flags)

    def create_builder_config(self):
        return IBuilderConfig()

    def _build(self, network, config):
        self.builds += 1
        d = _Driver(config.progress_monitor)
        rng = random.Random(int(os.environ.get("FAKE_TRT_SEED", "7")) + self.builds)
        scale = float(os.environ.get("FAKE_TRT_SCALE", "1") or 1)
        try:
            _in_thread(_drive, d, rng, scale)
        except _Cancelled:
            d.unwind()
            return None
        return IHostMemory(b"stand-in plan:" + str(getattr(network, "name", "")).encode() + b"\0" * 1000)

    def build_serialized_network(self, network, config):
        return self._build(network, config)

    def build_engine_with_config(self, network, config):
        plan = self._build(network, config)
        return None if plan is None else ICudaEngine(plan)

    def build_serialized_network_to_stream(self, network, config, writer):
        plan = self._build(network, config)
        if plan is None:
            return False
        writer.write(plan)
        return True
