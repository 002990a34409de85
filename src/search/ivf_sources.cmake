# IVF search (owned by the IVF work): the read pipelines of RaBitQ-SSD over IoQueue.
list(APPEND STRATA_SEARCH_IVF_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_search.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_pipelines.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_restricted.cc)
list(APPEND STRATA_SEARCH_IVF_TESTS
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_search_test.cc)
list(APPEND STRATA_SEARCH_IVF_LIBS strata_ivf)
