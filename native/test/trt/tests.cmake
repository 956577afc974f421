# Tests of the TensorRT adapters, included by native/trt.cmake when at least one adapter is
# built. Everything runs without libnvinfer: each adapter's code is compiled into test programs
# against that major's headers, and pointed at fake libraries built here from the SAME headers
# (fake_*.cc, our own code, never NVIDIA binaries), reporting that header version or an older
# one. trt_host runs the addon's loader against fakes of both majors side by side.
set(_t "${TBS_TRT_DIR}/test/trt")
find_package(Threads REQUIRED)

# --- fakes from OTHER headers than the adapter (TBS_FAKE_TRT_ROOT) ---------------------------------
# Fakes built from the adapter's own headers agree with it by construction. TBS_FAKE_TRT_ROOT
# (environment or cache; ':'-separated like TENSORRT_ROOT, one folder per major) compiles the fake
# libnvinfer / libnvonnxparser of that major from another header set, reporting that set's
# version: an adapter that calls past the older release's virtual tables then fails or crashes
# here as it would on a real install. E.g. TENSORRT_ROOT=/h/10.16:/h/11.1
# TBS_FAKE_TRT_ROOT=/h/10.3:/h/11.0 runs "adapter 10.16.0 x fake 10.3.0" and "adapter 11.1.0 x
# fake 11.0.0". TBS_FAKE_ONNXPARSER_ROOT (same form) adds the test trt<major>_mixed_parser: a
# parser fake of that other release installed as NVIDIA installs it, which must be refused.
if(DEFINED ENV{TBS_FAKE_TRT_ROOT})
  set(TBS_FAKE_TRT_ROOT "$ENV{TBS_FAKE_TRT_ROOT}" CACHE STRING "Header folders for the TensorRT fakes, ':'-separated" FORCE)
else()
  set(TBS_FAKE_TRT_ROOT "${TBS_FAKE_TRT_ROOT}" CACHE STRING "Header folders for the TensorRT fakes, ':'-separated")
endif()
if(DEFINED ENV{TBS_FAKE_ONNXPARSER_ROOT})
  set(TBS_FAKE_ONNXPARSER_ROOT "$ENV{TBS_FAKE_ONNXPARSER_ROOT}" CACHE STRING "Header folders for a mismatched ONNX parser fake" FORCE)
else()
  set(TBS_FAKE_ONNXPARSER_ROOT "${TBS_FAKE_ONNXPARSER_ROOT}" CACHE STRING "Header folders for a mismatched ONNX parser fake")
endif()

# Sets <prefix>_<major>_INCLUDE / _VERSION for the first folder of each major in <roots>.
function(_tbs_trt_header_sets roots prefix)
  string(REPLACE ":" ";" _roots "${roots}")
  foreach(_root IN LISTS _roots)
    if(_root STREQUAL "")
      continue()
    endif()
    if(EXISTS "${_root}/include/NvInferVersion.h")
      set(_inc "${_root}/include")
    elseif(EXISTS "${_root}/NvInferVersion.h")
      set(_inc "${_root}")
    else()
      message(STATUS "TensorRT fakes: ${_root} skipped: no NvInferVersion.h in it or its include/")
      continue()
    endif()
    _tbs_trt_read_version("${_inc}" _v)
    if(DEFINED ${prefix}_${_v_MAJOR}_INCLUDE OR NOT EXISTS "${_inc}/NvOnnxParser.h")
      message(STATUS "TensorRT fakes: ${_inc} skipped (second folder of major ${_v_MAJOR}, or no NvOnnxParser.h)")
      continue()
    endif()
    set(${prefix}_${_v_MAJOR}_INCLUDE "${_inc}" PARENT_SCOPE)
    set(${prefix}_${_v_MAJOR}_VERSION "${_v_MAJOR}.${_v_MINOR}.${_v_PATCH}" PARENT_SCOPE)
    set(${prefix}_${_v_MAJOR}_INCLUDE "${_inc}")
  endforeach()
