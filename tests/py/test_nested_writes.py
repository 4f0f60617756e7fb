"""Appends of struct, list and map columns: cast to the table's types (list<int32>
into list<int64>), many batches concatenated, sorted by series and time, split
over partitions, written with every nested Parquet field id; nulls at every
level, empty lists and maps, deep nesting, many row groups and pages. Oracles:
pyarrow on the data files, pyiceberg, DuckDB's iceberg_scan, fastavro on the
manifests and the reference timelake==0.7.0 reading what we wrote."""
import datetime as dt
import json
import os
import sys
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

from conftest import ROOT, table_files
from test_replace_schema import duckdb_iceberg_rows

PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
N = 6000
POINT = pa.struct([("x", pa.int64()), ("tags", pa.list_(pa.string()))])
DEEP = pa.struct([("a", pa.int64()), ("b", pa.string()),
                  ("inner", pa.list_(pa.map_(pa.string(), pa.list_(pa.int32()))))])
NAMES = ("l", "s", "m", "p")


def lst(i):
    if i % 7 == 0:
        return None
    if i % 7 == 1:
        return []
    return [None if (i + k) % 5 == 0 else i + k for k in range(i % 4)]


def points(i):
    if i % 9 == 0:
        return None
    return [None if k == 1 and i % 2 else {"x": None if i % 3 == 0 else i * k,
                                           "tags": None if k == 2 else [str(k), None][: 1 + i % 2]}
            for k in range(i % 5)]


def deep(i):
    if i % 6 == 0:
        return None
    inner = None if i % 10 == 1 else [None if k == 2 else [("q%d" % j, None if j == 1 else list(range(j + k)))
                                                           for j in range(i % 3)] for k in range(i % 4)]
    return {"a": None if i % 4 == 0 else i, "b": str(i), "inner": inner}


def data(start, n, elem=pa.int32()):
    rows = range(start, start + n)
    return pa.table({
        "time": pa.array([T0 + dt.timedelta(minutes=(i * 7) % 600, seconds=i) for i in rows],
                         pa.timestamp("us", tz="UTC")),
        "device": [("a", "b", "c")[i % 3] for i in rows],
        "v": [float(i) for i in rows],
        "l": pa.array([lst(i) for i in rows], pa.list_(elem)),
        "s": pa.array([deep(i) for i in rows], DEEP),
        "m": pa.array([None if i % 8 == 0 else [("k%d" % k, None if k == 1 else k * 0.5) for k in range(i % 3)]
                       for i in rows], pa.map_(pa.string(), pa.float64())),
        "p": pa.array([points(i) for i in rows], pa.list_(POINT)),
    })


SCHEMA = data(0, 1).schema.set(3, pa.field("l", pa.list_(pa.int64())))


def expected(tables):
    t = pa.concat_tables([x.cast(SCHEMA) for x in tables])
    return t.sort_by([("time", "ascending"), ("device", "ascending")])


def sorted_rows(lake, name="iot.nest"):
    return lake.sql(f"SELECT * EXCLUDE (_ingest_ts) FROM {name} ORDER BY time, device")


def files_of(lake_dir):
    return sorted((Path(lake_dir) / "iot" / "nest" / "data").rglob("*.parquet"))


def metadata_file(lake_dir):
    return str(sorted((Path(lake_dir) / "iot" / "nest" / "metadata").glob("*.metadata.json"))[-1])


def write_table(lake_dir):
    """A table of 6,000 rows over ten hourly partitions, appended as one table,
    then many small batches (the last ones with list<int32> promoted to
    list<int64>), in pages of 16 rows and row groups of 100; no inline
    maintenance, so every append's files stay. Returns the rows expected."""
    lake = timelake.Lake(str(lake_dir))
    t = lake.create_table("iot.nest", schema=SCHEMA, time_column="time", series_key=["device"],
                          chunk="hour", properties={"timelake.row-group-rows": "100",
                                                    "timelake.data-page-rows": "16",
                                                    "timelake.auto-maintain": "false"})
    parts = [data(0, 2500, pa.int64()), data(2500, 2000), data(4500, N - 4500)]
    t.append(parts[0])
    t.append(pa.Table.from_batches(parts[1].to_batches(max_chunksize=170)))
    t.append(pa.Table.from_batches(parts[2].to_batches(max_chunksize=333)))
    return expected(parts)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    lake_dir = tmp_path_factory.mktemp("nested_writes") / "lake"
    return lake_dir, write_table(lake_dir)


