"""Reads of a table whose live files predate its current schema: after
Table.rollback to a snapshot taken before a schema replace (Iceberg's
rollback moves the current snapshot and keeps the current schema), and after
another writer (pyiceberg's metadata update) adds, widens and renames
columns without rewriting a file. Every read path of ours (SQL's read_parquet
scan, the selective scan, dedup on read, count from the manifests, the
last-value index in SQL and in latest(), rollup refresh and routing) shows
the current schema, by field id: a missing column or nested field is null of
its type, a narrow type reads widened, a renamed column under its new name.
Oracles: pyiceberg's scan (its rows queried by DuckDB's Python package),
DuckDB's iceberg_scan and the reference timelake==0.7.0 reading the same
table. Time travel reads a snapshot under that snapshot's own schema, as
pyiceberg's scan(snapshot_id=...) does."""

import datetime as dt
import json
import os
import re

import duckdb
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import tlc
from store_servers import server_fixture
from test_cli import ok as cli_ok
from test_interop import metadata_file
from test_package import timelake
from test_replace_schema import duckdb_iceberg_rows

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
OLD = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float32()),
                 ("n", pa.int32()), ("s", pa.struct([("a", pa.int32())]))])
# temp and n widened, s.a widened and s.b added, site new.
NEW = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64()),
                 ("n", pa.int64()), ("s", pa.struct([("a", pa.int64()), ("b", pa.string())])),
                 ("site", pa.string())])
CURRENT_TYPES = {"temp": pa.float64(), "n": pa.int64(), "s": pa.struct([("a", pa.int64()), ("b", pa.string())]),
                 "site": pa.string()}


def old_rows(k=6, start=T0):
    return pa.table({
        "time": [start + dt.timedelta(minutes=i) for i in range(k)],
        "device_id": [("pump-7", "pump-8")[i % 2] for i in range(k)],
        "temp": pa.array([i + 0.5 for i in range(k)], pa.float32()),
        "n": pa.array([2**30 + i for i in range(k)], pa.int32()),
        "s": pa.array([{"a": -i} if i != 3 else None for i in range(k)], OLD.field("s").type),
    }, schema=OLD)


def new_rows(k, start, site, n0=2**40):
    return pa.table({
        "time": [start + dt.timedelta(minutes=i) for i in range(k)],
        "device_id": [("pump-7", "pump-8")[i % 2] for i in range(k)],
        "temp": [100.25 + i for i in range(k)],
        "n": [n0 + i for i in range(k)],
        "s": [{"a": n0, "b": f"b{i}"} for i in range(k)],
        "site": [site] * k,
    }, schema=NEW)


def iceberg(lake_dir, name="iot/r"):
    return StaticTable.from_metadata(metadata_file(lake_dir, name))


def oracle(arrow_table, query):
    """query (over the view t) run by DuckDB's Python package over rows pyiceberg read."""
    con = duckdb.connect()
    con.register("t", arrow_table)
    return con.sql(query).to_arrow_table().to_pylist()


def ours(lake, query, table="iot.r"):
    return lake.sql(re.sub(r"\bFROM t\b", f"FROM {table}", query)).to_pylist()


QUERIES = [
    "SELECT * FROM t ORDER BY time, device_id",
    "SELECT site, n, temp, s FROM t ORDER BY time, device_id",
    "SELECT count(*) AS c FROM t WHERE site IS NULL",
    "SELECT count(*) AS c FROM t",
    "SELECT device_id, sum(n) AS n, max(temp) AS hi, count(site) AS sites, min(s.a) AS a, max(s.b) AS b "
    "FROM t GROUP BY device_id ORDER BY device_id",
    "SELECT site, count(*) AS c FROM t GROUP BY site ORDER BY site",
    "SELECT DISTINCT ON (device_id) device_id, time, temp, n, s, site FROM t ORDER BY device_id, time DESC",
    "SELECT time, n, site FROM t WHERE device_id = 'pump-8' AND time >= TIMESTAMPTZ '2026-01-01 00:03:00+00' "
    "ORDER BY time",
]


