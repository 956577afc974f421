# Unit tests of the TensorRT backend, included by native/trt.cmake when TensorRT 10 headers were
# found. They run without libnvinfer: adapters are called directly, and the loader/backend are
# pointed at fake libraries built here from our own code (fake_*.cc), never at NVIDIA binaries.
set(_t "${TBS_TRT_DIR}/test/trt")
set(_fake_dir "${CMAKE_CURRENT_BINARY_DIR}/trt-fake")

# Warnings are errors for our code; TensorRT/CUDA headers are SYSTEM so theirs are not.
function(_tbs_trt_test_settings target)
  target_include_directories(${target} SYSTEM PRIVATE "${TBS_TENSORRT_INCLUDE_DIR}" "${TBS_CUDA_INCLUDE_DIR}")
  target_include_directories(${target} PRIVATE "${TBS_TRT_DIR}/src")
  target_compile_features(${target} PRIVATE cxx_std_17)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endfunction()

# The backend sources plus the core helpers they call, compiled once for all test programs.
add_library(tbs_trt_under_test STATIC ${TBS_TRT_SOURCES}
  "${TBS_TRT_DIR}/src/core/atomic_file.cc" "${TBS_TRT_DIR}/src/core/file_lock.cc")
_tbs_trt_test_settings(tbs_trt_under_test)
set_property(TARGET tbs_trt_under_test PROPERTY POSITION_INDEPENDENT_CODE ON)
target_compile_definitions(tbs_trt_under_test PUBLIC TBS_HAVE_TENSORRT=1)
find_package(Threads REQUIRED)
target_link_libraries(tbs_trt_under_test PUBLIC ${CMAKE_DL_LIBS} Threads::Threads)

# fake_<name>: a shared library standing in for libnvinfer / libnvonnxparser.
function(_tbs_trt_fake name source outdir outname soversion)
  add_library(${name} SHARED "${_t}/${source}")
  _tbs_trt_test_settings(${name})
  target_compile_definitions(${name} PRIVATE ${ARGN})
  set_target_properties(${name} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY "${_fake_dir}/${outdir}"
    OUTPUT_NAME "${outname}" SOVERSION "${soversion}"
    CXX_VISIBILITY_PRESET default)
endfunction()

# A complete TensorRT 10.16.1 install: libnvinfer.so.10 + libnvonnxparser.so.10 in one directory.
_tbs_trt_fake(tbs_fake_nvinfer_10_16 fake_nvinfer.cc good nvinfer 10 FAKE_TRT_VERSION=101601)
_tbs_trt_fake(tbs_fake_onnxparser fake_nvonnxparser.cc good nvonnxparser 10)
# Variants, each alone in its own directory.
_tbs_trt_fake(tbs_fake_nvinfer_11 fake_nvinfer.cc v11 nvinfer 11 FAKE_TRT_VERSION=110100)
_tbs_trt_fake(tbs_fake_nvinfer_10_7 fake_nvinfer.cc v10_7 nvinfer 10 FAKE_TRT_VERSION=100700)
_tbs_trt_fake(tbs_fake_nvinfer_nobuilder fake_nvinfer.cc nobuilder nvinfer 10 FAKE_TRT_VERSION=101601 FAKE_OMIT_BUILDER=1)
_tbs_trt_fake(tbs_fake_nvinfer_noversion fake_nvinfer.cc noversion nvinfer 10 FAKE_TRT_VERSION=101601 FAKE_OMIT_VERSION=1)
_tbs_trt_fake(tbs_fake_onnxparser_noparser fake_nvonnxparser.cc noparser nvonnxparser 10 FAKE_OMIT_PARSER=1)

set(_tbs_trt_fakes tbs_fake_nvinfer_10_16 tbs_fake_onnxparser tbs_fake_nvinfer_11 tbs_fake_nvinfer_10_7
  tbs_fake_nvinfer_nobuilder tbs_fake_nvinfer_noversion tbs_fake_onnxparser_noparser)

# tbs_trt_test_<name> from test_<name>.cc, registered as ctest trt_<name>. Test programs share
# the core tests' harness and scratch directory (native/test/check.h, temp_dir.h).
function(_tbs_trt_test name)
  add_executable(tbs_trt_test_${name} "${_t}/test_${name}.cc")
  _tbs_trt_test_settings(tbs_trt_test_${name})
  target_include_directories(tbs_trt_test_${name} PRIVATE "${TBS_TRT_DIR}/test")
  target_link_libraries(tbs_trt_test_${name} PRIVATE tbs_trt_under_test)
  add_test(NAME trt_${name} COMMAND tbs_trt_test_${name})
  # The tests set TBS_* loader variables themselves; never inherit a developer's settings.
  set_tests_properties(trt_${name} PROPERTIES
    ENVIRONMENT "TBS_TRT_LIB_DIR=;TBS_NVINFER_LIB=;TBS_NVONNXPARSER_LIB=" TIMEOUT 60)
endfunction()

