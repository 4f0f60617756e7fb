"""Our tables read by independent implementations (pyarrow, DuckDB, pyiceberg,
the reference timelake==0.7.0), and the reference's tables appended to by us."""

import datetime as dt
import glob
import json
import os

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import tlc

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)

WIDE = pa.schema(
    [
        ("time", pa.timestamp("us", tz="UTC")),
        ("host", pa.string()),
        ("region", pa.string()),
        ("cpu", pa.float64()),
        ("mem", pa.float32()),
        ("count", pa.int64()),
        ("small", pa.int32()),
        ("ok", pa.bool_()),
        ("day", pa.date32()),
        ("price", pa.decimal128(12, 3)),
        ("blob", pa.binary()),
        ("local", pa.timestamp("us")),
    ]
)


def wide_rows(n, start=T0, seed=0):
    import random

    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        t = start + dt.timedelta(seconds=37 * i)
        rows.append(
            {
                "time": t,
                "host": f"host-{rnd.randrange(7)}",
                "region": None if i % 11 == 0 else rnd.choice(["eu", "us", "ap"]),
                "cpu": rnd.random() * 100,
                "mem": None if i % 5 == 0 else float(rnd.randrange(1000)) / 8,
                "count": rnd.randrange(-(2**40), 2**40),
                "small": rnd.randrange(-1000, 1000),
                "ok": rnd.random() < 0.5,
                "day": t.date(),
                "price": None if i % 7 == 0 else __import__("decimal").Decimal(rnd.randrange(10**9)) / 1000,
                "blob": bytes([i % 256]) * (i % 4),
                "local": t.replace(tzinfo=None),
            }
        )
    return pa.Table.from_pylist(rows, schema=WIDE)


def metadata_file(lake_dir, table="iot/wide"):
    files = glob.glob(str(lake_dir / table / "metadata" / "v*.metadata.json"))
    return max(files, key=lambda f: int(os.path.basename(f)[1:].split(".")[0]))


def normalize(table):
    """Rows sorted on every column, for order-independent comparison."""
    rows = table.to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, default=str, sort_keys=True))


@pytest.fixture
def wide(lake):
    t = lake.create_table("iot.wide", WIDE, time_column="time", series_key=["host", "region"], chunk="hour")
    data = pa.concat_tables([wide_rows(800, seed=1), wide_rows(500, start=T0 + dt.timedelta(hours=3), seed=2)])
    # maintain=False: these tests look at the files appends write (the second
    # append would compact cold hours inline, as the reference does too).
    t.append(data.slice(0, 700), batch_id="one", maintain=False)
    t.append(data.slice(700), batch_id="two", maintain=False)
    return t, data


def test_data_files_read_identically_in_pyarrow_and_duckdb(lake_dir, wide):
    _, data = wide
    files = sorted(glob.glob(str(lake_dir / "iot/wide/data/*/*.parquet")))
    assert len(files) > 2
    ours = pa.concat_tables([pq.read_table(f) for f in files]).drop(["_ingest_ts"])
    assert normalize(ours.cast(WIDE)) == normalize(data)
    for f in files:
        meta = pq.ParquetFile(f).metadata
        assert meta.row_group(0).sorting_columns[0].column_index == 1  # host, region, time
        arrow_schema = pq.ParquetFile(f).schema_arrow
        field_ids = [int(fld.metadata[b"PARQUET:field_id"]) for fld in arrow_schema]
        assert field_ids == list(range(1, 14))
        stats = meta.row_group(0).column(0).statistics
        assert stats.has_min_max and stats.null_count == 0
        from_duck = duckdb.sql(f"SELECT * EXCLUDE (_ingest_ts) FROM read_parquet('{f}', hive_partitioning = false)").arrow()
        from_arrow = pq.read_table(f).drop(["_ingest_ts"])
        if hasattr(from_duck, "read_all"):
            from_duck = from_duck.read_all()
        assert normalize(from_duck.cast(from_arrow.schema)) == normalize(from_arrow)


