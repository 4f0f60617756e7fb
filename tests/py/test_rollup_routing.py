"""Rollup routing (src/query/sql_route.h): a GROUP BY time_bucket query on a
raw table reads whole clean buckets from a rollup and the rest from raw data.
The oracle is the same query with routing off (SET timelake.rollup_routing =
false), over rollups the reference (timelake==0.7.0) made and refreshed, with
late appends, refreshes and a rollback between; EXPLAIN shows what routed."""

import datetime as dt
import json
import math
import os
import random
import re
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from conftest import ROOT

PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 3, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("dc", pa.string()),
                    ("v", pa.float64()), ("iv", pa.int64())])

MAKE = """
import datetime as dt, json, random, pyarrow as pa, timelake
UTC = dt.timezone.utc
T0 = dt.datetime(2024, 3, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("dc", pa.string()),
                    ("v", pa.float64()), ("iv", pa.int64())])
rnd = random.Random(7)
lake = timelake.Lake(%(path)r)
t = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], chunk="day")
for day in range(3):
    n = 5000
    times = [T0 + dt.timedelta(days=day, seconds=rnd.randrange(86400)) for _ in range(n)]
    t.append(pa.table({"time": times, "host": [None if rnd.random() < 0.05 else f"h{rnd.randrange(3)}" for _ in range(n)],
                       "dc": [None if rnd.random() < 0.05 else f"d{rnd.randrange(2)}" for _ in range(n)],
                       "v": [None if rnd.random() < 0.1 else round(rnd.uniform(-50, 50), 3) for _ in range(n)],
                       "iv": [None if rnd.random() < 0.1 else rnd.randrange(-1000, 1000) for _ in range(n)]},
                      schema=SCHEMA), maintain=False)
lake.sql("CREATE MATERIALIZED ROLLUP m.r15 AS SELECT host, dc, time_bucket(INTERVAL '15 minutes', time) AS bucket, "
         "count(*) AS n, count(v) AS cv, sum(v) AS sv, min(v) AS mnv, max(v) AS mxv, avg(v) AS av, "
         "count(iv) AS ci, sum(iv) AS si, min(iv) AS mni, max(iv) AS mxi, first_value(v ORDER BY time) AS fv, "
         "last_value(v ORDER BY time) AS lv, last_value(iv ORDER BY time) AS li, m4(time, v) AS m4v, "
         "time_weighted_mean(time, v) AS twv, time_weighted_mean(time, v, 'linear') AS tlv "
         "FROM m.raw GROUP BY host, dc, bucket")
lake.sql("CREATE MATERIALIZED ROLLUP m.rh AS SELECT host, time_bucket(INTERVAL '1 hour', time) AS bucket, "
         "count(*) AS n, sum(v) AS sv, count(v) AS cv, min(v) AS mnv, max(iv) AS mxi "
         "FROM m.raw GROUP BY host, bucket")
print(1)
"""

WIDTHS = ["15 minutes", "30 minutes", "1 hour", "2 hours", "1 day", "7 minutes", "45 minutes", "90 minutes",
          "2 HOURS", "1 hour 30 minutes", "01:00:00", "3600 seconds"]  # 3 and 4 from the end: widths DuckDB evaluates
AGGS = ["count(*)", "count(v)", "sum(v)", "min(v)", "max(v)", "avg(v)", "count(iv)", "sum(iv)", "min(iv)",
        "max(iv)", "avg(iv)"]
# Routed from r15 only (its own keys): added to a few queries.
FIRST_LAST = ["first_value(v ORDER BY time)", "last_value(v ORDER BY time)", "last_value(iv ORDER BY time)"]
# Routed from r15: m4 at any multiple and keys, the time-weighted means at
# its own keys (at fewer, the states of several series overlap: raw only).
POINTS = ["m4(time, v)", "time_weighted_mean(time, v)", "time_weighted_mean(time, v, 'linear')"]
KEYS = [[], ["host"], ["dc"], ["host", "dc"], ["dc", "host"]]


