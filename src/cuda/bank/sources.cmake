# The GPU filter bank, the adaptive filter's control tensor and its device-resident stages
# (src/cuda/bank/): their own translation units, added to ndconv_core when the CUDA backend is
# built. The tensor-core banks' host sides (tensor_core_layout.cpp, wgmma_layout.cpp) are plain
# C++ and built always: CI's host emulation tests them without CUDA.
target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/tensor_core_layout.cpp
                                   ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/wgmma_layout.cpp)
if(NDCONV_HAVE_CUDA)
  target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/bank.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/bank_tensor.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/control.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/resident.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/tensor_core.cu)
  # The wgmma bank (wgmma.cu): Hopper's warpgroup MMA exists in sm_90a code alone, so this one
  # translation unit is compiled for sm_90a and nothing else (its own object library, without the
  # passes of CMAKE_CUDA_ARCHITECTURES), whatever the rest of the tree is built for.
  add_library(ndconv_wgmma OBJECT ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/wgmma.cu)
  set_target_properties(ndconv_wgmma PROPERTIES CUDA_ARCHITECTURES OFF
                                                CUDA_SEPARABLE_COMPILATION OFF)
  target_compile_options(ndconv_wgmma PRIVATE -gencode=arch=compute_90a,code=sm_90a)
  target_include_directories(ndconv_wgmma PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR})
  target_compile_definitions(ndconv_wgmma PRIVATE NDCONV_HAVE_CUDA=1)
  target_compile_features(ndconv_wgmma PRIVATE cxx_std_17)
  ndconv_warnings(ndconv_wgmma)
  target_sources(ndconv_core PRIVATE $<TARGET_OBJECTS:ndconv_wgmma>)
endif()
