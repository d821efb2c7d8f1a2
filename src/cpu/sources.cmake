# The CPU backend (src/cpu/). The row kernels are compiled once per instruction set and chosen
# at run time (isa_dispatch.cpp), so the binary stays portable without -march=native.
set(NDCONV_CPU_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cpu)
set(NDCONV_CPU_SOURCES cpu_backend.cpp dense.cpp separable.cpp finite_scan.cpp
  blocking_rule.cpp isa_dispatch.cpp cpu_info.cpp bank.cpp bank_int8.cpp bank_rule.cpp
  median.cpp recursive_gaussian.cpp fma_peak.cpp jacobi_lanes.cpp)
list(TRANSFORM NDCONV_CPU_SOURCES PREPEND ${NDCONV_CPU_DIR}/)

# The kernel units of one instruction set (kernels_, bank_kernels_, median_kernels_<isa>.cpp): built
# with `flags` and with the facts row_kernel.h and bank_row_kernel.h read (NDCONV_CPU_ISA, the
# namespace of the copy; NDCONV_CPU_LANES, floats per vector; NDCONV_CPU_REGISTERS). FMA
# contraction is what the kernels are for; ISO C++ mode would otherwise turn it off.
function(ndconv_cpu_isa_units isa lanes registers flags)
  set(units ${NDCONV_CPU_DIR}/kernels_${isa}.cpp ${NDCONV_CPU_DIR}/bank_kernels_${isa}.cpp
    ${NDCONV_CPU_DIR}/median_kernels_${isa}.cpp)
  set(options -O3 ${flags} -ffp-contract=fast)
  set_source_files_properties(${units} PROPERTIES
    COMPILE_OPTIONS "${options}"
    COMPILE_DEFINITIONS "NDCONV_CPU_ISA=${isa};NDCONV_CPU_LANES=${lanes};NDCONV_CPU_REGISTERS=${registers}")
  # The control tensor's Jacobi rotations: each lane as the one-matrix code computes it, so no
  # contraction; no errno, so that a square root is one instruction.
  set(jacobi ${NDCONV_CPU_DIR}/jacobi_lanes_${isa}.cpp)
  set_source_files_properties(${jacobi} PROPERTIES
    COMPILE_OPTIONS "-O3;${flags};-ffp-contract=off;-fno-math-errno"
    COMPILE_DEFINITIONS "NDCONV_CPU_ISA=${isa}")
  set(NDCONV_CPU_SOURCES ${NDCONV_CPU_SOURCES} ${units} ${jacobi} PARENT_SCOPE)
endfunction()

# SSE2 (the x86-64 baseline) or the target's 128-bit SIMD.
ndconv_cpu_isa_units(generic 4 16 "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND
   CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  ndconv_cpu_isa_units(avx2 8 16 "-mavx2;-mfma")
  ndconv_cpu_isa_units(avx512 16 32 "-mavx512f;-mavx2;-mfma")
  # The 8-bit filter bank's tiles (bank_int8.h): only this unit gets the AMX flags.
  list(APPEND NDCONV_CPU_SOURCES ${NDCONV_CPU_DIR}/bank_amx.cpp)
  set_source_files_properties(${NDCONV_CPU_DIR}/bank_amx.cpp PROPERTIES
    COMPILE_OPTIONS "-O3;-mamx-tile;-mamx-int8;-mavx512f;-mavx2;-mfma"
    COMPILE_DEFINITIONS NDCONV_CPU_X86_KERNELS=1)
  set_source_files_properties(${NDCONV_CPU_DIR}/isa_dispatch.cpp
    ${NDCONV_CPU_DIR}/bank.cpp ${NDCONV_CPU_DIR}/bank_int8.cpp ${NDCONV_CPU_DIR}/median.cpp ${NDCONV_CPU_DIR}/jacobi_lanes.cpp
    PROPERTIES
    COMPILE_DEFINITIONS NDCONV_CPU_X86_KERNELS=1)
endif()