def when(rnd):
    t = T0 + dt.timedelta(minutes=rnd.randrange(-60, 4 * 24 * 60), seconds=rnd.choice([0, 0, 1, 30]))
    return t.strftime("%Y-%m-%d %H:%M:%S") + rnd.choice(["Z", "+00:00", ""])


def random_query(rnd):
    keys = rnd.choice(KEYS)
    aggs = rnd.sample(AGGS, rnd.randint(1, 4))
    if rnd.random() < 0.25:
        aggs.append(rnd.choice(FIRST_LAST))
    if rnd.random() < 0.25:
        aggs.append(rnd.choice(POINTS))
    width = rnd.choice(WIDTHS)
    conds = []
    if rnd.random() < 0.6:
        conds.append(f"time {rnd.choice(['>', '>='])} '{when(rnd)}'")
    if rnd.random() < 0.6:
        conds.append(f"time {rnd.choice(['<', '<='])} TIMESTAMPTZ '{when(rnd)}'")
    if rnd.random() < 0.15:
        conds.append(f"time BETWEEN '{when(rnd)}' AND '{when(rnd)}'")
    if rnd.random() < 0.3:
        conds.append(rnd.choice(["host = 'h1'", "host IN ('h0', 'h2')", "dc <> 'd1'", "(host = 'h0' OR dc = 'd0')",
                                  "host IS NULL", "dc IS NOT NULL", "host IS DISTINCT FROM 'h1'",
                                  "coalesce(dc, 'none') = 'none'"]))
    if rnd.random() < 0.05:
        conds.append("v > 0")  # not a key: never routed
    bucket = rnd.choice(["time_bucket", "date_bin"])
    cols = ", ".join(keys + [f"{bucket}(INTERVAL '{width}', time) AS b"] + aggs)
    where = f" WHERE {' AND '.join(conds)}" if conds else ""
    group = ", ".join(keys + ["b"])
    having = " HAVING count(*) > 2" if rnd.random() < 0.1 else ""
    return f"SELECT {cols} FROM m.raw{where} GROUP BY {group}{having}"


def close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def rows_of(table):
    rows = [tuple(r.values()) for r in table.to_pylist()]
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def routed(lake, q):
    plans = {r["plan_type"]: r["plan"] for r in lake.sql("EXPLAIN " + q).to_pylist()}
    return "timelake_rollup" in plans


def compare(lake, rnd, n):
    """n random queries: routed and unrouted answers (and column names and
    types) alike; returns how many routed."""
    count = 0
    for _ in range(n):
        q = random_query(rnd)
        lake.sql("SET timelake.rollup_routing = true")
        on = lake.sql(q)
        count += routed(lake, q)
        lake.sql("SET timelake.rollup_routing = false")
        assert not routed(lake, q)
        off = lake.sql(q)
        assert on.schema == off.schema, q
        a, b = rows_of(on), rows_of(off)
        assert len(a) == len(b), q
        for x, y in zip(a, b):
            assert all(close(u, w) for u, w in zip(x, y)), (q, x, y)
    lake.sql("SET timelake.rollup_routing = true")
    return count


@pytest.fixture
def made(tmp_path, reference):
    path = str(tmp_path / "lake")
    reference(MAKE % {"path": path})
    return path


def current_snapshot(path, table):
    """The current snapshot id of a table, from its newest metadata file."""
    newest = max((json.loads(p.read_text()) for p in (Path(path) / table / "metadata").glob("*.metadata.json")),
                 key=lambda m: m["last-updated-ms"])
    return newest["current-snapshot-id"]