endfunction()
_tbs_trt_header_sets("${TBS_FAKE_TRT_ROOT}" TBS_TRT_FAKE)
_tbs_trt_header_sets("${TBS_FAKE_ONNXPARSER_ROOT}" TBS_TRT_FAKEPARSER)
foreach(_m IN LISTS TBS_TRT_MAJORS)
  if(NOT TBS_TRT_FAKE_${_m}_INCLUDE)
    set(TBS_TRT_FAKE_${_m}_INCLUDE "${TBS_TRT_${_m}_INCLUDE}")
    set(TBS_TRT_FAKE_${_m}_VERSION "${TBS_TRT_${_m}_VERSION}")
  endif()
  message(STATUS "TensorRT ${_m} tests: adapter ${TBS_TRT_${_m}_VERSION} x fake ${TBS_TRT_FAKE_${_m}_VERSION} (${TBS_TRT_FAKE_${_m}_INCLUDE})")
endforeach()

# Like tbs_trt_use_headers, with the header set the fakes of <major> are built from.
function(tbs_trt_use_fake_headers target major)
  target_include_directories(${target} SYSTEM PRIVATE "${TBS_TRT_FAKE_${major}_INCLUDE}" "${TBS_CUDA_INCLUDE_DIR}")
  target_include_directories(${target} PRIVATE "${TBS_TRT_DIR}/src")
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
find_package(Python3 COMPONENTS Interpreter QUIET)
find_program(TBS_SH sh)

# A fake that reports `version` (encoded), built against `major`'s headers into `outdir`.
function(_tbs_trt_fake major name source outdir outname soversion)
  add_library(${name} SHARED "${_t}/${source}")
  tbs_trt_use_fake_headers(${name} ${major})
  target_compile_options(${name} PRIVATE -Wpedantic)
  target_compile_definitions(${name} PRIVATE ${ARGN})
  set_target_properties(${name} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY "${outdir}" OUTPUT_NAME "${outname}" SOVERSION "${soversion}"
    CXX_VISIBILITY_PRESET default)
  # Fakes of both majors share C++ names (stub classes, vtables) and may be loaded RTLD_GLOBAL
  # into one test process: each must bind to its own definitions.
  target_link_options(${name} PRIVATE "-Wl,-Bsymbolic")
endfunction()

