# The GPU filter bank (src/cuda/bank/): its own translation unit, added to ndconv_core when the
# CUDA backend is built.
if(NDCONV_HAVE_CUDA)
  target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/bank.cu)
endif()