def late_rows(rnd, n, start, hours):
    times = [start + dt.timedelta(seconds=rnd.randrange(int(hours * 3600))) for _ in range(n)]
    return pa.table({"time": times, "host": [None if rnd.random() < 0.1 else f"h{rnd.randrange(3)}" for _ in range(n)],
                     "dc": [None if rnd.random() < 0.1 else f"d{rnd.randrange(2)}" for _ in range(n)],
                     "v": [rnd.uniform(-5, 5) for _ in range(n)], "iv": [rnd.randrange(9) for _ in range(n)]},
                    schema=SCHEMA)


def test_routed_answers_equal_raw(made, reference):
    # The floors below: how many of the random queries route at least. In
    # this small lake the cost rule (scan_cost.h) keeps many narrow ones (a
    # host, a short range; late data to merge) on raw data.
    rnd = random.Random(11)
    lake = timelake.Lake(made)
    assert compare(lake, rnd, 60) >= 10
    raw = lake.table("m.raw")
    before = current_snapshot(made, "m/raw")
    # Late data inside the rollups' range (some rows replace stored ones: the
    # same series and time) and after it, without a refresh.
    raw.append(late_rows(rnd, 40, T0 + dt.timedelta(days=1, hours=3), 5), maintain=False)
    old = lake.sql("SELECT time, host, dc FROM m.raw ORDER BY time LIMIT 5").to_pylist()
    raw.append(pa.table({"time": [r["time"] for r in old], "host": [r["host"] for r in old],
                         "dc": [r["dc"] for r in old], "v": [1e6] * 5, "iv": [10**6] * 5}, schema=SCHEMA),
               maintain=False)
    raw.append(late_rows(rnd, 30, T0 + dt.timedelta(days=3), 10), maintain=False)
    assert compare(lake, rnd, 60) >= 5
    # The reference refreshes one rollup (its rows for the changed buckets
    # written again: dedup in the rollup), and appends more.
    reference(f"""
        import timelake
        lake = timelake.Lake({made!r})
        lake.sql("REFRESH MATERIALIZED ROLLUP m.r15")
        print(1)
    """)
    lake = timelake.Lake(made)
    assert compare(lake, rnd, 60) >= 8
    lake.table("m.raw").append(late_rows(rnd, 20, T0 + dt.timedelta(hours=30), 2), maintain=False)
    assert compare(lake, rnd, 40) >= 1
    # Back past the refresh: r15's source snapshot is no longer in the
    # history (not routed); rh's still is.
    lake.table("m.raw").rollback(before)
    lake = timelake.Lake(made)
    compare(lake, rnd, 40)


