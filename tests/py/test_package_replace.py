"""Table.replace of our Python package (tl_table_replace and
tl_table_replace_schema): the rows, columns and partitioning replaced in one
commit, read back by pyiceberg (the new schema and spec, the old snapshot
under its own schema) while another thread's queries never find the table
missing or half replaced."""

import datetime as dt
import threading
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import package_contract as contract
from conftest import table_files
from test_interop import metadata_file
from test_package import timelake

UTC = dt.timezone.utc
OLD = contract.SCHEMA
NEW = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()),
                 ("temp", pa.float64()), ("site", pa.string())])


def new_rows(n, site="north"):
    old = contract.readings(n, start=dt.datetime(2026, 2, 1, tzinfo=UTC))
    return old.append_column("site", pa.array([site] * n))


def iceberg(work, table="iot/readings"):
    return StaticTable.from_metadata(metadata_file(Path(work), table))


def spec_fields(work):
    return [(f.name, str(f.transform)) for f in iceberg(work).spec().fields]


def test_replace_schema_and_partitioning_in_one_commit(tmp_path):
    lake = timelake.Lake(str(tmp_path))
    t = contract.iot(lake, dedup=False)  # partitions by a column other than the series key
    t.append(contract.readings(6), maintain=False)
    old_snapshot = iceberg(tmp_path).current_snapshot().snapshot_id
    res = t.replace(new_rows(4), schema=NEW, partition_by=["site"], batch_id="rebuild-1")
    assert set(res) >= contract.APPEND_KEYS and res["rows"] == 4 and res["version"] == t.version == 3
    assert t.schema.names == ["time", "device_id", "temp", "site", "_ingest_ts"]
    assert lake.sql("SELECT count(*) AS n, min(site) AS s FROM iot.readings").to_pylist() == [{"n": 4, "s": "north"}]
    assert t.info()["series_key"] == ["device_id"]

    table = iceberg(tmp_path)
    assert [f.name for f in table.schema().fields] == ["time", "device_id", "temp", "site", "_ingest_ts"]
    assert spec_fields(tmp_path) == [("time_day", "day"), ("site", "identity")]
    snap = table.current_snapshot()
    assert snap.summary.operation.value == "overwrite" and snap.parent_snapshot_id == old_snapshot
    got = table.scan().to_arrow()
    assert got.num_rows == 4 and set(got.column("site").to_pylist()) == {"north"}
    old = table.scan(snapshot_id=old_snapshot).to_arrow()
    assert "site" not in old.column_names and old.num_rows == 6

    # The same batch id again writes nothing.
    assert t.replace(new_rows(4), schema=NEW, partition_by=["site"], batch_id="rebuild-1")["duplicate"]
    assert t.version == 3


def test_replace_rows_only_and_partitioning_only(tmp_path):
    lake = timelake.Lake(str(tmp_path))
    t = contract.iot(lake, dedup=False)  # partitions by a column other than the series key
    t.append(contract.readings(6), maintain=False)
    # Neither: the rows change, the columns and spec stay.
    assert t.replace(contract.readings(2))["rows"] == 2
    assert t.schema.names == ["time", "device_id", "temp", "_ingest_ts"]
    assert iceberg(tmp_path).spec().spec_id == 0
    # partition_by alone: the data's columns become the table's.
    t.replace(new_rows(3, site="south"), partition_by=["site"])
    assert "site" in t.schema.names and spec_fields(tmp_path) == [("time_day", "day"), ("site", "identity")]
    # schema alone: the partitioning stays as it is.
    t.replace(new_rows(5), schema=NEW)
    assert spec_fields(tmp_path) == [("time_day", "day"), ("site", "identity")]
    assert iceberg(tmp_path).scan().to_arrow().num_rows == 5


def test_bad_replace_changes_nothing(tmp_path):
    lake = timelake.Lake(str(tmp_path))
    t = contract.iot(lake, dedup=False)  # partitions by a column other than the series key
    t.append(contract.readings(6), maintain=False)
    files = table_files(tmp_path)
    with pytest.raises(ValueError, match="nope"):
        t.replace(new_rows(2), schema=NEW, partition_by=["nope"])
    with pytest.raises(ValueError, match="time"):  # the time column cannot go
        t.replace(pa.table({"device_id": ["a"], "temp": [1.0]}),
                  schema=pa.schema([("device_id", pa.string()), ("temp", pa.float64())]))
    with pytest.raises(TypeError, match="partition_by"):
        t.replace(new_rows(2), partition_by="site")
    with pytest.raises(TypeError, match="Arrow data"):
        t.replace([1, 2])
    assert t.version == 2 and table_files(tmp_path) == files
    assert lake.sql("SELECT count(*) AS n FROM iot.readings").to_pylist() == [{"n": 6}]


def test_a_reader_never_sees_the_table_missing(tmp_path):
    lake = timelake.Lake(str(tmp_path))
    t = contract.iot(lake, dedup=False)  # partitions by a column other than the series key
    t.append(contract.readings(6), maintain=False)
    sizes = {6} | {4 + k for k in range(6)}
    seen, errors = [], []
    started, done = threading.Event(), threading.Event()

    def reader():
        other = timelake.Lake(str(tmp_path))  # its own handle: queries run beside the replaces
        try:
            while not done.is_set():
                seen.append(other.sql("SELECT count(*) AS n FROM iot.readings").column("n")[0].as_py())
                started.set()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
            started.set()

    th = threading.Thread(target=reader)
    th.start()
    assert started.wait(timeout=300)
    for k in range(6):
        schema = NEW if k % 2 == 0 else OLD
        data = new_rows(4 + k) if k % 2 == 0 else contract.readings(4 + k)
        t.replace(data, schema=schema, partition_by=["site"] if k % 2 == 0 else [])
    done.set()
    th.join(timeout=300)
    assert not errors, errors
    assert seen and set(seen) <= sizes, seen
    assert lake.sql("SELECT count(*) AS n FROM iot.readings").to_pylist() == [{"n": 9}]
