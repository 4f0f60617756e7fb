# Review torture tests: they reach the query layer's headers, which include
# duckdb.h (found by query.cmake).
if(TARGET test_review_torture)
  target_include_directories(test_review_torture SYSTEM PRIVATE "${TL_DUCKDB_INCLUDE}")
endif()