def test_rows_come_back_exactly(written):
    lake_dir, expect = written
    got = sorted_rows(timelake.Lake(str(lake_dir)))
    assert got.num_rows == N
    for name in SCHEMA.names:
        assert got.column(name).to_pylist() == expect.column(name).to_pylist(), name
    lists = got.column("l").to_pylist()
    assert None in lists and [] in lists and any(v and None in v for v in lists)


def test_pyarrow_reads_the_data_files(written):
    lake_dir, expect = written
    files = files_of(lake_dir)
    assert len(files) >= 20  # ten hourly partitions, three appends
    got = pa.concat_tables([pq.read_table(f).drop_columns(["_ingest_ts"]) for f in files])
    got = got.sort_by([("time", "ascending"), ("device", "ascending")])
    for name in NAMES:
        assert got.column(name).to_pylist() == expect.column(name).to_pylist(), name
    meta = pq.ParquetFile(files[0]).metadata
    assert meta.num_row_groups >= 1
    big = max(files, key=lambda f: pq.ParquetFile(f).metadata.num_rows)
    assert pq.ParquetFile(big).metadata.num_row_groups > 1


def field_ids(schema):
    out = []

    def walk(f, path):
        out.append((path, int((f.metadata or {}).get(b"PARQUET:field_id", b"-1"))))
        t = f.type
        kids = ([("element", t.value_field)] if pa.types.is_list(t) else
                [("key", t.key_field), ("value", t.item_field)] if pa.types.is_map(t) else
                [(t.field(i).name, t.field(i)) for i in range(t.num_fields)] if pa.types.is_struct(t) else [])
        for name, k in kids:
            walk(k, path + "." + name)

    for f in schema:
        walk(f, f.name)
    return out


def test_every_nested_parquet_field_has_its_iceberg_id(written):
    lake_dir, _ = written
    table = StaticTable.from_metadata(metadata_file(lake_dir))
    iceberg = {table.schema().find_column_name(i): i for i in table.schema()._lazy_id_to_name}
    for f in files_of(lake_dir)[:3]:
        ids = field_ids(pq.read_schema(f))
        assert len(ids) > 20
        for path, fid in ids:
            assert fid > 0, path
            assert iceberg[path] == fid, path


def test_pyiceberg_scans_by_field_id(written):
    lake_dir, expect = written
    table = StaticTable.from_metadata(metadata_file(lake_dir))
    got = table.scan().to_arrow().drop_columns(["_ingest_ts"])
    got = got.sort_by([("time", "ascending"), ("device", "ascending")])
    for name in NAMES:
        want = expect.column(name).to_pylist()
        if name == "p":
            # pyiceberg 0.x reads a null list of structs as an empty list (the
            # reference's files too); the rest of each row must match.
            want = [[] if v is None else v for v in want]
        assert got.column(name).to_pylist() == want, name


def test_duckdb_iceberg_scan_reads_every_value(written):
    lake_dir, expect = written
    query = ("SELECT CAST(time AS VARCHAR), device, to_json(l), to_json(s), to_json(m), to_json(p) "
             "FROM t ORDER BY time, device")
    got = duckdb_iceberg_rows(metadata_file(lake_dir), query)
    import duckdb

    con = duckdb.connect()
    con.register("t", expect)
    want = con.execute(query).fetchall()
    assert len(got) == N
    assert [tuple(r) for r in got] == [tuple(r) for r in want]


