"""tl_table_replace_schema: one overwrite snapshot that replaces a table's
rows, columns and partitioning, through the ctypes binding; read back by
pyiceberg (current table and time travel, field and partition ids), DuckDB's
iceberg_scan and the reference timelake==0.7.0."""

import json
import textwrap

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import tlc
from conftest import table_files
from test_interop import metadata_file
from test_version_hint import ICEBERG_PY, duckdb_iceberg_count

import os
import subprocess

OLD = pa.schema([("region", pa.string()), ("n", pa.int64())])
NEW = pa.schema([("region", pa.string()), ("n", pa.int64()), ("city", pa.string())])


def duckdb_iceberg_rows(location, query):
    """Rows of `query` over iceberg_scan('<location>') (as the view t) in DuckDB 1.4.4."""
    if not ICEBERG_PY.exists():
        pytest.skip(".venv-iceberg is missing (scripts/setup.sh --test)")
    script = textwrap.dedent(f"""
        import json, pathlib, duckdb, duckdb_ext
        ext = pathlib.Path(list(duckdb_ext.__path__)[0]) / "extensions" / "v1.4.4" / "linux_amd64"
        con = duckdb.connect()
        for name in ("avro", "iceberg"):
            con.execute(f"LOAD '{{ext / (name + '.duckdb_extension')}}'")
        con.execute("CREATE VIEW t AS SELECT * FROM iceberg_scan('{location}')")
        print(json.dumps(con.execute({query!r}).fetchall()))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    p = subprocess.run([str(ICEBERG_PY), "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1])


def ids(schema):
    return {f.name: f.field_id for f in schema.fields}


def test_new_column_and_partitions_in_one_commit_every_reader_agrees(lake, lake_dir, reference):
    t = lake.create_table("k.s", OLD, partition_by=["region"])
    t.append(pa.table({"region": ["eu", "us", "eu"], "n": [1, 2, 3]}, schema=OLD), maintain=False)
    before = StaticTable.from_metadata(metadata_file(lake_dir, "k/s"))
    old_snapshot = before.current_snapshot().snapshot_id
    new = pa.table({"region": ["eu", "sa"], "n": [10, 11], "city": ["Oslo", "Lima"]}, schema=NEW)
    res = t.replace(new, schema=NEW, partition_by=["city", "region"], summary={"karet.run": "full"})
    assert (res["rows"], res["version"]) == (2, 3)
    assert lake.sql("SELECT region, n, city FROM k.s ORDER BY n").to_pylist() == new.to_pylist()

    table = StaticTable.from_metadata(metadata_file(lake_dir, "k/s"))
    assert table.metadata.table_uuid == before.metadata.table_uuid
    assert ids(table.schema()) == {**ids(before.schema()), "city": before.metadata.last_column_id + 1}
    assert table.schema().schema_id == 1 and len(table.schemas()) == 2
    spec = table.spec()
    assert spec.spec_id == 1 and [(f.name, str(f.transform)) for f in spec.fields] == \
        [("city", "identity"), ("region", "identity")]
    assert spec.fields[1].field_id == before.spec().fields[0].field_id  # region's partition field kept
    snap = table.current_snapshot()
    assert snap.summary.operation.value == "overwrite" and snap.schema_id == 1
    assert snap.parent_snapshot_id == old_snapshot
    assert table.scan().to_arrow().sort_by("n").to_pylist() == new.to_pylist()
    # Time travel: the old snapshot, under its own schema, whole.
    old = table.scan(snapshot_id=old_snapshot).to_arrow()
    assert old.column_names == ["region", "n"] and sorted(old.column("n").to_pylist()) == [1, 2, 3]

    location = str(lake_dir / "k" / "s")
    assert duckdb_iceberg_rows(location, "SELECT region, n, city FROM t ORDER BY n") == \
        [["eu", 10, "Oslo"], ["sa", 11, "Lima"]]
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        print(json.dumps(lake.sql("SELECT region, n, city FROM k.s ORDER BY n").to_pylist()))
        """
    )
    assert out == new.to_pylist()

    # Another handle opened before the change appends under the new schema
    # once refreshed; the open handle's appends carry the new column.
    t.append(pa.table({"region": ["eu"], "n": [12], "city": ["Rome"]}, schema=NEW), maintain=False)
    assert duckdb_iceberg_count(location) == 3


