# The CPU backend (src/cpu/). The row kernels are compiled once per instruction set and chosen
# at run time (isa_dispatch.cpp), so the binary stays portable without -march=native.
set(NDCONV_CPU_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cpu)
set(NDCONV_CPU_SOURCES
  ${NDCONV_CPU_DIR}/cpu_backend.cpp
  ${NDCONV_CPU_DIR}/dense.cpp
  ${NDCONV_CPU_DIR}/separable.cpp
  ${NDCONV_CPU_DIR}/padding.cpp
  ${NDCONV_CPU_DIR}/finite_scan.cpp
  ${NDCONV_CPU_DIR}/parallel_for.cpp
  ${NDCONV_CPU_DIR}/blocking_rule.cpp
  ${NDCONV_CPU_DIR}/isa_dispatch.cpp
  ${NDCONV_CPU_DIR}/cpu_info.cpp
  ${NDCONV_CPU_DIR}/kernels_generic.cpp
  ${NDCONV_CPU_DIR}/bank.cpp
  ${NDCONV_CPU_DIR}/bank_rule.cpp
  ${NDCONV_CPU_DIR}/bank_kernels_generic.cpp)
# FMA contraction is what the kernels are for; ISO C++ mode would otherwise turn it off.
set_source_files_properties(${NDCONV_CPU_DIR}/kernels_generic.cpp
  ${NDCONV_CPU_DIR}/bank_kernels_generic.cpp PROPERTIES
  COMPILE_OPTIONS "-O3;-ffp-contract=fast")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND
   CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  list(APPEND NDCONV_CPU_SOURCES
    ${NDCONV_CPU_DIR}/kernels_avx2.cpp ${NDCONV_CPU_DIR}/kernels_avx512.cpp
    ${NDCONV_CPU_DIR}/bank_kernels_avx2.cpp ${NDCONV_CPU_DIR}/bank_kernels_avx512.cpp)
  set_source_files_properties(${NDCONV_CPU_DIR}/kernels_avx2.cpp
    ${NDCONV_CPU_DIR}/bank_kernels_avx2.cpp PROPERTIES
    COMPILE_OPTIONS "-O3;-mavx2;-mfma;-ffp-contract=fast")
  set_source_files_properties(${NDCONV_CPU_DIR}/kernels_avx512.cpp
    ${NDCONV_CPU_DIR}/bank_kernels_avx512.cpp PROPERTIES
    COMPILE_OPTIONS "-O3;-mavx512f;-mavx2;-mfma;-ffp-contract=fast")
  set_source_files_properties(${NDCONV_CPU_DIR}/isa_dispatch.cpp
    ${NDCONV_CPU_DIR}/bank.cpp PROPERTIES
    COMPILE_DEFINITIONS NDCONV_CPU_X86_KERNELS=1)
endif()
