# ------------------------------------------------------------------------------------------------
# native/trt.cmake — the optional "tensorrt" backend: one adapter library per TensorRT major.
#
# HOW IT IS USED (top-level CMakeLists.txt, after project()):
#
#     include(native/trt.cmake OPTIONAL)
#     if(COMMAND tbs_add_tensorrt)
#       tbs_add_tensorrt(${PROJECT_NAME})   # the addon target
#     endif()
#
# WHY ONE LIBRARY PER MAJOR: TensorRT 10 and 11 declare the same nvinfer1 names with different
# layouts (11 removed methods, so virtual-table slots moved, and ILogger gained a base class), so
# code compiled against both can never be in one object. Each major found gets its own shared
# library, libtbs_trt<major>.so, built next to the .node from native/src/trt/* with hidden
# visibility and one exported C entry point (adapter_api.h). The addon itself never includes a
# TensorRT header: tbs_add_tensorrt(<target>) adds only the host side (trt_host.cc), which finds
# libnvinfer at run time and loads the matching adapter. Nothing links libnvinfer.
#
# NOTHING ABOUT TENSORRT CAN FAIL THE ADDON BUILD: every adapter is compiled once at configure
# time (try_compile, cached per header set and source content); a header set that does not
# compile, lacks NvOnnxParser.h or the CUDA headers, or has an unsupported major is skipped with a
# message, and the addon (with the simulated backend) is built without that adapter.
#
# INPUTS
#   TENSORRT_ROOT   (environment, or CMake cache variable) one folder or several separated by ':'. Each
#                   is a TensorRT install (include/NvInferVersion.h) or a folder holding
#                   NvInferVersion.h itself. The major is read from each folder's NvInferVersion.h;
#                   one adapter per major, the first folder of a major wins. Without it,
#                   /usr/include/x86_64-linux-gnu, /usr/include/aarch64-linux-gnu (JetPack) and
#                   /usr/local/tensorrt/include are searched.
#   CUDA_HOME / CUDA_PATH (environment) or CUDAToolkit_ROOT: NvInfer headers include
#                   cuda_runtime_api.h; default /usr/local/cuda/include.
#   TBS_TRT_TESTS   option (default ON): build and register the adapters' tests.
#   TBS_TRT_PRECHECK option (default ON): the configure-time compile below; OFF only in
#                   native/test/trt/adapter_only, where a failure must be loud.
#
# OUTPUTS (variables in the including scope)
#   TBS_TRT_MAJORS            e.g. "10;11": the adapters built
#   TBS_TRT_<major>_VERSION   header version of that adapter, e.g. 10.3.0
#   TBS_TRT_<major>_INCLUDE   its header folder
#   TBS_TRT_ADAPTER_LIST      "10:10.3.0;11:11.1.0" (compiled into the addon, comma-separated)
#   TBS_CUDA_INCLUDE_DIR
#
# TESTS (ctest, see native/test/trt/tests.cmake): per adapter trt<major>_<name>, against fake
# libraries built from that major's headers; trt_host (the addon's loader choosing between
# majors) when adapters exist. Without any headers one test "trt_skipped" prints why and ctest
# reports it as skipped (exit code 77 = SKIP_RETURN_CODE).
#
# Nothing here can run a real TensorRT build (needs libnvinfer + a GPU).
# ------------------------------------------------------------------------------------------------
include_guard(GLOBAL)

set(TBS_TRT_DIR "${CMAKE_CURRENT_LIST_DIR}")
option(TBS_TRT_TESTS "Build and register the TensorRT adapter tests" ON)
# OFF only where a failing adapter should fail the build (native/test/trt/adapter_only).
option(TBS_TRT_PRECHECK "Compile each adapter at configure time and leave out one that fails" ON)
# The supported majors and the newest release checked against: native/trt-facts.json, the one list
# of TensorRT facts that the loader (trt_host.cc, through core/trt_facts.h) and the docs read too.
file(READ "${TBS_TRT_DIR}/trt-facts.json" _tbs_trt_facts)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TBS_TRT_DIR}/trt-facts.json")
if(NOT _tbs_trt_facts MATCHES "\"supportedMajors\": *\\[([0-9, ]+)\\]")
  message(FATAL_ERROR "native/trt-facts.json: no \"supportedMajors\": [..] list of numbers")
