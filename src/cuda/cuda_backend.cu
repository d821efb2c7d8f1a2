// PLACEHOLDER (being replaced by the CUDA backend): the stubs, so that the low-level API links.
#include "cuda_unavailable.cpp"
