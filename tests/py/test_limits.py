"""Documented limits hold at any size: a CSV record or NDJSON line over 64 MiB
is refused (not only those past the reader's buffer doubling, ~128 MiB), and
a series key value over 4096 bytes is refused, since every later last-value
index would carry it. A refused append changes nothing."""
import datetime as dt

import pyarrow as pa
import pytest

import tlc
from conftest import table_files
from test_cli import SCHEMA, ok, run

MiB = 1 << 20


@pytest.fixture
def lake(tmp_path):
    lake = tmp_path / "lake"
    ok("create", "iot.readings", "--lake", lake, "--schema", SCHEMA, "--time-column", "time",
       "--series-key", "device_id")
    return lake


@pytest.mark.parametrize("size_mib", [70, 100])
@pytest.mark.parametrize("kind", ["csv", "ndjson"])
def test_record_over_64_mib_is_refused(tmp_path, lake, kind, size_mib):
    big = "x" * (size_mib * MiB)
    path = tmp_path / f"big.{kind}"
    with open(path, "w") as f:
        if kind == "csv":
            f.write(f"time,device_id,temp\n2024-05-01T10:00:00Z,pump-1,1\n2024-05-01T10:00:00Z,{big},2\n")
        else:
            f.write('{"time": "2024-05-01T10:00:00Z", "device_id": "pump-1", "temp": 1}\n')
            f.write(f'{{"time": "2024-05-01T10:00:00Z", "device_id": "{big}", "temp": 2}}\n')
    del big
    before = table_files(lake)
    p = run("append", path, "--lake", lake, "--table", "iot.readings")
    assert p.returncode == 1, p.stderr.decode()[-500:]
    assert b"64 MiB" in p.stderr and (b"line 3" if kind == "csv" else b"line 2") in p.stderr
    assert table_files(lake) == before


def test_series_key_value_is_bounded(tmp_path):
    lake = tlc.Lake(str(tmp_path / "lake"))
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()),
                        ("note", pa.string())])
    t = lake.create_table("t", schema, time_column="time", series_key=["device_id"])
    t0 = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)

    def rows(key, note="n"):
        return pa.table({"time": [t0, t0], "device_id": ["ok", key], "note": [note, note]}, schema=schema)

    t.append(rows("k" * 4096))  # at the limit
    before = table_files(tmp_path / "lake")
    with pytest.raises(ValueError, match=r'series key column "device_id": row 1 holds 4097 bytes'):
        t.append(rows("k" * 4097))
    with pytest.raises(ValueError, match="over the limit of 4096"):
        t.append(rows("k" * (5 * MiB)))
    assert table_files(tmp_path / "lake") == before
    # Other columns may be large: only the series key names a series.
    t.append(rows("small", note="n" * MiB))
    assert lake.sql("SELECT count(DISTINCT device_id) AS n FROM t").to_pylist() == [{"n": 3}]
