set(NDCONV_ENGINE_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/engine/engine.cpp ${CMAKE_CURRENT_SOURCE_DIR}/engine/gaussian.cpp ${CMAKE_CURRENT_SOURCE_DIR}/engine/ko_rule.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/bank_front.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/design.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/engine/adaptive/pipeline.cpp)