endif()
string(REPLACE " " "" _tbs_trt_majors "${CMAKE_MATCH_1}")
string(REPLACE "," ";" TBS_TRT_SUPPORTED_MAJORS "${_tbs_trt_majors}")
string(REPLACE ";" ", " TBS_TRT_SUPPORTED_MAJORS_TEXT "${TBS_TRT_SUPPORTED_MAJORS}")
if(NOT _tbs_trt_facts MATCHES "\"lastChecked\": *\"([0-9]+)\\.([0-9]+)\"")
  message(FATAL_ERROR "native/trt-facts.json: no \"lastChecked\": \"major.minor\"")
endif()
set(TBS_TRT_LAST_CHECKED_MAJOR "${CMAKE_MATCH_1}")
set(TBS_TRT_LAST_CHECKED_MINOR "${CMAKE_MATCH_2}")

# Adapter sources (compiled once per major against that major's headers) and the core helpers
# they call, compiled into each adapter (hidden) so it needs nothing from the addon.
set(TBS_TRT_ADAPTER_SOURCES
  "${TBS_TRT_DIR}/src/trt/trt_adapter_entry.cc"
  "${TBS_TRT_DIR}/src/trt/trt_backend.cc"
  "${TBS_TRT_DIR}/src/trt/trt_loader.cc"
  "${TBS_TRT_DIR}/src/trt/trt_logger.cc"
  "${TBS_TRT_DIR}/src/trt/trt_options.cc"
  "${TBS_TRT_DIR}/src/trt/trt_plugins.cc"
  "${TBS_TRT_DIR}/src/trt/trt_int8.cc"
  "${TBS_TRT_DIR}/src/trt/trt_layer_info.cc"
  "${TBS_TRT_DIR}/src/trt/trt_timing_cache.cc"
  "${TBS_TRT_DIR}/src/trt/lib_files.cc"
  "${TBS_TRT_DIR}/src/trt/cuda_device.cc"
  "${TBS_TRT_DIR}/src/gpu/cuda_driver.cc"
  "${TBS_TRT_DIR}/src/trt/build_routes_cache.cc"
  "${TBS_TRT_DIR}/src/trt/route_knobs.cc"
  "${TBS_TRT_DIR}/src/trt/trt_stream_reader.cc"
  "${TBS_TRT_DIR}/src/core/atomic_file.cc"
  "${TBS_TRT_DIR}/src/core/cache_store.cc"
  "${TBS_TRT_DIR}/src/core/file_lock.cc")
# The addon's side: no TensorRT header.
set(TBS_TRT_HOST_SOURCES
  "${TBS_TRT_DIR}/src/trt/trt_host.cc"
  "${TBS_TRT_DIR}/src/trt/lib_files.cc")

# --- CUDA headers (NvInferRuntimeBase.h includes cuda_runtime_api.h) --------------------------------
set(TBS_CUDA_INCLUDE_DIR "")
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

# --- which header folders ----------------------------------------------------------------------------
# Kept in the CMake cache, so that a re-run of CMake that the build tool starts by itself (a
# CMake file changed) sees the same folders even without the environment variable; the
# environment variable, whenever it is set (even empty), replaces the cached value.
# scripts/test-native.js compares this cached value with its environment and reconfigures.
if(DEFINED ENV{TENSORRT_ROOT})
  set(TENSORRT_ROOT "$ENV{TENSORRT_ROOT}" CACHE STRING "TensorRT installs or header folders, ':'-separated" FORCE)
else()
  set(TENSORRT_ROOT "${TENSORRT_ROOT}" CACHE STRING "TensorRT installs or header folders, ':'-separated")
