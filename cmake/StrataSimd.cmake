# Per-file ISA flags: each SIMD kernel lives in its own translation unit
# (foo_avx2.cc, foo_avx512.cc) compiled with that ISA only; dispatch picks one
# at run time after checking the CPU, so the shipped binary runs on any x86-64.
set(STRATA_AVX2_FLAGS -mavx2 -mfma -mf16c -mbmi2 -mpopcnt)
set(STRATA_AVX512_FLAGS ${STRATA_AVX2_FLAGS} -mavx512f -mavx512bw -mavx512dq -mavx512vl
    -mavx512vpopcntdq -mavx512vnni -mavx512bf16)

# strata_isa_sources(<target> AVX2 <files...>) / AVX512 <files...>
function(strata_isa_sources target isa)
  set(files ${ARGN})
  target_sources(${target} PRIVATE ${files})
  if(isa STREQUAL "AVX2")
    set_source_files_properties(${files} PROPERTIES COMPILE_OPTIONS "${STRATA_AVX2_FLAGS}")
  elseif(isa STREQUAL "AVX512")
    set_source_files_properties(${files} PROPERTIES COMPILE_OPTIONS "${STRATA_AVX512_FLAGS}")
  else()
    message(FATAL_ERROR "unknown ISA ${isa}")
  endif()
endfunction()
