# zero_gtest_discover_tests(<target> [<gtest_discover_tests arguments>...])
#
# gtest_discover_tests with the discovery moved from the build to the test
# run (DISCOVERY_MODE PRE_TEST), so that building never runs a test binary:
# a binary that starts slowly on a loaded machine (it loads cuBLAS, NCCL,
# NVRTC, OpenBLAS and MPI) can no longer fail a build.
#
# CMake's own PRE_TEST discovery ends the whole ctest run with a CMake error
# when one binary cannot list its tests, and no test runs. The file this
# registers lists the binary first; where that fails it adds, instead of the
# binary's tests, one test named `<target>.gtest_list_tests` that fails and
# prints why (the exit code or the timeout, and the binary's output), and
# the other binaries' tests still run.
#
# DISCOVERY_TIMEOUT defaults to 120 s instead of CMake's 5 s: listing is a
# test's first step now, and slowness is not a failure; a hang still is.
include(GoogleTest)

function(zero_gtest_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "DISCOVERY_TIMEOUT" "PROPERTIES")
  if(NOT arg_DISCOVERY_TIMEOUT)
    set(arg_DISCOVERY_TIMEOUT 120)
    set(timeout_argument DISCOVERY_TIMEOUT 120)
  endif()
  gtest_discover_tests(${target} ${ARGN} ${timeout_argument}
    DISCOVERY_MODE PRE_TEST)

  # The include file gtest_discover_tests just registered is the last one;
  # the guard below takes its place and includes it once listing works.
  get_property(includes DIRECTORY PROPERTY TEST_INCLUDE_FILES)
  list(POP_BACK includes discovery_include)
  set(guard "${CMAKE_CURRENT_BINARY_DIR}/${target}_list_guard.cmake")
  set(failure_script
      "${CMAKE_CURRENT_BINARY_DIR}/${target}_list_failure.cmake")
  set(failed_test "${target}.gtest_list_tests")
  # The failing test carries the binary's test properties (its labels).
  set(failed_test_properties "")
  if(arg_PROPERTIES)
    set(failed_test_properties
        "set_tests_properties([==[${failed_test}]==] PROPERTIES")
    foreach(item IN LISTS arg_PROPERTIES)
      string(APPEND failed_test_properties " [==[${item}]==]")
    endforeach()
    string(APPEND failed_test_properties ")")
  endif()
  file(GENERATE OUTPUT "${guard}" CONTENT "\
set(executable [==[$<TARGET_FILE:${target}>]==])
if(NOT EXISTS \"\${executable}\")
  # gtest_discover_tests' own file reports a binary that was not built.
  include([==[${discovery_include}]==])
  return()
endif()
execute_process(COMMAND \"\${executable}\" --gtest_list_tests
  TIMEOUT ${arg_DISCOVERY_TIMEOUT}
  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  include([==[${discovery_include}]==])
  return()
endif()
if(result MATCHES \"^[0-9]+$\")
  set(result \"exit code \${result}\")
endif()
string(REPLACE \"]==]\" \"] ==]\" output \"\${output}\")
file(WRITE [==[${failure_script}]==]
  \"message(NOTICE [==[cannot list the tests of \${executable} \"
  \"(\${result}, limit ${arg_DISCOVERY_TIMEOUT} s); its output:\\n\"
  \"\${output}]==])\\n\"
  \"message(FATAL_ERROR [==[none of its tests ran]==])\\n\")
add_test([==[${failed_test}]==] [==[${CMAKE_COMMAND}]==] -P
  [==[${failure_script}]==])
${failed_test_properties}
")
  set_property(DIRECTORY PROPERTY TEST_INCLUDE_FILES ${includes} "${guard}")
endfunction()
