# Unit tests of page pruning and page-subset decoding include query headers,
# which include DuckDB's.
if(TARGET test_parquet_pages)
  target_include_directories(test_parquet_pages SYSTEM PRIVATE "${TL_DUCKDB_INCLUDE}")
endif()
