"""TRT Build Studio's watch hook (docs/watch.md).

`trt-build-studio watch` puts this folder first on PYTHONPATH, so every Python interpreter of the
watched program (and of its child processes) loads this file at start-up. It does nothing at all
unless TBS_WATCH_SOCKET is set; then, when `tensorrt` is imported (or if it already is), it wraps
the build entry points of tensorrt.Builder (trt_build_studio/_hook.py). Either way it then runs
the `sitecustomize` this one hides, if there is one further along the path, as Python would have.
It never raises into the program: a failure of its own prints one warning.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _install():
    if not os.environ.get("TBS_WATCH_SOCKET"):
        return
    try:
        # The package beside this folder, ahead of any installed copy: hook and package must agree.
        pkg_root = os.path.dirname(_HERE)
        if pkg_root not in sys.path:
            sys.path.insert(1 if sys.path and sys.path[0] == _HERE else 0, pkg_root)
        if "tensorrt" in sys.modules:
            _hook().install(sys.modules["tensorrt"])
        else:
            # The probe itself is imported only when TensorRT is: a Python process of the watched
            # program that never builds pays for this file alone.
            sys.meta_path.insert(0, _TensorRTFinder())
    except Exception as e:
        try:
            sys.stderr.write("trt-build-studio: the watch hook could not start: %s; builds go on unwatched\n" % (e,))
        except Exception:
            pass


def _hook():
    from trt_build_studio import _hook as hook

    return hook


class _TensorRTFinder(object):
    """Finds nothing itself: lets the other finders find `tensorrt`, then wraps its loader so the
    hook runs right after the module's code (the post-import hook)."""

    def __init__(self):
        self._busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorrt" or self._busy:
            return None
        self._busy = True
        try:
            import importlib.util

            spec = importlib.util.find_spec(fullname)
        except Exception:
            return None
        finally:
            self._busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


class _Loader(object):
    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        try:
            hook = _hook()
        except Exception as e:
            try:
                sys.stderr.write("trt-build-studio: the watch hook could not start: %s; builds go on unwatched\n" % (e,))
            except Exception:
                pass
            return
        hook.install(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _chain():
    """Runs the sitecustomize this file shadows (the first other one on sys.path)."""
    import importlib.machinery
    import importlib.util

    here = os.path.realpath(_HERE)
    rest = [p for p in sys.path if os.path.realpath(p or os.getcwd()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    # Its errors are its own: site.py reports them as it would have without this hook.
    spec.loader.exec_module(module)
    for k, v in vars(module).items():
        if not k.startswith("__"):
            globals().setdefault(k, v)


_install()
_chain()
