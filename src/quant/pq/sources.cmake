# k-means + product quantization (the pq sub-area of strata_quant).
set(_STRATA_PQ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/pq)
list(APPEND STRATA_QUANT_SOURCES
  ${_STRATA_PQ_DIR}/sample.cc
  ${_STRATA_PQ_DIR}/blas_threads.cc
  ${_STRATA_PQ_DIR}/pq_kernels.cc
  ${_STRATA_PQ_DIR}/nearest.cc
  ${_STRATA_PQ_DIR}/balanced_assign.cc
  ${_STRATA_PQ_DIR}/kmeans.cc
  ${_STRATA_PQ_DIR}/hierarchical_kmeans.cc
  ${_STRATA_PQ_DIR}/pq_training.cc
  ${_STRATA_PQ_DIR}/opq.cc
  ${_STRATA_PQ_DIR}/product_quantizer.cc
  ${_STRATA_PQ_DIR}/product_quantizer_io.cc
  ${_STRATA_PQ_DIR}/pq_adc.cc)
list(APPEND STRATA_QUANT_AVX2_SOURCES ${_STRATA_PQ_DIR}/pq_kernels_avx2.cc)
list(APPEND STRATA_QUANT_AVX512_SOURCES ${_STRATA_PQ_DIR}/pq_kernels_avx512.cc)
list(APPEND STRATA_QUANT_PQ_TESTS
  ${_STRATA_PQ_DIR}/sample_test.cc
  ${_STRATA_PQ_DIR}/nearest_test.cc
  ${_STRATA_PQ_DIR}/pq_kernels_test.cc
  ${_STRATA_PQ_DIR}/kmeans_test.cc
  ${_STRATA_PQ_DIR}/balanced_assign_test.cc
  ${_STRATA_PQ_DIR}/hierarchical_kmeans_test.cc
  ${_STRATA_PQ_DIR}/product_quantizer_test.cc
  ${_STRATA_PQ_DIR}/product_quantizer_io_test.cc
  ${_STRATA_PQ_DIR}/opq_test.cc)
