# Prerequisites of the Python package (bindings/python): pybind11 (Debian's
# pybind11-dev) and the headers of the interpreter the package is built for
# (STRATA_PYTHON_EXECUTABLE, Debian's /usr/bin/python3 by default: the one
# that has python3-numpy). Sets STRATA_PYTHON_ENABLED.
#
# Included before the module libraries are added: the extension module links
# the static libraries into a shared object, so they must be compiled
# position independent. -fno-semantic-interposition keeps GCC's -fPIC code as
# fast as the default PIE code in the executables (without it GCC may not
# inline or propagate across exported functions, as if each could be replaced
# at load time).
set(STRATA_PYTHON_EXECUTABLE /usr/bin/python3 CACHE FILEPATH
    "Interpreter the Python package is built for")
set(STRATA_PYTHON_ENABLED OFF)
if(STRATA_BUILD_PYTHON)
  set(Python_EXECUTABLE ${STRATA_PYTHON_EXECUTABLE})
  find_package(Python 3.8 QUIET COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    find_package(pybind11 2.6 CONFIG QUIET)
  endif()
  if(Python_FOUND AND pybind11_FOUND)
    set(STRATA_PYTHON_ENABLED ON)
    set(CMAKE_POSITION_INDEPENDENT_CODE ON)
    add_compile_options(-fno-semantic-interposition)
    message(STATUS "Python package: pybind11 ${pybind11_VERSION} for ${Python_EXECUTABLE} "
                   "(Python ${Python_VERSION})")
  elseif(NOT Python_FOUND)
    message(STATUS "Python package skipped: no interpreter with development headers at "
                   "${STRATA_PYTHON_EXECUTABLE} (apt-get install python3-dev)")
  else()
    message(STATUS "Python package skipped: pybind11 not found (apt-get install pybind11-dev)")
  endif()
endif()