def check_against_pyiceberg(lake, lake_dir, monkeypatch, table="iot.r", path="iot/r"):
    rows = iceberg(lake_dir, path).scan().to_arrow()
    for mode in ("off", "always"):  # read_parquet, then our selective scan wherever it applies
        monkeypatch.setenv("TL_SELECTIVE_SCAN", mode)
        for q in QUERIES:
            assert ours(lake, q, table) == oracle(rows, q), (mode, q)
    monkeypatch.delenv("TL_SELECTIVE_SCAN")
    return rows


def test_rollback_past_a_schema_replace_reads_the_current_schema(tmp_path, monkeypatch, reference):
    lake_dir = tmp_path / "lake"
    lake = timelake.Lake(str(lake_dir))
    t = lake.create_table("iot.r", OLD, time_column="time", series_key=["device_id"])
    for h in range(4):  # a file per hour: rollup routing reads whole hours from the rollup
        t.append(old_rows(60, T0 + dt.timedelta(hours=h)), maintain=False)
    first = iceberg(lake_dir).current_snapshot().snapshot_id
    t.replace(new_rows(4, T0 + dt.timedelta(days=31), "north"), schema=NEW)
    replaced = iceberg(lake_dir).current_snapshot().snapshot_id
    lake.sql("CREATE MATERIALIZED ROLLUP iot.hr AS SELECT device_id, time_bucket(INTERVAL '1 hour', time) AS "
             "bucket, count(*) AS c, sum(n) AS n, max(temp) AS hi, count(site) AS sites FROM iot.r "
             "GROUP BY device_id, bucket")

    t.rollback(first)
    table = iceberg(lake_dir)
    assert table.current_snapshot().snapshot_id == first and table.schema().schema_id == 1
    names = ["time", "device_id", "temp", "n", "s", "site", "_ingest_ts"]
    assert t.schema.names == names and [f.name for f in table.schema().fields] == names
    got = lake.sql("SELECT * FROM iot.r")
    assert got.schema.names == names
    assert {k: got.schema.field(k).type for k in CURRENT_TYPES} == CURRENT_TYPES
    rows = check_against_pyiceberg(lake, lake_dir, monkeypatch)
    assert rows.num_rows == 240 and set(rows.column("site").to_pylist()) == {None}

    location = str(lake_dir / "iot" / "r")
    q = "SELECT device_id, temp, n, s.a, s.b, site FROM t ORDER BY time, device_id"
    duck = duckdb_iceberg_rows(location, q)
    assert [list(r.values()) for r in ours(lake, q)] == duck
    ref = reference(f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        q = "SELECT device_id, temp, n, site FROM iot.r ORDER BY time, device_id"
        print(json.dumps(lake.sql(q).to_pylist()))
    """)
    # (The reference's latest() fails on this table: "Incorrect number of
    # arrays for StructArray fields, expected 2 got 1", the old index's s.)
    assert ours(lake, "SELECT device_id, temp, n, site FROM t ORDER BY time, device_id") == ref

    # latest(): the index of the old snapshot, projected (the engine reads it).
    latest = lake.latest("iot.r")
    assert latest.schema.names == names
    assert latest.select(["device_id", "time", "temp", "n", "s", "site"]).to_pylist() == oracle(
        rows, "SELECT DISTINCT ON (device_id) device_id, time, temp, n, s, site FROM t "
              "ORDER BY device_id, time DESC")

    # The CLI, through the same library calls.
    q = "SELECT device_id, n, s, site FROM t ORDER BY time, device_id"
    out = cli_ok("sql", "--lake", lake_dir, "--json", q.replace("FROM t", "FROM iot.r"))
    assert [json.loads(line) for line in out.splitlines()] == oracle(rows, q)
    out = cli_ok("latest", "--lake", lake_dir, "--json", "iot.r")
    assert [{k: json.loads(line)[k] for k in ("device_id", "n", "site")} for line in out.splitlines()] == \
        latest.select(["device_id", "n", "site"]).to_pylist()

    # The rollup, emptied and recomputed from the raw rows as they read now.
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.hr")
    agg = ("SELECT device_id, time_bucket(INTERVAL '1 hour', time) AS bucket, count(*) AS c, sum(n) AS n, "
           "max(temp) AS hi, count(site) AS sites FROM t GROUP BY ALL ORDER BY ALL")
    want = oracle(rows, agg)
    assert lake.sql("SELECT device_id, bucket, c, n, hi, sites FROM iot.hr ORDER BY ALL").to_pylist() == want
    two = ("SELECT device_id, time_bucket(INTERVAL '2 hours', time) AS b, count(*) AS c, sum(n) AS n, "
           "max(temp) AS hi, count(site) AS sites FROM t GROUP BY device_id, b ORDER BY device_id, b")
    plans = [r["plan_type"] for r in lake.sql("EXPLAIN " + two.replace("FROM t ", "FROM iot.r ")).to_pylist()]
    assert "timelake_rollup" in plans  # routed: read from the rollup
    assert ours(lake, two) == oracle(rows, two)

    # Time travel: each snapshot under its own schema, as pyiceberg reads it.
    for snap, cols in ((first, OLD.names), (replaced, NEW.names)):
        q = f"SELECT * EXCLUDE (_ingest_ts) FROM iot.r AT (VERSION => {snap}) ORDER BY time, device_id"
        want = table.scan(snapshot_id=snap).to_arrow().drop_columns(["_ingest_ts"])
        got = lake.sql(q)
        assert got.schema.names == cols == want.column_names
        assert got.to_pylist() == want.sort_by([("time", "ascending"), ("device_id", "ascending")]).to_pylist()
    assert lake.sql(f"SELECT temp FROM iot.r AT (VERSION => {first}) LIMIT 1").schema.field(0).type == pa.float32()


def test_appends_after_the_rollback_mix_schemas_dedup_and_compact(tmp_path, monkeypatch, reference):
    lake_dir = tmp_path / "lake"
    lake = timelake.Lake(str(lake_dir))
    t = lake.create_table("iot.r", OLD, time_column="time", series_key=["device_id"])
    t.append(old_rows(), maintain=False)
    first = iceberg(lake_dir).current_snapshot().snapshot_id
    t.replace(new_rows(4, T0 + dt.timedelta(days=31), "north"), schema=NEW)
    t.rollback(first)
    # New rows in the old files' partition: minutes 2..4 rewrite (pump-7, 00:02),
    # (pump-8, 00:03), (pump-7, 00:04) of the old file, which dedup on read
    # replaces by the newer write; minute 6 is new.
    t.append(new_rows(3, T0 + dt.timedelta(minutes=2), "south"), maintain=False)
    t.append(new_rows(1, T0 + dt.timedelta(minutes=6), "east", n0=7), maintain=False)
    q = "SELECT time, device_id, temp, n, site FROM iot.r ORDER BY time, device_id"
    ref = reference(f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        print(json.dumps(lake.sql({q!r}).to_pylist(), default=str))
    """)
    for mode in ("off", "always"):
        monkeypatch.setenv("TL_SELECTIVE_SCAN", mode)
        got = lake.sql(q).to_pylist()
        assert json.loads(json.dumps(got, default=str)) == ref
    monkeypatch.delenv("TL_SELECTIVE_SCAN")
    assert len(ref) == 7 and [r["site"] for r in ref] == [None, None, "south", "south", "south", None, "east"]
    latest = lake.latest("iot.r").select(["device_id", "n", "site"]).to_pylist()
    assert latest == [{"device_id": "pump-7", "n": 7, "site": "east"},
                      {"device_id": "pump-8", "n": 2**30 + 5, "site": None}]

    # Compaction merges the two schemas' files under the current one: then
    # pyiceberg (which does not dedup) reads what we read.
    t.maintain()
    check_against_pyiceberg(lake, lake_dir, monkeypatch)
    assert json.loads(json.dumps(lake.sql(q).to_pylist(), default=str)) == ref