def test_pyiceberg_reads_schema_partitions_and_rows(lake_dir, wide):
    _, data = wide
    table = StaticTable.from_metadata(metadata_file(lake_dir))
    assert [f.name for f in table.schema().fields] == WIDE.names + ["_ingest_ts"]
    spec = table.spec()
    assert [(f.name, str(f.transform)) for f in spec.fields] == [("time_hour", "hour")]
    got = table.scan().to_arrow().drop(["_ingest_ts"])
    assert normalize(got.cast(WIDE)) == normalize(data)
    # Partition pruning from our manifests works for pyiceberg too.
    some = table.scan(row_filter=f"time < '{(T0 + dt.timedelta(hours=1)).isoformat()}'").to_arrow()
    assert 0 < some.num_rows < data.num_rows
    assert len(table.snapshots()) == 2
    summary = table.current_snapshot().summary
    assert summary["timelake.batch-id"] == "two"
    assert int(summary["total-records"]) == data.num_rows


def test_reference_reads_and_appends_to_our_table(lake, lake_dir, wide, reference):
    _, data = wide
    out = reference(
        f"""
        import json, timelake, datetime as dt, pyarrow as pa
        lake = timelake.Lake({str(lake_dir)!r})
        t = lake.table("iot.wide")
        n = lake.sql("SELECT count(*) AS n FROM iot.wide").column("n")[0].as_py()
        hosts = lake.sql("SELECT host, count(*) AS n FROM iot.wide GROUP BY host ORDER BY host").to_pylist()
        res = t.append(pa.table({{"time": [dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)], "host": ["ref"], "region": ["eu"]}}), batch_id="ref-1")
        dup = t.append(pa.table({{"time": [dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)], "host": ["ref"]}}), batch_id="one")
        print(json.dumps({{"n": n, "hosts": hosts, "version": res["version"], "dup": dup["duplicate"], "info": t.info()}}))
        """
    )
    assert out["n"] == data.num_rows
    counts = {}
    for r in data.column("host").to_pylist():
        counts[r] = counts.get(r, 0) + 1
    assert out["hosts"] == [{"host": h, "n": c} for h, c in sorted(counts.items())]
    assert out["dup"] is True
    # And we continue on top of the reference's commit.
    t = lake.table("iot.wide")
    assert t.version == out["version"]
    t.append(wide_rows(10, start=T0 + dt.timedelta(days=40)), batch_id="three")
    assert t.info()["rows"] == data.num_rows + 11
    assert t.append(wide_rows(1), batch_id="ref-1")["duplicate"]
    table = StaticTable.from_metadata(metadata_file(lake_dir))
    assert table.scan().to_arrow().num_rows == data.num_rows + 11


def test_we_append_to_a_reference_table(lake_dir, reference):
    reference(
        f"""
        import json, timelake, datetime as dt, pyarrow as pa
        lake = timelake.Lake({str(lake_dir)!r})
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
        t = lake.create_table("iot.readings", schema, time_column="time", series_key=["device_id"], retention="365d")
        now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        t.append(pa.table({{"time": [now, now], "device_id": ["a", "b"], "temp": [1.0, 2.0]}}, schema=schema), batch_id="r1")
        print(json.dumps(t.info()))
        """
    )
    lake = tlc.Lake(str(lake_dir))
    assert lake.tables() == ["iot.readings"]
    t = lake.table("iot.readings")
    assert t.info()["rows"] == 2
    res = t.append(pa.table({"time": [T0 + dt.timedelta(days=1)], "device_id": ["c"], "temp": [3.0]}), batch_id="c1")
    assert res["rows"] == 1
    assert t.append(pa.table({"time": [T0], "device_id": ["a"]}), batch_id="r1")["duplicate"]
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        rows = lake.sql("SELECT device_id, temp FROM iot.readings ORDER BY device_id").to_pylist()
        t = lake.table("iot.readings")
        print(json.dumps({{"rows": rows, "version": t.version}}))
        """
    )
    assert out["rows"] == [{"device_id": "a", "temp": 1.0}, {"device_id": "b", "temp": 2.0}, {"device_id": "c", "temp": 3.0}]
    assert out["version"] == t.version
    table = StaticTable.from_metadata(metadata_file(lake_dir, "iot/readings"))
    assert table.scan().to_arrow().num_rows == 3
