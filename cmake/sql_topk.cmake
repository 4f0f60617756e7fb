# The top-k window (issue #4): its recogniser's unit test builds query plans,
# whose headers include duckdb.h (found by query.cmake).
if(TARGET test_sql_plan_topk)
  target_include_directories(test_sql_plan_topk SYSTEM PRIVATE "${TL_DUCKDB_INCLUDE}")
endif()
