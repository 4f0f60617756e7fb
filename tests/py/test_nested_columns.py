"""Tables with nested columns (struct, list, map): the Iceberg schema with every
nested field id, read by ours as the reference wrote it (a rollup's m4 points and
time-weighted states, lists with nulls at every level and empty lists, maps,
structs); ours appends to them too (test_nested_writes.py has the rest)."""
import os
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import ROOT, table_files

PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")

ROWS = 3000

# The reference writes these tables: a raw table, its m4 / time-weighted rollup,
# and a table of list, struct and map columns holding nulls at every level.
MAKE = """
import datetime as dt, json, sys
import pyarrow as pa, timelake
lake = timelake.Lake(sys.argv[1] if len(sys.argv) > 1 else %(lake)r)
t0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
n = %(rows)d
ts = pa.array([t0 + dt.timedelta(seconds=37 * i) for i in range(n)], pa.timestamp("us", tz="UTC"))
raw = pa.table({"time": ts, "device": [("a", "b", "c")[i %% 3] for i in range(n)],
                "temp": [None if i %% 11 == 0 else float(i %% 97) for i in range(n)]})
lake.create_table("iot.raw", schema=raw.schema, time_column="time", series_key=["device"]).append(raw)
lake.sql("CREATE MATERIALIZED ROLLUP iot.h AS SELECT device, time_bucket(INTERVAL '1 hour', time) "
         "AS bucket, m4(time, temp) AS m4_temp, time_weighted_mean(time, temp) AS tw, count(*) AS n "
         "FROM iot.raw GROUP BY device, bucket")
point = pa.struct([("x", pa.int64()), ("tags", pa.list_(pa.string()))])
def lst(i):
    return None if i %% 7 == 0 else [] if i %% 7 == 1 else [None if (i + k) %% 5 == 0 else i + k for k in range(i %% 4)]
def pts(i):
    if i %% 9 == 0: return None
    return [None if k == 1 and i %% 2 else {"x": None if i %% 3 == 0 else i * k,
            "tags": None if k == 2 else [str(k), None][: 1 + i %% 2]} for k in range(i %% 5)]
nest = pa.table({
    "time": pa.array([t0 + dt.timedelta(seconds=i) for i in range(n)], pa.timestamp("us", tz="UTC")),
    "device": [("a", "b")[i %% 2] for i in range(n)],
    "l": pa.array([lst(i) for i in range(n)], pa.list_(pa.int64())),
    "s": pa.array([None if i %% 6 == 0 else {"a": None if i %% 4 == 0 else i, "b": str(i)} for i in range(n)],
                  pa.struct([("a", pa.int64()), ("b", pa.string())])),
    "m": pa.array([None if i %% 8 == 0 else [("k%%d" %% k, None if k == 1 else k * 0.5) for k in range(i %% 3)]
                   for i in range(n)], pa.map_(pa.string(), pa.float64())),
    "p": pa.array([pts(i) for i in range(n)], pa.list_(point)),
})
t = lake.create_table("iot.nest", schema=nest.schema, time_column="time", series_key=["device"])
t.append(nest.slice(0, n // 2))
t.append(nest.slice(n // 2))
print(json.dumps({"version": t.version}))
"""


@pytest.fixture(scope="module")
def ref_lake(tmp_path_factory):
    from conftest import REF_PYTHON, run_reference

    if not REF_PYTHON.exists():
        pytest.skip("the reference virtualenv .venv-ref is missing (scripts/setup.sh --test)")
    lake_dir = tmp_path_factory.mktemp("nested") / "lake"
    run_reference(MAKE % {"lake": str(lake_dir), "rows": ROWS}, timeout=600)
    return lake_dir


def ref_sql(lake_dir, query):
    from conftest import run_reference

    return run_reference(f"""
import json, timelake
r = timelake.Lake({str(lake_dir)!r}).sql({query!r})
print(json.dumps(r.to_pylist(), default=str))
""")


def live_files(lake_dir, table):
    """The data files of the table's current snapshot, as pyiceberg plans them
    (files a compaction replaced stay on disk until expiry)."""
    from pyiceberg.table import StaticTable

    meta = sorted((lake_dir / table.replace(".", "/") / "metadata").glob("*.metadata.json"),
                  key=lambda p: int(p.name.split(".")[0].lstrip("v").split("-")[0]))[-1]
    scan = StaticTable.from_metadata(str(meta)).scan()
    return sorted(t.file.file_path.removeprefix("file://") for t in scan.plan_files())


