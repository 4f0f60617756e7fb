"""SELECT count(*) FROM t answered from the manifests' record counts when no
duplicates can be pending (dedup on read off, or no two files of a partition
overlapping in time), as the reference does; otherwise scanned. In every
case the answer must be the scan's: checked against the rows a scan returns
(`SELECT * FROM t`) and against keys counted in Python."""

import datetime

import pyarrow as pa
import pytest

import tlc

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("v", pa.float64())])


def batch(start_s, n, devices=3, value=0.0):
    return pa.table({
        "time": [T0 + datetime.timedelta(seconds=start_s + i // devices) for i in range(n)],
        "device": [f"d{i % devices}" for i in range(n)],
        "v": [value + i for i in range(n)],
    }, schema=SCHEMA)


def count(lake, sql="SELECT count(*) FROM iot.r", stats=None, name="count_star()"):
    out = lake.sql(sql, stats=stats)
    assert out.column_names == [name]
    assert out.schema.field(0).type == pa.int64()
    return out.column(0)[0].as_py()


def scanned(lake, table="iot.r"):
    return lake.sql(f"SELECT * FROM {table}").num_rows


@pytest.fixture
def lake(tmp_path):
    lake = tlc.Lake(str(tmp_path / "lake"))
    lake.create_table("iot.r", SCHEMA, time_column="time", series_key=["device"])
    return lake


def test_disjoint_files_counted_from_manifests(lake):
    t = lake.table("iot.r")
    for i in range(4):
        t.append(batch(i * 1000, 30), maintain=False)
    stats = {}
    assert count(lake, stats=stats) == 120 == scanned(lake)
    assert stats["files_total"] == 4 and stats["files_read"] == 0  # no file opened
    # The alias, and count() without the star, as DuckDB names them.
    assert count(lake, "SELECT COUNT(*) AS n FROM iot.r", name="n") == 120
    assert count(lake, "select count() from iot.r") == 120


def test_pending_duplicates_are_scanned(lake):
    t = lake.table("iot.r")
    t.append(batch(0, 30), maintain=False)
    t.append(batch(5, 30, value=100.0), maintain=False)  # overlaps: 15 keys written twice
    keys = {(r["time"], r["device"]) for b in (batch(0, 30), batch(5, 30)) for r in b.to_pylist()}
    stats = {}
    assert count(lake, stats=stats) == len(keys) == 45 == scanned(lake)
    assert stats["files_read"] == 2
    # Dedup on read off (session or table): every stored row, from the manifests.
    stats = {}
    n = lake.query("SELECT count(*) FROM iot.r", stats=stats, settings={"read_dedup": "false"}).column(0)[0]
    assert n.as_py() == 60 == lake.query("SELECT * FROM iot.r", settings={"read_dedup": "false"}).num_rows
    assert stats["files_read"] == 0
    t.set_properties({"read-dedup": "false"})
    assert count(lake) == 60 == scanned(lake)
    t.set_properties({"read-dedup": None})
    assert count(lake) == 45
    # Compacted: one duplicate-free file per partition, counted from the manifest.
    t.maintain()
    stats = {}
    assert count(lake, stats=stats) == 45 == scanned(lake)
    assert stats["files_read"] == 0


def test_table_without_dedup_and_plain_tables(tmp_path):
    lake = tlc.Lake(str(tmp_path / "lake"))
    t = lake.create_table("iot.nodedup", SCHEMA, time_column="time", series_key=["device"], dedup=False)
    t.append(batch(0, 30), maintain=False)
    t.append(batch(5, 30), maintain=False)
    assert count(lake, "SELECT count(*) FROM iot.nodedup") == 60 == scanned(lake, "iot.nodedup")
    plain = lake.create_table("pipe.facts", SCHEMA)
    plain.append(batch(0, 10))
    plain.append(batch(0, 10))
    assert count(lake, "SELECT count(*) FROM pipe.facts") == 20 == scanned(lake, "pipe.facts")
    empty = lake.create_table("pipe.empty", SCHEMA)
    assert count(lake, "SELECT count(*) FROM pipe.empty") == 0 == scanned(lake, "pipe.empty")
    assert empty.info()["rows"] == 0


def test_removed_files_and_other_shapes(lake):
    t = lake.table("iot.r")
    t.append(batch(0, 30), maintain=False)
    t.append(batch(2 * 86400, 30), maintain=False)  # another day
    assert count(lake) == 60
    # A replace leaves only its own rows live.
    t.replace(batch(0, 12))
    assert count(lake) == 12 == scanned(lake)
    t.append(batch(86400, 9), maintain=False)
    assert count(lake) == 21 == scanned(lake)
    # Shapes that are not a bare count run as before, with the same answer.
    cut = "2026-01-02 00:00:00+00"
    assert count(lake, f"SELECT count(*) FROM iot.r WHERE time >= '{cut}'") == 9
    assert lake.sql("SELECT count(*) FROM iot.r LIMIT 0").num_rows == 0
    assert lake.sql("SELECT count(*) FROM iot.r GROUP BY device").num_rows == 3
    assert count(lake, "SELECT count(*) FROM (SELECT * FROM iot.r) s") == 21
    assert lake.sql("SELECT count(*) + 1 AS m FROM iot.r").column(0)[0].as_py() == 22
    assert count(lake, "SELECT count(v) AS c FROM iot.r", name="c") == 21
