"""Writes the page-index fixtures of tests/unit/test_parquet_pages.c: files
pyarrow writes with a page index (ColumnIndex + OffsetIndex) and many small
pages whose row boundaries differ between columns, with nulls, dictionary
and plain pages, data page v1 and v2. Run with the test venv's python:
    .venv/bin/python tests/data/parquet/make_pages.py
"""
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).parent
N = 1000


def table():
    ids = [None if i % 7 == 3 else i * 3 - 100 for i in range(N)]
    keys = [None if i % 5 == 4 else f"k{i % 10}" + "x" * (i % 13) for i in range(N)]
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "key": pa.array(keys, pa.string()),
        "val": pa.array([i / 4 for i in range(N)], pa.float64()),
        "ts": pa.array([1700000000000000 + i * 1000000 for i in range(N)], pa.timestamp("us", tz="UTC")),
        "small": pa.array([(i * 7919) % 100000 - 50000 for i in range(N)], pa.int32()),
        "flag": pa.array([None if i % 9 == 0 else i % 3 == 0 for i in range(N)], pa.bool_()),
    })


for version, dictionary in (("1.0", True), ("2.0", False)):
    pq.write_table(table(), HERE / f"pyarrow_pages_v{version[0]}.parquet", compression="snappy",
                   data_page_version=version, use_dictionary=dictionary, write_page_index=True,
                   data_page_size=200, write_batch_size=17, row_group_size=600, store_schema=False,
                   dictionary_pagesize_limit=300)  # v1: dictionary pages fall back to plain
