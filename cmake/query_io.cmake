# Query-time I/O (remote fetches, row-group pruning, the fetch directory):
# its unit tests reach the query layer's headers, which include duckdb.h
# (found by query.cmake).
foreach(name test_row_group_prune test_query_fetch_dir)
  if(TARGET ${name})
    target_include_directories(${name} SYSTEM PRIVATE "${TL_DUCKDB_INCLUDE}")
  endif()
endforeach()
