# ------------------------------------------------------------------------------------------------
# native/watch/watch.cmake — the C++ probes of `trt-build-studio watch` (docs/watch.md):
#
#   libtbs_watch.so      the LD_PRELOAD dispatcher (no TensorRT header; always built)
#   libtbs_watch<M>.so   the part compiled against TensorRT major M's headers (only where found)
#   include/tbs/monitor.h the drop-in monitor (header-only; the shim uses it too)
#
# All next to each other in the build folder's top (build/native/), where `watch` preloads the
# dispatcher from and where the dispatcher finds the per-major parts.
#
# Headers: TENSORRT_ROOT as native/trt.cmake reads it (the cache variable when trt.cmake ran,
# else the environment; ':'-separated installs or header folders; first folder of a major wins;
# without it the system folders trt.cmake searches). Only NvInfer.h and the CUDA headers are
# needed (no ONNX parser). A header set whose part does not compile is left out with a message
# (checked once at configure time), so nothing about TensorRT can fail the build.
#
# Tests (ctest, native/test/watch/tests.cmake): watch_dispatch always; watch<M>_* per major found.
# None of them runs a real TensorRT library: they run over a fake libnvinfer of our own.
# ------------------------------------------------------------------------------------------------
include_guard(GLOBAL)
set(TBS_WATCH_DIR "${CMAKE_CURRENT_LIST_DIR}")
option(TBS_WATCH_TESTS "Build and register the watch probe tests" ON)
find_package(Threads REQUIRED)

# --- the dispatcher ------------------------------------------------------------------------------
set(_tbs_watch_map "${CMAKE_CURRENT_BINARY_DIR}/tbs_watch.map")
file(WRITE "${_tbs_watch_map}" "{\n  global: createInferBuilder_INTERNAL; dlsym;\n  local: *;\n};\n")
add_library(tbs_watch SHARED "${TBS_WATCH_DIR}/src/dispatcher.cc")
target_compile_features(tbs_watch PRIVATE cxx_std_17)
target_compile_options(tbs_watch PRIVATE -Wall -Wextra -Werror -O2)
target_include_directories(tbs_watch PRIVATE "${TBS_WATCH_DIR}/src")
set_target_properties(tbs_watch PROPERTIES OUTPUT_NAME tbs_watch PREFIX "lib" SUFFIX ".so"
  LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}" CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
