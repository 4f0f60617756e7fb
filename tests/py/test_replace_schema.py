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


def nested_ids(field_type, path, out):
    """Every nested field id of a pyiceberg type, by Iceberg path (s.a, l.element, m.key, m.value)."""
    from pyiceberg.types import ListType, MapType, StructType

    if isinstance(field_type, StructType):
        for f in field_type.fields:
            out[f"{path}.{f.name}"] = f.field_id
            nested_ids(f.field_type, f"{path}.{f.name}", out)
    elif isinstance(field_type, ListType):
        out[f"{path}.element"] = field_type.element_id
        nested_ids(field_type.element_type, f"{path}.element", out)
    elif isinstance(field_type, MapType):
        out[f"{path}.key"], out[f"{path}.value"] = field_type.key_id, field_type.value_id
        nested_ids(field_type.value_type, f"{path}.value", out)
    return out


def all_ids(schema):
    out = {}
    for f in schema.fields:
        out[f.name] = f.field_id
        nested_ids(f.field_type, f.name, out)
    return out


NEST_OLD = pa.schema([
    ("time", pa.timestamp("us", tz="UTC")), ("dev", pa.string()),
    ("s", pa.struct([("a", pa.int32()), ("b", pa.string()), ("gone", pa.bool_())])),
    ("l", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.float32())),
    ("p", pa.list_(pa.struct([("x", pa.int32())]))), ("k", pa.map_(pa.int32(), pa.string())),
])
# s: a widened, b renamed to bb (a new field), gone dropped, c added (nested);
# l's element and m's value widened; p's element struct gains y; k's key
# changes type (a new column); q is a new nested column.
NEST_NEW = pa.schema([
    ("time", pa.timestamp("us", tz="UTC")), ("dev", pa.string()),
    ("s", pa.struct([("a", pa.int64()), ("bb", pa.string()),
                     ("c", pa.struct([("d", pa.list_(pa.string())), ("e", pa.int32(), False)]))])),
    ("l", pa.list_(pa.int64())), ("m", pa.map_(pa.string(), pa.float64())),
    ("p", pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))), ("k", pa.map_(pa.string(), pa.string())),
    ("q", pa.map_(pa.string(), pa.list_(pa.int32()))),
])


