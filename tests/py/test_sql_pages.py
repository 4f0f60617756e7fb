"""The selective scan (src/query/selective_scan.h): queries whose time and
series-key filters select few rows are answered from the rows Timelake
decodes itself (row groups and pages pruned by Parquet statistics and page
indexes), handed to DuckDB through a table function. Every query shape is
checked against DuckDB (Python) over the table's Parquet files, with the
selective scan forced on, forced off and left to its rule, and --stats
against what each path reads."""
import datetime as dt
import glob
import os
import random
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

from test_sql import SCHEMA, T0, oracle, rows  # iot.readings and its oracle

PAGES = {"timelake.data-page-rows": "50", "write.parquet.row-group-limit": "700"}
DEVICES = 40


def hour(rng, h):
    """One append: every device, 30 readings in hour h (unique times), some null temps."""
    times, devs, temps, sites = [], [], [], []
    for d in rng.sample(range(DEVICES), DEVICES):
        for k in range(30):
            times.append(T0 + dt.timedelta(hours=h, seconds=k * 120 + d))
            devs.append(f"dev-{d:02d}")
            temps.append(None if rng.random() < 0.05 else round(rng.uniform(-10, 40), 3))
            sites.append(rng.randrange(3))
    return pa.table({"time": times, "device_id": devs, "temp": temps, "site": sites}, schema=SCHEMA)


def make_hourly(lake):
    """iot.readings over 8 hourly appends that overlap nothing: 8 files of 1,200
    rows, row groups of 700, pages of 50 rows."""
    rng = random.Random(11)
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"],
                          properties=PAGES)
    for h in range(8):
        t.append(hour(rng, h), maintain=False)
    return t


@pytest.fixture
def hourly(lake):
    return make_hourly(lake)


@pytest.fixture(scope="module")
def hourly_dir(tmp_path_factory):
    """The lake folder of `hourly`, written once for the module's 63 query
    checks, which only read it: writing it for each was most of their time."""
    import tlc

    lake_dir = tmp_path_factory.mktemp("pages") / "lake"
    make_hourly(tlc.Lake(str(lake_dir)))
    return lake_dir


@pytest.fixture(params=["off", "always", "auto"])
def mode(request, monkeypatch):
    if request.param == "auto":
        monkeypatch.delenv("TL_SELECTIVE_SCAN", raising=False)
    else:
        monkeypatch.setenv("TL_SELECTIVE_SCAN", request.param)
    return request.param


