# Install rules and the CMake package: `cmake --install build --prefix P` gives
#   P/include/ndconv/*.h          the engine's public API
#   P/include/ndconv/itk/*.h,hxx  the ITK filter layer (when built with ITK)
#   P/lib/libndconv_core.a        the engine
#   P/lib/cmake/ndconv/           ndconvConfig.cmake, its version file and the exported targets
#   P/bin/ndconv                  the command line (when built with ITK and CLI11)
# so that a downstream project does find_package(ndconv REQUIRED) and links ndconv::ndconv (the
# ITK filters; it brings ndconv::core, ITK, CUDA's runtime and Threads along) or ndconv::core
# (the engine alone).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NDCONV_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ndconv)

set_target_properties(ndconv_core PROPERTIES EXPORT_NAME core)
set(ndconv_install_targets ndconv_core)
if(NDCONV_HAVE_ITK)
  list(APPEND ndconv_install_targets ndconv_itk)
endif()
install(TARGETS ${ndconv_install_targets} EXPORT ndconvTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

if(TARGET ndconv)
  install(TARGETS ndconv RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

file(GLOB ndconv_public_headers ${PROJECT_SOURCE_DIR}/src/ndconv/*.h)
install(FILES ${ndconv_public_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ndconv)
if(NDCONV_HAVE_ITK)
  file(GLOB ndconv_itk_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/itk/*.h
       ${PROJECT_SOURCE_DIR}/src/itk/*.hxx)
  install(FILES ${ndconv_itk_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ndconv/itk)
endif()

install(EXPORT ndconvTargets NAMESPACE ndconv:: DESTINATION ${NDCONV_INSTALL_CMAKEDIR})

# Where this build found the CUDA toolkit, as a hint for find_dependency(CUDAToolkit).
set(NDCONV_CUDA_TOOLKIT_ROOT "")
if(NDCONV_HAVE_CUDA AND CUDAToolkit_BIN_DIR)
  get_filename_component(NDCONV_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ndconvConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ndconvConfig.cmake
  INSTALL_DESTINATION ${NDCONV_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ndconvConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ndconvConfig.cmake ${PROJECT_BINARY_DIR}/ndconvConfigVersion.cmake
  DESTINATION ${NDCONV_INSTALL_CMAKEDIR})
