"""The last-value indexes table handles keep in memory for their next append
(src/table/lvi_memo.c): one budget per lake (timelake_index_cache_bytes), the
index kept longest ago dropped first; a handle whose index was dropped reads
its file. Whatever was kept or dropped, every table's index is the newest row
of each series, as DuckDB computes it from the data files."""

import datetime as dt
import gc
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pyarrow as pa
import pytest

import tlc

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("v", pa.float64())])
SERIES = 40


def rows(round_, table):
    """One append: every series once, at a later time each round, except every
    fifth series which goes back in time (the first round's row stays newest)."""
    times = [T0 - dt.timedelta(minutes=round_) if d % 5 == 0 else T0 + dt.timedelta(minutes=round_ * 10 + d % 7)
             for d in range(SERIES)]
    return pa.table({"time": times, "dev": list(range(SERIES)),
                     "v": [round_ * 1000.0 + table * 100 + d for d in range(SERIES)]}, schema=SCHEMA)


def from_data(root, name):
    """The newest row of every series computed from the table's data files."""
    files = [str(p) for p in (root / "iot" / name / "data").rglob("*.parquet")]
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con.sql(
        f"SELECT time, dev, v FROM read_parquet({files!r}, hive_partitioning = false) "
        "QUALIFY row_number() OVER (PARTITION BY dev ORDER BY time DESC, _ingest_ts DESC) = 1 "
        "ORDER BY dev").to_arrow_table().to_pylist()


def from_index(lake, name):
    return lake.latest(f"iot.{name}").select(["time", "dev", "v"]).sort_by("dev").to_pylist()


def one_index_bytes(tmp_path):
    """What one table's kept index takes (the rows of every round are alike), in
    a budget of its own (the process's holds the indexes of earlier tests)."""
    lake = tlc.Lake(str(tmp_path / "probe"), {"timelake_index_cache_bytes": str(1 << 30)})
    t = lake.create_table("iot.p", SCHEMA, time_column="time", series_key=["dev"])
    t.append(rows(1, 0))
    return lake.index_cache_stats()["bytes"]


def test_tables_of_one_lake_share_the_budget_oldest_dropped_first(tmp_path):
    per_index = one_index_bytes(tmp_path)
    assert per_index > 0
    budget = 3 * per_index + per_index // 2  # room for three
    lake = tlc.Lake(str(tmp_path / "w"), {"timelake_index_cache_bytes": str(budget)})
    names = [f"t{i}" for i in range(6)]
    tables = [lake.create_table(f"iot.{n}", SCHEMA, time_column="time", series_key=["dev"]) for n in names]
    for r in range(1, 4):
        for i, t in enumerate(tables):
            t.append(rows(r, i))
            s = lake.index_cache_stats()
            assert s["bytes"] <= budget and s["limit_bytes"] == budget
            assert s["indexes"] == min(3, (r - 1) * len(tables) + i + 1)
    s = lake.index_cache_stats()
    # Round after round each table's index was dropped before its next append
    # (three kept of six, the oldest first): every merge read the file.
    assert s["hits"] == 0 and s["misses"] == 2 * len(tables)
    assert s["dropped"] == 3 * len(tables) - 3
    # The last three appended keep theirs: their next append merges in memory.
    tables[-1].append(rows(4, len(tables) - 1))
    s = lake.index_cache_stats()
    assert s["hits"] == 1 and s["indexes"] == 3
    for n in names:
        assert from_index(lake, n) == from_data(tmp_path / "w", n)


def test_handles_appending_from_threads_stay_within_the_budget(tmp_path):
    per_index = one_index_bytes(tmp_path)
    budget = 2 * per_index + per_index // 2
    lake = tlc.Lake(str(tmp_path / "w"), {"timelake_index_cache_bytes": str(budget)})
    names = [f"t{i}" for i in range(8)]
    tables = [lake.create_table(f"iot.{n}", SCHEMA, time_column="time", series_key=["dev"]) for n in names]
    seen = []

    def appends(i):
        for r in range(1, 5):
            tables[i].append(rows(r, i))
            seen.append(lake.index_cache_stats())

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(appends, range(len(tables))))
    assert all(s["bytes"] <= budget and s["indexes"] <= 2 for s in seen)
    s = lake.index_cache_stats()
    assert s["hits"] + s["misses"] == 3 * len(tables) and s["dropped"] > 0
    for n in names:
        assert from_index(lake, n) == from_data(tmp_path / "w", n)
    for t in tables:
        t.close()
    assert lake.index_cache_stats()["bytes"] == 0  # a closed handle's index goes with it


def test_one_handle_merges_in_memory_by_default_and_reads_the_file_with_none_kept(tmp_path):
    for budget, hits in ((None, 3), ("0", 0)):
        root = tmp_path / f"w{budget}"
        lake = tlc.Lake(str(root), {"timelake_index_cache_bytes": budget} if budget else None)
        t = lake.create_table("iot.m", SCHEMA, time_column="time", series_key=["dev"])
        gc.collect()  # no handle of an earlier test lets go of its index meanwhile
        before = lake.index_cache_stats()  # the process's budget may hold others' indexes
        for r in range(1, 5):
            t.append(rows(r, 0))
        s = lake.index_cache_stats()
        assert s["limit_bytes"] == (64 << 20 if budget is None else 0)
        assert (s["hits"] - before["hits"], s["misses"] - before["misses"]) == (hits, 3 - hits)
        assert (s["indexes"] > before["indexes"]) == (budget is None)
        assert from_index(lake, "m") == from_data(root, "m")


def test_lakes_opened_without_a_budget_share_the_process_one(tmp_path):
    """A server that opens a lake per table is bounded as a whole; a lake given
    its own budget keeps to it alone."""
    one, two = tlc.Lake(str(tmp_path / "a")), tlc.Lake(str(tmp_path / "b"))
    own = tlc.Lake(str(tmp_path / "c"), {"timelake_index_cache_bytes": str(64 << 20)})
    gc.collect()  # no handle of an earlier test lets go of its index meanwhile
    before = two.index_cache_stats()
    t = one.create_table("iot.m", SCHEMA, time_column="time", series_key=["dev"])
    t.append(rows(1, 0))
    t.append(rows(2, 0))
    after = two.index_cache_stats()
    assert after["indexes"] == before["indexes"] + 1 and after["bytes"] > before["bytes"]
    assert after["hits"] == before["hits"] + 1
    assert own.index_cache_stats() == {"bytes": 0, "limit_bytes": 64 << 20, "indexes": 0, "hits": 0,
                                       "misses": 0, "dropped": 0}
    t.close()
    assert two.index_cache_stats()["indexes"] == before["indexes"]


def test_a_budget_that_is_not_a_number_of_bytes_is_refused(tmp_path):
    with pytest.raises(ValueError, match="timelake_index_cache_bytes must be a number of bytes"):
        tlc.Lake(str(tmp_path), {"timelake_index_cache_bytes": "64MiB"})
