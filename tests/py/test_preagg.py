"""Partial aggregation in the scan (src/query/preagg_scan.h): a GROUP BY keys,
time_bucket query with count, sum, min, max, avg over a table whose files
hold no pending duplicate is answered from one partial-state row per run of
rows, merged as rollup rows are. Each random query is checked against DuckDB
over the live Parquet files and against the same query with the feature off
(filter_pushdown = false), with NULLs, NaN, ranges cutting buckets, several
files of many pages, appended and compacted; pending duplicates fall back;
narrow queries (a few pages) have their rows refined by their values first,
as the selective scan refines them, with the same answers."""

import datetime as dt
import math
import random

import duckdb
import pyarrow as pa
import pytest

import tlc
from test_count_where import live_files

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("dc", pa.string()),
                    ("v", pa.float64()), ("iv", pa.int64())])
HOURS = 6
# Widths DuckDB's own time_bucket aligns as ours does (dividing a day), and
# widths only ours (the epoch) aligns: those are compared with the feature off.
DAY_WIDTHS = ["15 minutes", "1 hour", "2 hours", "1 day", "10 minutes", "30 seconds"]
OTHER_WIDTHS = ["7 minutes", "90 minutes", "1 hour 30 minutes", "3600 seconds"]
AGGS = ["count(*)", "count(v)", "sum(v)", "min(v)", "max(v)", "avg(v)"]
KEYS = [["host"], ["dc"], ["host", "dc"], ["dc", "host"], []]


def hour_rows(rnd, h, hosts=("h0", "h1", "h2"), dcs=("d0", "d1")):
    start = T0 + dt.timedelta(hours=h)
    rows = {"time": [], "host": [], "dc": [], "v": [], "iv": []}
    for host in hosts:
        for dc in dcs:
            t = start
            while True:
                t += dt.timedelta(seconds=rnd.choice([1, 7, 13, 60]), microseconds=rnd.randrange(1000))
                if t >= start + dt.timedelta(hours=1):
                    break
                rows["time"].append(t)
                rows["host"].append(None if host == "h2" and rnd.random() < 0.2 else host)
                rows["dc"].append(dc)
                r = rnd.random()
                rows["v"].append(None if r < 0.1 else math.nan if r < 0.102 else round(rnd.uniform(-50, 50), 3))
                rows["iv"].append(rnd.randrange(100))
    return pa.table(rows, schema=SCHEMA)


def make(lake, rnd, compact, hosts=("h0", "h1", "h2")):
    props = {"timelake.data-page-rows": "97", "write.parquet.row-group-limit": "1000"}
    t = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], properties=props)
    for h in range(HOURS):
        t.append(hour_rows(rnd, h, hosts), maintain=False)
    if compact:
        t.maintain()
    return t


def when(rnd):
    t = T0 + dt.timedelta(minutes=rnd.randrange(-30, HOURS * 60 + 30), seconds=rnd.choice([0, 0, 1, 30]),
                          microseconds=rnd.choice([0, 0, 500]))
    return t.strftime("%Y-%m-%d %H:%M:%S.%f") + "+00"


def random_query(rnd, widths):
    keys = rnd.choice(KEYS)
    aggs = rnd.sample(AGGS, rnd.randint(1, 4))
    conds = []
    if rnd.random() < 0.7:
        conds.append(f"time {rnd.choice(['>', '>='])} TIMESTAMPTZ '{when(rnd)}'")
    if rnd.random() < 0.7:
        conds.append(f"time {rnd.choice(['<', '<='])} TIMESTAMPTZ '{when(rnd)}'")
    if rnd.random() < 0.1:
        conds.append(f"time BETWEEN TIMESTAMPTZ '{when(rnd)}' AND TIMESTAMPTZ '{when(rnd)}'")
    if rnd.random() < 0.3:
        conds.append(rnd.choice(["host = 'h1'", "host IN ('h0', 'h2')", "dc <> 'd1'", "host IS NULL",
                                 "(host = 'h0' OR dc = 'd0')"]))
    cols = ", ".join(keys + [f"time_bucket(INTERVAL '{rnd.choice(widths)}', time) AS b"] + aggs)
    where = f" WHERE {' AND '.join(conds)}" if conds else ""
    return f"SELECT {cols} FROM m.raw{where} GROUP BY {', '.join(keys + ['b'])}"


def close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def rows_of(table):
    rows = [tuple(r.values()) for r in table.to_pylist()]
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def same(a, b, q):
    assert len(a) == len(b), q
    for x, y in zip(a, b):
        assert all(close(u, w) for u, w in zip(x, y)), (q, x, y)


