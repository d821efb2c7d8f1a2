# The GPU filter bank and the adaptive filter's control tensor (src/cuda/bank/): their own
# translation units, added to ndconv_core when the CUDA backend is built.
if(NDCONV_HAVE_CUDA)
  target_sources(ndconv_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/bank.cu
                                     ${CMAKE_CURRENT_SOURCE_DIR}/cuda/bank/control.cu)
endif()