def test_manifest_stats_cover_flat_top_level_columns_only(written):
    lake_dir, _ = written
    table = StaticTable.from_metadata(metadata_file(lake_dir))
    schema = table.schema()
    flat = {f.field_id for f in schema.fields if f.field_type.is_primitive}
    manifests = (Path(lake_dir) / "iot" / "nest" / "metadata").glob("*-m*.avro")
    seen = 0
    for path in manifests:
        with open(path, "rb") as fh:
            for entry in fastavro.reader(fh):
                df = entry["data_file"]
                rows = df["record_count"]
                for key in ("value_counts", "null_value_counts", "column_sizes",
                            "lower_bounds", "upper_bounds", "nan_value_counts"):
                    ids = {kv["key"] for kv in (df.get(key) or [])}
                    assert ids <= flat, (key, ids - flat)
                counts = {kv["key"]: kv["value"] for kv in df["value_counts"]}
                assert counts and all(v == rows for v in counts.values())
                assert flat - {schema.find_field("_ingest_ts").field_id} <= set(counts)
                seen += 1
    assert seen >= 20


def test_latest_returns_the_newest_nested_values(written):
    lake_dir, expect = written
    got = timelake.Lake(str(lake_dir)).latest("iot.nest").drop_columns(["_ingest_ts"])
    rows = expect.to_pylist()
    newest = {}
    for r in rows:
        newest[r["device"]] = r
    assert got.to_pylist() == [newest[d] for d in sorted(newest)]


def test_reference_reads_what_we_wrote(written, reference):
    lake_dir, expect = written
    out = reference(f"""
        import json, timelake
        t = timelake.Lake({str(lake_dir)!r}).sql(
            "SELECT * EXCLUDE (_ingest_ts) FROM iot.nest ORDER BY time, device")
        print(json.dumps({{c: t.column(c).to_pylist() for c in {list(NAMES)!r}}}, default=str))
    """, timeout=600)
    want = json.loads(json.dumps({c: expect.column(c).to_pylist() for c in NAMES}, default=str))
    for name in NAMES:
        assert out[name] == want[name], name


def test_wrong_nested_types_are_refused_naming_the_path(tmp_path):
    lake_dir = tmp_path / "lake"
    lake = timelake.Lake(str(lake_dir))
    t = lake.create_table("iot.nest", schema=SCHEMA, time_column="time", series_key=["device"])
    good = data(0, 10)
    t.append(good)
    before = table_files(lake_dir)
    version = t.version

    def swap(name, array):
        i = good.schema.get_field_index(name)
        return good.set_column(i, name, array)

    bad_struct = pa.struct([("a", pa.int64()), ("zz", pa.int8())])
    cases = [
        (swap("l", pa.array([["x"]] * 10, pa.list_(pa.string()))), r'column "l\.element": .*"x"'),
        (swap("s", pa.array([{"a": 1, "zz": 2}] * 10, bad_struct)),
         r'column "s\.zz" is not in the table schema'),
        (swap("s", pa.array([[1]] * 10, pa.list_(pa.int64()))), r'column "s": cannot cast a list to a struct'),
        (swap("m", pa.array([[1.5]] * 10, pa.list_(pa.float64()))), r'column "m": cannot cast a list to a map'),
        (swap("p", pa.array([[{"x": 1, "tags": "no"}]] * 10,
                            pa.list_(pa.struct([("x", pa.int64()), ("tags", pa.string())])))),
         r'column "p\.element\.tags": cannot cast'),
        (swap("l", pa.array([1] * 10, pa.int64())), r'column "l": cannot cast'),
    ]
    for table, message in cases:
        with pytest.raises(ValueError, match=message):
            t.append(table)
    t.refresh()
    assert t.version == version
    assert table_files(lake_dir) == before


def test_missing_nested_columns_become_nulls(tmp_path):
    lake = timelake.Lake(str(tmp_path / "lake"))
    t = lake.create_table("iot.nest", schema=SCHEMA, time_column="time", series_key=["device"])
    t.append(data(0, 5).select(["time", "device", "v"]))
    got = sorted_rows(lake)
    for name in NAMES:
        assert got.column(name).to_pylist() == [None] * 5


