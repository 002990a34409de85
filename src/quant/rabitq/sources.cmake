# RaBitQ quantizers (owned by the rabitq sub-area): rotation, 1-bit / extended
# codes, Split-RaBitQ layouts, FastScan estimators. Included by
# src/quant/CMakeLists.txt, which builds everything into strata_quant.
set(STRATA_RABITQ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/rabitq)
list(APPEND STRATA_QUANT_SOURCES
     ${STRATA_RABITQ_DIR}/rotator.cc
     ${STRATA_RABITQ_DIR}/rotator_dense.cc
     ${STRATA_RABITQ_DIR}/rotator_fht.cc
     ${STRATA_RABITQ_DIR}/ex_code.cc
     ${STRATA_RABITQ_DIR}/layout.cc
     ${STRATA_RABITQ_DIR}/fastscan.cc
     ${STRATA_RABITQ_DIR}/quantizer.cc
     ${STRATA_RABITQ_DIR}/estimator.cc
     ${STRATA_RABITQ_DIR}/listed_code.cc)
# Per-ISA FastScan kernels: compiled with their ISA flags only and chosen at
# run time by fastscan.cc after the CPU check.
list(APPEND STRATA_QUANT_AVX2_SOURCES ${STRATA_RABITQ_DIR}/fastscan_avx2.cc)
list(APPEND STRATA_QUANT_AVX512_SOURCES ${STRATA_RABITQ_DIR}/fastscan_avx512.cc)
list(APPEND STRATA_QUANT_RABITQ_TESTS
     ${STRATA_RABITQ_DIR}/rotator_test.cc
     ${STRATA_RABITQ_DIR}/ex_code_test.cc
     ${STRATA_RABITQ_DIR}/layout_test.cc
     ${STRATA_RABITQ_DIR}/fastscan_test.cc
     ${STRATA_RABITQ_DIR}/quantizer_test.cc
     ${STRATA_RABITQ_DIR}/estimator_test.cc
     ${STRATA_RABITQ_DIR}/listed_code_test.cc)