def read_files(files):
    """The rows of Parquet files one after another, each read by pyarrow (ours
    say "+00:00" where the reference's say "UTC": the first file's types win)."""
    tables = [pq.read_table(f) for f in files]
    return pa.concat_tables([t.cast(tables[0].schema) for t in tables])


def jsonish(rows):
    import json

    return json.loads(json.dumps(rows, default=str))


def strip_ids(schema):
    """A schema without field metadata, nested fields included."""
    def field(f):
        t = f.type
        if pa.types.is_list(t):
            t = pa.list_(field(t.value_field))
        elif pa.types.is_struct(t):
            t = pa.struct([field(t.field(i)) for i in range(t.num_fields)])
        elif pa.types.is_map(t):
            t = pa.map_(field(t.key_field), field(t.item_field))
        return pa.field(f.name, t, f.nullable)
    return pa.schema([field(f) for f in schema])


@pytest.mark.parametrize("query", [
    "SELECT * FROM iot.h ORDER BY device, bucket",
    "SELECT time, device, l, s, m, p FROM iot.nest ORDER BY time",
    "SELECT device, count(*) AS n, CAST(sum(array_length(l)) AS BIGINT) AS items, count(s['a']) AS a, "
    "CAST(sum(cardinality(m)) AS BIGINT) AS keys, CAST(sum(array_length(p)) AS BIGINT) AS points "
    "FROM iot.nest GROUP BY device ORDER BY device",
    "SELECT device, bucket, unnest(m4_temp) AS point FROM iot.h WHERE device = 'b'",
])
def test_ours_reads_what_the_reference_wrote(ref_lake, query):
    ours = timelake.Lake(str(ref_lake)).sql(query)
    assert ours.num_rows > 0
    key = lambda r: str(r)  # noqa: E731 (unnest's rows come in no set order)
    assert sorted(jsonish(ours.to_pylist()), key=key) == sorted(ref_sql(ref_lake, query), key=key)


def test_nested_rows_match_the_data_files(ref_lake):
    """Nulls at every level and empty lists, row for row, against pyarrow's own
    reading of the reference's Parquet files."""
    files = sorted((ref_lake / "iot" / "nest" / "data").rglob("*.parquet"))
    expect = read_files(files).sort_by("time")
    got = timelake.Lake(str(ref_lake)).sql("SELECT * FROM iot.nest ORDER BY time")
    assert got.num_rows == ROWS
    for name in ("l", "s", "m", "p"):
        assert got.column(name).to_pylist() == expect.column(name).to_pylist(), name
    lists = got.column("l").to_pylist()
    assert None in lists and [] in lists and any(v and None in v for v in lists)


def test_schema_carries_every_field_id(ref_lake):
    lake = timelake.Lake(str(ref_lake))
    for name in ("iot.h", "iot.nest"):
        ours = lake.table(name).schema
        files = sorted((ref_lake / name.replace(".", "/") / "data").rglob("*.parquet"))
        theirs = pq.read_schema(files[0])
        assert strip_ids(ours) == strip_ids(theirs)
        # Every field, nested ones too, has the id the reference's files carry.
        def ids(t):
            out = []
            def walk(f):
                out.append((f.name, (f.metadata or {}).get(b"PARQUET:field_id")))
                ty = f.type
                kids = ([ty.value_field] if pa.types.is_list(ty) else
                        [ty.key_field, ty.item_field] if pa.types.is_map(ty) else
                        [ty.field(i) for i in range(ty.num_fields)] if pa.types.is_struct(ty) else [])
                for k in kids:
                    walk(k)
            for f in t:
                walk(f)
            return out
        got = ids(ours)
        assert all(v is not None for _, v in got), got
        assert [v for _, v in got] == [v for _, v in ids(theirs)]
    m4 = lake.table("iot.h").schema.field("m4_temp").type
    assert m4 == pa.list_(pa.field("element", pa.struct([("time", pa.timestamp("us", tz="+00:00")),
                                                         ("value", pa.float64())])))


