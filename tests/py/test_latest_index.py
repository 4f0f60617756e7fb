"""lake.latest() answered from the last-value index by our own Parquet reader
(src/query/latest_index.c), without the SQL engine: identical to what the
engine path gives (DuckDB's SELECT * over the same index file, the query
src/query/latest.c ran before), to the reference's latest() on the same
table, and to DuckDB's newest row per series over the data files; with
deduplicated writes, out-of-order times, nulls and several types; struct,
list and map columns too (nulls at every level, empty lists and maps)."""

import datetime as dt
import decimal
import json

import duckdb
import pyarrow as pa
import pytest

import tlc

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
SCHEMA = pa.schema([
    ("time", pa.timestamp("us", tz="UTC")), ("site", pa.string()), ("dev", pa.int32()),
    ("i64", pa.int64()), ("f32", pa.float32()), ("f64", pa.float64()), ("ok", pa.bool_()),
    ("day", pa.date32()), ("local", pa.timestamp("us")), ("blob", pa.binary()), ("amount", pa.decimal128(12, 3)),
])


def batch(rows):
    cols = {name: [r.get(name) for r in rows] for name in SCHEMA.names}
    return pa.table(cols, schema=SCHEMA)


def row(site, dev, minutes, v, **extra):
    r = {"time": T0 + dt.timedelta(minutes=minutes), "site": site, "dev": dev, "i64": v, "f32": v / 2,
         "f64": v / 4, "ok": v % 2 == 0, "day": dt.date(2026, 1, 1) + dt.timedelta(days=v % 5),
         "local": dt.datetime(2026, 1, 1) + dt.timedelta(seconds=v), "blob": bytes([v % 256]) * 3,
         "amount": decimal.Decimal(v) / 1000}
    r.update(extra)
    return r


@pytest.fixture
def filled(tmp_path):
    lake = tlc.Lake(str(tmp_path))
    t = lake.create_table("iot.m", SCHEMA, time_column="time", series_key=["site", "dev"])
    t.append(batch([row("a", 1, 10, 1), row("a", 2, 5, 2), row("b", 1, 7, 3), row("c", 9, 1, 4)]))
    # Out of order: older times for a/1 and b/1 do not win; a/2 moves on.
    t.append(batch([row("a", 1, 3, 5), row("b", 1, 6, 6), row("a", 2, 8, 7)]))
    # The same (key, time) written again: the later write wins; nulls kept as written.
    t.append(batch([row("a", 1, 10, 8, f32=None, blob=None, amount=None, day=None),
                    row("d", 3, 0, 9, ok=None, local=None)]))
    # A series key with a null part.
    t.append(batch([row(None, 4, 2, 10), row("e", None, 2, 11)]))
    return lake, t, tmp_path


