"""tl_table_filter_new_keys through the ctypes binding, against DuckDB (Python)
anti-joining the input with the table's live data files (listed by
pyiceberg), NULL equal to NULL: plain and time-series tables, keys of every
usual type, inputs with repeats, nulls and casts; pruning checked by
damaging files that cannot hold the keys (a read of one would fail)."""

import datetime
import glob
import random

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import tlc

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def live_files(lake_dir, table):
    metas = glob.glob(str(lake_dir / table / "metadata" / "v*.metadata.json"))
    newest = max(metas, key=lambda f: int(f.rsplit("/v", 1)[1].split(".")[0]))
    return [t.file.file_path.replace("file://", "") for t in StaticTable.from_metadata(newest).scan().plan_files()]


def oracle(lake_dir, table, data, keys):
    """The rows of data whose keys no live file holds, in order, by DuckDB."""
    files = live_files(lake_dir, table)
    con = duckdb.connect()
    con.register("input_rows", data)
    match = " AND ".join(f't."{k}" IS NOT DISTINCT FROM i."{k}"' for k in keys)
    cols = ", ".join(f'i."{c}"' for c in data.schema.names)
    held = (f"SELECT {', '.join(chr(34) + k + chr(34) for k in keys)} FROM read_parquet({files!r})"
            if files else "SELECT " + ", ".join(f"NULL AS \"{k}\"" for k in keys) + " WHERE false")
    sql = (f"SELECT {cols} FROM (SELECT *, row_number() OVER () AS rn FROM input_rows) i "
           f"WHERE NOT EXISTS (SELECT 1 FROM ({held}) t WHERE {match}) ORDER BY i.rn")
    out = con.sql(sql).arrow()
    return out.read_all() if hasattr(out, "read_all") else out


def random_rows(rng, n, start):
    return {
        "name": [rng.choice(["a", "b", "ü", "long-" * 5, None]) for _ in range(n)],
        "n": [rng.randrange(start, start + 50) if rng.random() > 0.05 else None for _ in range(n)],
        "day": [datetime.date(2026, 1, 1) + datetime.timedelta(days=rng.randrange(20)) for _ in range(n)],
        "flag": [rng.random() < 0.5 for _ in range(n)],
        "x": [rng.random() for _ in range(n)],
    }


@pytest.mark.parametrize("keys", [["name"], ["n"], ["name", "n"], ["day", "flag", "n"]])
def test_plain_table_against_duckdb(tmp_path, keys):
    lake_dir = tmp_path / "lake"
    lake = tlc.Lake(str(lake_dir))
    rng = random.Random(len(keys))
    schema = pa.schema([("name", pa.string()), ("n", pa.int64()), ("day", pa.date32()), ("flag", pa.bool_()),
                        ("x", pa.float64())])
    t = lake.create_table("p.t", schema)
    for i in range(12):
        t.append(pa.table(random_rows(rng, 200, i * 30), schema=schema), maintain=False)
    data = pa.table(random_rows(rng, 500, 340), schema=schema)  # some new n, some held
    data = data.set_column(1, "n", data.column("n").cast(pa.int32()))  # cast to the table's type
    ours, dropped = tlc.filter_new_keys(t, data, keys)
    theirs = oracle(lake_dir, "p/t", data, keys)
    assert ours.schema == data.schema
    assert ours.to_pylist() == theirs.cast(data.schema).to_pylist()
    assert dropped == data.num_rows - ours.num_rows
    assert 0 < ours.num_rows < data.num_rows or keys == ["name"]


