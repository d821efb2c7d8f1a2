# One dense filter on an 8-bit 3D volume on the tensor cores (src/cuda/tensor_dense/): the host
# side (tensor_dense_layout.cpp) is plain C++ and built always (CI's host emulation tests it
# without CUDA); the kernel's translation unit with the CUDA backend.
target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/tensor_dense/tensor_dense_layout.cpp)
if(NDCONV_HAVE_CUDA)
  target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/tensor_dense/tensor_dense.cu)
endif()