def test_explain_shows_the_rollup(made):
    lake = timelake.Lake(made)
    q = ("SELECT host, time_bucket(INTERVAL '2 hours', time) AS b, count(*) AS n, max(iv) FROM m.raw "
         "WHERE time >= '2024-03-01 10:20:00Z' GROUP BY host, b ORDER BY host, b")
    plans = {r["plan_type"]: r["plan"] for r in lake.sql("EXPLAIN " + q).to_pylist()}
    assert "rollup m.rh" in plans["timelake_rollup"]
    assert "2024-03-01 11:00:00" in plans["timelake_rollup"]  # the first whole hour of the range
    # What the routed query reads: the rollup, and raw outside the clean
    # buckets (no scan of raw for the query as written), each with its files.
    scans = [r["plan"] for r in lake.sql("EXPLAIN " + q).to_pylist() if r["plan_type"] == "timelake_scan"]
    assert [s.split(" at version")[0] for s in scans] == ["m.rh", "m.raw"], scans
    assert "(rollup: the clean buckets)" in scans[0] and "/m/rh/data/" in scans[0], scans[0]
    assert "(outside the rollup's clean buckets)" in scans[1], scans[1]
    off = timelake.Lake(made, settings={"rollup_routing": "false"})
    raw_scan = [r["plan"] for r in off.sql("EXPLAIN " + q).to_pylist() if r["plan_type"] == "timelake_scan"]
    files = [int(re.search(r": (\d+) of \d+ files", s).group(1)) for s in (scans[1], raw_scan[0])]
    assert files[0] < files[1], (scans[1], raw_scan[0])
    # Same widths but keys the rollup lacks, an aggregate it does not store,
    # a width no multiple of a rollup's, a filter on a value: raw only.
    for q in ["SELECT iv, time_bucket(INTERVAL '1 hour', time) AS b, count(*) FROM m.raw GROUP BY iv, b",
              "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, stddev(v) FROM m.raw GROUP BY host, b",
              "SELECT host, time_bucket(INTERVAL '20 minutes', time) AS b, count(*) FROM m.raw GROUP BY host, b",
              "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, count(*) FROM m.raw WHERE v > 1 "
              "GROUP BY host, b",
              "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, count(DISTINCT v) FROM m.raw GROUP BY host, b",
              "SELECT host, time_bucket(INTERVAL '1 hour', time, TIMESTAMPTZ '2024-01-01 00:30:00Z') AS b, "
              "count(*) FROM m.raw GROUP BY host, b"]:
        assert not routed(lake, q), q
    # avg from a stored avg at the rollup's own width and keys; from sum and
    # count at a coarser width or fewer keys (the reference routes neither).
    assert routed(lake, "SELECT host, dc, time_bucket(INTERVAL '15 minutes', time) AS b, avg(v) FROM m.raw "
                        "GROUP BY host, dc, b")
    assert routed(lake, "SELECT dc, time_bucket(INTERVAL '1 day', time) AS b, avg(iv) FROM m.raw GROUP BY dc, b")
    assert routed(lake, "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, avg(v) FROM m.raw GROUP BY host, b")
    # GROUP BY ALL: the items without an aggregate, as DuckDB binds it.
    q = "SELECT host, time_bucket(INTERVAL '2 hours', time) AS b, count(*), max(iv) FROM m.raw GROUP BY ALL"
    assert "rollup m.rh" in explained(lake, q)
    same_answer(lake, q)
    assert not routed(lake, "SELECT host, iv, time_bucket(INTERVAL '1 hour', time) AS b, count(*) FROM m.raw "
                            "GROUP BY ALL")


def test_routing_settings(made):
    q = "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, count(*) FROM m.raw GROUP BY host, b"
    lake = timelake.Lake(made)
    assert routed(lake, q)
    lake.sql("SET timelake.rollup_routing = false")
    assert not routed(lake, q)
    lake.sql("SET timelake.rollup_routing = true")
    assert routed(lake, q)
    assert not routed(timelake.Lake(made, settings={"rollup_routing": "false"}), q)
    lake.table("m.raw").set_properties({"rollup_routing": "false"})
    assert not routed(timelake.Lake(made), q)
    lake.table("m.raw").set_properties({"rollup_routing": None})
    assert routed(timelake.Lake(made), q)
    # The rollup's own property (WITH (rollup_routing = false)) takes it out;
    # the other rollup (per 15 minutes, host and dc) then answers.
    lake.table("m.rh").set_properties({"rollup_routing": "false"})
    plans = {r["plan_type"]: r["plan"] for r in timelake.Lake(made).sql("EXPLAIN " + q).to_pylist()}
    assert "rollup m.r15" in plans["timelake_rollup"]
    lake.table("m.r15").set_properties({"rollup_routing": "false"})
    assert not routed(timelake.Lake(made), q)
    with pytest.raises(Exception, match="true or false"):
        lake.sql("SET timelake.rollup_routing = 'sometimes'")


