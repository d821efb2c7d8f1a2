# The GPU filter bank, the adaptive filter's control tensor and its device-resident stages
# (src/cuda/bank/): their own translation units, added to ndconv_core when the CUDA backend is
# built. The tensor-core bank's host side (tensor_core_layout.cpp) is plain C++ and built always:
# CI's host emulation tests it without CUDA.
target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/tensor_core_layout.cpp)
if(NDCONV_HAVE_CUDA)
  target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/bank.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/bank_tensor.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/control.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/resident.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/tensor_core.cu)
endif()
