set(NDCONV_ENGINE_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/engine.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/gpu_slabs.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/gaussian.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/memory.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/backend_cost.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/backend_choice.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/backend_work.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/plan.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/stored.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/bank_front.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/design.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/design_fit.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/design_cache.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/pipeline.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/presets.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/cost.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/stage_support.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/stage_banks.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/orientation.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/slab_stages.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/relaxation.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/control.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/reconstruction.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/resident_stages.cpp)
# The filters on the engine: kernel specs, derived filters, the median's and the recursive
# Gaussian's front ends.
list(APPEND NDCONV_ENGINE_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/kernel_spec.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/derived_filters.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/median.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/recursive_gaussian.cpp)