def test_routed_over_our_rollups(tmp_path):
    """The same comparison over rollups our CREATE MATERIALIZED ROLLUP made
    and our REFRESH brought up to date."""
    rnd = random.Random(5)
    lake = timelake.Lake(str(tmp_path / "lake"))
    raw = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], chunk="day")
    for day in range(3):
        raw.append(late_rows(rnd, 5000, T0 + dt.timedelta(days=day), 24), maintain=False)
    lake.sql("CREATE MATERIALIZED ROLLUP m.r15 AS SELECT host, dc, time_bucket(INTERVAL '15 minutes', time) AS bucket, "
             "count(*) AS n, count(v) AS cv, sum(v) AS sv, min(v) AS mnv, max(v) AS mxv, avg(v) AS av, "
             "count(iv) AS ci, sum(iv) AS si, min(iv) AS mni, max(iv) AS mxi, first_value(v ORDER BY time) AS fv, "
             "last_value(v ORDER BY time) AS lv, last_value(iv ORDER BY time) AS li, m4(time, v) AS m4v, "
             "time_weighted_mean(time, v) AS twv, time_weighted_mean(time, v, 'linear') AS tlv, "
             "m4(time, iv) AS m4i FROM m.raw GROUP BY host, dc, bucket")
    lake.sql("CREATE MATERIALIZED ROLLUP m.rh AS SELECT host, time_bucket(INTERVAL '1 hour', time) AS bucket, "
             "count(*) AS n, sum(v) AS sv, count(v) AS cv, min(v) AS mnv, max(iv) AS mxi FROM m.raw GROUP BY host, bucket")
    assert compare(lake, rnd, 50) >= 3
    raw = lake.table("m.raw")
    raw.append(late_rows(rnd, 40, T0 + dt.timedelta(days=1, hours=3), 5), maintain=False)
    raw.append(late_rows(rnd, 30, T0 + dt.timedelta(days=3), 10), maintain=False)
    assert compare(lake, rnd, 40) >= 5
    lake.sql("REFRESH MATERIALIZED ROLLUP m.r15")
    assert compare(lake, rnd, 40) >= 5