endif()
set(_tbs_trt_root "${TENSORRT_ROOT}")
set(_tbs_trt_explicit OFF)
set(_tbs_trt_candidates "")
if(_tbs_trt_root)
  set(_tbs_trt_explicit ON)
  string(REPLACE ":" ";" _tbs_trt_roots "${_tbs_trt_root}")
  foreach(_root IN LISTS _tbs_trt_roots)
    if(_root STREQUAL "")
      continue()
    endif()
    if(EXISTS "${_root}/include/NvInferVersion.h")
      list(APPEND _tbs_trt_candidates "${_root}/include")
    elseif(EXISTS "${_root}/NvInferVersion.h")
      list(APPEND _tbs_trt_candidates "${_root}")
    else()
      message(STATUS "TensorRT: ${_root} skipped: neither ${_root}/include/NvInferVersion.h nor ${_root}/NvInferVersion.h exists")
    endif()
  endforeach()
else()
  foreach(_dir IN ITEMS "/usr/include/x86_64-linux-gnu" "/usr/include/aarch64-linux-gnu" "/usr/local/tensorrt/include")
    if(EXISTS "${_dir}/NvInferVersion.h")
      list(APPEND _tbs_trt_candidates "${_dir}")
    endif()
  endforeach()
endif()

# Reads major/minor/patch of the headers in <dir> into <prefix>_MAJOR/_MINOR/_PATCH.
function(_tbs_trt_read_version dir prefix)
  file(STRINGS "${dir}/NvInferVersion.h" _defs REGEX "^#define (TRT|NV_TENSORRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? +[0-9]+")
  set(_major "")
  set(_minor "")
  set(_patch "")
  foreach(_line IN LISTS _defs)
    # 10.x up to 10.15 spell NV_TENSORRT_MAJOR <number>; later ones TRT_MAJOR_ENTERPRISE <number>.
    if(_line MATCHES "^#define (TRT_MAJOR_ENTERPRISE|NV_TENSORRT_MAJOR) +([0-9]+)")
      set(_major "${CMAKE_MATCH_2}")
    elseif(_line MATCHES "^#define (TRT_MINOR_ENTERPRISE|NV_TENSORRT_MINOR) +([0-9]+)")
      set(_minor "${CMAKE_MATCH_2}")
    elseif(_line MATCHES "^#define (TRT_PATCH_ENTERPRISE|NV_TENSORRT_PATCH) +([0-9]+)")
      set(_patch "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  set(${prefix}_MAJOR "${_major}" PARENT_SCOPE)
  set(${prefix}_MINOR "${_minor}" PARENT_SCOPE)
  set(${prefix}_PATCH "${_patch}" PARENT_SCOPE)
endfunction()

# Compiles the adapter sources against <inc> at configure time; sets <out> to ON/OFF and
# <out>_LOG to the compiler's first errors. Cached on the header folder, the compiler and the
# content of every adapter source and header, so a reconfigure does not recompile.
function(_tbs_trt_check_adapter major inc out)
  file(GLOB _ours "${TBS_TRT_DIR}/src/trt/*.h" "${TBS_TRT_DIR}/src/trt/*.cc" "${TBS_TRT_DIR}/src/core/*.h"
    "${TBS_TRT_DIR}/src/gpu/*.h")
  set(_key "${inc}|${TBS_CUDA_INCLUDE_DIR}|${CMAKE_CXX_COMPILER}|${CMAKE_CXX_COMPILER_VERSION}")
  foreach(_f IN LISTS _ours TBS_TRT_ADAPTER_SOURCES)
    file(SHA1 "${_f}" _h)
    string(APPEND _key "|${_h}")
  endforeach()
  file(SHA1 "${inc}/NvInfer.h" _h)
  string(APPEND _key "|${_h}")
  string(SHA1 _key "${_key}")
  if(DEFINED TBS_TRT${major}_CHECK_KEY AND TBS_TRT${major}_CHECK_KEY STREQUAL _key)
    set(${out} "${TBS_TRT${major}_CHECK_OK}" PARENT_SCOPE)
    set(${out}_LOG "${TBS_TRT${major}_CHECK_LOG}" PARENT_SCOPE)
    return()
  endif()
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  try_compile(_ok "${CMAKE_CURRENT_BINARY_DIR}/trt-check-${major}"
    SOURCES ${TBS_TRT_ADAPTER_SOURCES}
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${TBS_TRT_DIR}/src"
    COMPILE_DEFINITIONS "-isystem${inc}" "-isystem${TBS_CUDA_INCLUDE_DIR}" -Wall -Wextra -Werror -fvisibility=hidden
    CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
    OUTPUT_VARIABLE _log)
  set(_first "")
  if(NOT _ok)
    string(REGEX MATCHALL "[^\n]*error[^\n]*" _errs "${_log}")
    list(SUBLIST _errs 0 3 _errs)
    string(REPLACE ";" "\n    " _first "${_errs}")
  endif()
  set(TBS_TRT${major}_CHECK_KEY "${_key}" CACHE INTERNAL "")
  set(TBS_TRT${major}_CHECK_OK "${_ok}" CACHE INTERNAL "")
  set(TBS_TRT${major}_CHECK_LOG "${_first}" CACHE INTERNAL "")
  set(${out} "${_ok}" PARENT_SCOPE)
  set(${out}_LOG "${_first}" PARENT_SCOPE)
endfunction()

set(TBS_TRT_MAJORS "")
set(TBS_TRT_ADAPTER_LIST "")
foreach(_inc IN LISTS _tbs_trt_candidates)
  _tbs_trt_read_version("${_inc}" _v)
  set(_ver "${_v_MAJOR}.${_v_MINOR}.${_v_PATCH}")
  if(NOT _v_MAJOR IN_LIST TBS_TRT_SUPPORTED_MAJORS)
    message(STATUS "TensorRT: ${_inc} has TensorRT ${_ver}: major ${_v_MAJOR} is not supported (supported: ${TBS_TRT_SUPPORTED_MAJORS_TEXT}); skipped")
    continue()
  endif()
  if(_v_MAJOR IN_LIST TBS_TRT_MAJORS)
    message(STATUS "TensorRT: ${_inc} (TensorRT ${_ver}) skipped: ${TBS_TRT_${_v_MAJOR}_INCLUDE} already provides TensorRT ${_v_MAJOR} (${TBS_TRT_${_v_MAJOR}_VERSION}); one adapter per major, the first folder wins")
    continue()
  endif()
  if(NOT EXISTS "${_inc}/NvInfer.h" OR NOT EXISTS "${_inc}/NvOnnxParser.h")
    message(STATUS "TensorRT: ${_inc} (TensorRT ${_ver}) skipped: NvInfer.h or NvOnnxParser.h missing (the ONNX parser header of 10.0-10.13 comes from onnx/onnx-tensorrt)")
    continue()
  endif()
  if(NOT TBS_CUDA_INCLUDE_DIR)
    message(STATUS "TensorRT: ${_inc} (TensorRT ${_ver}) skipped: cuda_runtime_api.h not found (set CUDA_HOME)")
    continue()
  endif()
  if(_v_MAJOR EQUAL TBS_TRT_LAST_CHECKED_MAJOR AND _v_MINOR GREATER TBS_TRT_LAST_CHECKED_MINOR)
    message(STATUS "TensorRT: ${_ver} is newer than the last release this code was checked against (${TBS_TRT_LAST_CHECKED_MAJOR}.${TBS_TRT_LAST_CHECKED_MINOR}); trying it")
  endif()
  if(TBS_TRT_PRECHECK)
    _tbs_trt_check_adapter(${_v_MAJOR} "${_inc}" _ok)
  else()
    set(_ok ON)
  endif()
  if(NOT _ok)
    message(WARNING "TensorRT: the TensorRT ${_v_MAJOR} adapter does not compile against ${_inc} (${_ver}); it is left out and the addon is built without it. First errors:\n    ${_ok_LOG}")
    continue()
  endif()
  list(APPEND TBS_TRT_MAJORS ${_v_MAJOR})
  set(TBS_TRT_${_v_MAJOR}_VERSION "${_ver}")
  set(TBS_TRT_${_v_MAJOR}_INCLUDE "${_inc}")
  list(APPEND TBS_TRT_ADAPTER_LIST "${_v_MAJOR}:${_ver}")
  message(STATUS "TensorRT: adapter for TensorRT ${_v_MAJOR}: headers ${_ver} in ${_inc} (libraries are loaded at run time)")
endforeach()
string(REPLACE ";" "," _tbs_trt_adapter_define "${TBS_TRT_ADAPTER_LIST}")
if(NOT TBS_TRT_MAJORS)
  if(_tbs_trt_explicit)
    set(TBS_TRT_REASON "no usable TensorRT 10/11 headers in TENSORRT_ROOT=${_tbs_trt_root}")
  else()
    set(TBS_TRT_REASON "no TensorRT headers found (set TENSORRT_ROOT to a TensorRT install or header folder; several separated by ':')")
  endif()
  message(STATUS "TensorRT: no adapter built (${TBS_TRT_REASON}); the tensorrt backend will report it unavailable")
endif()

# Compile settings shared by an adapter and the tests built against the same headers.
function(tbs_trt_use_headers target major)
  target_include_directories(${target} SYSTEM PRIVATE "${TBS_TRT_${major}_INCLUDE}" "${TBS_CUDA_INCLUDE_DIR}")
  target_include_directories(${target} PRIVATE "${TBS_TRT_DIR}/src")
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()

find_package(Threads REQUIRED)
# Hidden visibility does not cover what the C++ standard library's headers declare visible (the
# template instantiations an adapter makes, some over nvinfer1 types); the version script keeps
# every symbol but the entry point local, so two adapters in one process never interpose.
set(_tbs_trt_map "${CMAKE_CURRENT_BINARY_DIR}/tbs_trt_adapter.map")
file(WRITE "${_tbs_trt_map}" "{\n  global: tbs_trt_adapter_entry;\n  local: *;\n};\n")
foreach(_m IN LISTS TBS_TRT_MAJORS)
  add_library(tbs_trt${_m} SHARED ${TBS_TRT_ADAPTER_SOURCES})
  tbs_trt_use_headers(tbs_trt${_m} ${_m})
  set_target_properties(tbs_trt${_m} PROPERTIES
    OUTPUT_NAME "tbs_trt${_m}" PREFIX "lib" SUFFIX ".so"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # Every symbol resolved at link time except TensorRT's, which are dlopen'ed.
  target_link_options(tbs_trt${_m} PRIVATE "-Wl,--no-undefined" "-Wl,--version-script=${_tbs_trt_map}")
  set_property(TARGET tbs_trt${_m} APPEND PROPERTY LINK_DEPENDS "${_tbs_trt_map}")
  target_link_libraries(tbs_trt${_m} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
endforeach()

# Adds the TensorRT host side to <target> and builds the adapters with it. Works without any
# adapter (the backend then reports why it is unavailable).
function(tbs_add_tensorrt target)
  target_sources(${target} PRIVATE ${TBS_TRT_HOST_SOURCES})
  target_include_directories(${target} PRIVATE "${TBS_TRT_DIR}/src")
  target_compile_definitions(${target} PRIVATE "TBS_TRT_ADAPTERS=\"${_tbs_trt_adapter_define}\"")
  if(CMAKE_DL_LIBS)
    set_property(TARGET ${target} APPEND PROPERTY LINK_LIBRARIES ${CMAKE_DL_LIBS})
  endif()
  foreach(_m IN LISTS TBS_TRT_MAJORS)
    add_dependencies(${target} tbs_trt${_m})
  endforeach()
endfunction()

# --- tests ------------------------------------------------------------------------------------------
if(TBS_TRT_TESTS)
  enable_testing()
  if(TBS_TRT_MAJORS)
    include("${TBS_TRT_DIR}/test/trt/tests.cmake")
  else()
    find_program(TBS_SH sh)
    if(TBS_SH)
      string(REPLACE "'" "" _tbs_reason "${TBS_TRT_REASON}")
      add_test(NAME trt_skipped
        COMMAND "${TBS_SH}" -c "echo 'SKIPPED: TensorRT adapter tests: ${_tbs_reason}'; exit 77")
      set_tests_properties(trt_skipped PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endif()
endif()
