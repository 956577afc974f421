#!/bin/sh
# Builds a `tensorrt` Python module from NVIDIA's own binding sources over the project's fake
# libnvinfer, for apps/cli/test/watch-python-nvidia.test.ts. Nothing it fetches or builds is
# committed: NVIDIA's sources come from a local mirror of NVIDIA/TensorRT, the output goes to $1.
#
#   build.sh OUT_DIR
# Environment (defaults are this development machine's):
#   TBS_TRT_MIRROR    bare git mirror of NVIDIA/TensorRT   (required: a clone of github.com/NVIDIA/TensorRT)
#   TBS_TRT_BRANCH    its branch                            (release/10.16)
#   TBS_TRT_INCLUDE   TensorRT headers of that version      (required: its include/ folder)
#   TBS_FAKE_NVINFER  fake libnvinfer.so.10 (built by test:native from fake_full_nvinfer.cc)
#                     (build/native-trt/trt10-fake/full-current/libnvinfer.so.10)
#   PYBIND11_INCLUDE  pybind11's include folder            (python3 -c 'import pybind11' ...)
#   PYTHON            the interpreter the module is for    (python3)
# Takes a few minutes: NVIDIA's pyCore.cpp and pyGraph.cpp are large pybind11 translation units.
set -eu
OUT=${1:?usage: build.sh OUT_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
MIRROR=${TBS_TRT_MIRROR:?set TBS_TRT_MIRROR to a git clone of NVIDIA/TensorRT}
BRANCH=${TBS_TRT_BRANCH:-release/10.16}
INC=${TBS_TRT_INCLUDE:?set TBS_TRT_INCLUDE to TensorRT 10.16 include/}
FAKE=${TBS_FAKE_NVINFER:-$ROOT/build/native-trt/trt10-fake/full-current/libnvinfer.so.10}
PY=${PYTHON:-python3}
PB=${PYBIND11_INCLUDE:-$("$PY" -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || echo /usr/include)}
PYINC=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
SUFFIX=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for f in "$MIRROR" "$INC/NvInfer.h" "$FAKE" "$PB/pybind11/pybind11.h" "$PYINC/Python.h"; do
  [ -e "$f" ] || { echo "build.sh: $f is missing" >&2; exit 2; }
done
mkdir -p "$OUT/src" "$OUT/lib"
[ -d "$OUT/src/python" ] || git -C "$MIRROR" archive "$BRANCH" python/src python/include python/docstrings | tar -x -C "$OUT/src"
cp "$FAKE" "$OUT/lib/libnvinfer.so.10"
ln -sf libnvinfer.so.10 "$OUT/lib/libnvinfer.so"
S="$OUT/src/python"
# tensorrt_EXPORTS: the full bindings (builder, network), not the lean runtime-only ones
# (ForwardDeclarations.h derives EXPORT_ALL_BINDINGS from it).
FLAGS="-std=c++17 -O0 -g0 -fPIC -w -Dtensorrt_EXPORTS -DTENSORRT_MODULE=tensorrt -I$S/include -I$S/docstrings/infer -I$S/docstrings -isystem $INC -isystem /usr/local/cuda/include -isystem $PB -isystem $PYINC"
for src in "$S/src/infer/pyFoundationalTypes.cpp" "$S/src/infer/pyGraph.cpp" "$S/src/infer/pyCore.cpp" "$S/src/utils.cpp" "$HERE/module.cpp" "$HERE/fake_missing.cc"; do
  obj="$OUT/$(basename "${src%.*}").o"
  [ "$obj" -nt "$src" ] || g++ $FLAGS -c "$src" -o "$obj"
done
g++ -shared -o "$OUT/tensorrt$SUFFIX" "$OUT"/*.o -L"$OUT/lib" -lnvinfer -Wl,-rpath,'$ORIGIN/lib'
echo "$OUT/tensorrt$SUFFIX"
