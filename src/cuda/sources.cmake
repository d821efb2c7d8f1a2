if(NDCONV_HAVE_CUDA)
  set(NDCONV_CUDA_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/cuda_backend.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/host_call.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/host_memory.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/handle_pool.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/convert/convert.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/device_facts.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/blocked/blocked_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/separable/separable_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/separable/stream_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/tiled/tiled_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/border/border_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/border/constant_border.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/tensor_map.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/median/median_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/recursive_gaussian/recursive_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/fft/fft_launch.cu
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/fft/cufft_library.cpp)
else()
  set(NDCONV_CUDA_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/cuda_unavailable.cpp
                          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/host_memory_unavailable.cpp)
endif()
# Host-only CUDA policy, compiled with or without CUDA (the CI tests run it on recorded numbers).
list(APPEND NDCONV_CUDA_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/ko_rule.cpp
                                ${CMAKE_CURRENT_SOURCE_DIR}/cuda/fft/fft_policy.cpp)
