# strata_add_test(<name> SOURCES <files...> LIBS <targets...> [LABELS fast|slow])
# One gtest executable per call, every test registered with ctest (label
# `fast` by default; `slow` tests run in the full suite too).
if(STRATA_BUILD_TESTS)
  include(GoogleTest)
  enable_testing()
endif()
function(strata_add_test name)
  if(NOT STRATA_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS fast)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/testutil)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${T_LABELS}"
                       DISCOVERY_TIMEOUT 60)
endfunction()

# strata_module(<name> SOURCES ... LIBS ...): a module library target
# `strata_<name>`. include/ is public; src/ is private, so modules reach each
# other's internal headers (layering is enforced by what they link) while the
# CLI, server and bindings, which link `strata`, see only include/strata/.
function(strata_module name)
  cmake_parse_arguments(M "" "" "SOURCES;LIBS" ${ARGN})
  add_library(strata_${name} STATIC ${M_SOURCES})
  target_include_directories(strata_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                           PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(strata_${name} PUBLIC ${M_LIBS})
endfunction()
