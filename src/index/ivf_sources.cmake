# IVF index (owned by the IVF work): build, merge and open behind the public API.
list(APPEND STRATA_INDEX_IVF_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_index_build.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_index_write.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_index_merge.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_index.cc)
list(APPEND STRATA_INDEX_IVF_TESTS
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_index_merge_test.cc)
list(APPEND STRATA_INDEX_IVF_LIBS strata_ivf)