# The fake CUDA runtime (no header needed).
add_library(tbs_fake_cudart SHARED "${_t}/fake_cudart.cc")
set_target_properties(tbs_fake_cudart PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/trt-fake-cudart" OUTPUT_NAME cudart SOVERSION 12)

# Everything for one major: the adapter code as a static library, fakes, test programs trt<M>_*.
function(_tbs_trt_tests_for M)
  # The fakes report their own headers' version (the adapter's unless TBS_FAKE_TRT_ROOT says).
  string(REPLACE "." ";" _parts "${TBS_TRT_FAKE_${M}_VERSION}")
  list(GET _parts 1 _minor)
  list(GET _parts 2 _patch)
  math(EXPR _hv "${M} * 10000 + ${_minor} * 100 + ${_patch}")
  set(_banner "adapter ${TBS_TRT_${M}_VERSION} × fake ${TBS_TRT_FAKE_${M}_VERSION}")
  # A library older than the headers, to check that options are gated on the library too.
  if(M EQUAL 10)
    if(_minor GREATER_EQUAL 8)
      set(_old 100300)
    else()
      set(_old 100000)
    endif()
    set(_other 11)
  else()
    set(_old 110000)
    set(_other 10)
  endif()
  set(_fd "${CMAKE_CURRENT_BINARY_DIR}/trt${M}-fake")
  math(EXPR _old_minor "(${_old} / 100) % 100")
  math(EXPR _old_patch "${_old} % 100")

  add_library(tbs_trt_under_test_${M} STATIC ${TBS_TRT_ADAPTER_SOURCES})
  tbs_trt_use_headers(tbs_trt_under_test_${M} ${M})
  set_property(TARGET tbs_trt_under_test_${M} PROPERTY POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(tbs_trt_under_test_${M} PUBLIC ${CMAKE_DL_LIBS} Threads::Threads)

  _tbs_trt_fake(${M} tbs_fake${M}_nvinfer fake_nvinfer.cc "${_fd}/good" nvinfer ${M} FAKE_TRT_VERSION=${_hv})
  _tbs_trt_fake(${M} tbs_fake${M}_onnxparser fake_nvonnxparser.cc "${_fd}/good" nvonnxparser ${M})
  _tbs_trt_fake(${M} tbs_fake${M}_nvinfer_other fake_nvinfer.cc "${_fd}/other" nvinfer ${_other} FAKE_TRT_VERSION=${_other}0100)
  _tbs_trt_fake(${M} tbs_fake${M}_nvinfer_old fake_nvinfer.cc "${_fd}/old" nvinfer ${M} FAKE_TRT_VERSION=${_old})
  _tbs_trt_fake(${M} tbs_fake${M}_nvinfer_nobuilder fake_nvinfer.cc "${_fd}/nobuilder" nvinfer ${M} FAKE_TRT_VERSION=${_hv} FAKE_OMIT_BUILDER=1)
  _tbs_trt_fake(${M} tbs_fake${M}_nvinfer_noversion fake_nvinfer.cc "${_fd}/noversion" nvinfer ${M} FAKE_TRT_VERSION=${_hv} FAKE_OMIT_VERSION=1)
  _tbs_trt_fake(${M} tbs_fake${M}_onnxparser_noparser fake_nvonnxparser.cc "${_fd}/noparser" nvonnxparser ${M} FAKE_OMIT_PARSER=1)
  set(_fakes tbs_fake${M}_nvinfer tbs_fake${M}_onnxparser tbs_fake${M}_nvinfer_other tbs_fake${M}_nvinfer_old
    tbs_fake${M}_nvinfer_nobuilder tbs_fake${M}_nvinfer_noversion tbs_fake${M}_onnxparser_noparser tbs_fake_cudart
    tbs_fake_cuda_driver)
  set(_defs
    FAKE_GOOD_DIR="${_fd}/good"
    FAKE_NVINFER_CURRENT="$<TARGET_FILE:tbs_fake${M}_nvinfer>"
    FAKE_ONNXPARSER="$<TARGET_FILE:tbs_fake${M}_onnxparser>"
    FAKE_NVINFER_OTHER="$<TARGET_FILE:tbs_fake${M}_nvinfer_other>"
    FAKE_OTHER_MAJOR=${_other}
    FAKE_NVINFER_OLD="$<TARGET_FILE:tbs_fake${M}_nvinfer_old>"
    FAKE_OLD_VERSION=${_old}
    FAKE_OLD_TEXT="${M}.${_old_minor}.${_old_patch}"
    FAKE_CURRENT_ENCODED=${_hv}
    FAKE_CURRENT_TEXT="${M}.${_minor}.${_patch}"
    FAKE_NVINFER_NOBUILDER="$<TARGET_FILE:tbs_fake${M}_nvinfer_nobuilder>"
    FAKE_NVINFER_NOVERSION="$<TARGET_FILE:tbs_fake${M}_nvinfer_noversion>"
    FAKE_ONNXPARSER_NOPARSER="$<TARGET_FILE:tbs_fake${M}_onnxparser_noparser>"
    FAKE_CUDART="$<TARGET_FILE:tbs_fake_cudart>"
    FAKE_CUDA_DRIVER="$<TARGET_FILE:tbs_fake_cuda_driver>"
    FAKE_OTHER_TEXT="${_other}.1.0"
    FAKE_MISSING_DIR="${_fd}/does-not-exist"
    TBS_TEST_BANNER="${_banner}")

  set(_tests adapters options loader backend timing_cache)

  # End to end through TrtBackend::build with scripted fakes on stubs generated from the headers
  # (gen_stubs.py at configure time, into the build tree; nothing generated is committed).
  set(_gen "${CMAKE_CURRENT_BINARY_DIR}/trt${M}-fake-gen")
  set(_reason "")
  if(NOT Python3_Interpreter_FOUND)
    set(_reason "python3 not found")
  else()
    set(_inc "${TBS_TRT_FAKE_${M}_INCLUDE}")  # the stubs the fakes derive from: the fakes' headers
    file(MAKE_DIRECTORY "${_gen}")
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" "${_t}/gen_stubs.py" "${_inc}" "${_gen}/trt_stubs.h"
        "NvInferImpl.h,nvinfer1::apiv,VBuilder" "NvInferImpl.h,nvinfer1::apiv,VBuilderConfig"
        "NvInferImpl.h,nvinfer1::apiv,VNetworkDefinition" "NvInferImpl.h,nvinfer1::apiv,VTensor"
        "NvInferImpl.h,nvinfer1::apiv,VOptimizationProfile"
        "NvInferImpl.h,nvinfer1::apiv,VRuntime" "NvInferImpl.h,nvinfer1::apiv,VCudaEngine"
        "NvInferImpl.h,nvinfer1::apiv,VEngineInspector"
        "NvOnnxParser.h,nvonnxparser,IParser" "NvOnnxParser.h,nvonnxparser,IParserError"
      RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_QUIET)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_t}/gen_stubs.py")
    if(NOT _rc EQUAL 0)
      string(STRIP "${_err}" _err)
      set(_reason "stub generation failed: ${_err}")
    endif()
  endif()
  if(_reason)
    string(REPLACE "'" "" _reason "${_reason}")
    string(REPLACE "\n" " " _reason "${_reason}")
    message(STATUS "TensorRT ${M}: end-to-end fake test skipped (${_reason})")
    add_test(NAME trt${M}_full_fake COMMAND "${TBS_SH}" -c "echo 'SKIPPED: ${_reason}'; exit 77")
    set_tests_properties(trt${M}_full_fake PROPERTIES SKIP_RETURN_CODE 77)
  else()
    foreach(_variant current old)
      if(_variant STREQUAL "current")
        set(_v ${_hv})
      else()
        set(_v ${_old})
      endif()
      _tbs_trt_fake(${M} tbs_fake${M}_full_nvinfer_${_variant} fake_full_nvinfer.cc "${_fd}/full-${_variant}" nvinfer ${M} FAKE_TRT_VERSION=${_v})
      _tbs_trt_fake(${M} tbs_fake${M}_full_onnxparser_${_variant} fake_full_nvonnxparser.cc "${_fd}/full-${_variant}" nvonnxparser ${M})
      foreach(_lib tbs_fake${M}_full_nvinfer_${_variant} tbs_fake${M}_full_onnxparser_${_variant})
        target_include_directories(${_lib} PRIVATE "${_gen}")
        target_compile_options(${_lib} PRIVATE -Wno-pedantic)
        list(APPEND _fakes ${_lib})
      endforeach()
    endforeach()
    list(APPEND _defs
      FAKE_FULL_DIR="${_fd}/full-current" FAKE_FULL_NVINFER="$<TARGET_FILE:tbs_fake${M}_full_nvinfer_current>"
      FAKE_FULL_ONNXPARSER="$<TARGET_FILE:tbs_fake${M}_full_onnxparser_current>"
      FAKE_FULL_OLD_DIR="${_fd}/full-old" FAKE_FULL_OLD_NVINFER="$<TARGET_FILE:tbs_fake${M}_full_nvinfer_old>")
    list(APPEND _tests full_fake)
    # Plugins (fake_nvinfer_plugin.cc, fake_user_plugin.cc): the standard plugin library beside
    # the current fake libnvinfer, as a real install has it, and two user plugin libraries.
    _tbs_trt_fake(${M} tbs_fake${M}_full_plugin fake_nvinfer_plugin.cc "${_fd}/full-current" nvinfer_plugin ${M})
    _tbs_trt_fake(${M} tbs_fake${M}_user_plugin fake_user_plugin.cc "${_fd}/user-plugins" dynamic_plugin 1)
    _tbs_trt_fake(${M} tbs_fake${M}_user_static_plugin fake_user_plugin.cc "${_fd}/user-plugins" static_plugin 1 FAKE_STATIC_PLUGIN=1)
    foreach(_lib tbs_fake${M}_full_plugin tbs_fake${M}_user_plugin tbs_fake${M}_user_static_plugin)
      target_compile_options(${_lib} PRIVATE -Wno-pedantic)
      list(APPEND _fakes ${_lib})
    endforeach()
    # Its unused code calls a symbol nothing defines: bound lazily, so only RTLD_LAZY loads it.
    target_link_options(tbs_fake${M}_user_static_plugin PRIVATE "-Wl,-z,lazy" "-Wl,--allow-shlib-undefined" "-Wl,--unresolved-symbols=ignore-all")
    list(APPEND _defs
      FAKE_FULL_PLUGIN="$<TARGET_FILE:tbs_fake${M}_full_plugin>"
      FAKE_USER_DYNAMIC_PLUGIN="$<TARGET_FILE:tbs_fake${M}_user_plugin>"
      FAKE_USER_STATIC_PLUGIN="$<TARGET_FILE:tbs_fake${M}_user_static_plugin>")
    list(APPEND _tests plugins)
    set_property(GLOBAL PROPERTY TBS_TRT${M}_FULL_FAKES "tbs_fake${M}_full_nvinfer_current;tbs_fake${M}_full_onnxparser_current")
    # A parser of another release beside the full fake libnvinfer, installed as NVIDIA's packages
    # install it (libnvonnxparser.so.<major> -> libnvonnxparser.so.<release>): must be refused.
    if(TBS_TRT_FAKEPARSER_${M}_INCLUDE)
      set(_pgen "${CMAKE_CURRENT_BINARY_DIR}/trt${M}-fakeparser-gen")
      file(MAKE_DIRECTORY "${_pgen}")
      execute_process(
        COMMAND "${Python3_EXECUTABLE}" "${_t}/gen_stubs.py" "${TBS_TRT_FAKEPARSER_${M}_INCLUDE}" "${_pgen}/trt_stubs.h"
          "NvInferImpl.h,nvinfer1::apiv,VBuilder" "NvInferImpl.h,nvinfer1::apiv,VBuilderConfig"
          "NvInferImpl.h,nvinfer1::apiv,VNetworkDefinition" "NvInferImpl.h,nvinfer1::apiv,VTensor"
          "NvInferImpl.h,nvinfer1::apiv,VOptimizationProfile"
          "NvOnnxParser.h,nvonnxparser,IParser" "NvOnnxParser.h,nvonnxparser,IParserError"
        RESULT_VARIABLE _prc OUTPUT_QUIET ERROR_QUIET)
      if(_prc EQUAL 0)
        set(_pl tbs_fake${M}_mixed_onnxparser)
        add_library(${_pl} SHARED "${_t}/fake_full_nvonnxparser.cc")
        target_include_directories(${_pl} SYSTEM PRIVATE "${TBS_TRT_FAKEPARSER_${M}_INCLUDE}" "${TBS_CUDA_INCLUDE_DIR}")
        target_include_directories(${_pl} PRIVATE "${TBS_TRT_DIR}/src" "${_pgen}")
        target_compile_features(${_pl} PRIVATE cxx_std_17)
        target_compile_options(${_pl} PRIVATE -Wall -Wextra -Werror)
        set_target_properties(${_pl} PROPERTIES
          LIBRARY_OUTPUT_DIRECTORY "${_fd}/mixed" OUTPUT_NAME nvonnxparser
          VERSION "${TBS_TRT_FAKEPARSER_${M}_VERSION}" SOVERSION ${M} CXX_VISIBILITY_PRESET default)
        target_link_options(${_pl} PRIVATE "-Wl,-Bsymbolic")
        list(APPEND _fakes ${_pl})
        list(APPEND _defs FAKE_MIXED_PARSER_DIR="${_fd}/mixed" FAKE_MIXED_PARSER_TEXT="${TBS_TRT_FAKEPARSER_${M}_VERSION}")
        list(APPEND _tests mixed_parser)
        set(_banner "${_banner} × parser fake ${TBS_TRT_FAKEPARSER_${M}_VERSION}")
        list(TRANSFORM _defs REPLACE "^TBS_TEST_BANNER=.*" "TBS_TEST_BANNER=\"${_banner}\"")
      else()
        message(STATUS "TensorRT ${M}: mixed-parser test skipped (stub generation failed for ${TBS_TRT_FAKEPARSER_${M}_INCLUDE})")
      endif()
    endif()
  endif()

  foreach(_name IN LISTS _tests)
    add_executable(tbs_trt${M}_test_${_name} "${_t}/test_${_name}.cc")
    tbs_trt_use_headers(tbs_trt${M}_test_${_name} ${M})
    target_include_directories(tbs_trt${M}_test_${_name} PRIVATE "${TBS_TRT_DIR}/test")
    target_link_libraries(tbs_trt${M}_test_${_name} PRIVATE tbs_trt_under_test_${M})
    target_compile_definitions(tbs_trt${M}_test_${_name} PRIVATE ${_defs})
    add_dependencies(tbs_trt${M}_test_${_name} ${_fakes})
    add_test(NAME trt${M}_${_name} COMMAND tbs_trt${M}_test_${_name})
    # The tests set TBS_* loader variables themselves; never inherit a developer's settings. The
    # CUDA driver is always the fake (native/test/fake_cuda_driver.cc), never a real libcuda.
    set_tests_properties(trt${M}_${_name} PROPERTIES
      ENVIRONMENT "TBS_TRT_LIB_DIR=;TBS_NVINFER_LIB=;TBS_NVONNXPARSER_LIB=;TBS_CUDART_LIB=;TBS_TRT_ADAPTER_DIR=;TBS_CUDA_DRIVER_LIB=$<TARGET_FILE:tbs_fake_cuda_driver>;FAKE_CUDA_DRIVER_VERSION=;FAKE_TRT_BAD_CACHE=;TBS_NVINFER_PLUGIN_LIB=" TIMEOUT 60)
  endforeach()