def pyiceberg_evolve(lake_dir, path):
    """The next metadata version of the table with its schema changed by
    pyiceberg (as its update_schema commits it, no file rewritten): temp
    renamed temperature and widened to double, n widened to long, s.b added,
    site added."""
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.schema import Schema
    from pyiceberg.serializers import ToOutputFile
    from pyiceberg.table.update import AddSchemaUpdate, SetCurrentSchemaUpdate, update_table_metadata
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, StructType

    mf = metadata_file(lake_dir, path)
    md = StaticTable.from_metadata(mf).metadata
    old = md.schema()
    nxt = md.last_column_id + 1
    fields = []
    for f in old.fields:
        if f.name == "temp":
            f = NestedField(f.field_id, "temperature", DoubleType(), required=f.required)
        elif f.name == "n":
            f = NestedField(f.field_id, "n", LongType(), required=f.required)
        elif f.name == "s":
            a = f.field_type.fields[0]
            f = NestedField(f.field_id, "s", StructType(NestedField(a.field_id, "a", LongType(), required=False),
                                                        NestedField(nxt, "b", StringType(), required=False)),
                            required=f.required)
        fields.append(f)
    fields.append(NestedField(nxt + 1, "site", StringType(), required=False))
    new = Schema(*fields, schema_id=old.schema_id + 1, identifier_field_ids=old.identifier_field_ids)
    md = update_table_metadata(md, (AddSchemaUpdate(schema_=new), SetCurrentSchemaUpdate(schema_id=-1)))
    version = int(os.path.basename(mf)[1:].split(".")[0]) + 1
    out = lake_dir / path / "metadata" / f"v{version}.metadata.json"
    ToOutputFile.table_metadata(md, PyArrowFileIO().new_output(str(out)))
    (lake_dir / path / "metadata" / "version-hint.text").write_text(str(version))