def pre_aggregated(lake, q, **settings):
    plans = {r["plan_type"]: r["plan"] for r in lake.query("EXPLAIN " + q, settings=settings or None).to_pylist()}
    return "aggregated on the fly" in plans.get("timelake_preagg", "")


def oracle(tmp_path):
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE SCHEMA m")
    con.execute(f"CREATE VIEW m.raw AS SELECT * FROM read_parquet({live_files(tmp_path / 'lake', 'm/raw')!r})")
    return con


@pytest.mark.parametrize("compact", [False, True], ids=["appended", "compacted"])
def test_random_queries_as_duckdb_and_as_without(tmp_path, monkeypatch, compact):
    rnd = random.Random(24 + compact)
    lake = tlc.Lake(str(tmp_path / "lake"))
    make(lake, rnd, compact)
    con = oracle(tmp_path)
    used = 0
    for i in range(80):
        q = random_query(rnd, DAY_WIDTHS if i % 4 else OTHER_WIDTHS)
        on = lake.query(q)
        off = lake.query(q, settings={"filter_pushdown": "false"})
        assert not pre_aggregated(lake, q, filter_pushdown="false")
        used += pre_aggregated(lake, q)
        assert on.schema == off.schema, q
        same(rows_of(on), rows_of(off), q)
        if compact:  # one file: its row groups cut into pieces of a page each, read by lanes
            monkeypatch.setenv("TL_PREAGG", "pieces")
            same(rows_of(lake.query(q)), rows_of(off), q)
            monkeypatch.delenv("TL_PREAGG")
        if i % 4:  # DuckDB's time_bucket aligns these widths as ours does
            same(rows_of(on), [tuple(r) for r in sorted(con.sql(q).fetchall(),
                                                         key=lambda r: tuple((x is None, str(x)) for x in r))], q)
    assert used == 80  # every query has the shape


def test_pending_duplicates_fall_back(tmp_path, monkeypatch):
    rnd = random.Random(5)
    lake = tlc.Lake(str(tmp_path / "lake"))
    t = make(lake, rnd, False, hosts=("h0", "h1"))
    q = "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, count(*), sum(v), avg(v) FROM m.raw GROUP BY 1, 2"
    assert pre_aggregated(lake, q)
    before = rows_of(lake.query(q))
    # The same (host, dc, time) again, with other values, in every hour: each
    # file may hold pending duplicates, the newest write winning on read.
    again = pa.concat_tables([hour_rows(random.Random(5), h, ("h0", "h1")) for h in range(HOURS)])
    again = again.set_column(3, "v", pa.array([1.0] * again.num_rows, pa.float64()))
    t.append(again.filter(pa.array([i % 3 == 0 for i in range(again.num_rows)])), maintain=False)
    assert not pre_aggregated(lake, q)
    after = rows_of(lake.query(q))
    same(after, rows_of(lake.query(q, settings={"filter_pushdown": "false"})), q)
    assert after != before
    # Compaction merges them: no duplicate pending, aggregated in the scan again.
    t.maintain()
    assert pre_aggregated(lake, q)
    same(rows_of(lake.query(q)), after, q)


def test_pending_duplicates_in_some_files(tmp_path, monkeypatch):
    """Files that may hold pending duplicates (they overlap another in time)
    are read as rows, merged on read; the others are aggregated in the scan:
    together exactly the rows the merge on read gives."""
    rnd = random.Random(8)
    lake = tlc.Lake(str(tmp_path / "lake"))
    t = make(lake, rnd, False)
    again = hour_rows(random.Random(8), 2)  # hour 2's first rows again, with other values
    again = again.set_column(3, "v", pa.array([7.0] * again.num_rows, pa.float64()))
    t.append(again.slice(0, 200), maintain=False)
    used = 0
    for i in range(40):
        q = random_query(rnd, DAY_WIDTHS)
        on = rows_of(lake.query(q))
        used += pre_aggregated(lake, q)
        same(on, rows_of(lake.query(q, settings={"filter_pushdown": "false"})), q)
        monkeypatch.setenv("TL_PREAGG", "off")
        same(on, rows_of(lake.query(q)), q)
        monkeypatch.delenv("TL_PREAGG")
    assert used >= 20  # all but the queries of hour 2 alone
    q = "SELECT host, dc, time_bucket(INTERVAL '1 hour', time) AS b, count(*), sum(v) FROM m.raw GROUP BY 1, 2, 3"
    assert pre_aggregated(lake, q)
    on = rows_of(lake.query(q))
    same(on, rows_of(lake.query(q, settings={"filter_pushdown": "false"})), q)