endfunction()

foreach(_m IN LISTS TBS_TRT_MAJORS)
  _tbs_trt_tests_for(${_m})
endforeach()

# --- the addon's loader: fakes of every built major side by side, the real adapter libraries ----
set(_both "${CMAKE_CURRENT_BINARY_DIR}/trt-fake-both")
list(GET TBS_TRT_MAJORS 0 _first)
set(_host_defs FAKE_BOTH_DIR="${_both}" ADAPTER_DIR="$<TARGET_FILE_DIR:tbs_trt${_first}>"
  FAKE_CUDART="$<TARGET_FILE:tbs_fake_cudart>")
set(_host_deps tbs_fake_cudart tbs_fake_cuda_driver)
set(_list "")
set(_host_banner "")
foreach(_m IN LISTS TBS_TRT_MAJORS)
  get_property(_full GLOBAL PROPERTY TBS_TRT${_m}_FULL_FAKES)
  if(NOT _full)
    continue()
  endif()
  string(REPLACE "." ";" _parts "${TBS_TRT_FAKE_${_m}_VERSION}")
  list(GET _parts 1 _minor)
  list(GET _parts 2 _patch)
  math(EXPR _hv "${_m} * 10000 + ${_minor} * 100 + ${_patch}")
  list(APPEND _host_banner "adapter ${TBS_TRT_${_m}_VERSION} × fake ${TBS_TRT_FAKE_${_m}_VERSION}")
  _tbs_trt_fake(${_m} tbs_fake${_m}_both_nvinfer fake_full_nvinfer.cc "${_both}" nvinfer ${_m} FAKE_TRT_VERSION=${_hv})
  _tbs_trt_fake(${_m} tbs_fake${_m}_both_onnxparser fake_full_nvonnxparser.cc "${_both}" nvonnxparser ${_m})
  foreach(_lib tbs_fake${_m}_both_nvinfer tbs_fake${_m}_both_onnxparser)
    # Both majors in one folder: libnvinfer.so.<major> files only, no shared "libnvinfer.so" link.
    # (SOVERSION/VERSION unset, not empty: empty ones still append "." to the file name.)
    set_property(TARGET ${_lib} PROPERTY SOVERSION)
    set_property(TARGET ${_lib} PROPERTY VERSION)
    set_target_properties(${_lib} PROPERTIES SUFFIX ".so.${_m}")
    target_include_directories(${_lib} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}/trt${_m}-fake-gen")
    target_compile_options(${_lib} PRIVATE -Wno-pedantic)
  endforeach()
  list(APPEND _host_deps tbs_trt${_m} tbs_fake${_m}_both_nvinfer tbs_fake${_m}_both_onnxparser)
  list(APPEND _list "${_m}:${TBS_TRT_${_m}_VERSION}")
  list(APPEND _host_defs HAVE_MAJOR_${_m}=1)
