# The Python package's C extension, timelake._timelake (issue #7), built
# against the stable ABI of Python 3.10+ (one abi3 module for every version).
#  - Normal builds: when Python's headers are found, the module is built into
#    <build>/python/timelake/ next to a copy of the package's Python files, so
#    tests import `timelake` from there. Without the headers it is skipped.
#  - Wheel builds (scikit-build-core sets SKBUILD): the component "python"
#    installs the module, libtimelake and DuckDB's library into the package,
#    found through an $ORIGIN RPATH.
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
if(NOT Python3_Development.Module_FOUND)
  message(STATUS "timelake: Python headers not found, the Python extension is skipped")
  return()
endif()

file(GLOB TL_PY_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/src/*.c)
add_library(_timelake MODULE ${TL_PY_SOURCES})
target_include_directories(_timelake PRIVATE ${Python3_INCLUDE_DIRS} python/src)
target_compile_definitions(_timelake PRIVATE Py_LIMITED_API=0x030A0000)
target_link_libraries(_timelake PRIVATE timelake)
set(TL_PY_PKG_DIR ${CMAKE_CURRENT_BINARY_DIR}/python/timelake)
set_target_properties(_timelake PROPERTIES
  PREFIX "" SUFFIX ".abi3.so" C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${TL_PY_PKG_DIR})

# The pure-Python files beside the module in the build tree.
file(GLOB TL_PY_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/timelake/*)
foreach(f ${TL_PY_FILES})
  get_filename_component(fname ${f} NAME)
  configure_file(${f} ${TL_PY_PKG_DIR}/${fname} COPYONLY)
endforeach()

# Deferred to the end of the project: the query part (cmake/query.cmake, included
# after this file) sets libtimelake's RPATH and finds DuckDB's library.
function(tl_python_wheel_install)
  set_target_properties(_timelake PROPERTIES INSTALL_RPATH "$ORIGIN")
  # libtimelake is installed as a plain file (no RPATH rewrite), so it is linked
  # with its final RPATH: DuckDB beside it.
  set_target_properties(timelake PROPERTIES INSTALL_RPATH "$ORIGIN" BUILD_WITH_INSTALL_RPATH ON)
  install(TARGETS _timelake LIBRARY DESTINATION timelake COMPONENT python)
  # Only the file the module needs (its soname): wheels cannot hold symlinks.
  install(FILES $<TARGET_FILE:timelake> DESTINATION timelake RENAME libtimelake.so.0
          COMPONENT python)
  if(TL_DUCKDB_LIB)
    install(FILES ${TL_DUCKDB_LIB} DESTINATION timelake COMPONENT python)
  endif()
endfunction()
if(SKBUILD)
  cmake_language(DEFER CALL tl_python_wheel_install)
endif()