EIGHT = ", ".join(f"'dev-{d:02d}'" for d in (1, 4, 9, 13, 22, 27, 31, 38))
QUERIES = [
    # The bench's shapes (bench/query), on this table.
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(temp) AS m FROM iot.readings "
    "WHERE device_id = 'dev-03' AND time >= '2024-03-01 02:00:00+00' AND time < '2024-03-01 03:00:00+00' GROUP BY 1",
    f"SELECT time_bucket(INTERVAL '10 minutes', time) AS b, max(temp), min(site) FROM iot.readings "
    f"WHERE device_id IN ({EIGHT}) AND time >= '2024-03-01 01:00:00+00' AND time < '2024-03-01 06:00:00+00' GROUP BY 1",
    "SELECT time_bucket(INTERVAL '1 hour', time) AS h, device_id, avg(temp) AS m FROM iot.readings "
    "WHERE time >= '2024-03-01 02:00:00+00' AND time < '2024-03-01 04:00:00+00' GROUP BY 1, 2",
    "SELECT * FROM iot.readings WHERE temp > 30.0 AND device_id = 'dev-05' "
    "AND time >= '2024-03-01 01:00:00+00' AND time < '2024-03-01 07:00:00+00'",
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(temp) AS m FROM iot.readings "
    "WHERE time < '2024-03-01 01:00:00+00' GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
    "SELECT DISTINCT ON (device_id) * FROM iot.readings ORDER BY device_id, time DESC",
    # Joins, a self-join, a CTE used twice, windows, two references with different filters.
    "SELECT a.time, a.temp - b.temp AS d FROM iot.readings a JOIN iot.readings b "
    "ON a.time - INTERVAL 1 SECOND = b.time WHERE a.device_id = 'dev-08' AND b.device_id = 'dev-07'",
    "WITH x AS (SELECT * FROM iot.readings WHERE device_id = 'dev-11') "
    "SELECT a.time, b.time, a.temp FROM x a JOIN x b ON a.time = b.time + INTERVAL 120 SECOND",
    "SELECT device_id, time, temp, lag(temp) OVER (PARTITION BY device_id ORDER BY time) AS prev, "
    "avg(temp) OVER (PARTITION BY device_id ORDER BY time ROWS 3 PRECEDING) AS a FROM iot.readings "
    f"WHERE device_id IN ({EIGHT})",
    "SELECT * FROM iot.readings WHERE device_id = 'dev-02' UNION ALL "
    "SELECT * FROM iot.readings WHERE time BETWEEN '2024-03-01 05:10:00+00' AND '2024-03-01 05:12:00+00'",
    "SELECT r.device_id, count(*) FROM iot.readings r JOIN (SELECT DISTINCT device_id FROM iot.readings "
    "WHERE device_id IN ('dev-30', 'dev-31')) k ON r.device_id = k.device_id GROUP BY 1",
    # Projections of no column, of one column; nothing matching; IN with a missing key.
    "SELECT count(*) FROM iot.readings WHERE device_id = 'dev-17'",
    "SELECT count(temp), sum(site) FROM iot.readings WHERE device_id = 'dev-17' AND time > '2024-03-01 03:30:00+00'",
    "SELECT * FROM iot.readings WHERE device_id = 'nope'",
    "SELECT * FROM iot.readings WHERE device_id IN ('dev-39', 'zzz', 'dev-00')",
    "SELECT * FROM iot.readings WHERE time = '2024-03-01 04:02:05+00'",
    # WHEREs the selective scan applies exactly, which DuckDB then runs without
    # (sql_exact_where.h): with an alias, HAVING, ORDER BY and LIMIT; strict
    # bounds, BETWEEN, other time zones; a second reference (a subquery) or a
    # condition on another column keeps the WHERE.
    "SELECT r.device_id, time_bucket(INTERVAL '5 minutes', r.time) AS b, count(*) AS n, max(r.temp) AS m "
    "FROM iot.readings r WHERE r.device_id IN ('dev-01', 'dev-02', 'dev-03', 'dev-04', 'dev-05', 'dev-06') "
    "AND r.time > '2024-03-01 02:10:00+00' AND r.time <= '2024-03-01 04:50:00+00' "
    "GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY 3 DESC, 1, 2 LIMIT 7",
    "SELECT count(*), min(time), max(time), sum(temp) FROM iot.readings WHERE time BETWEEN "
    "TIMESTAMPTZ '2024-03-01 03:00:00+01' AND '2024-03-01 05:00:07+02' AND device_id = 'dev-04'",
    "SELECT (SELECT count(*) FROM iot.readings) AS total, count(*) AS n FROM iot.readings WHERE device_id = 'dev-06'",
    "SELECT device_id, count(*), max(time) FROM iot.readings WHERE time >= '2024-03-01 06:59:00+00' GROUP BY 1",
    "SELECT device_id, count(*) FROM iot.readings WHERE '2024-03-01 01:30:00+00' < time AND device_id IN "
    "('dev-07', 'dev-08') AND time < '2024-03-01 02:00:00+00' AND site = 1 GROUP BY 1",
]


@pytest.mark.parametrize("query", QUERIES)
def test_selective_scan_equals_duckdb_over_files(hourly_dir, mode, query):
    import tlc

    lake = tlc.Lake(str(hourly_dir))  # opened anew: each query starts with nothing cached, as before
    assert rows(lake.sql(query)) == rows(oracle(hourly_dir, query))


def stats_of(lake, query):
    stats = {}
    lake.sql(query, stats=stats)
    return stats


def test_selective_scan_reads_fewer_bytes_and_counts_them(lake, hourly, monkeypatch):
    query = QUERIES[0]
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "off")
    whole = stats_of(lake, query)
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "always")
    pages = stats_of(lake, query)
    assert pages["files_total"] == whole["files_total"] == 8
    assert pages["files_read"] == whole["files_read"] == 1  # one hour: manifest pruning
    assert pages["row_groups_total"] == whole["row_groups_total"] == 2
    assert pages["row_groups_read"] == whole["row_groups_read"] == 1
    assert 0 < pages["bytes_read"] < whole["bytes_read"] / 2  # a few pages of the chunks
    # The rule picks it by itself: a small part of the rows.
    monkeypatch.delenv("TL_SELECTIVE_SCAN")
    assert stats_of(lake, query) == pages
    # Nothing matching: no row group is read, nor any byte.
    none = stats_of(lake, "SELECT * FROM iot.readings WHERE device_id = 'dev-99'")
    assert none["row_groups_read"] == none["bytes_read"] == none["files_read"] == 0