def engine_path(index_path):
    """What latest() answered before: DuckDB's SELECT * over the index file."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con.sql(f"SELECT * FROM read_parquet('{index_path}', hive_partitioning = false)").to_arrow_table()


def as_table(x):
    return x.read_all() if hasattr(x, "read_all") else x


def test_latest_is_the_engine_path_exactly(filled):
    lake, t, _ = filled
    ours = lake.latest("iot.m")
    index = t.info()["last_value_index"]
    want = as_table(engine_path(index.removeprefix("file://")))
    assert ours.schema.equals(want.schema), (ours.schema, want.schema)
    assert ours.combine_chunks().equals(want.combine_chunks())
    got = {(r["site"], r["dev"]): r for r in ours.to_pylist()}
    assert got[("a", 1)]["i64"] == 8 and got[("a", 1)]["f32"] is None and got[("a", 1)]["blob"] is None
    assert got[("a", 2)]["i64"] == 7
    assert got[("b", 1)]["i64"] == 3
    assert got[("d", 3)]["ok"] is None and got[("d", 3)]["local"] is None
    assert got[(None, 4)]["i64"] == 10 and got[("e", None)]["i64"] == 11
    assert ours.num_rows == 7


def test_latest_matches_the_data_files(filled):
    """DuckDB's newest row per series over the table's Parquet files, later write first on a tie."""
    lake, _, root = filled
    files = [str(p) for p in (root / "iot" / "m" / "data").rglob("*.parquet")]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    want = con.sql(
        f"SELECT * EXCLUDE (_ingest_ts) FROM read_parquet({files!r}, hive_partitioning = false) "
        "QUALIFY row_number() OVER (PARTITION BY site, dev ORDER BY time DESC, _ingest_ts DESC) = 1 "
        "ORDER BY site NULLS LAST, dev NULLS LAST").to_arrow_table()
    want = as_table(want).to_pylist()
    got = sorted((lake.latest("iot.m").drop_columns(["_ingest_ts"]).to_pylist()),
                 key=lambda r: (r["site"] is None, r["site"] or "", r["dev"] is None, r["dev"] or 0))
    assert got == want


def test_latest_matches_the_reference(filled, reference):
    lake, _, root = filled
    out = reference(f"""
        import json, timelake
        rows = timelake.Lake({str(root)!r}).latest("iot.m").to_pylist()
        cell = lambda v: v.isoformat() if hasattr(v, "isoformat") else repr(v)
        print(json.dumps(sorted([[cell(v) for k, v in sorted(r.items())] for r in rows])))
    """)
    cell = lambda v: v.isoformat() if hasattr(v, "isoformat") else repr(v)  # noqa: E731
    ours = sorted([[cell(v) for k, v in sorted(r.items())] for r in lake.latest("iot.m").to_pylist()])
    assert ours == out


def test_latest_over_s3_needs_no_engine_and_matches(tmp_path):
    """The same rows through the head on an object store (1 round trip: see
    test_s3_head.py), equal to the local engine path over the same index."""
    pytest.importorskip("moto")
    from store_servers import start_moto, stop

    proc, s3 = start_moto(tmp_path)
    try:
        url = s3.url()
        lake = tlc.Lake(url, s3.options)
        t = lake.create_table("iot.m", SCHEMA, time_column="time", series_key=["site", "dev"])
        t.append(batch([row("a", 1, 10, 1), row("b", 2, 5, 2)]))
        t.append(batch([row("a", 1, 3, 5), row("b", 2, 9, 6, f64=None)]))
        index = t.info()["last_value_index"]
        import boto3
        c = boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id="testing",
                         aws_secret_access_key="testing", region_name="us-east-1")
        path = tmp_path / "lvi.parquet"
        path.write_bytes(c.get_object(Bucket=s3.bucket, Key=index.split("/", 3)[3])["Body"].read())
        ours = tlc.Lake(url, s3.options).latest("iot.m")
        want = as_table(engine_path(path))
        assert ours.schema.equals(want.schema)
        assert ours.combine_chunks().equals(want.combine_chunks())
        assert [r["i64"] for r in ours.to_pylist()] == [1, 6]
    finally:
        stop(proc)


NESTED = pa.schema([
    ("time", pa.timestamp("us", tz="UTC")), ("dev", pa.string()),
    ("s", pa.struct([("a", pa.int64()), ("b", pa.list_(pa.string())),
                     ("c", pa.struct([("x", pa.float64()), ("m", pa.map_(pa.string(), pa.int32()))]))])),
    ("l", pa.list_(pa.list_(pa.int32()))),
    ("m", pa.map_(pa.string(), pa.struct([("u", pa.bool_()), ("w", pa.list_(pa.decimal128(9, 2)))]))),
])


def nested_row(dev, minutes, i):
    """Nulls at every level, empty lists and maps, by i."""
    s = None if i % 5 == 0 else {
        "a": None if i % 3 == 0 else i, "b": None if i % 4 == 0 else [] if i % 4 == 1 else [str(i), None],
        "c": None if i % 2 else {"x": i / 2, "m": None if i % 3 == 1 else [] if i % 3 == 2 else [("k", i), ("z", None)]}}
    lst = None if i % 6 == 0 else [] if i % 6 == 1 else [None, [], [i, None, i + 1]][: i % 4]
    m = None if i % 7 == 0 else [] if i % 7 == 1 else [
        ("p", None), ("q", {"u": None, "w": None}), ("r", {"u": i % 2 == 0, "w": [decimal.Decimal(i) / 100, None]})][: i % 4]
    return {"time": T0 + dt.timedelta(minutes=minutes), "dev": dev, "s": s, "l": lst, "m": m}


@pytest.fixture
def nested(tmp_path):
    lake = tlc.Lake(str(tmp_path))
    t = lake.create_table("iot.n", NESTED, time_column="time", series_key=["dev"])
    devs = ["a", "b", "c", "d", "e", "f", "g"]
    t.append(pa.Table.from_pylist([nested_row(d, 10, i) for i, d in enumerate(devs)], schema=NESTED))
    # Older times lose, newer ones win; the same (key, time) again: the later write.
    t.append(pa.Table.from_pylist([nested_row("a", 5, 20), nested_row("b", 30, 21), nested_row("c", 10, 22),
                                   nested_row("h", 1, 23)], schema=NESTED))
    t.append(pa.Table.from_pylist([nested_row(d, 40, 30 + i) for i, d in enumerate(devs[3:])], schema=NESTED))
    return lake, t, tmp_path


def test_nested_latest_is_the_engine_path_exactly(nested):
    """Structs, lists and maps from the index by our reader, typed as DuckDB exports them."""
    lake, t, _ = nested
    ours = lake.latest("iot.n")
    want = as_table(engine_path(t.info()["last_value_index"].removeprefix("file://")))
    assert ours.schema.equals(want.schema), (ours.schema, want.schema)
    assert ours.combine_chunks().equals(want.combine_chunks())
    assert ours.num_rows == 8


def test_nested_latest_matches_the_data_files_and_the_reference(nested, reference):
    """pyarrow's newest row per series over the data files (later write on a
    tie), and the reference's latest() over the same table."""
    import pyarrow.parquet as pq

    lake, _, root = nested
    files = sorted((root / "iot" / "n" / "data").rglob("*.parquet"))
    rows = pa.concat_tables([pq.read_table(f) for f in files]).to_pylist()
    newest = {}
    for r in rows:
        k = r["dev"]
        if k not in newest or (r["time"], r["_ingest_ts"]) >= (newest[k]["time"], newest[k]["_ingest_ts"]):
            newest[k] = r
    got = lake.latest("iot.n").to_pylist()
    assert got == [newest[k] for k in sorted(newest)]
    out = reference(f"""
        import json, timelake
        rows = timelake.Lake({str(root)!r}).latest("iot.n").to_pylist()
        print(json.dumps(sorted(rows, key=lambda r: r["dev"]), default=str))
    """)
    assert out == json.loads(json.dumps(got, default=str))


def test_handles_taking_turns_keep_every_series_in_the_index(tmp_path):
    """Each handle merges its next append with the index it built itself
    (kept in memory, table/lvi.c) only while the table's current snapshot
    still names that index: after another handle's append (same shape of
    rows, so the files are alike in size) or a rollback past it, the merge
    starts from the current snapshot's own index."""
    lake = tlc.Lake(str(tmp_path))
    a = lake.create_table("iot.m", SCHEMA, time_column="time", series_key=["site", "dev"])
    b = lake.table("iot.m")
    a.append(batch([row("s", 1, 1, 10)]))
    b.append(batch([row("s", 2, 1, 20)]))
    a.append(batch([row("s", 3, 1, 30)]))
    b.append(batch([row("s", 4, 1, 40)]))
    assert sorted(lake.latest("iot.m").column("dev").to_pylist()) == [1, 2, 3, 4]
    before = b.info()["snapshot_id"]  # b appended last
    a.append(batch([row("s", 5, 1, 50)]))
    a.rollback(before)
    a.append(batch([row("s", 6, 1, 60)]))
    assert sorted(lake.latest("iot.m").column("dev").to_pylist()) == [1, 2, 3, 4, 6]