target_link_options(tbs_watch PRIVATE "-Wl,--version-script=${_tbs_watch_map}")
set_property(TARGET tbs_watch APPEND PROPERTY LINK_DEPENDS "${_tbs_watch_map}")
target_link_libraries(tbs_watch PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
if(TARGET ${PROJECT_NAME})
  add_dependencies(${PROJECT_NAME} tbs_watch)
endif()

# --- header sets ---------------------------------------------------------------------------------
if(NOT DEFINED TENSORRT_ROOT AND DEFINED ENV{TENSORRT_ROOT})
  set(TENSORRT_ROOT "$ENV{TENSORRT_ROOT}")
endif()
set(_tbs_watch_cuda "")
foreach(_dir IN ITEMS "${TBS_CUDA_INCLUDE_DIR}" "$ENV{CUDA_HOME}/include" "$ENV{CUDA_PATH}/include" "/usr/local/cuda/include" "/usr/include")
  if(_dir AND EXISTS "${_dir}/cuda_runtime_api.h")
    set(_tbs_watch_cuda "${_dir}")
    break()
  endif()
endforeach()
set(_tbs_watch_candidates "")
if(TENSORRT_ROOT)
  string(REPLACE ":" ";" _roots "${TENSORRT_ROOT}")
  foreach(_root IN LISTS _roots)
    if(EXISTS "${_root}/include/NvInferVersion.h")
      list(APPEND _tbs_watch_candidates "${_root}/include")
    elseif(_root AND EXISTS "${_root}/NvInferVersion.h")
      list(APPEND _tbs_watch_candidates "${_root}")
    endif()
  endforeach()
else()
  foreach(_dir IN ITEMS "/usr/include/x86_64-linux-gnu" "/usr/include/aarch64-linux-gnu" "/usr/local/tensorrt/include")
    if(EXISTS "${_dir}/NvInferVersion.h")
      list(APPEND _tbs_watch_candidates "${_dir}")
    endif()
  endforeach()
endif()

# Version of the headers in <dir> as <prefix>_MAJOR/_MINOR/_PATCH (both spellings of
# NvInferVersion.h: NV_TENSORRT_* numbers up to 10.15, TRT_*_ENTERPRISE later).
function(_tbs_watch_version dir prefix)
  file(STRINGS "${dir}/NvInferVersion.h" _defs REGEX "^#define (TRT|NV_TENSORRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    set(_v "")
    foreach(_line IN LISTS _defs)
      if(_line MATCHES "^#define (TRT_${_part}_ENTERPRISE|NV_TENSORRT_${_part}) +([0-9]+)")
        set(_v "${CMAKE_MATCH_2}")
      endif()
    endforeach()
    set(${prefix}_${_part} "${_v}" PARENT_SCOPE)
  endforeach()
endfunction()

# The builder flags of <inc>/NvInfer.h as a table {enumerator, "NAME"} (the names reported in
# build.begin are the enumerators without their k, as the Python bindings spell them).
function(_tbs_watch_flags inc out)
  file(READ "${inc}/NvInfer.h" _text)
  string(REGEX MATCH "enum class BuilderFlag : [a-z0-9_]+[ \n]*{[^}]*}" _enum "${_text}")
  string(REGEX REPLACE "//[^\n]*" "" _enum "${_enum}")
  string(REGEX MATCHALL "\n[ \t]*k[A-Z0-9_]+" _names "${_enum}")
  set(_rows "")
  foreach(_n IN LISTS _names)
    string(STRIP "${_n}" _n)
    string(SUBSTRING "${_n}" 1 -1 _bare)
    string(APPEND _rows "    {nvinfer1::BuilderFlag::${_n}, \"${_bare}\"},\n")
  endforeach()
  file(WRITE "${out}.tmp" "// GENERATED by native/watch/watch.cmake from ${inc}/NvInfer.h; never committed.\n#pragma once\n#include <NvInfer.h>\n"
    "#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n"
    "struct TbsWatchFlag { nvinfer1::BuilderFlag flag; char const* name; };\n"
    "static TbsWatchFlag const kTbsWatchFlags[] = {\n${_rows}};\n#pragma GCC diagnostic pop\n")
  file(COPY_FILE "${out}.tmp" "${out}" ONLY_IF_DIFFERENT)
  file(REMOVE "${out}.tmp")
endfunction()

set(TBS_WATCH_MAJORS "")
foreach(_inc IN LISTS _tbs_watch_candidates)
  _tbs_watch_version("${_inc}" _v)
  set(_ver "${_v_MAJOR}.${_v_MINOR}.${_v_PATCH}")
  if(NOT _v_MAJOR MATCHES "^(10|11)$")
    message(STATUS "watch: ${_inc} has TensorRT ${_ver}: no watch part for major ${_v_MAJOR} (10 and 11 have one); skipped")
    continue()
  endif()
  if(_v_MAJOR IN_LIST TBS_WATCH_MAJORS)
    continue()
  endif()
  if(NOT EXISTS "${_inc}/NvInfer.h" OR NOT _tbs_watch_cuda)
    message(STATUS "watch: ${_inc} (TensorRT ${_ver}) skipped: NvInfer.h or the CUDA headers (cuda_runtime_api.h) missing")
    continue()
  endif()
  set(_gen "${CMAKE_CURRENT_BINARY_DIR}/watch${_v_MAJOR}-gen")
  _tbs_watch_flags("${_inc}" "${_gen}/tbs_watch_flags.h")
  # Compiled once here (cached on the sources and headers), so a header set it does not compile
  # against is left out with a message instead of failing the build.
  set(_key "${_inc}|${_tbs_watch_cuda}|${CMAKE_CXX_COMPILER}|${CMAKE_CXX_COMPILER_VERSION}")
  foreach(_f "${TBS_WATCH_DIR}/src/shim_major.cc" "${TBS_WATCH_DIR}/src/watch_api.h" "${TBS_WATCH_DIR}/include/tbs/monitor.h"
      "${_inc}/NvInfer.h" "${_gen}/tbs_watch_flags.h")
    file(SHA1 "${_f}" _h)
    string(APPEND _key "|${_h}")
  endforeach()
  string(SHA1 _key "${_key}")
  if(NOT TBS_WATCH${_v_MAJOR}_CHECK_KEY STREQUAL _key)
    set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
    try_compile(_ok "${CMAKE_CURRENT_BINARY_DIR}/watch-check-${_v_MAJOR}"
      SOURCES "${TBS_WATCH_DIR}/src/shim_major.cc"
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${TBS_WATCH_DIR}/src;${TBS_WATCH_DIR}/include;${_gen}"
      COMPILE_DEFINITIONS "-isystem${_inc}" "-isystem${_tbs_watch_cuda}" -Wall -Wextra -Werror
      CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
      OUTPUT_VARIABLE _log)
    set(_first "")
    if(NOT _ok)
      string(REGEX MATCHALL "[^\n]*error[^\n]*" _errs "${_log}")
      list(SUBLIST _errs 0 3 _errs)
      string(REPLACE ";" "\n    " _first "${_errs}")
    endif()
    set(TBS_WATCH${_v_MAJOR}_CHECK_KEY "${_key}" CACHE INTERNAL "")
    set(TBS_WATCH${_v_MAJOR}_CHECK_OK "${_ok}" CACHE INTERNAL "")
    set(TBS_WATCH${_v_MAJOR}_CHECK_LOG "${_first}" CACHE INTERNAL "")
  endif()
  if(NOT TBS_WATCH${_v_MAJOR}_CHECK_OK)
    message(WARNING "watch: the TensorRT ${_v_MAJOR} part does not compile against ${_inc} (${_ver}); left out. First errors:\n    ${TBS_WATCH${_v_MAJOR}_CHECK_LOG}")
    continue()
  endif()
  list(APPEND TBS_WATCH_MAJORS ${_v_MAJOR})
  set(TBS_WATCH_${_v_MAJOR}_INCLUDE "${_inc}")
  set(TBS_WATCH_${_v_MAJOR}_VERSION "${_ver}")
  set(TBS_WATCH_${_v_MAJOR}_GEN "${_gen}")
  message(STATUS "watch: LD_PRELOAD part for TensorRT ${_v_MAJOR}: headers ${_ver} in ${_inc}")
endforeach()
if(NOT TBS_WATCH_MAJORS)
  message(STATUS "watch: no TensorRT 10/11 headers found (TENSORRT_ROOT=${TENSORRT_ROOT}): only the dispatcher libtbs_watch.so is built; watch attaches to no build until a per-major part is built")
endif()

# Compile settings of everything built against major <m>'s headers.
function(tbs_watch_use_headers target m)
  target_include_directories(${target} SYSTEM PRIVATE "${TBS_WATCH_${m}_INCLUDE}" "${_tbs_watch_cuda}")
  target_include_directories(${target} PRIVATE "${TBS_WATCH_DIR}/include" "${TBS_WATCH_DIR}/src" "${TBS_WATCH_${m}_GEN}")
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()

set(_tbs_watch_part_map "${CMAKE_CURRENT_BINARY_DIR}/tbs_watch_part.map")
file(WRITE "${_tbs_watch_part_map}" "{\n  global: tbs_watch_attach;\n  local: *;\n};\n")
foreach(_m IN LISTS TBS_WATCH_MAJORS)
  add_library(tbs_watch${_m} SHARED "${TBS_WATCH_DIR}/src/shim_major.cc")
  tbs_watch_use_headers(tbs_watch${_m} ${_m})
  set_target_properties(tbs_watch${_m} PROPERTIES OUTPUT_NAME "tbs_watch${_m}" PREFIX "lib" SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}" CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # TensorRT is never linked: the part runs inside a process that already loaded it.
  target_link_options(tbs_watch${_m} PRIVATE "-Wl,--no-undefined" "-Wl,--version-script=${_tbs_watch_part_map}")
  set_property(TARGET tbs_watch${_m} APPEND PROPERTY LINK_DEPENDS "${_tbs_watch_part_map}")
  target_link_libraries(tbs_watch${_m} PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(tbs_watch tbs_watch${_m})
endforeach()

if(TBS_WATCH_TESTS)
  enable_testing()
  include("${TBS_WATCH_DIR}/../test/watch/tests.cmake")
endif()
