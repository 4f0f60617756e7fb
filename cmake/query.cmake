# The query layer embeds DuckDB (libduckdb.so and duckdb.h from the npm
# registry, fetched by scripts/setup.d/duckdb.sh into .deps/duckdb). Every
# target that links the library finds libduckdb.so through an RPATH, so tests
# and the CLI run without LD_LIBRARY_PATH. DuckDB itself is not instrumented
# by our sanitizer flags; only our code is.
set(TL_DUCKDB_DIR "${CMAKE_CURRENT_SOURCE_DIR}/.deps/duckdb" CACHE PATH "DuckDB header and library")
find_path(TL_DUCKDB_INCLUDE duckdb.h PATHS "${TL_DUCKDB_DIR}/include" NO_DEFAULT_PATH)
find_library(TL_DUCKDB_LIB duckdb PATHS "${TL_DUCKDB_DIR}/lib" NO_DEFAULT_PATH)
if(NOT TL_DUCKDB_INCLUDE OR NOT TL_DUCKDB_LIB)
  message(FATAL_ERROR "DuckDB not found in ${TL_DUCKDB_DIR}: run scripts/setup.sh")
endif()
get_filename_component(TL_DUCKDB_LIBDIR "${TL_DUCKDB_LIB}" DIRECTORY)

# duckdb.h is a system header to us: its declarations are not ours to warn on.
target_include_directories(timelake_obj SYSTEM PUBLIC "${TL_DUCKDB_INCLUDE}")
foreach(tgt timelake_obj timelake timelake_static)
  target_link_libraries(${tgt} PUBLIC "${TL_DUCKDB_LIB}")
  target_link_options(${tgt} INTERFACE "LINKER:-rpath,${TL_DUCKDB_LIBDIR}")
endforeach()
set_target_properties(timelake PROPERTIES BUILD_RPATH "${TL_DUCKDB_LIBDIR}"
                                          INSTALL_RPATH "${TL_DUCKDB_LIBDIR}")