def test_rollup_rows_aggregated_in_the_scan(tmp_path):
    """A flat rollup's rows of one clean range are merged in the scan
    (rollup_fold.h): stored counts summed, sums summed, minima and maxima
    kept, by the query's keys and buckets, across series without keys; with
    null keys, null and NaN values, a late append splitting the clean range
    (not merged then) and a refresh whose rewritten buckets the rollup
    merges on read (their rows come as states, preagg_scan.c's
    pending_rows_sql, beside a file that overlaps none)."""
    rnd = random.Random(3)
    lake = timelake.Lake(str(tmp_path / "lake"))
    raw = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], chunk="day")
    for day in range(3):
        rows = late_rows(rnd, 2000, T0 + dt.timedelta(days=day), 24)
        v = rows.column("v").to_pylist()
        v[::97] = [None] * len(v[::97])
        v[5::211] = [float("nan")] * len(v[5::211])
        raw.append(rows.set_column(3, "v", pa.array(v, pa.float64())), maintain=False)
    lake.sql("CREATE MATERIALIZED ROLLUP m.r1h AS SELECT host, dc, time_bucket(INTERVAL '1 hour', time) AS bucket, "
             "count(*) AS n, count(v) AS cv, sum(v) AS sv, min(v) AS mnv, max(v) AS mxv "
             "FROM m.raw GROUP BY host, dc, bucket")
    where = "WHERE time >= '2024-03-01 05:07:00' AND time < '2024-03-04 17:55:30'"
    queries = [f"SELECT time_bucket(INTERVAL '1 hour', time) AS b, count(*), max(v), min(v) FROM m.raw {where} GROUP BY 1",
               f"SELECT host, date_bin(INTERVAL '2 hours', time) AS b, count(v), sum(v), avg(v) FROM m.raw {where} "
               "GROUP BY 1, 2",
               f"SELECT dc, time_bucket(INTERVAL '3 hours', time) AS b, avg(v), max(v) FROM m.raw {where} "
               "AND host IN ('h0', 'h2') GROUP BY 1, 2",
               f"SELECT time_bucket(INTERVAL '1 day', time) AS b, count(*) AS n FROM m.raw {where} GROUP BY 1"]

    def check(folds):
        for q in queries:
            lake.sql("SET timelake.rollup_routing = true")
            on = lake.sql(q)
            plans = lake.sql("EXPLAIN " + q).to_pylist()
            if folds is not None:  # None: routed or not, by the cost rule
                assert any(r["plan_type"] == "timelake_rollup" for r in plans), q
                assert any("aggregated in the scan" in r["plan"] for r in plans) == folds, q
            elif any(r["plan_type"] == "timelake_rollup" for r in plans):
                assert not any("aggregated in the scan" in r["plan"] for r in plans), q
            lake.sql("SET timelake.rollup_routing = false")
            off = lake.sql(q)
            assert on.schema == off.schema, q
            a, b = rows_of(on), rows_of(off)
            assert len(a) == len(b), q
            for x, y in zip(a, b):
                assert all(close(u, w) or (u != u and w != w) for u, w in zip(x, y)), (q, x, y)
        lake.sql("SET timelake.rollup_routing = true")

    check(True)
    raw.append(late_rows(rnd, 2000, T0 + dt.timedelta(days=3), 24), maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP m.r1h")  # a file of the fourth day, overlapping none
    check(True)
    raw.append(late_rows(rnd, 30, T0 + dt.timedelta(days=1, hours=3), 2), maintain=False)
    check(None)  # two clean ranges: the rollup's rows as they are, when routed
    lake.sql("REFRESH MATERIALIZED ROLLUP m.r1h")  # rewrites two hours: two files merged on read
    check(True)


def test_first_and_last_values_routed_with_ties_and_nulls(tmp_path):
    """first_value / last_value(x ORDER BY time) from a rollup at its own keys
    (any multiple of its width): a rollup's rows of one group ordered by
    bucket. Rows of several series share times (the rollup's key is part of
    the series key) and many values are NULL."""
    rnd = random.Random(13)
    lake = timelake.Lake(str(tmp_path / "lake"))
    raw = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], chunk="day")
    for day in range(2):
        n = 3000
        times = [T0 + dt.timedelta(days=day, minutes=rnd.randrange(24 * 60)) for _ in range(n)]
        raw.append(pa.table({"time": times, "host": [rnd.choice(["h0", "h1", None]) for _ in range(n)],
                             "dc": [f"d{i % 7}" for i in range(n)],
                             "v": [None if rnd.random() < 0.3 else float(rnd.randrange(5)) for _ in range(n)],
                             "iv": [None if rnd.random() < 0.3 else rnd.randrange(5) for _ in range(n)]},
                            schema=SCHEMA), maintain=False)
    lake.sql("CREATE MATERIALIZED ROLLUP m.f AS SELECT host, time_bucket(INTERVAL '10 minutes', time) AS bucket, "
             "first_value(v ORDER BY time) AS fv, last_value(v ORDER BY time) AS lv, "
             "first_value(iv ORDER BY time) AS fi, last_value(iv ORDER BY time) AS li, count(*) AS n "
             "FROM m.raw GROUP BY host, bucket")
    queries = [f"SELECT host, time_bucket(INTERVAL '{w}', time) AS b, first_value(v ORDER BY time), "
               f"last_value(v ORDER BY time) AS l, first_value(iv ORDER BY time ASC), last_value(iv ORDER BY time), "
               f"count(*) FROM m.raw{where} GROUP BY host, b"
               for w in ["10 minutes", "30 minutes", "1 hour", "1 day"]
               for where in ["", " WHERE time >= '2024-03-01 05:05:00Z' AND time < '2024-03-02 13:00:00Z'",
                             " WHERE host IS NULL", " WHERE host = 'h1'"]]
    for q in queries:
        assert routed(lake, q), q
    # Keys the rollup does not group by, descending order, or another order
    # key: raw only.
    for q in ["SELECT time_bucket(INTERVAL '1 hour', time) AS b, first_value(v ORDER BY time) FROM m.raw GROUP BY b",
              "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, first_value(v ORDER BY time DESC) "
              "FROM m.raw GROUP BY host, b",
              "SELECT host, time_bucket(INTERVAL '1 hour', time) AS b, first_value(v ORDER BY iv) "
              "FROM m.raw GROUP BY host, b"]:
        assert not routed(lake, q), q
    # Late rows at times already held (ties again) and new nulls, not refreshed.
    times = [T0 + dt.timedelta(hours=20, minutes=rnd.randrange(120)) for _ in range(200)]
    raw.append(pa.table({"time": times, "host": [rnd.choice(["h0", None]) for _ in range(200)],
                         "dc": ["d9"] * 200, "v": [None if rnd.random() < 0.5 else -1.0 for _ in range(200)],
                         "iv": [None] * 200}, schema=SCHEMA), maintain=False)
    for refreshed in (False, True):
        if refreshed:
            lake.sql("REFRESH MATERIALIZED ROLLUP m.f")
        for q in queries:
            lake.sql("SET timelake.rollup_routing = true")
            assert routed(lake, q), q
            on = lake.sql(q)
            lake.sql("SET timelake.rollup_routing = false")
            off = lake.sql(q)
            assert on.schema == off.schema, q
            assert rows_of(on) == rows_of(off), q


