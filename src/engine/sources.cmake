set(NDCONV_ENGINE_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/engine.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/gaussian.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/memory.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/first_touch.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/backend_cost.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/stored.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/bank_front.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/design.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/pipeline.cpp)
# Filters on the engine (issue 32): kernel specs, derived filters, the median's front end.
list(APPEND NDCONV_ENGINE_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/kernel_spec.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/derived_filters.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/median.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/filters/recursive_gaussian.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/median.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/cpu/recursive_gaussian.cpp)
if(NDCONV_HAVE_CUDA)
  list(APPEND NDCONV_ENGINE_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/median/median_launch.cu
                                    ${CMAKE_CURRENT_SOURCE_DIR}/cuda/recursive_gaussian/recursive_launch.cu)
endif()