def test_other_shapes_read_rows(tmp_path):
    rnd = random.Random(6)
    lake = tlc.Lake(str(tmp_path / "lake"))
    make(lake, rnd, False)
    for q in ["SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, sum(iv) FROM m.raw GROUP BY 1, 2",
              "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, median(v) FROM m.raw GROUP BY 1, 2",
              "SELECT host, time_bucket(INTERVAL '1 month', time) AS b, sum(v) FROM m.raw GROUP BY 1, 2",
              "SELECT host, time_bucket(INTERVAL '1 hour', time, TIMESTAMPTZ '2026-01-01 00:10:00+00') AS b, "
              "sum(v) FROM m.raw GROUP BY 1, 2",
              "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, sum(v) FROM m.raw WHERE v > 0 GROUP BY 1, 2",
              "SELECT iv, time_bucket(INTERVAL '1 hour', time) AS b, sum(v) FROM m.raw GROUP BY 1, 2"]:
        assert not pre_aggregated(lake, q), q
        same(rows_of(lake.query(q)), rows_of(lake.query(q, settings={"filter_pushdown": "false"})), q)


def test_narrow_and_wide_queries_aggregated(tmp_path):
    rnd = random.Random(7)
    lake = tlc.Lake(str(tmp_path / "lake"))
    make(lake, rnd, False, hosts=[f"h{i}" for i in range(10)])
    q = "SELECT host, time_bucket(INTERVAL '10 minutes', time) AS b, count(*), max(v) FROM m.raw"
    wide = f"{q} WHERE time >= '2026-01-01 01:00:00+00' GROUP BY 1, 2"  # most of the rows
    narrow = f"{q} WHERE time >= '2026-01-01 05:50:00+00' AND host = 'h1' GROUP BY 1, 2"  # a few pages
    for x in (wide, narrow):
        assert pre_aggregated(lake, x)
        same(rows_of(lake.query(x)), rows_of(lake.query(x, settings={"filter_pushdown": "false"})), x)


NARROW_KEYS = ["host = 'h1'", "host IN ('h0', 'h7')", "host IS NULL", "host = 'h2' AND dc = 'd1'",
               "host IN ('h2', 'h9') AND dc <> 'd0'"]


def narrow_query(rnd, times):
    """A few hosts' rows over a stretch of time, whose bounds are often the
    time of a row or a bucket's edge."""
    def bound():
        if rnd.random() < 0.5:
            return rnd.choice(times).strftime("%Y-%m-%d %H:%M:%S.%f") + "+00"
        return when(rnd)
    keys = rnd.choice([[], ["host"], ["dc"], ["host", "dc"]])
    aggs = rnd.sample(AGGS, rnd.randint(1, 4))
    conds = [rnd.choice(NARROW_KEYS), f"time {rnd.choice(['>', '>='])} TIMESTAMPTZ '{bound()}'",
             f"time {rnd.choice(['<', '<='])} TIMESTAMPTZ '{bound()}'"]
    cols = ", ".join(keys + [f"time_bucket(INTERVAL '{rnd.choice(DAY_WIDTHS)}', time) AS b"] + aggs)
    return f"SELECT {cols} FROM m.raw WHERE {' AND '.join(conds)} GROUP BY {', '.join(keys + ['b'])}"


