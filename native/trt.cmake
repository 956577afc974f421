# ------------------------------------------------------------------------------------------------
# native/trt.cmake — the optional "tensorrt" backend (TensorRT 10) of the addon.
#
# HOW TO INTEGRATE (top-level CMakeLists.txt, after project()):
#
#     include(native/trt.cmake OPTIONAL)
#     if(COMMAND tbs_add_tensorrt)
#       tbs_add_tensorrt(${PROJECT_NAME})   # the addon target; a no-op when headers are absent
#     endif()
#
#   and in the addon's C++ (TBS_HAVE_TENSORRT is defined to 1 on the target only when found):
#
#     #if defined(TBS_HAVE_TENSORRT) && TBS_HAVE_TENSORRT
#     #include "trt/trt_backend.h"          // path relative to native/src
#     ... tbs::makeTensorRtBackend() ...   // std::unique_ptr<tbs::Backend>
#     #endif
#
#   tbs_add_tensorrt(<target>) adds the backend sources (native/src/trt/*.cc), the TensorRT and
#   CUDA include directories as SYSTEM (their deprecation warnings do not trip -Werror), the
#   definition TBS_HAVE_TENSORRT=1 and ${CMAKE_DL_LIBS}. It does NOT link nvinfer: the libraries
#   are dlopen'ed at run time. The backend calls core code (native/src/core/atomic_file.cc,
#   file_lock.cc) that <target> must already compile. Linking is done through the LINK_LIBRARIES
#   property, so it mixes with either target_link_libraries signature on <target>.
#
# INPUTS
#   TENSORRT_ROOT   (CMake variable or environment) a TensorRT tree with include/NvInfer.h; else
#                   /usr/include/x86_64-linux-gnu and /usr/local/tensorrt/include are searched.
#   CUDA_HOME / CUDA_PATH (environment) or CUDAToolkit_ROOT: NvInfer headers include
#                   cuda_runtime_api.h; default /usr/local/cuda/include.
#   TBS_TRT_TESTS   option (default ON): build and register the backend's unit tests.
#
# OUTPUTS (variables in the including scope)
#   TBS_HAVE_TENSORRT         ON when TensorRT 10 headers (incl. NvOnnxParser.h) + CUDA headers found
#   TBS_TENSORRT_VERSION      e.g. 10.16.0 (from NvInferVersion.h)
#   TBS_TENSORRT_INCLUDE_DIR, TBS_CUDA_INCLUDE_DIR
#   TBS_TENSORRT_REASON       why not found (also printed)
#
# TESTS (ctest): trt_adapters, trt_options, trt_loader, trt_backend, trt_timing_cache and
# trt_full_fake (TrtBackend::build end to end against scripted fake libraries; needs python3 at
# configure time to generate stubs from the headers, else it reports SKIPPED) when the headers
# exist (built by default; -DTBS_TRT_TESTS=OFF skips them). When they do not, one test
# "trt_skipped" prints "SKIPPED: TensorRT headers not found (set TENSORRT_ROOT)" and ctest reports
# it as skipped (exit code 77 = SKIP_RETURN_CODE). This file calls enable_testing() so ctest finds
# them in the including directory.
#
# Nothing here can run a real TensorRT build (needs libnvinfer + a GPU): the tests cover the
# adapters, option mapping, loader and the build against fake libraries built from our own code.
# ------------------------------------------------------------------------------------------------
include_guard(GLOBAL)

set(TBS_TRT_DIR "${CMAKE_CURRENT_LIST_DIR}")
option(TBS_TRT_TESTS "Build and register the TensorRT backend unit tests" ON)

set(TBS_HAVE_TENSORRT OFF)
set(TBS_TENSORRT_REASON "")
set(TBS_TENSORRT_VERSION "")
set(TBS_TENSORRT_INCLUDE_DIR "")
set(TBS_CUDA_INCLUDE_DIR "")

# --- TensorRT headers -----------------------------------------------------------------------------
set(_tbs_trt_root "${TENSORRT_ROOT}")
if(NOT _tbs_trt_root AND DEFINED ENV{TENSORRT_ROOT})
  set(_tbs_trt_root "$ENV{TENSORRT_ROOT}")
endif()
set(_tbs_trt_candidates "")
if(_tbs_trt_root)
  list(APPEND _tbs_trt_candidates "${_tbs_trt_root}/include")
endif()
list(APPEND _tbs_trt_candidates "/usr/include/x86_64-linux-gnu" "/usr/local/tensorrt/include")