def test_nested_columns_cannot_be_keys(tmp_path):
    lake = timelake.Lake(str(tmp_path / "lake"))
    with pytest.raises(ValueError, match=r'series key column "l" is a list: a series key column '
                                         r'must hold single values'):
        lake.create_table("iot.t", schema=SCHEMA, time_column="time", series_key=["device", "l"])
    with pytest.raises(ValueError, match=r'time column "s" must be a timestamp'):
        lake.create_table("iot.t", schema=SCHEMA, time_column="s")
    assert lake.tables() == []


def check_rows(lake, expect, name="iot.nest"):
    got = sorted_rows(lake, name)
    assert got.num_rows == expect.num_rows
    for column in SCHEMA.names:
        assert got.column(column).to_pylist() == expect.column(column).to_pylist(), column


def test_compaction_keeps_every_nested_value(tmp_path):
    """Our Parquet reader reads the nested columns back (levels of lists in
    structs in lists, maps, nulls at every level) and the merge writes them
    again: the rows, pyarrow's reading of the new files and the index agree."""
    copy = tmp_path / "lake"
    expect = write_table(copy)
    lake = timelake.Lake(str(copy))
    t = lake.table("iot.nest")
    report = t.maintain()
    assert report["files_rewritten"] >= 20 and 0 < report["files_written"] < report["files_rewritten"]
    check_rows(lake, expect)
    table = StaticTable.from_metadata(metadata_file(copy))
    live = [task.file.file_path for task in table.scan().plan_files()]
    assert len(live) == report["files_written"]
    got = pa.concat_tables([pq.read_table(f.removeprefix("file://")).drop_columns(["_ingest_ts"])
                            for f in live]).sort_by([("time", "ascending"), ("device", "ascending")])
    for name in NAMES:
        assert got.column(name).to_pylist() == expect.column(name).to_pylist(), name
    test_latest_returns_the_newest_nested_values((copy, expect))


def test_inline_maintenance_and_dedup_keep_the_newest_nested_values(tmp_path):
    lake = timelake.Lake(str(tmp_path / "lake"))
    t = lake.create_table("iot.nest", schema=SCHEMA, time_column="time", series_key=["device"],
                          chunk="hour", dedup=True)
    first = data(0, 600)
    newer = first.set_column(3, "l", pa.array([[i, None] for i in range(600)], pa.list_(pa.int64())))
    for k in range(0, 600, 50):  # small appends: inline maintenance compacts as it goes
        t.append(first.slice(k, 50))
    t.append(pa.Table.from_batches(newer.to_batches(max_chunksize=64)))
    expect = newer.cast(SCHEMA).sort_by([("time", "ascending"), ("device", "ascending")])
    check_rows(lake, expect)
    t.maintain()
    check_rows(lake, expect)
    assert t.info()["files"] < 20  # ten hourly partitions, thirteen appends


CLI = Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "timelake"


def cli_append(lake_dir, path):
    import subprocess

    return subprocess.run([str(CLI), "-w", str(lake_dir), "append", str(path), "--table", "iot.nest"],
                          capture_output=True, text=True, timeout=300)


def to_json(value, t):
    """A row's value as NDJSON writes it: maps as objects, timestamps as ISO text."""
    if value is None:
        return None
    if pa.types.is_timestamp(t):
        return value.isoformat()
    if pa.types.is_map(t):
        return {k: to_json(v, t.item_type) for k, v in value}
    if pa.types.is_list(t):
        return [to_json(v, t.value_type) for v in value]
    if pa.types.is_struct(t):
        return {t.field(i).name: to_json(value[t.field(i).name], t.field(i).type)
                for i in range(t.num_fields)}
    return value


def write_ndjson(path, table):
    lines = [json.dumps({f.name: to_json(r[f.name], f.type) for f in table.schema})
             for r in table.to_pylist()]
    path.write_text("\n".join(lines) + "\n")


def nested_table(tmp_path):
    lake_dir = tmp_path / "lake"
    lake = timelake.Lake(str(lake_dir))
    lake.create_table("iot.nest", schema=SCHEMA, time_column="time", series_key=["device"])
    return lake_dir, lake