@pytest.mark.parametrize("compact", [False, True], ids=["appended", "compacted"])
def test_narrow_queries_refined_as_the_row_path(tmp_path, monkeypatch, compact):
    """Narrow queries: the rows the pages hold refined by their time and
    host values, then aggregated in the scan; the same answers as the rows
    (the selective scan's), as filter pushdown off and as DuckDB, then again
    with duplicates pending in one file."""
    rnd = random.Random(40 + compact)
    lake = tlc.Lake(str(tmp_path / "lake"))
    t = make(lake, rnd, compact, hosts=[f"h{i}" for i in range(10)])
    con = oracle(tmp_path)
    times = rnd.sample([r[0] for r in con.sql("SELECT time FROM m.raw ORDER BY time").fetchall()], 200)

    def duck(q):
        return [tuple(r) for r in sorted(con.sql(q).fetchall(), key=lambda r: tuple((x is None, str(x)) for x in r))]

    def check(q, with_duckdb, aggregated=True):
        assert aggregated is None or pre_aggregated(lake, q) == aggregated, q
        on = rows_of(lake.query(q))
        same(on, rows_of(lake.query(q, settings={"filter_pushdown": "false"})), q)
        monkeypatch.setenv("TL_PREAGG", "off")  # the row path: the selective scan
        same(on, rows_of(lake.query(q)), q)
        monkeypatch.delenv("TL_PREAGG")
        if with_duckdb:
            same(on, duck(q), q)
        return on

    for _ in range(16):
        check(narrow_query(rnd, times), True)
    # Hour 2's first rows of each host again, other values: pending a merge on read.
    again = hour_rows(random.Random(40 + compact), 2, [f"h{i}" for i in range(10)])
    again = again.set_column(3, "v", pa.array([7.0] * again.num_rows, pa.float64()))
    t.append(again.slice(0, 300), maintain=False)
    q = ("SELECT host, time_bucket(INTERVAL '15 minutes', time) AS b, count(*), sum(v), max(v) FROM m.raw "
         "WHERE host IN ('h0', 'h1') AND time >= TIMESTAMPTZ '2026-01-01 01:45:00+00' "
         "AND time < TIMESTAMPTZ '2026-01-01 02:15:00+00' GROUP BY 1, 2")
    # Compacted, the one file of the rows overlaps the new one: rows merged on read.
    assert check(q, False, not compact) != duck(q)  # the newest values won
    for _ in range(6):
        check(narrow_query(rnd, times), False, None if compact else True)


def fallback_rows(rnd, h):
    """An hour of rows whose first page of host names is mostly distinct (1,100
    hosts of one row, sorting first after a few nulls), so the writer stops the dictionary and
    writes the rest of the chunk's pages as plain values; then a few hosts
    (and null hosts) of many rows, which the next row groups and files
    dictionary-encode again."""
    start = T0 + dt.timedelta(hours=h)
    rows = {"time": [], "host": [], "dc": [], "v": [], "iv": []}
    for i in range(1100):
        rows["time"].append(start + dt.timedelta(seconds=rnd.randrange(3600)))
        rows["host"].append(f"a{i:04d}")
        rows["dc"].append("d0")
    for host in ("h0", "h1", "h2", None):
        for s in range(0, 3600, 2 if host else 240):  # few null hosts: they sort first
            rows["time"].append(start + dt.timedelta(seconds=s, microseconds=rnd.randrange(1000)))
            rows["host"].append(host)
            rows["dc"].append(rnd.choice(["d0", "d1"]) if host == "h2" else "d1")
    for _ in rows["time"]:
        r = rnd.random()
        rows["v"].append(None if r < 0.05 else round(rnd.uniform(-50, 50), 3))
        rows["iv"].append(rnd.randrange(100))
    return pa.table(rows, schema=SCHEMA)


@pytest.mark.parametrize("compact", [False, True], ids=["appended", "compacted"])
def test_dictionary_fallback_and_null_keys(tmp_path, monkeypatch, compact):
    """Keys read as dictionary codes where the pages read hold them, as
    strings where a page holds plain values: both give DuckDB's answer."""
    rnd = random.Random(31 + compact)
    lake = tlc.Lake(str(tmp_path / "lake"))
    props = {"timelake.data-page-rows": "1100", "write.parquet.row-group-limit": "6000"}
    t = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], properties=props)
    for h in range(3):
        t.append(fallback_rows(rnd, h), maintain=False)
    if compact:
        t.maintain()
    con = oracle(tmp_path)
    queries = [random_query(rnd, DAY_WIDTHS) for _ in range(30)]
    queries += ["SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, count(*), sum(v), min(v) FROM m.raw "
                "WHERE time >= TIMESTAMPTZ '2026-01-01 00:30:00+00' AND time < TIMESTAMPTZ '2026-01-01 02:10:00+00' "
                "GROUP BY 1, 2",
                "SELECT host, dc, time_bucket(INTERVAL '15 minutes', time) AS b, avg(v) FROM m.raw GROUP BY 1, 2, 3"]
    for q in queries:
        assert pre_aggregated(lake, q), q
        on = rows_of(lake.query(q))
        same(on, rows_of(lake.query(q, settings={"filter_pushdown": "false"})), q)
        same(on, [tuple(r) for r in sorted(con.sql(q).fetchall(),
                                           key=lambda r: tuple((x is None, str(x)) for x in r))], q)
        monkeypatch.setenv("TL_PREAGG", "strings")  # keys as strings only: the same rows
        same(rows_of(lake.query(q)), on, q)
        monkeypatch.delenv("TL_PREAGG")
