"""Regenerates the golden Parquet files that tests/unit/test_parquet_golden.c reads.

Run with the project venv: .venv/bin/python tests/data/parquet/make_golden.py
Values follow formulas of the row index i (see the C test):
  id    int64   i*3 - 100, null when i % 7 == 3
  key   string  "" when i % 11 == 0, else "k<i % 10>"; null when i % 5 == 4
  val   double  i / 4
  ts    timestamp[us, UTC]  1700000000000000 + i * 1000000
  small int32   (i * 7919) % 100000 - 50000
"""
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

N = 300
HERE = Path(__file__).resolve().parent

table = pa.table({
    "id": pa.array([None if i % 7 == 3 else i * 3 - 100 for i in range(N)], pa.int64()),
    "key": pa.array([None if i % 5 == 4 else ("" if i % 11 == 0 else f"k{i % 10}") for i in range(N)]),
    "val": pa.array([i / 4 for i in range(N)], pa.float64()),
    "ts": pa.array([1_700_000_000_000_000 + i * 1_000_000 for i in range(N)], pa.timestamp("us", "UTC")),
    "small": pa.array([(i * 7919) % 100000 - 50000 for i in range(N)], pa.int32()),
})

pq.write_table(table, HERE / "pyarrow_v1_dict_snappy.parquet", compression="snappy",
               data_page_size=256, write_batch_size=32, row_group_size=128, store_schema=False)
pq.write_table(table, HERE / "pyarrow_v2_delta_zstd.parquet", compression="zstd",
               data_page_version="2.0", use_dictionary=False, store_schema=False,
               column_encoding={"id": "DELTA_BINARY_PACKED", "ts": "DELTA_BINARY_PACKED",
                                "small": "DELTA_BINARY_PACKED", "key": "DELTA_BYTE_ARRAY",
                                "val": "BYTE_STREAM_SPLIT"})
pq.write_table(table, HERE / "pyarrow_int96_gzip.parquet", compression="gzip",
               use_dictionary=False, use_deprecated_int96_timestamps=True, store_schema=False)
pq.write_table(table, HERE / "pyarrow_v1_legacy.parquet", version="1.0", compression="none",
               store_schema=False)
con = duckdb.connect()
con.register("t", table)
con.execute(f"COPY (SELECT * FROM t) TO '{HERE / 'duckdb_v2.parquet'}' "
            "(FORMAT parquet, PARQUET_VERSION v2, COMPRESSION zstd)")
