"""Timestamps finer than the table's microseconds (Parquet `ns`, CSV
".000000001Z", pyarrow timestamp[ns]) would lose digits: each is an error
naming the column, the row (or the file and line) and the value, and nothing
is written. Readings 1 ns apart are not collapsed into one by dedup.
Nanosecond values that are whole microseconds load exactly, as the
reference loads them."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import table_files
from test_cli import lake, ok, read_table, run  # noqa: F401 (lake: the CLI-made table fixture)
from test_package import timelake

NS = pa.timestamp("ns", tz="UTC")
BASE = 1_714_557_600_000_000_000  # 2024-05-01T10:00:00Z in ns


def ns_table(values, devices=None):
    return pa.table({"time": pa.array(values, NS), "device_id": devices or ["pump-1"] * len(values),
                     "temp": [1.0] * len(values)})


def test_cli_csv_with_nanoseconds_is_refused(tmp_path, lake):
    before = table_files(lake)
    f = tmp_path / "ns.csv"
    f.write_text("time,device_id,temp\n2024-05-01T10:00:00.000001Z,pump-1,1.5\n"
                 "2024-05-01T10:00:00.000000001Z,pump-1,2.5\n2024-05-01T10:00:00.000000002Z,pump-1,3.5\n")
    p = run("append", "--lake", lake, "--table", "iot.readings", f)
    err = p.stderr.decode()
    assert p.returncode == 1, err
    for words in (str(f), "line 3", 'column "time"', '"2024-05-01T10:00:00.000000001Z"',
                  "below a microsecond"):
        assert words in err, (words, err)
    assert table_files(lake) == before
    # Zeros below the microsecond lose nothing.
    f.write_text("time,device_id,temp\n2024-05-01T10:00:00.000001000Z,pump-1,1.5\n")
    assert json.loads(ok("append", "--lake", lake, "--table", "iot.readings", f, "--json"))["rows"] == 1
    assert read_table(lake).column("time").cast(pa.int64()).to_pylist() == [BASE // 1000 + 1]


def test_cli_parquet_ns_is_refused(tmp_path, lake):
    before = table_files(lake)
    f = tmp_path / "ns.parquet"
    pq.write_table(ns_table([BASE, BASE + 1, BASE + 2]), f)
    p = run("append", "--lake", lake, "--table", "iot.readings", f)
    err = p.stderr.decode()
    assert p.returncode == 1, err
    for words in ('column "time"', "(row 1)", "2024-05-01T10:00:00.000000001", "below a microsecond"):
        assert words in err, (words, err)
    assert table_files(lake) == before
    pq.write_table(ns_table([BASE, BASE + 1000]), f)  # whole microseconds
    assert json.loads(ok("append", "--lake", lake, "--table", "iot.readings", f, "--json"))["rows"] == 2
    assert read_table(lake).column("time").cast(pa.int64()).to_pylist() == [BASE // 1000, BASE // 1000 + 1]


def test_package_append_of_nanoseconds(tmp_path):
    lake = timelake.Lake(str(tmp_path / "lake"))
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
    t = lake.create_table("t", schema, time_column="time", series_key=["device_id"])
    # With dedup on, these two would have become one row.
    with pytest.raises(ValueError, match=r'column "time".*\(row 1\).*below a microsecond'):
        t.append(ns_table([BASE + 1000, BASE + 1001]))
    assert t.version == 1 and t.info()["rows"] == 0
    assert t.append(ns_table([BASE, BASE + 1000]))["rows"] == 2
    assert lake.sql("SELECT count(*) AS n FROM t").column("n")[0].as_py() == 2