def test_time_series_table(tmp_path):
    """Dedup keys (time, device) of a day-partitioned table, after compaction too."""
    lake_dir = tmp_path / "lake"
    lake = tlc.Lake(str(lake_dir))
    schema = pa.schema([("time", pa.timestamp("us", "UTC")), ("device", pa.string()), ("v", pa.float64())])
    t = lake.create_table("m.r", schema, time_column="time", series_key=["device"], chunk="day")
    rng = random.Random(5)

    def batch(n, day):
        return pa.table({"time": [T0 + datetime.timedelta(days=day, seconds=rng.randrange(86400)) for _ in range(n)],
                         "device": [f"d{rng.randrange(5)}" for _ in range(n)],
                         "v": [rng.random() for _ in range(n)]}, schema=schema)

    for day in range(20):  # two files a day
        t.append(batch(150, day // 2), maintain=False)
    old = t.info()
    data = pa.concat_tables([batch(100, 9), batch(100, 10),
                             lake.sql("SELECT * FROM m.r WHERE time < '2026-01-03' LIMIT 50").select(
                                 ["time", "device", "v"]).cast(schema)])
    for round_ in range(2):
        ours, dropped = tlc.filter_new_keys(t, data, ["time", "device"])
        theirs = oracle(lake_dir, "m/r", data, ["time", "device"])
        assert ours.to_pylist() == theirs.cast(schema).to_pylist()
        assert dropped >= 50
        t.maintain()  # compacted files: fewer, larger; the answer is the same
        assert t.info()["files"] < old["files"] or round_ == 1


def test_pruning_reads_only_files_that_may_hold_keys(tmp_path):
    """Keys that grow: files of older keys are never read (damaged, they would fail)."""
    lake_dir = tmp_path / "lake"
    lake = tlc.Lake(str(lake_dir))
    schema = pa.schema([("seq", pa.int64()), ("host", pa.string())])
    t = lake.create_table("p.log", schema)
    for i in range(20):
        t.append(pa.table({"seq": list(range(i * 100, i * 100 + 100)), "host": [f"h{i}"] * 100}, schema=schema),
                 maintain=False)
    # Every file but the last append's (seq < 1900), by content: two appends
    # can share an mtime.
    old = [f for f in live_files(lake_dir, "p/log") if max(pq.read_table(f).column("seq").to_pylist()) < 1900]
    assert len(old) == 19
    data = pa.table({"seq": [1950, 1999, 2000, 2001, 5000], "host": ["h19", "h19", "x", "y", "z"]}, schema=schema)
    for f in old:
        with open(f, "r+b") as fh:
            fh.write(b"\0" * 64)
    ours, dropped = tlc.filter_new_keys(t, data, ["seq"])
    assert ours.column("seq").to_pylist() == [2000, 2001, 5000] and dropped == 2
    ours, dropped = tlc.filter_new_keys(t, data, ["host", "seq"])
    assert ours.column("seq").to_pylist() == [2000, 2001, 5000] and dropped == 2
    # A key an old file might hold makes that file needed: damaged, it is an error naming it.
    with pytest.raises((ValueError, tlc.TimelakeError), match="reading the keys of .*not a Parquet file"):
        tlc.filter_new_keys(t, pa.table({"seq": [5], "host": ["h0"]}, schema=schema), ["seq"])


def test_bad_calls(tmp_path):
    lake = tlc.Lake(str(tmp_path / "lake"))
    t = lake.create_table("p.t", pa.schema([("k", pa.int64()), ("s", pa.string())]))
    empty, dropped = tlc.filter_new_keys(t, pa.table({"k": [1, 1, None]}), ["k"])  # an empty table
    assert empty.column("k").to_pylist() == [1, 1, None] and dropped == 0
    t.append(pa.table({"k": [1], "s": ["x"]}))
    with pytest.raises(ValueError, match='table p.t has no column "nope"'):
        tlc.filter_new_keys(t, pa.table({"k": [1]}), ["nope"])
    with pytest.raises(ValueError, match='the rows have no column "s"'):
        tlc.filter_new_keys(t, pa.table({"k": [1]}), ["k", "s"])
    with pytest.raises(ValueError, match='"k"'):
        tlc.filter_new_keys(t, pa.table({"k": ["one"]}), ["k"])
    with pytest.raises(ValueError, match="twice"):
        tlc.filter_new_keys(t, pa.table({"k": [1]}), ["k", "k"])
    out, dropped = tlc.filter_new_keys(t, pa.table({"k": pa.array([], pa.int64())}), ["k"])
    assert out.num_rows == 0 and dropped == 0


def test_partitioned_table(tmp_path):
    """Identity and month partitions on key columns: the answer is DuckDB's, and files of
    partitions no input key falls in are never read."""
    lake_dir = tmp_path / "lake"
    lake = tlc.Lake(str(lake_dir))
    schema = pa.schema([("region", pa.string()), ("day", pa.date32()), ("id", pa.int64())])
    t = lake.create_table("p.parts", schema, partition_by=["region", "month(day)"])
    rng = random.Random(9)
    for i in range(8):
        t.append(pa.table({"region": [rng.choice(["eu", "us", "ap"]) for _ in range(300)],
                           "day": [datetime.date(2026, 1 + rng.randrange(6), 1 + rng.randrange(28))
                                   for _ in range(300)],
                           "id": [rng.randrange(2000) for _ in range(300)]}, schema=schema), maintain=False)
    data = pa.table({"region": ["eu", "eu", "us", "xx", None],
                     "day": [datetime.date(2026, 3, 5), datetime.date(2026, 6, 1), datetime.date(2026, 3, 5),
                             datetime.date(2026, 3, 5), datetime.date(2026, 3, 5)],
                     "id": [5, 6, 7, 8, 9]}, schema=schema)
    data = pa.concat_tables([data, lake.sql("SELECT region, day, id FROM p.parts LIMIT 20").cast(schema)])
    keys = ["region", "day", "id"]
    ours, dropped = tlc.filter_new_keys(t, data, keys)
    assert ours.to_pylist() == oracle(lake_dir, "p/parts", data, keys).cast(schema).to_pylist()
    assert dropped == 20
    # Damage every file outside region=eu, month 2026-03: only those may hold the first key.
    for f in live_files(lake_dir, "p/parts"):
        if "region=eu/" not in f or "day_month=2026-03" not in f:
            with open(f, "r+b") as fh:
                fh.write(b"\0" * 64)
    ours, dropped = tlc.filter_new_keys(t, data.slice(0, 1), keys)
    assert ours.num_rows + dropped == 1