endforeach()
if(_list)
  string(REPLACE ";" "," _list "${_list}")
  add_executable(tbs_trt_test_host "${_t}/test_host.cc" ${TBS_TRT_HOST_SOURCES})
  target_include_directories(tbs_trt_test_host PRIVATE "${TBS_TRT_DIR}/src" "${TBS_TRT_DIR}/test")
  target_compile_features(tbs_trt_test_host PRIVATE cxx_std_17)
  target_compile_options(tbs_trt_test_host PRIVATE -Wall -Wextra -Werror)
  string(REPLACE ";" ", " _host_banner "${_host_banner}")
  target_compile_definitions(tbs_trt_test_host PRIVATE ${_host_defs} BUILT_ADAPTERS="${_list}" TBS_TEST_BANNER="${_host_banner}")
  target_link_libraries(tbs_trt_test_host PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(tbs_trt_test_host ${_host_deps})
  add_test(NAME trt_host COMMAND tbs_trt_test_host)
  set_tests_properties(trt_host PROPERTIES
    ENVIRONMENT "TBS_TRT_LIB_DIR=;TBS_NVINFER_LIB=;TBS_NVONNXPARSER_LIB=;TBS_CUDART_LIB=;TBS_TRT_ADAPTER_DIR=;TBS_CUDA_DRIVER_LIB=$<TARGET_FILE:tbs_fake_cuda_driver>;FAKE_CUDA_DRIVER_VERSION=" TIMEOUT 60)
endif()