def test_cli_appends_ndjson_objects_and_arrays(tmp_path):
    """Structs and maps from JSON objects, lists from arrays (maps also from
    [key, value] pairs), nulls at every level, the rows read back exactly."""
    lake_dir, lake = nested_table(tmp_path)
    rows = data(0, 1500)
    write_ndjson(tmp_path / "rows.ndjson", rows)
    p = cli_append(lake_dir, tmp_path / "rows.ndjson")
    assert p.returncode == 0, p.stderr
    pairs = tmp_path / "pairs.ndjson"
    pairs.write_text('{"time": "2030-01-01T00:00:00Z", "device": "z", "m": [["b", 2.5], ["a", null]]}\n')
    p = cli_append(lake_dir, pairs)
    assert p.returncode == 0, p.stderr
    pair = pa.Table.from_pylist([{"time": dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc), "device": "z",
                                  "m": [("b", 2.5), ("a", None)]}], schema=SCHEMA)
    check_rows(timelake.Lake(str(lake_dir)), expected([rows, pair]))


def test_ndjson_reals_in_nested_text_fields_read_as_written(tmp_path):
    """A JSON real given for a nested string field is the shortest text that
    reads back (0.1, not 0.10000000000000001); a whole one still fills an
    integer field."""
    lake_dir, lake = nested_table(tmp_path)
    reals = tmp_path / "reals.ndjson"
    reals.write_text('{"time": "2030-01-01T00:00:00Z", "device": "z", "s": {"a": 3.0, "b": 0.1}}\n'
                     '{"time": "2030-01-01T00:00:01Z", "device": "z", "s": {"a": 4, "b": 1e-7}}\n')
    p = cli_append(lake_dir, reals)
    assert p.returncode == 0, p.stderr
    got = timelake.Lake(str(lake_dir)).sql("SELECT s.a, s.b FROM iot.nest ORDER BY time").to_pylist()
    assert got == [{"a": 3, "b": "0.1"}, {"a": 4, "b": "1e-07"}]


def test_cli_appends_nested_parquet_files(tmp_path):
    lake_dir, lake = nested_table(tmp_path)
    rows = data(0, 1200)
    pq.write_table(rows, tmp_path / "rows.parquet", row_group_size=500, data_page_size=512)
    p = cli_append(lake_dir, tmp_path / "rows.parquet")
    assert p.returncode == 0, p.stderr
    check_rows(timelake.Lake(str(lake_dir)), expected([rows]))


@pytest.mark.parametrize("line, message", [
    ('"l": "x"', r'line 3, column "l": "x" is not a JSON object or array'),
    ('"v": [1]', r'line 3, column "v": a JSON array \("\[1\]"\) where a single value is due'),
    ('"l": ["x"]', r'line 3: column "l\.element": .*"x"'),
    ('"s": {"zz": 1}', r'line 3: column "s\.zz" is not in the table schema'),
    ('"m": {"k": "no"}', r'line 3: column "m\.value": .*"no"'),
    ('"m": [[1, 2, 3]]', r'line 3: column "m": a map is an object, or an array of \[key, value\] pairs'),
    ('"p": [{"x": 1, "tags": {"a": 1}}]', r'line 3: column "p\.element\.tags": an object where an array is due'),
    ('"l": [1,}', r'line 3: column "l": bad JSON'),
])
def test_bad_ndjson_is_refused_naming_line_and_path(tmp_path, line, message):
    lake_dir, lake = nested_table(tmp_path)
    lake.table("iot.nest").append(data(0, 3))
    before = table_files(lake_dir)
    good = '{"time": "2024-01-01T00:00:00Z", "device": "a", "l": [1]}'
    bad = '{"time": "2024-01-01T00:00:01Z", "device": "a", %s}' % line
    (tmp_path / "bad.ndjson").write_text("\n".join([good, good, bad]) + "\n")
    p = cli_append(lake_dir, tmp_path / "bad.ndjson")
    assert p.returncode != 0
    assert "bad.ndjson" in p.stderr
    import re

    assert re.search(message, p.stderr), p.stderr
    assert table_files(lake_dir) == before


