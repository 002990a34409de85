# IVF on-disk files (owned by the IVF work): the records file (sector file of
# kind kIvfRecords) and the RAM-loaded blob.
list(APPEND STRATA_FORMAT_IVF_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_records_file.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_ram_file.cc)
list(APPEND STRATA_FORMAT_IVF_TESTS
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_records_file_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/ivf_ram_file_test.cc)
list(APPEND STRATA_FORMAT_IVF_LIBS strata_ivf)