def test_we_append_to_a_nested_table_the_reference_made(ref_lake, reference):
    """Our rows go into the reference's table (list, struct, map columns, one
    left out: nulls); the reference reads them back, and so does pyarrow."""
    import datetime as dt

    lake = timelake.Lake(str(ref_lake))
    t = lake.table("iot.nest")
    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    rows = pa.table({
        "time": pa.array([t0, t0 + dt.timedelta(seconds=1)], pa.timestamp("us", tz="UTC")),
        "device": ["z", "z"],
        "l": pa.array([[1, None], []], pa.list_(pa.int32())),
        "s": pa.array([{"a": 5, "b": None}, None], pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "m": pa.array([[("k", 1.5)], None], pa.map_(pa.string(), pa.float64())),
    })
    t.append(rows)
    query = "SELECT l, s, m, p FROM iot.nest WHERE device = 'z' ORDER BY time"
    want = [{"l": [1, None], "s": {"a": 5, "b": None}, "m": [["k", 1.5]], "p": None},
            {"l": [], "s": None, "m": None, "p": None}]
    assert jsonish(ref_sql(ref_lake, query)) == want
    ours = lake.sql(query).to_pylist()
    assert [r["l"] for r in ours] == [[1, None], []] and ours[1]["s"] is None
    files = live_files(ref_lake, "iot.nest")
    got = read_files(files).filter(pa.compute.field("device") == "z")
    assert got.column("l").to_pylist() == [[1, None], []]
    assert got.column("m").to_pylist() == [[("k", 1.5)], None]


def test_we_compact_the_reference_tables(tmp_path, reference):
    """Our Parquet reader reads the reference's nested files (arrow-rs wrote
    them) for compaction: every value survives, as pyarrow read the reference's
    files and as both implementations read the compacted table."""
    lake_dir = tmp_path / "lake"
    reference(MAKE % {"lake": str(lake_dir), "rows": 1000}, timeout=600)
    # A second refresh gives the rollup (m4 points, time-weighted states) a second file.
    reference(f"""
        import datetime as dt, timelake, pyarrow as pa
        lake = timelake.Lake({str(lake_dir)!r})
        t0 = dt.datetime(2024, 1, 3, tzinfo=dt.timezone.utc)
        n = 300
        lake.table("iot.raw").append(pa.table({{
            "time": pa.array([t0 + dt.timedelta(minutes=7 * i) for i in range(n)], pa.timestamp("us", tz="UTC")),
            "device": [("a", "b", "c")[i % 3] for i in range(n)],
            "temp": [None if i % 5 == 0 else float(i) for i in range(n)]}}))
        lake.sql("REFRESH MATERIALIZED ROLLUP iot.h")
        print(1)
    """, timeout=600)
    lake = timelake.Lake(str(lake_dir))
    for name, order in (("iot.nest", ["time", "device"]), ("iot.h", ["device", "bucket"])):
        files = live_files(lake_dir, name)
        assert len(files) >= 2, name
        expect = read_files(files).sort_by([(c, "ascending") for c in order])
        report = lake.table(name).maintain()
        assert report["files_rewritten"] == len(files) and report["files_written"] == 1, name
        assert len(live_files(lake_dir, name)) == 1
        query = f"SELECT * FROM {name} ORDER BY {', '.join(order)}"
        ours = lake.sql(query)
        for column in expect.column_names:
            assert ours.column(column).to_pylist() == expect.column(column).to_pylist(), column
        assert ref_sql(lake_dir, query) == jsonish(ours.to_pylist())


def test_cli_sql_prints_nested_values(ref_lake):
    import subprocess

    import json

    cli = Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "timelake"
    out = subprocess.run([str(cli), "-w", str(ref_lake), "sql", "--output-format", "jsonl",
                          "SELECT l, s, p FROM iot.nest ORDER BY time LIMIT 40"],
                         capture_output=True, text=True, check=True).stdout
    files = live_files(ref_lake, "iot.nest")
    expect = read_files(files).sort_by("time").slice(0, 40)
    got = [json.loads(line) for line in out.splitlines()]
    assert got == expect.select(["l", "s", "p"]).to_pylist()


def test_create_refuses_nested_keys_naming_the_column(tmp_path):
    lake = timelake.Lake(str(tmp_path / "lake"))
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()),
                        ("s", pa.struct([("a", pa.int64())])), ("l", pa.list_(pa.float64())),
                        ("m", pa.map_(pa.string(), pa.int32()))])
    with pytest.raises(ValueError, match=r'series key column "l" is a list: a series key column '
                                         r'must hold single values'):
        lake.create_table("iot.t", schema=schema, time_column="time", series_key=["device", "l"])
    with pytest.raises(ValueError, match=r'time column "s" must be a timestamp'):
        lake.create_table("iot.t", schema=schema, time_column="s")
    with pytest.raises(ValueError, match=r'column "u": Arrow type "\+ud:0,1" is not supported by '
                                         r'Iceberg \(lists, structs and maps are\)'):
        lake.create_table("iot.t", schema=pa.schema([("u", pa.union([pa.field("a", pa.int8()),
                                                                     pa.field("b", pa.int8())],
                                                                    "dense"))]))
    assert lake.tables() == []
    assert table_files(tmp_path / "lake") == []
