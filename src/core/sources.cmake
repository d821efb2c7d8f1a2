# The ground floor (src/core/): problem types and helpers that the engine and both backends share.
# It includes only the public API (src/ndconv/); tests/layers_check.py holds every folder to its
# layer.
set(NDCONV_CORE_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/core/constant_border.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/core/first_touch.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/core/int8_digits.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/core/padding.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/core/parallel_for.cpp)