def test_dropping_the_partition_column_leaves_readers_working(lake, lake_dir, reference):
    t = lake.create_table("k.d", OLD, partition_by=["region"])
    t.append(pa.table({"region": ["eu", "us"], "n": [1, 2]}, schema=OLD), maintain=False)
    only_n = pa.schema([("n", pa.int64()), ("w", pa.float64())])
    new = pa.table({"n": [5, 6, 7], "w": [0.5, 1.5, None]}, schema=only_n)
    t.replace(new, schema=only_n, partition_by=["n"])
    assert lake.sql("SELECT n, w FROM k.d ORDER BY n").to_pylist() == new.to_pylist()
    table = StaticTable.from_metadata(metadata_file(lake_dir, "k/d"))
    assert table.scan().to_arrow().sort_by("n").to_pylist() == new.to_pylist()
    assert ids(table.schema()) == {"n": 2, "w": 3}
    assert duckdb_iceberg_rows(str(lake_dir / "k" / "d"), "SELECT n, w FROM t ORDER BY n") == \
        [[5, 0.5], [6, 1.5], [7, None]]
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        print(json.dumps(lake.sql("SELECT n, w FROM k.d ORDER BY n").to_pylist()))
        """
    )
    assert out == new.to_pylist()


def test_failed_schema_replace_leaves_the_table_as_it_was(lake, lake_dir):
    t = lake.create_table("k.f", OLD, partition_by=["region"])
    t.append(pa.table({"region": ["eu", "us"], "n": [1, 2]}, schema=OLD), maintain=False)
    files = table_files(lake_dir)
    bad = pa.table({"region": ["eu", None], "n": [1, 2], "city": ["x", "y"]}, schema=NEW)
    strict = pa.schema([("region", pa.string(), False), ("n", pa.int64()), ("city", pa.string())])
    with pytest.raises(ValueError, match="region"):  # a null in a required column
        t.replace(bad, schema=strict, partition_by=["city"])
    with pytest.raises(ValueError, match="nope"):
        t.replace(bad, schema=NEW, partition_by=["nope"])
    with pytest.raises(RuntimeError, match="version"):
        t.replace(bad, schema=NEW, partition_by=["city"], expect_version=1)
    assert table_files(lake_dir) == files
    assert t.version == 2 and t.schema.names == ["region", "n"]
    assert lake.sql("SELECT count(*) AS c FROM k.f").column("c")[0].as_py() == 2
    table = StaticTable.from_metadata(metadata_file(lake_dir, "k/f"))
    assert len(table.schemas()) == 1 and len(table.specs()) == 1


def test_time_series_table_keeps_its_contract(lake, lake_dir, reference):
    import datetime as dt

    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("v", pa.float64())])
    t = lake.create_table("iot.m", schema, time_column="time", series_key=["host"], partition_by=["host"])
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    t.append(pa.table({"time": [t0, t0 + dt.timedelta(days=3)], "host": ["a", "b"], "v": [1.0, 2.0]}, schema=schema))
    before = StaticTable.from_metadata(metadata_file(lake_dir, "iot/m"))
    wider = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("v", pa.float64()),
                       ("unit", pa.string())])
    new = pa.table({"time": [t0 + dt.timedelta(days=1)], "host": ["c"], "v": [3.0], "unit": ["C"]}, schema=wider)
    t.replace(new, schema=wider, partition_by=[])
    assert lake.latest("iot.m").select(["host", "v", "unit"]).to_pylist() == [{"host": "c", "v": 3.0, "unit": "C"}]
    table = StaticTable.from_metadata(metadata_file(lake_dir, "iot/m"))
    # The time partition stays first and keeps its field id; the ingest-time column stays.
    assert [f.field_id for f in table.spec().fields] == [before.spec().fields[0].field_id]
    assert {k: v for k, v in ids(table.schema()).items() if k != "unit"} == ids(before.schema())
    assert table.sort_order() == before.sort_order()
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        print(json.dumps(lake.sql("SELECT host, v, unit FROM iot.m").to_pylist()))
        """
    )
    assert out == [{"host": "c", "v": 3.0, "unit": "C"}]
    # The time column and the series key cannot change.
    no_host = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("v", pa.float64())])
    with pytest.raises(ValueError, match="series key"):
        t.replace(pa.table({"time": [t0], "v": [1.0]}, schema=no_host), schema=no_host)
    text = pa.schema([("time", pa.string()), ("host", pa.string())])
    with pytest.raises(ValueError, match="time column"):
        t.replace(pa.table({"time": ["2026-01-01"], "host": ["a"]}, schema=text), schema=text)
    assert lake.latest("iot.m").select(["host", "v", "unit"]).to_pylist() == [{"host": "c", "v": 3.0, "unit": "C"}]