set(_tbs_trt_rejected "")
foreach(_dir IN LISTS _tbs_trt_candidates)
  if(NOT EXISTS "${_dir}/NvInferVersion.h" OR NOT EXISTS "${_dir}/NvInfer.h")
    continue()
  endif()
  file(STRINGS "${_dir}/NvInferVersion.h" _defs REGEX "^#define (TRT|NV_TENSORRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? +[0-9]+")
  set(_major "")
  set(_minor "")
  set(_patch "")
  foreach(_line IN LISTS _defs)
    # 10.x spells them TRT_MAJOR_ENTERPRISE...; older headers NV_TENSORRT_MAJOR <number>.
    if(_line MATCHES "^#define (TRT_MAJOR_ENTERPRISE|NV_TENSORRT_MAJOR) +([0-9]+)")
      set(_major "${CMAKE_MATCH_2}")
    elseif(_line MATCHES "^#define (TRT_MINOR_ENTERPRISE|NV_TENSORRT_MINOR) +([0-9]+)")
      set(_minor "${CMAKE_MATCH_2}")
    elseif(_line MATCHES "^#define (TRT_PATCH_ENTERPRISE|NV_TENSORRT_PATCH) +([0-9]+)")
      set(_patch "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  if(NOT _major STREQUAL "10")
    list(APPEND _tbs_trt_rejected "${_dir} has TensorRT ${_major}.${_minor}.${_patch} (need 10.x)")
    continue()
  endif()
  if(NOT EXISTS "${_dir}/NvOnnxParser.h")
    list(APPEND _tbs_trt_rejected "${_dir} has TensorRT ${_major}.${_minor}.${_patch} but no NvOnnxParser.h")
    continue()
  endif()
  set(TBS_TENSORRT_INCLUDE_DIR "${_dir}")
  set(TBS_TENSORRT_VERSION "${_major}.${_minor}.${_patch}")
  break()
endforeach()

# --- CUDA headers (NvInferRuntimeBase.h includes cuda_runtime_api.h) --------------------------------
set(_tbs_cuda_candidates "")
foreach(_root IN ITEMS "${CUDAToolkit_ROOT}" "$ENV{CUDA_HOME}" "$ENV{CUDA_PATH}")
  if(_root)
    list(APPEND _tbs_cuda_candidates "${_root}/include")
  endif()
endforeach()
list(APPEND _tbs_cuda_candidates "/usr/local/cuda/include" "/usr/include")
foreach(_dir IN LISTS _tbs_cuda_candidates)
  if(EXISTS "${_dir}/cuda_runtime_api.h")
    set(TBS_CUDA_INCLUDE_DIR "${_dir}")
    break()
  endif()
endforeach()

if(NOT TBS_TENSORRT_INCLUDE_DIR)
  string(REPLACE ";" ", " _searched "${_tbs_trt_candidates}")
  set(TBS_TENSORRT_REASON "no TensorRT 10 headers (NvInfer.h, NvInferVersion.h, NvOnnxParser.h) in ${_searched}")
  if(_tbs_trt_rejected)
    string(REPLACE ";" "; " _rej "${_tbs_trt_rejected}")
    string(APPEND TBS_TENSORRT_REASON " [rejected: ${_rej}]")
  endif()
  string(APPEND TBS_TENSORRT_REASON "; set TENSORRT_ROOT")
elseif(NOT TBS_CUDA_INCLUDE_DIR)
  set(TBS_TENSORRT_REASON "TensorRT ${TBS_TENSORRT_VERSION} headers found in ${TBS_TENSORRT_INCLUDE_DIR}, but not cuda_runtime_api.h (set CUDA_HOME)")
else()
  set(TBS_HAVE_TENSORRT ON)
endif()

if(TBS_HAVE_TENSORRT)
  message(STATUS "TensorRT backend: ON (headers ${TBS_TENSORRT_VERSION} in ${TBS_TENSORRT_INCLUDE_DIR}, CUDA headers in ${TBS_CUDA_INCLUDE_DIR}; libraries are loaded at run time)")
else()
  message(STATUS "TensorRT backend: OFF (${TBS_TENSORRT_REASON})")
endif()

set(TBS_TRT_SOURCES
  "${TBS_TRT_DIR}/src/trt/trt_backend.cc"
  "${TBS_TRT_DIR}/src/trt/trt_loader.cc"
  "${TBS_TRT_DIR}/src/trt/trt_logger.cc"
  "${TBS_TRT_DIR}/src/trt/trt_options.cc"
  "${TBS_TRT_DIR}/src/trt/trt_timing_cache.cc")

# Adds the TensorRT backend to <target> (see the comment block at the top). No-op when the
# headers were not found, so callers need no if().
function(tbs_add_tensorrt target)
  if(NOT TBS_HAVE_TENSORRT)
    message(STATUS "tbs_add_tensorrt(${target}): skipped, ${TBS_TENSORRT_REASON}")
    return()
  endif()
  target_sources(${target} PRIVATE ${TBS_TRT_SOURCES})
  target_include_directories(${target} SYSTEM PRIVATE "${TBS_TENSORRT_INCLUDE_DIR}" "${TBS_CUDA_INCLUDE_DIR}")
  target_include_directories(${target} PRIVATE "${TBS_TRT_DIR}/src")
  target_compile_definitions(${target} PRIVATE TBS_HAVE_TENSORRT=1)
  target_compile_features(${target} PRIVATE cxx_std_17)
  if(CMAKE_DL_LIBS)
    set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES ${CMAKE_DL_LIBS})
  endif()
endfunction()

# --- tests ------------------------------------------------------------------------------------------
if(TBS_TRT_TESTS)
  enable_testing()
  if(TBS_HAVE_TENSORRT)
    include("${TBS_TRT_DIR}/test/trt/tests.cmake")
  else()
    find_program(TBS_SH sh)
    if(TBS_SH)
      add_test(NAME trt_skipped
        COMMAND "${TBS_SH}" -c "echo 'SKIPPED: TensorRT headers not found (set TENSORRT_ROOT)'; exit 77")
      set_tests_properties(trt_skipped PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endif()
endif()