def test_ties_never_pick_a_null_over_a_value(tmp_path):
    """Rows tied on time: first_value takes the smallest value and last_value
    the largest, a NULL only when every tied value is NULL; alike raw, as the
    rollup stores it and routed."""
    lake = timelake.Lake(str(tmp_path / "lake"))
    raw = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], chunk="day")
    t = T0 + dt.timedelta(minutes=5)
    filler = [T0 + dt.timedelta(seconds=s) for s in range(0, 86400, 30)]  # host b: routing pays
    raw.append(pa.table({"time": [t] * 4 + [t + dt.timedelta(hours=1)] * 2 + filler,
                         "host": ["a"] * 6 + ["b"] * len(filler),
                         "dc": ["d1", "d2", "d3", "d4", "d1", "d2"] + ["d1"] * len(filler),
                         "v": [None, 1.0, 3.0, None, None, None] + [0.0] * len(filler),
                         "iv": [2, None, 7, 5, None, None] + [0] * len(filler)},
                        schema=SCHEMA), maintain=False)
    want = [(T0, 1.0, 3.0, 2, 7), (T0 + dt.timedelta(hours=1), None, None, None, None)]
    q = ("SELECT time_bucket(INTERVAL '1 hour', time) AS b, first_value(v ORDER BY time), "
         "last_value(v ORDER BY time), first_value(iv ORDER BY time), last_value(iv ORDER BY time) "
         "FROM m.raw WHERE host = 'a' GROUP BY host, b ORDER BY b")
    assert [tuple(r.values()) for r in lake.sql(q).to_pylist()] == want
    lake.sql("CREATE MATERIALIZED ROLLUP m.f AS SELECT host, time_bucket(INTERVAL '1 hour', time) AS bucket, "
             "first_value(v ORDER BY time) AS fv, last_value(v ORDER BY time) AS lv, "
             "first_value(iv ORDER BY time) AS fi, last_value(iv ORDER BY time) AS li "
             "FROM m.raw GROUP BY host, bucket")
    stored = lake.sql("SELECT bucket, fv, lv, fi, li FROM m.f WHERE host = 'a' ORDER BY bucket").to_pylist()
    assert [tuple(r.values()) for r in stored] == want
    assert routed(lake, q)
    assert [tuple(r.values()) for r in lake.sql(q).to_pylist()] == want


def explained(lake, q):
    plans = {r["plan_type"]: r["plan"] for r in lake.sql("EXPLAIN " + q).to_pylist()}
    return plans.get("timelake_rollup", "")