def test_csv_refuses_nested_columns_naming_them(tmp_path):
    lake_dir, lake = nested_table(tmp_path)
    (tmp_path / "rows.csv").write_text('time,device,l\n2024-01-01T00:00:00Z,a,"[1, 2]"\n')
    p = cli_append(lake_dir, tmp_path / "rows.csv")
    assert p.returncode != 0
    assert ('rows.csv: column "l" is a struct, list or map column, which CSV text cannot fill: '
            'append it as NDJSON') in p.stderr
    assert lake.table("iot.nest").version == 1
    # Flat columns alone are fine: the nested ones are null.
    (tmp_path / "flat.csv").write_text("time,device,v\n2024-01-01T00:00:00Z,a,1.5\n")
    p = cli_append(lake_dir, tmp_path / "flat.csv")
    assert p.returncode == 0, p.stderr
    got = sorted_rows(timelake.Lake(str(lake_dir)))
    assert got.select(list(NAMES)).to_pylist() == [dict.fromkeys(NAMES)]


def test_large_and_fixed_size_lists_become_lists(tmp_path):
    """polars exports large lists; a fixed-size list is a list of its width."""
    lake = timelake.Lake(str(tmp_path / "lake"))
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()),
                        ("l", pa.list_(pa.int64())), ("f", pa.list_(pa.float64()))])
    t = lake.create_table("iot.t", schema=schema, time_column="time", series_key=["device"])
    times = pa.array([T0 + dt.timedelta(seconds=i) for i in range(4)], pa.timestamp("us", tz="UTC"))
    rows = pa.table({"time": times, "device": ["a"] * 4,
                     "l": pa.array([[1, None], None, [], [4]], pa.large_list(pa.int16())),
                     "f": pa.array([[1.5, 2.5], None, [0.0, None], [3.0, 4.0]],
                                   pa.list_(pa.float32(), 2))})
    t.append(rows.slice(1))  # offsets into the child arrays
    t.append(rows.slice(0, 1))
    got = lake.sql("SELECT l, f FROM iot.t ORDER BY time").to_pylist()
    assert got == [{"l": [1, None], "f": [1.5, 2.5]}, {"l": None, "f": None},
                   {"l": [], "f": [0.0, None]}, {"l": [4], "f": [3.0, 4.0]}]


def test_reference_appends_to_our_nested_table(tmp_path, reference):
    """The reference appends to our table (its last-value index holds the
    nested columns); our next append merges that index."""
    lake_dir, lake = nested_table(tmp_path)
    ours = data(0, 50)
    lake.table("iot.nest").append(ours)
    reference(f"""
        import datetime as dt, timelake, pyarrow as pa
        lake = timelake.Lake({str(lake_dir)!r})
        t = lake.table("iot.nest")
        t.append(pa.Table.from_pylist([{{"time": dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc),
            "device": "r", "l": [7, None], "s": {{"a": 1, "b": "r", "inner": [[("k", [1])]]}},
            "m": [("x", 1.0)], "p": [{{"x": 2, "tags": []}}]}}], schema=t.schema.remove(t.schema.get_field_index("_ingest_ts"))))
        print(1)
    """, timeout=600)
    theirs = pa.Table.from_pylist([{"time": dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc), "device": "r",
                                    "l": [7, None], "s": {"a": 1, "b": "r", "inner": [[("k", [1])]]},
                                    "m": [("x", 1.0)], "p": [{"x": 2, "tags": []}]}], schema=SCHEMA)
    # Our next append merges the last-value index the reference wrote (nested columns too).
    again = timelake.Lake(str(lake_dir))
    more = data(50, 30)
    again.table("iot.nest").append(more)
    check_rows(again, expected([ours, theirs, more]))
    newest = again.latest("iot.nest").drop_columns(["_ingest_ts"]).to_pylist()
    assert [r["device"] for r in newest] == ["a", "b", "c", "r"]
    assert newest[3]["l"] == [7, None] and newest[3]["m"] == [("x", 1.0)]
