# The installed-package test (run with cmake -P): installs the build tree into a temporary
# prefix, configures and builds docs/examples against it using only find_package, then runs the
# example on a tiny generated image (MetaImage in, NIfTI out, then that NIfTI in again), and the
# installed `bin/ndconv` on the same image.
# Variables: BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR, MAKE_PROGRAM, C_COMPILER, CXX_COMPILER.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok\n${out}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

run_step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/ndconv include/ndconv/engine.h include/ndconv/itk/ndconvConvolutionImageFilter.h
          lib/cmake/ndconv/ndconvConfig.cmake lib/cmake/ndconv/ndconvConfigVersion.cmake)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install did not produce ${f}")
  endif()
endforeach()

run_step("configure the example" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/docs/examples"
  -B "${WORK_DIR}/build" -G "${GENERATOR}" -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
  -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run_step("build the example" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")

# An 9x8x7 image of random printable bytes (never zero), anisotropic spacing.
string(RANDOM LENGTH 504 ALPHABET "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" voxels)
file(WRITE "${WORK_DIR}/tiny.raw" "${voxels}")
file(WRITE "${WORK_DIR}/tiny.mhd" "ObjectType = Image\nNDims = 3\nDimSize = 9 8 7\n"
  "ElementSpacing = 0.8 1 1.5\nElementType = MET_UCHAR\nElementDataFile = tiny.raw\n")

set(example "${WORK_DIR}/build/ndconv_itk_example")
run_step("convolution" ${example} "${WORK_DIR}/tiny.mhd" "${WORK_DIR}/box.nii.gz")
run_step("gaussian" ${example} "${WORK_DIR}/box.nii.gz" "${WORK_DIR}/smooth.nii.gz" 1.2)
foreach(f box.nii.gz smooth.nii.gz)
  if(NOT EXISTS "${WORK_DIR}/${f}")
    message(FATAL_ERROR "the example did not write ${f}")
  endif()
endforeach()

# The installed command works on its own: the README's smoothing example on the same image.
run_step("installed ndconv" "${prefix}/bin/ndconv" smooth "${WORK_DIR}/tiny.mhd"
  "${WORK_DIR}/cli.nii.gz" --sigma 1 --device cpu)
run_step("installed ndconv info" "${prefix}/bin/ndconv" info "${WORK_DIR}/cli.nii.gz")
