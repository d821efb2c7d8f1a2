if(NDCONV_HAVE_CUDA)
  set(NDCONV_CUDA_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/cuda_backend.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/host_memory.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/convert/convert.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/launch_fused.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/tensor_map.cu)
else()
  set(NDCONV_CUDA_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/cuda_unavailable.cpp
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/host_memory_unavailable.cpp)
endif()