def same_answer(lake, q):
    on = rows_of(lake.sql(q))
    lake.sql("SET timelake.rollup_routing = false")
    off = rows_of(lake.sql(q))
    lake.sql("SET timelake.rollup_routing = true")
    assert len(on) == len(off), q
    for x, y in zip(on, off):
        assert all(close(u, w) for u, w in zip(x, y)), (q, x, y)


def test_what_routing_keeps_follows_refreshes_rollups_drops_and_other_processes(tmp_path, reference):
    """Routing keeps what it found per query and table versions (sql_route.h):
    a repeated query is routed as before, and a refresh, a new rollup, a drop,
    a change of the rollup's setting and another process's commits each
    change what it does."""
    rnd = random.Random(17)
    path = str(tmp_path / "lake")
    lake = timelake.Lake(path, settings={"version_check_interval": "0s"})
    raw = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host", "dc"], chunk="day")
    raw.append(late_rows(rnd, 4000, T0, 48), maintain=False)
    lake.sql("CREATE MATERIALIZED ROLLUP m.rh AS SELECT host, time_bucket(INTERVAL '1 hour', time) AS bucket, "
             "count(*) AS n, sum(iv) AS si FROM m.raw GROUP BY host, bucket")
    q = ("SELECT host, time_bucket(INTERVAL '2 hours', time) AS b, count(*) AS n, sum(iv) AS s FROM m.raw "
         "WHERE time >= '2024-03-01 03:00:00Z' GROUP BY host, b")
    first = explained(lake, q)
    assert "rollup m.rh" in first and explained(lake, q) == first  # repeated: the same
    same_answer(lake, q)
    # Late rows: the raw table's version changes, their buckets come from raw.
    lake.table("m.raw").append(late_rows(rnd, 50, T0 + dt.timedelta(hours=10), 1), maintain=False)
    late = explained(lake, q)
    assert late != first and "rollup m.rh" in late
    same_answer(lake, q)
    # A refresh: the rollup's version changes, the recorded snapshot too.
    lake.sql("REFRESH MATERIALIZED ROLLUP m.rh")
    assert explained(lake, q) == first.replace(first.split("snapshot ")[1].split(")")[0],
                                               str(current_snapshot(path, "m/raw")))
    same_answer(lake, q)
    # A new, wider rollup answers; dropped, the first one again.
    lake.sql("CREATE MATERIALIZED ROLLUP m.r2 AS SELECT host, time_bucket(INTERVAL '2 hours', time) AS bucket, "
             "count(*) AS n, sum(iv) AS si FROM m.raw GROUP BY host, bucket")
    assert "rollup m.r2" in explained(lake, q)
    same_answer(lake, q)
    lake.sql("DROP MATERIALIZED ROLLUP m.r2")
    assert "rollup m.rh" in explained(lake, q)
    same_answer(lake, q)
    # The rollup's own setting.
    lake.table("m.rh").set_properties({"rollup_routing": "false"})
    assert explained(lake, q) == ""
    lake.table("m.rh").set_properties({"rollup_routing": None})
    assert "rollup m.rh" in explained(lake, q)
    # Another process appends and refreshes; then appends only.
    for refresh in (True, False):
        reference(f"""
            import datetime as dt, pyarrow as pa, timelake
            lake = timelake.Lake({path!r})
            t0 = dt.datetime(2024, 3, 2, 5, tzinfo=dt.timezone.utc)
            lake.table("m.raw").append(pa.table({{"time": [t0 + dt.timedelta(minutes=i) for i in range(30)],
                "host": ["h1"] * 30, "dc": ["d0"] * 30, "v": [1.0] * 30, "iv": [5] * 30}}), maintain=False)
            if {refresh}:
                lake.sql("REFRESH MATERIALIZED ROLLUP m.rh")
            print(1)
        """)
        now = explained(lake, q)
        assert "rollup m.rh" in now
        assert (f"snapshot {current_snapshot(path, 'm/raw')})" in now) == refresh
        same_answer(lake, q)