def test_schema_changed_by_another_writer_before_any_append(tmp_path, monkeypatch):
    lake_dir = tmp_path / "lake"
    lake = timelake.Lake(str(lake_dir))
    t = lake.create_table("iot.r", OLD, time_column="time", series_key=["device_id"])
    t.append(old_rows(), maintain=False)
    t.append(old_rows(2, start=T0 + dt.timedelta(minutes=4)), maintain=False)  # overlaps: dedup on read
    snap = iceberg(lake_dir).current_snapshot().snapshot_id
    pyiceberg_evolve(lake_dir, "iot/r")

    lake = timelake.Lake(str(lake_dir))
    names = ["time", "device_id", "temperature", "n", "s", "_ingest_ts", "site"]
    assert lake.table("iot.r").schema.names == names
    table = iceberg(lake_dir)
    rows = table.scan().to_arrow()
    got = lake.sql("SELECT * FROM iot.r ORDER BY time, device_id")
    assert got.schema.names == names
    assert got.schema.field("temperature").type == pa.float64() and got.schema.field("n").type == pa.int64()
    for mode in ("off", "always"):
        monkeypatch.setenv("TL_SELECTIVE_SCAN", mode)
        for q in ["SELECT time, device_id, temperature, n, s, site FROM t ORDER BY time, device_id",
                  "SELECT count(*) AS c FROM t WHERE site IS NULL AND temperature > 1",
                  "SELECT device_id, sum(n) AS n, max(s.a) AS a, count(s.b) AS b FROM t GROUP BY 1 ORDER BY 1",
                  "SELECT DISTINCT ON (device_id) device_id, temperature, site FROM t ORDER BY device_id, time DESC"]:
            # pyiceberg does not dedup: compare the rows it reads once merged.
            want = oracle(rows, q.replace("FROM t", "FROM (SELECT * FROM t QUALIFY row_number() OVER "
                                                    "(PARTITION BY device_id, time ORDER BY _ingest_ts DESC) = 1)"))
            assert ours(lake, q) == want, (mode, q)
    monkeypatch.delenv("TL_SELECTIVE_SCAN")
    assert lake.sql("SELECT count(*) AS c FROM iot.r").to_pylist() == [{"c": 6}]
    q = "SELECT device_id, temperature, n, s.a, s.b, site FROM t ORDER BY time, device_id"
    duck = duckdb_iceberg_rows(str(lake_dir / "iot" / "r"), q.replace("FROM t", "FROM (SELECT * FROM t QUALIFY "
                               "row_number() OVER (PARTITION BY device_id, time ORDER BY _ingest_ts DESC) = 1)"))
    assert [list(r.values()) for r in ours(lake, q)] == duck
    latest = lake.latest("iot.r")
    assert latest.schema.names == names
    assert latest.select(["device_id", "temperature", "n", "site"]).to_pylist() == [
        {"device_id": "pump-7", "temperature": 0.5, "n": 2**30, "site": None},
        {"device_id": "pump-8", "temperature": 1.5, "n": 2**30 + 1, "site": None}]
    # The snapshot from before the change, under its own schema.
    old = lake.sql(f"SELECT * FROM iot.r AT (VERSION => {snap}) ORDER BY time, device_id")
    want = table.scan(snapshot_id=snap).to_arrow()
    assert old.schema.names == want.column_names == ["time", "device_id", "temp", "n", "s", "_ingest_ts"]
    assert old.schema.field("temp").type == pa.float32()
    merged = oracle(want, "SELECT * FROM t QUALIFY row_number() OVER (PARTITION BY device_id, time "
                          "ORDER BY _ingest_ts DESC) = 1 ORDER BY time, device_id")
    assert old.to_pylist() == merged