def test_the_rule_leaves_large_selections_to_read_parquet(lake, hourly, monkeypatch):
    # Not a bare count(*), which the footers answer (test_count_where.py).
    query = "SELECT count(*), max(time) FROM iot.readings WHERE time < '2024-03-01 02:00:00+00'"
    monkeypatch.delenv("TL_SELECTIVE_SCAN", raising=False)
    auto = stats_of(lake, query)
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "off")
    assert stats_of(lake, query) == auto


def test_dedup_table_with_overlapping_files_falls_back(lake, lake_dir, monkeypatch):
    """Rewrites of the same (device, time) in another file: deduplicated on
    read, which only the read_parquet path does."""
    rng = random.Random(5)
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"],
                          properties=PAGES)
    first = hour(rng, 0)
    t.append(first, maintain=False)
    t.append(hour(rng, 1), maintain=False)
    t.append(first.slice(0, 300).set_column(2, "temp", pa.array([99.0] * 300)), maintain=False)
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "always")
    for q in ("SELECT * FROM iot.readings WHERE device_id = 'dev-03'",
              "SELECT device_id, avg(temp) FROM iot.readings WHERE time < '2024-03-01 00:30:00+00' GROUP BY 1"):
        assert rows(lake.sql(q)) == rows(oracle(lake_dir, q))


WIDE = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("b", pa.bool_()),
                  ("i", pa.int32()), ("l", pa.int64()), ("f", pa.float32()), ("g", pa.float64()),
                  ("d", pa.date32()), ("naive", pa.timestamp("us")), ("s", pa.string()),
                  ("bin", pa.binary())])


def wide_batch(h, decimal=False):
    n = 600
    def maybe(i, v):
        return None if i % 9 == 4 else v
    cols = {
        "time": [T0 + dt.timedelta(hours=h, seconds=i) for i in range(n)],
        "host": [f"h{i % 12:02d}" for i in range(n)],
        "b": [maybe(i, i % 3 == 0) for i in range(n)],
        "i": [maybe(i, i * 7 - 99) for i in range(n)],
        "l": [maybe(i, i * 10**10) for i in range(n)],
        "f": [maybe(i, i / 8) for i in range(n)],
        "g": [maybe(i, -i / 3) for i in range(n)],
        "d": [maybe(i, dt.date(2024, 1, 1) + dt.timedelta(days=i)) for i in range(n)],
        "naive": [maybe(i, dt.datetime(2020, 1, 1) + dt.timedelta(minutes=i)) for i in range(n)],
        "s": [maybe(i, "x" * (i % 17) + str(i % 5)) for i in range(n)],
        "bin": [maybe(i, bytes([i % 256, 0, 255])) for i in range(n)],
    }
    schema = WIDE
    if decimal:
        cols["dec"] = [maybe(i, Decimal(i) / 100) for i in range(n)]
        schema = WIDE.append(pa.field("dec", pa.decimal128(12, 2)))
    return pa.table(cols, schema=schema)


@pytest.mark.parametrize("decimal", [False, True])
def test_every_mapped_type_equals_read_parquet(lake, lake_dir, monkeypatch, decimal):
    """Names, types, nulls and values of each type the table function maps
    are those read_parquet gives (a decimal column is not mapped: the scan
    falls back)."""
    t = lake.create_table("w.wide", wide_batch(0, decimal).schema, time_column="time",
                          series_key=["host"], properties=PAGES)
    for h in range(3):
        t.append(wide_batch(h, decimal), maintain=False)
    files = sorted(glob.glob(f"{lake_dir}/w/wide/data/*/*.parquet"))
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    con.execute(f"CREATE VIEW wide AS SELECT * FROM read_parquet({files!r}, hive_partitioning=false)")
    for q in ("SELECT * FROM w.wide WHERE host = 'h03' ORDER BY time",
              "SELECT s, bin, d, b FROM w.wide WHERE host IN ('h01', 'h11') AND time > '2024-03-01 01:05:00+00' ORDER BY time",
              "SELECT count(*), count(b), sum(i), sum(f), max(naive) FROM w.wide WHERE host = 'h07'"):
        want = con.sql(q.replace("w.wide", "wide")).to_arrow_table()
        for m in ("always", "off"):
            monkeypatch.setenv("TL_SELECTIVE_SCAN", m)
            got = lake.sql(q)
            assert got.schema == want.schema, m
            assert got.equals(want), m


