# Tests of the watch probes (included by native/watch/watch.cmake). No real TensorRT library runs
# in any of them: the per-major tests run NVIDIA-sample-shaped programs over a fake libnvinfer of
# our own (fake_watch_nvinfer.cc), built from that major's public headers.
set(_wt "${CMAKE_CURRENT_LIST_DIR}")
find_package(Python3 COMPONENTS Interpreter QUIET)

# --- the dispatcher alone (no TensorRT header): always ------------------------------------------
add_library(tbs_watch_fake_plain SHARED "${_wt}/fake_plain_nvinfer.cc")
target_compile_options(tbs_watch_fake_plain PRIVATE -Wall -Wextra -Werror)
set_target_properties(tbs_watch_fake_plain PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/watch-fake-plain"
  OUTPUT_NAME nvinfer)
add_executable(tbs_watch_test_dispatch "${_wt}/test_dispatch.cc")
target_compile_options(tbs_watch_test_dispatch PRIVATE -Wall -Wextra -Werror)
target_compile_features(tbs_watch_test_dispatch PRIVATE cxx_std_17)
target_link_libraries(tbs_watch_test_dispatch PRIVATE tbs_watch_fake_plain ${CMAKE_DL_LIBS})
add_dependencies(tbs_watch_test_dispatch tbs_watch)
foreach(_case inert unsupported rtld_next)
  add_test(NAME watch_dispatch_${_case} COMMAND tbs_watch_test_dispatch ${_case})
  set_tests_properties(watch_dispatch_${_case} PROPERTIES TIMEOUT 30
    ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:tbs_watch>;TBS_WATCH_SOCKET=$<IF:$<STREQUAL:${_case},inert>,,/nonexistent/tbs-watch.sock>")
endforeach()

# --- per major: the shim and the drop-in over a fake libnvinfer of that major --------------------
foreach(_m IN LISTS TBS_WATCH_MAJORS)
  set(_gen "${TBS_WATCH_${_m}_GEN}")
  set(_inc "${TBS_WATCH_${_m}_INCLUDE}")
  set(_reason "")
  if(NOT Python3_Interpreter_FOUND)
    set(_reason "python3 not found (it generates the fake's stubs and runs the test sink)")
  elseif(NOT EXISTS "${_inc}/NvOnnxParser.h")
    set(_reason "the stub generator (native/test/trt/gen_stubs.py) needs NvOnnxParser.h beside NvInfer.h")
  else()
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" "${_wt}/../trt/gen_stubs.py" "${_inc}" "${_gen}/trt_stubs.h"
        "NvInferImpl.h,nvinfer1::apiv,VBuilder" "NvInferImpl.h,nvinfer1::apiv,VBuilderConfig"
        "NvInferImpl.h,nvinfer1::apiv,VNetworkDefinition" "NvInferImpl.h,nvinfer1::apiv,VTensor"
        "NvInferImpl.h,nvinfer1::apiv,VTimingCache" "NvInferImpl.h,nvinfer1::apiv,VCudaEngine"
      RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_QUIET)
    if(NOT _rc EQUAL 0)
      string(STRIP "${_err}" _err)
      set(_reason "stub generation failed: ${_err}")
    endif()
  endif()
  if(_reason)
    message(STATUS "watch: TensorRT ${_m} tests skipped: ${_reason}")
    string(REPLACE "'" "" _reason "${_reason}")
    add_test(NAME watch${_m}_skipped COMMAND sh -c "echo 'SKIPPED: watch tests for TensorRT ${_m}: ${_reason}'; exit 77")
    set_tests_properties(watch${_m}_skipped PROPERTIES SKIP_RETURN_CODE 77)
    continue()
  endif()
  string(REPLACE "." ";" _parts "${TBS_WATCH_${_m}_VERSION}")
  list(GET _parts 1 _minor)
  list(GET _parts 2 _patch)
  math(EXPR _hv "${_m} * 10000 + ${_minor} * 100 + ${_patch}")

  set(_fd "${CMAKE_CURRENT_BINARY_DIR}/watch${_m}-fake")
  add_library(tbs_watch${_m}_fake SHARED "${_wt}/fake_watch_nvinfer.cc")
  tbs_watch_use_headers(tbs_watch${_m}_fake ${_m})
  target_compile_definitions(tbs_watch${_m}_fake PRIVATE FAKE_TRT_VERSION=${_hv})
  set_target_properties(tbs_watch${_m}_fake PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${_fd}" OUTPUT_NAME nvinfer SOVERSION ${_m})
  target_link_libraries(tbs_watch${_m}_fake PRIVATE Threads::Threads)
  target_link_options(tbs_watch${_m}_fake PRIVATE "-Wl,-Bsymbolic")

  add_executable(tbs_watch${_m}_sample "${_wt}/watch_sample.cc")
  tbs_watch_use_headers(tbs_watch${_m}_sample ${_m})
  target_link_libraries(tbs_watch${_m}_sample PRIVATE tbs_watch${_m}_fake Threads::Threads ${CMAKE_DL_LIBS})
  add_executable(tbs_watch${_m}_sample_dlopen "${_wt}/watch_sample.cc")
  tbs_watch_use_headers(tbs_watch${_m}_sample_dlopen ${_m})
  target_compile_definitions(tbs_watch${_m}_sample_dlopen PRIVATE TBS_SAMPLE_DLOPEN=1)
  target_link_libraries(tbs_watch${_m}_sample_dlopen PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  add_dependencies(tbs_watch${_m}_sample tbs_watch tbs_watch${_m})
  add_dependencies(tbs_watch${_m}_sample_dlopen tbs_watch tbs_watch${_m} tbs_watch${_m}_fake)

  set(_cases plain engine killed chained chained_cancel twice child cancel cancel_star dlopen inert unreachable dropin_plain dropin_tty dropin_discovery)
  if(_m GREATER 10 OR _minor GREATER_EQUAL 13)
    list(APPEND _cases stream)
  endif()
  foreach(_case IN LISTS _cases)
    add_test(NAME watch${_m}_${_case}
      COMMAND "${Python3_EXECUTABLE}" "${_wt}/run_watch_test.py" ${_case}
        --shim "$<TARGET_FILE:tbs_watch>" --sample "$<TARGET_FILE:tbs_watch${_m}_sample>"
        --sample-dlopen "$<TARGET_FILE:tbs_watch${_m}_sample_dlopen>" --fake "$<TARGET_FILE:tbs_watch${_m}_fake>"
        --version "${_m}.${_minor}.${_patch}")
    set_tests_properties(watch${_m}_${_case} PROPERTIES TIMEOUT 60)
  endforeach()
endforeach()