def test_selective_scan_reads_only_files_of_the_current_schema(tmp_path, monkeypatch):
    lake_dir = tmp_path / "lake"
    lake = timelake.Lake(str(lake_dir))
    flat_old = pa.schema([f for f in OLD if f.name != "s"])
    flat_new = pa.schema([f for f in NEW if f.name != "s"])
    t = lake.create_table("iot.r", flat_old, time_column="time", series_key=["device_id"])
    t.append(old_rows(600).drop_columns(["s"]), maintain=False)
    first = iceberg(lake_dir).current_snapshot().snapshot_id
    t.replace(new_rows(600, T0 + dt.timedelta(days=31), "north").drop_columns(["s"]), schema=flat_new)
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "always")

    def check(q):
        """Whether our own rows answered, after checking the answer against pyiceberg's rows."""
        sql = q.replace("FROM t", "FROM iot.r")
        assert lake.sql(sql).to_pylist() == oracle(iceberg(lake_dir).scan().to_arrow(), q), q
        return "timelake_rows" in str(lake.sql("EXPLAIN " + sql).to_pylist()).lower()

    # Files of the current schema (a table with two schemas): our rows.
    assert check("SELECT * FROM t WHERE device_id = 'pump-8' AND time >= TIMESTAMPTZ '2026-02-01 09:00:00+00' "
                 "ORDER BY time")
    # Back to files of the old schema: read_parquet projects them.
    t.rollback(first)
    q = ("SELECT time, temp, n, site FROM t WHERE device_id = 'pump-8' AND time >= "
         "TIMESTAMPTZ '2026-01-01 09:00:00+00' ORDER BY time")
    assert not check(q)
    assert not check("SELECT * FROM t WHERE device_id = 'pump-7' AND time < TIMESTAMPTZ '2026-01-01 00:30:00+00' "
                     "ORDER BY time")


s3 = pytest.fixture(scope="module")(server_fixture("s3"))


def test_on_s3_after_a_rollback_cold_and_warm(s3):
    """An object store: files fetched, the head object's footers and index
    copy, read under the current schema. Expected rows from the data written
    (pyarrow), widened and with nulls for what the old files lack."""
    url = s3.url()
    writer = tlc.Lake(url, s3.options)
    t = writer.create_table("iot.r", OLD, time_column="time", series_key=["device_id"])
    written = []
    for h in (0, 2):
        rows = old_rows(60, T0 + dt.timedelta(hours=h))
        t.append(rows, maintain=False)
        written += rows.to_pylist()
    first = t.info()["snapshot_id"]
    t.replace(new_rows(4, T0 + dt.timedelta(days=31), "north"), schema=NEW)
    t.rollback(first)
    want = sorted(({**r, "s": None if r["s"] is None else {"a": r["s"]["a"], "b": None}, "site": None}
                   for r in written), key=lambda r: (r["time"], r["device_id"]))
    cols = "time, device_id, temp, n, s, site"
    for reader in (tlc.Lake(url, s3.options), tlc.Lake(url, s3.options)):  # cold: no cache nor engine
        latest = reader.latest("iot.r")
        assert latest.schema.names == NEW.names + ["_ingest_ts"]
        assert latest.select(NEW.names).to_pylist() == want[-2:]
        got = reader.sql(f"SELECT {cols} FROM iot.r ORDER BY time, device_id")
        assert got.to_pylist() == want
        assert {k: got.schema.field(k).type for k in CURRENT_TYPES} == CURRENT_TYPES
        assert reader.sql("SELECT count(*) AS c FROM iot.r WHERE site IS NULL AND device_id = 'pump-8' "
                          "AND time >= TIMESTAMPTZ '2026-01-01 02:00:00+00'").to_pylist() == [{"c": 30}]
        assert reader.sql(f"SELECT DISTINCT ON (device_id) {cols} FROM iot.r ORDER BY device_id, time DESC"
                          ).to_pylist() == want[-2:]