def test_nested_columns_evolve_with_iceberg_ids_and_every_reader_agrees(lake, lake_dir, reference):
    import datetime as dt

    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    t = lake.create_table("iot.n", NEST_OLD, time_column="time", series_key=["dev"])
    old_rows = [
        {"time": t0, "dev": "a", "s": {"a": 1, "b": "x", "gone": True}, "l": [1, None], "m": [("u", 0.5)],
         "p": [{"x": 1}, None], "k": [(1, "one")]},
        {"time": t0, "dev": "b", "s": None, "l": [], "m": [], "p": None, "k": None},
        {"time": t0, "dev": "c", "s": {"a": None, "b": None, "gone": None}, "l": None, "m": None, "p": [],
         "k": []},
    ]
    t.append(pa.Table.from_pylist(old_rows, schema=NEST_OLD), maintain=False)
    before = StaticTable.from_metadata(metadata_file(lake_dir, "iot/n"))
    old_ids, old_snapshot = all_ids(before.schema()), before.current_snapshot().snapshot_id
    last = before.metadata.last_column_id

    new_rows = [
        {"time": t0 + dt.timedelta(hours=1), "dev": "a",
         "s": {"a": 2**40, "bb": "y", "c": {"d": ["p", None], "e": 7}}, "l": [2**40], "m": [("v", 1.25)],
         "p": [{"x": 2, "y": "why"}, {"x": None, "y": None}], "k": [("two", "2")], "q": [("z", [1, None]), ("w", [])]},
        {"time": t0 + dt.timedelta(hours=1), "dev": "b", "s": {"a": None, "bb": None, "c": None}, "l": None,
         "m": [], "p": [], "k": [], "q": None},
    ]
    new = pa.Table.from_pylist(new_rows, schema=NEST_NEW)
    t.replace(new, schema=NEST_NEW)

    table = StaticTable.from_metadata(metadata_file(lake_dir, "iot/n"))
    got = all_ids(table.schema())
    kept = ["time", "dev", "s", "s.a", "l", "l.element", "m", "m.key", "m.value", "p", "p.element", "p.element.x",
            "_ingest_ts"]
    assert {k: got[k] for k in kept} == {k: old_ids[k] for k in kept}
    fresh = sorted(v for k, v in got.items() if k not in kept)
    # Every other field is new: fresh ids after the last one, none reused.
    assert fresh == list(range(last + 1, last + 1 + len(fresh))), got
    assert got["k"] != old_ids["k"] and "s.gone" not in got and "s.b" not in got
    assert table.metadata.last_column_id == fresh[-1] and len(set(got.values())) == len(got)
    # Iceberg's fresh order: a struct's fields first, then each one's children.
    assert got["s.bb"] < got["s.c"] < got["s.c.d"] < got["s.c.e"] < got["s.c.d.element"]

    want = new.to_pylist()
    assert t.schema.names == NEST_NEW.names + ["_ingest_ts"]
    ours = lake.sql("SELECT * EXCLUDE (_ingest_ts) FROM iot.n ORDER BY dev").to_pylist()
    assert ours == want
    assert table.scan().to_arrow().drop_columns(["_ingest_ts"]).sort_by("dev").to_pylist() == want
    location = str(lake_dir / "iot" / "n")
    duck = duckdb_iceberg_rows(location, "SELECT dev, s.a, s.bb, s.c.d, s.c.e, l, p[1].y, q['z'] FROM t ORDER BY dev")
    assert duck == [["a", 2**40, "y", ["p", None], 7, [2**40], "why", [1, None]],
                    ["b", None, None, None, None, None, None, None]]
    out = reference(f"""
        import json, timelake
        t = timelake.Lake({str(lake_dir)!r}).sql("SELECT dev, s, l, p FROM iot.n ORDER BY dev")
        print(json.dumps(t.to_pylist(), default=str))
    """)
    assert out == json.loads(json.dumps([{k: r[k] for k in ("dev", "s", "l", "p")} for r in want], default=str))
    # The old snapshot under its own schema, whole.
    old = table.scan(snapshot_id=old_snapshot).to_arrow()
    assert sorted(old.column("dev").to_pylist()) == ["a", "b", "c"] and "s" in old.column_names

    # Back to the old rows under the new schema: the old files read with
    # nulls for the new fields, widened values and the dropped field gone.
    t.rollback(old_snapshot)
    table = StaticTable.from_metadata(metadata_file(lake_dir, "iot/n"))
    assert table.schema().schema_id == 1 and table.current_snapshot().snapshot_id == old_snapshot
    back = table.scan().to_arrow().drop_columns(["_ingest_ts"]).sort_by("dev").to_pylist()
    assert [r["s"] for r in back] == [{"a": 1, "bb": None, "c": None}, None, {"a": None, "bb": None, "c": None}]
    assert [r["l"] for r in back] == [[1, None], [], None]
    # (pyiceberg 0.12 gives [] for b's null list of structs once the struct
    # gained a field; the file holds null, as pyarrow and DuckDB read it.)
    assert [r["p"] for r in back][::2] == [[{"x": 1, "y": None}, None], []]
    assert [r["q"] for r in back] == [None, None, None] and [r["k"] for r in back] == [None, None, None]
    assert [r["m"] for r in back] == [[("u", 0.5)], [], None]
    duck = duckdb_iceberg_rows(location, "SELECT dev, s.a, s.bb, s.c, l, p, q FROM t ORDER BY dev")
    assert duck == [["a", 1, None, None, [1, None], [{"x": 1, "y": None}, None], None],
                    ["b", None, None, None, [], None, None],
                    ["c", None, None, None, None, [], None]]
    # Ours reads the old files under the current schema too (by field id; a
    # struct's fields by name), the same through the last-value index.
    q = "SELECT dev, s.a, s.bb, s.c, l, p, q FROM t ORDER BY dev"
    assert [list(r.values()) for r in lake.sql(q.replace("FROM t", "FROM iot.n")).to_pylist()] == duck
    got = lake.sql("SELECT * EXCLUDE (_ingest_ts) FROM iot.n ORDER BY dev")
    # (DuckDB names a list's element "l" and makes every field nullable.)
    assert [str(f.type) for f in got.schema] == \
        [str(f.type).replace("<item: ", "<l: ").replace(" not null", "") for f in NEST_NEW]
    mine = got.to_pylist()
    assert [r["s"] for r in mine] == [r["s"] for r in back] and [r["m"] for r in mine] == [r["m"] for r in back]
    assert [r["k"] for r in mine] == [None] * 3 and [r["p"] for r in mine] == [[{"x": 1, "y": None}, None], None, []]
    assert lake.latest("iot.n").drop_columns(["_ingest_ts"]).sort_by("dev").to_pylist() == mine


def test_nested_schema_changes_refused_name_the_path(lake, lake_dir):
    t = lake.create_table("k.n", pa.schema([("id", pa.int64()), ("s", pa.struct([("a", pa.int32())]))]))
    t.append(pa.table({"id": [1], "s": [{"a": 1}]}), maintain=False)
    files = table_files(lake_dir)
    # A new required field inside a struct that continues: old rows have no value for it.
    strict = pa.schema([("id", pa.int64()), ("s", pa.struct([("a", pa.int32()), ("z", pa.int32(), False)]))])
    with pytest.raises(ValueError, match=r'"s\.z" is new and required'):
        t.replace(pa.table({"id": [2], "s": [{"a": 2, "z": 3}]}, schema=strict), schema=strict)
    deep = pa.schema([("id", pa.int64()),
                      ("s", pa.struct([("a", pa.int32()), ("n", pa.struct([("r", pa.int8(), False)]))]))])
    t.replace(pa.table({"id": [2], "s": [{"a": 2, "n": {"r": 1}}]}, schema=deep), schema=deep)  # n is new: fine
    deeper = pa.schema([("id", pa.int64()),
                        ("s", pa.struct([("a", pa.int32()), ("n", pa.struct([("r", pa.int8(), False),
                                                                           ("t", pa.int8(), False)]))]))])
    files = table_files(lake_dir)
    with pytest.raises(ValueError, match=r'"s\.n\.t" is new and required'):
        t.replace(pa.table({"id": [3], "s": [{"a": 2, "n": {"r": 1, "t": 2}}]}, schema=deeper), schema=deeper)
    # A row that does not fit the new nested type names the path.
    with pytest.raises(ValueError, match=r"s\.n\.r"):
        t.replace(pa.table({"id": [3], "s": [{"a": 2, "n": {"r": None}}]}, schema=deep), schema=deep)
    assert table_files(lake_dir) == files
    assert lake.sql("SELECT id, s FROM k.n").to_pylist() == [{"id": 2, "s": {"a": 2, "n": {"r": 1}}}]