def test_invalid_utf8_in_a_file_is_left_to_read_parquet(lake, lake_dir, monkeypatch):
    """DuckDB takes the rows function's strings on trust: a file whose string
    values are not UTF-8 (patched in place, uncompressed) must go the way
    read_parquet goes, to DuckDB's error naming the value."""
    n = 4000
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("v", pa.float64())])
    table = pa.table({"time": pa.array(range(n), pa.timestamp("us", tz="UTC")),
                      "host": [f"h\u00e9{i // 100:03d}" for i in range(n)],
                      "v": [float(i) for i in range(n)]}, schema=schema)
    t = lake.create_table("m.bad", schema, time_column="time", series_key=["host"],
                          properties={**PAGES, "write.parquet.compression-codec": "uncompressed"})
    t.append(table, maintain=False)
    [path] = glob.glob(f"{lake_dir}/m/bad/data/*/*.parquet")
    data = open(path, "rb").read()
    assert data.count(b"h\xc3\xa9") > 0
    with open(path, "wb") as f:
        f.write(data.replace(b"h\xc3\xa9", b"h\xff\xfe"))  # same length: the footer still fits
    query = "SELECT count(*) AS n FROM m.bad WHERE host >= 'h' AND time < TIMESTAMPTZ '1970-01-01 00:00:00.001+00'"
    for mode in ("off", "always"):
        monkeypatch.setenv("TL_SELECTIVE_SCAN", mode)
        with pytest.raises(RuntimeError, match="not valid UTF8"):
            lake.sql(query)


@pytest.mark.parametrize("where", [
    "device_id IN ('dev-01', 'dev-02', 'dev-03', 'dev-04', 'dev-05')",
    "device_id = 'dev-02' AND time < '2024-03-01 00:30:00+00'",
    "time >= '2024-03-01 00:40:00+00'",
])
def test_exact_where_with_null_keys(lake, lake_dir, monkeypatch, where):
    """Rows whose series key is NULL pass no key restriction: a view of the
    refined rows is exact only when no key is NULL, else DuckDB keeps
    the WHERE."""
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "always")
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"],
                          properties=PAGES)
    rng = random.Random(5)
    batch = hour(rng, 0)
    devices = [None if i % 13 == 0 else d for i, d in enumerate(batch.column("device_id").to_pylist())]
    try:
        t.append(batch.set_column(1, "device_id", pa.array(devices, pa.string())), maintain=False)
    except Exception as e:  # a table that refuses NULL keys has nothing to test here
        pytest.skip(f"NULL series keys refused: {e}")
    query = f"SELECT device_id, count(*) AS n, sum(temp) AS s FROM iot.readings WHERE {where} GROUP BY 1"
    assert rows(lake.sql(query)) == rows(oracle(lake_dir, query))


def test_a_short_range_of_one_large_file_refined_by_time_in_lanes(lake, monkeypatch):
    """One file of 150,000 rows in 8 row groups, sorted by device then time:
    every page spans every time of a few devices, so a 5-minute range (1% of
    the rows) is found by the time column, read by lanes of row groups (a
    reader each), and only those rows decoded; the answer is read_parquet's."""
    import numpy as np

    devices, per = 300, 500
    t = lake.create_table("iot.big", SCHEMA, time_column="time", series_key=["device_id"],
                          properties={"write.parquet.row-group-limit": "20000"})
    start = int(T0.timestamp() * 1_000_000)
    t.append(pa.table({
        "time": pa.array(np.tile(start + np.arange(per, dtype=np.int64) * 60_000_000, devices),
                         pa.timestamp("us", tz="UTC")),
        "device_id": pa.array(np.repeat(np.array([f"dev-{d:03d}" for d in range(devices)]), per)),
        "temp": pa.array(np.random.default_rng(3).random(devices * per) * 40),
        "site": pa.array(np.arange(devices * per, dtype=np.int32) % 7),
    }, schema=SCHEMA), maintain=False)
    q = ("SELECT device_id, count(*) AS n, max(temp) AS m, min(site) AS s FROM iot.big "
         "WHERE time >= TIMESTAMPTZ '2024-03-01 01:40:00+00' AND time < TIMESTAMPTZ '2024-03-01 01:45:00+00' "
         "GROUP BY 1 ORDER BY 1")
    monkeypatch.delenv("TL_SELECTIVE_SCAN", raising=False)
    auto, auto_stats = lake.sql(q).to_pylist(), stats_of(lake, q)
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "off")
    off, off_stats = lake.sql(q).to_pylist(), stats_of(lake, q)
    assert auto == off and len(auto) == devices and all(r["n"] == 5 for r in auto)
    assert auto_stats["row_groups_read"] == off_stats["row_groups_read"] == 8
    assert auto_stats["bytes_read"] < off_stats["bytes_read"] / 2, (auto_stats, off_stats)