foreach(_name adapters options loader backend timing_cache)
  _tbs_trt_test(${_name})
  add_dependencies(tbs_trt_test_${_name} ${_tbs_trt_fakes})
  target_compile_definitions(tbs_trt_test_${_name} PRIVATE
    FAKE_GOOD_DIR="${_fake_dir}/good"
    FAKE_NVINFER_10_16="$<TARGET_FILE:tbs_fake_nvinfer_10_16>"
    FAKE_ONNXPARSER="$<TARGET_FILE:tbs_fake_onnxparser>"
    FAKE_NVINFER_11="$<TARGET_FILE:tbs_fake_nvinfer_11>"
    FAKE_NVINFER_10_7="$<TARGET_FILE:tbs_fake_nvinfer_10_7>"
    FAKE_NVINFER_NOBUILDER="$<TARGET_FILE:tbs_fake_nvinfer_nobuilder>"
    FAKE_NVINFER_NOVERSION="$<TARGET_FILE:tbs_fake_nvinfer_noversion>"
    FAKE_ONNXPARSER_NOPARSER="$<TARGET_FILE:tbs_fake_onnxparser_noparser>"
    FAKE_MISSING_DIR="${_fake_dir}/does-not-exist")
endforeach()

# --- end-to-end through TrtBackend::build with scripted fake libraries ----------------------------
# fake_full_*.cc implement IBuilder & co. on do-nothing stubs generated from the headers found
# (gen_stubs.py, at configure time, into the build tree; nothing generated is committed). When
# Python is missing or the headers have a shape the generator does not understand, this one test
# is skipped with a message; the others are unaffected.
set(_gen_dir "${CMAKE_CURRENT_BINARY_DIR}/trt-fake-gen")
set(_tbs_trt_full_reason "")
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  set(_tbs_trt_full_reason "python3 not found")
else()
  file(MAKE_DIRECTORY "${_gen_dir}")
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${_t}/gen_stubs.py" "${TBS_TENSORRT_INCLUDE_DIR}" "${_gen_dir}/trt_stubs.h"
      "NvInferImpl.h,nvinfer1::apiv,VBuilder" "NvInferImpl.h,nvinfer1::apiv,VBuilderConfig"
      "NvInferImpl.h,nvinfer1::apiv,VNetworkDefinition" "NvInferImpl.h,nvinfer1::apiv,VTensor"
      "NvInferImpl.h,nvinfer1::apiv,VOptimizationProfile"
      "NvOnnxParser.h,nvonnxparser,IParser" "NvOnnxParser.h,nvonnxparser,IParserError"
    RESULT_VARIABLE _gen_rc ERROR_VARIABLE _gen_err OUTPUT_QUIET)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_t}/gen_stubs.py"
    "${TBS_TENSORRT_INCLUDE_DIR}/NvInferImpl.h" "${TBS_TENSORRT_INCLUDE_DIR}/NvOnnxParser.h")
  if(NOT _gen_rc EQUAL 0)
    string(STRIP "${_gen_err}" _gen_err)
    set(_tbs_trt_full_reason "stub generation failed: ${_gen_err}")
  else()
    try_compile(_tbs_stubs_ok "${_gen_dir}/check" SOURCES "${_t}/stubs_check.cc"
      COMPILE_DEFINITIONS "-isystem${TBS_TENSORRT_INCLUDE_DIR}" "-isystem${TBS_CUDA_INCLUDE_DIR}" "-I${_gen_dir}"
      CXX_STANDARD 17 OUTPUT_VARIABLE _stubs_out)
    if(NOT _tbs_stubs_ok)
      set(_tbs_trt_full_reason "generated stubs do not compile against these headers")
    endif()
  endif()
endif()

if(_tbs_trt_full_reason)
  string(REPLACE "'" "" _tbs_trt_full_reason "${_tbs_trt_full_reason}")  # it is quoted for sh below
  string(REPLACE "\n" " " _tbs_trt_full_reason "${_tbs_trt_full_reason}")
  message(STATUS "TensorRT backend: end-to-end fake test skipped (${_tbs_trt_full_reason})")
  find_program(TBS_SH sh)
  if(TBS_SH)
    add_test(NAME trt_full_fake COMMAND "${TBS_SH}" -c "echo 'SKIPPED: ${_tbs_trt_full_reason}'; exit 77")
    set_tests_properties(trt_full_fake PROPERTIES SKIP_RETURN_CODE 77)
  endif()
else()
  _tbs_trt_fake(tbs_fake_full_nvinfer fake_full_nvinfer.cc full nvinfer 10)
  _tbs_trt_fake(tbs_fake_full_onnxparser fake_full_nvonnxparser.cc full nvonnxparser 10)
  foreach(_lib tbs_fake_full_nvinfer tbs_fake_full_onnxparser)
    target_include_directories(${_lib} PRIVATE "${_gen_dir}")
  endforeach()
  _tbs_trt_test(full_fake)
  add_dependencies(tbs_trt_test_full_fake tbs_fake_full_nvinfer tbs_fake_full_onnxparser)
  target_compile_definitions(tbs_trt_test_full_fake PRIVATE
    FAKE_FULL_DIR="${_fake_dir}/full" FAKE_FULL_NVINFER="$<TARGET_FILE:tbs_fake_full_nvinfer>"
    FAKE_FULL_ONNXPARSER="$<TARGET_FILE:tbs_fake_full_onnxparser>")
endif()
