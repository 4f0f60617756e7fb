"""Rollup routing's cost rule (src/query/scan_cost.h): a query routes when the
rollup's row groups and the raw rows around them read fewer bytes than the
raw scan alone, as each scan reads them. A narrow query (one host) decodes a
few pages of raw data and stays unrouted; a wide one (every host) routes.
EXPLAIN counts what the routed scan reads of the rollup: the footer and the
column chunks of the columns the routed query reads, in the row groups it
reads, the same way it counts raw reads."""

import datetime as dt
import os
import re
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import ROOT

PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 3, 1, tzinfo=UTC)
HOSTS, HOURS, PER_HOUR = 500, 12, 60
METRICS = ["m0", "m1", "m2", "m3"]
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string())] +
                   [(m, pa.float64()) for m in METRICS])
MAXES = ", ".join(f"max({m}) AS mx_{m}" for m in METRICS)
ROLLUP = ("CREATE MATERIALIZED ROLLUP m.rh AS SELECT host, time_bucket(INTERVAL '1 hour', time) AS bucket, "
          f"count(*) AS n, {MAXES} FROM m.raw GROUP BY host, bucket")


def hour_batch(hour):
    """Every host once a minute for one hour, rows by host then time (as an
    hourly append of a TSBS-like table lays them out), random values."""
    import numpy as np

    rng = np.random.default_rng(hour)
    minutes = np.arange(PER_HOUR, dtype=np.int64) * 60_000_000
    start = int(T0.timestamp() * 1_000_000) + hour * 3_600_000_000
    return pa.table({
        "time": pa.array(np.tile(start + minutes, HOSTS), pa.timestamp("us", tz="UTC")),
        "host": pa.array(np.repeat(np.array([f"host_{h:03d}" for h in range(HOSTS)]), PER_HOUR)),
        **{m: pa.array(rng.random(HOSTS * PER_HOUR) * 100) for m in METRICS},
    }, schema=SCHEMA)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Raw data by us, one file per hour; the hourly rollup by the reference
    (one row group, pages of many hosts), as bench_routing.py lays them out."""
    from conftest import run_reference

    path = str(tmp_path_factory.mktemp("cost") / "lake")
    lake = timelake.Lake(path)
    t = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host"])
    for hour in range(HOURS):
        t.append(hour_batch(hour), maintain=False)
    run_reference(f"""
        import timelake
        timelake.Lake({path!r}).sql({ROLLUP!r})
        print(1)
    """)
    return path


def plans(lake, q):
    return [(r["plan_type"], r["plan"]) for r in lake.sql("EXPLAIN " + q).to_pylist()]


def scans(lake, q):
    return [p for kind, p in plans(lake, q) if kind == "timelake_scan"]


def routed(lake, q):
    return any(kind == "timelake_rollup" for kind, _ in plans(lake, q))


def same_answer(path, q):
    on = timelake.Lake(path).sql(q).to_pylist()
    off = timelake.Lake(path, settings={"rollup_routing": "false"}).sql(q).to_pylist()
    key = lambda r: [str(v) for v in r.values()]  # noqa: E731
    assert sorted(on, key=key) == sorted(off, key=key), q  # maxima and counts: exact


def hourly(where):
    alls = ", ".join(f"max({m}) AS {m}" for m in METRICS)
    return (f"SELECT time_bucket(INTERVAL '1 hour', time) AS hour, {alls} FROM m.raw WHERE {where}"
            "time >= TIMESTAMPTZ '2024-03-01 02:00:00Z' AND time < TIMESTAMPTZ '2024-03-01 10:00:00Z' "
            "GROUP BY 1 ORDER BY 1")


def kinds(lake, q):
    return [kind for kind, _ in plans(lake, q)]


def test_narrow_query_stays_on_raw_data(made, monkeypatch):
    lake = timelake.Lake(made)
    q = hourly("host = 'host_007' AND ")
    assert not routed(lake, q), plans(lake, q)
    # Declined, it runs as with routing off: aggregated from raw pages.
    off = timelake.Lake(made, settings={"rollup_routing": "false"})
    assert "timelake_preagg" in kinds(lake, q) and "timelake_preagg" in kinds(off, q), plans(lake, q)
    monkeypatch.setenv("TL_PREAGG", "off")
    only = scans(lake, q)
    assert len(only) == 1 and only[0].startswith("m.raw at version"), only
    assert "clean buckets" not in only[0]
    # Its raw read: a few pages of each of the 8 hourly files, far less than
    # the rollup's columns alone.
    raw_bytes = int(re.search(r"(\d+) bytes read", only[0]).group(1))
    roll_file = next(Path(made, "m", "rh", "data").rglob("*.parquet"))
    assert raw_bytes < roll_file.stat().st_size / 2, (raw_bytes, roll_file.stat().st_size)
    same_answer(made, q)


def test_wide_query_routes(made):
    lake = timelake.Lake(made)
    q = hourly("")
    assert routed(lake, q), plans(lake, q)
    same_answer(made, q)
    # Every host, grouped by host: routes too.
    q = ("SELECT host, time_bucket(INTERVAL '2 hours', time) AS b, max(m1) FROM m.raw GROUP BY 1, 2 ORDER BY 1, 2")
    assert routed(lake, q)
    same_answer(made, q)


def footer_and_chunks(path, columns, footer=True):
    """The bytes a read of the named columns of every row group of a Parquet
    file reads: the footer (and its 8 bytes after it; footer=False: not
    counted, as the scan that aggregates pages counts none, the footer
    cache's), and each chunk from its first page (the dictionary page, when
    there is one)."""
    md = pq.ParquetFile(path).metadata
    total = md.serialized_size + 8 if footer else 0
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            if col.path_in_schema in columns:
                total += col.total_compressed_size
    return total


def test_explain_counts_the_rollup_columns_read(made, monkeypatch):
    lake = timelake.Lake(made)
    roll_file = next(Path(made, "m", "rh", "data").rglob("*.parquet"))
    md = pq.ParquetFile(roll_file).metadata
    for q, keys, stored in [
        ("SELECT time_bucket(INTERVAL '1 hour', time) AS b, max(m1) FROM m.raw "
         "WHERE time < TIMESTAMPTZ '2024-03-01 11:00:00Z' GROUP BY 1", [], ["mx_m1"]),
        ("SELECT host, time_bucket(INTERVAL '3 hours', time) AS b, count(*), max(m0), max(m3) FROM m.raw "
         "WHERE time < TIMESTAMPTZ '2024-03-01 09:00:00Z' GROUP BY 1, 2", ["host"], ["n", "mx_m0", "mx_m3"]),
    ]:
        assert routed(lake, q), q
        roll = [s for s in scans(lake, q) if "(rollup: the clean buckets" in s]
        assert len(roll) == 1, scans(lake, q)
        m = re.search(r": 1 of 1 files, (\d+) of (\d+) row groups, (\d+) bytes read", roll[0])
        assert m and int(m.group(1)) == int(m.group(2)) == md.num_row_groups, roll[0]
        # Its rows aggregated in the scan (rollup_fold.h): the bucket (the
        # rollup's time column), the keys the query names and the stored
        # columns it uses.
        assert "aggregated in the scan" in roll[0], roll[0]
        want = footer_and_chunks(roll_file, keys + ["bucket"] + stored, footer=False)
        assert int(m.group(3)) == want, (roll[0], want, roll_file.stat().st_size)
        # Read as they are (TL_PREAGG=off): the series key as for any scan,
        # and the footer; of the stored columns, only those the query uses.
        monkeypatch.setenv("TL_PREAGG", "off")
        roll = [s for s in scans(lake, q) if "(rollup: the clean buckets)" in s]
        monkeypatch.delenv("TL_PREAGG")
        m = re.search(r": 1 of 1 files, (\d+) of (\d+) row groups, (\d+) bytes read", roll[0])
        want = footer_and_chunks(roll_file, ["host", "bucket"] + stored)
        assert int(m.group(3)) == want, (roll[0], want, roll_file.stat().st_size)
        assert want < roll_file.stat().st_size
        same_answer(made, q)


def test_explain_counts_the_nested_columns_read(tmp_path):
    """A rollup storing m4 points and time-weighted states (nested columns,
    several leaves each): EXPLAIN of a query of one of its flat columns
    counts the footer and that column's chunks (with the series key and the
    bucket), none of the nested columns' leaves."""
    lake = timelake.Lake(str(tmp_path / "lake"))
    t = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host"])
    small = hour_batch(0).slice(0, 20 * PER_HOUR)  # 20 hosts, one hour
    t.append(small, maintain=False)
    lake.sql("CREATE MATERIALIZED ROLLUP m.rp AS SELECT host, time_bucket(INTERVAL '10 minutes', time) AS bucket, "
             "m4(time, m0) AS pts, time_weighted_mean(time, m0) AS tw, max(m1) AS mx_m1 FROM m.raw "
             "GROUP BY host, bucket")
    roll_file = next(Path(tmp_path, "lake", "m", "rp", "data").rglob("*.parquet"))
    md = pq.ParquetFile(roll_file).metadata
    leaves = [md.row_group(0).column(c).path_in_schema for c in range(md.num_columns)]
    assert any(p.startswith("pts.") for p in leaves) and any(p.startswith("tw.") for p in leaves), leaves
    scan = [p for kind, p in plans(lake, "SELECT max(mx_m1) FROM m.rp") if kind == "timelake_scan"]
    assert len(scan) == 1, scan
    got = int(re.search(r"(\d+) bytes read", scan[0]).group(1))
    want = footer_and_chunks(roll_file, ["host", "bucket", "mx_m1"])
    assert got == want, (scan[0], want, roll_file.stat().st_size)
    assert want < footer_and_chunks(roll_file, leaves)


def route_cost(lake, q):
    """EXPLAIN's account of the cost rule: (rollup bytes, raw bytes around
    them, raw bytes alone, routed)."""
    rows = [p for kind, p in plans(lake, q) if kind == "timelake_route_cost"]
    assert len(rows) == 1, plans(lake, q)
    m = re.search(r"its clean buckets (\d+) bytes \+ m\.raw around them (\d+) bytes = (\d+) bytes, "
                  r"against m\.raw alone (\d+) bytes \(estimated\): (.*)$", rows[0])
    assert m, rows[0]
    roll, rest, both, alone = (int(m.group(i)) for i in range(1, 5))
    assert both == roll + rest
    return roll, rest, alone, m.group(5).endswith(", routed")


def test_explain_shows_the_cost_rule_choice(made):
    lake = timelake.Lake(made)
    # Raw data cheaper: one host's few pages against the rollup's every host.
    q = hourly("host = 'host_007' AND ")
    roll, rest, alone, routes = route_cost(lake, q)
    assert not routes and roll + rest >= alone and not routed(lake, q), (roll, rest, alone)
    same_answer(made, q)
    # The rollup cheaper: every host.
    q = hourly("")
    roll, rest, alone, routes = route_cost(lake, q)
    assert routes and roll + rest < alone and routed(lake, q), (roll, rest, alone)
    same_answer(made, q)
    # No rollup fits (an aggregate none stores): no estimate.
    q = "SELECT time_bucket(INTERVAL '1 hour', time) AS b, stddev(m0) FROM m.raw GROUP BY 1"
    assert not any(kind == "timelake_route_cost" for kind, _ in plans(lake, q))


def test_partial_edges_read_by_their_time_rows(made):
    """Raw rows around the clean buckets, two minutes at each end of hourly
    files whose pages each hold every minute of many hosts: the time column
    tells the rows apart (row_refine.h), and only theirs of the value
    column are read, not the value column's pages."""
    lake = timelake.Lake(made)
    q = ("SELECT time_bucket(INTERVAL '1 hour', time) AS hour, count(*) AS n, max(m2) AS m FROM m.raw "
         "WHERE time >= TIMESTAMPTZ '2024-03-01 02:58:00Z' AND time < TIMESTAMPTZ '2024-03-01 09:02:00Z' "
         "GROUP BY 1 ORDER BY 1")
    assert routed(lake, q)
    edge = [s for s in scans(lake, q) if "(outside the rollup's clean buckets)" in s]
    assert len(edge) == 1 and ": 2 of" in edge[0], edge
    got = int(re.search(r"(\d+) bytes read", edge[0]).group(1))
    files = [Path(re.sub(r"^file:/+", "/", p.strip().split(" (")[0])) for p in edge[0].splitlines()[1:]]
    assert len(files) == 2, edge[0]
    values = sum(footer_and_chunks(f, ["m2"], footer=False) for f in files)
    times = sum(footer_and_chunks(f, ["time"], footer=False) for f in files)
    assert got < times + values / 4, (got, times, values)
    roll, rest, alone, routes = route_cost(lake, q)
    assert routes and rest < times + values / 4, (rest, times, values)
    same_answer(made, q)


def ten_second_rows(start_s, ticks, hosts, seed):
    """hosts x `ticks` readings 10 s apart from T0 + start_s, rows by host then time."""
    import numpy as np

    rng = np.random.default_rng(seed)
    times = int(T0.timestamp() * 1_000_000) + (start_s + np.arange(ticks, dtype=np.int64) * 10) * 1_000_000
    n = hosts * ticks
    return pa.table({
        "time": pa.array(np.tile(times, hosts), pa.timestamp("us", tz="UTC")),
        "host": pa.array(np.repeat(np.array([f"host_{h:03d}" for h in range(hosts)]), ticks)),
        **{m: pa.array(rng.random(n)) for m in METRICS},
    }, schema=SCHEMA)


def test_overlapping_rollup_files_count_their_dedup_window(tmp_path):
    """Rollups whose files overlap in time (a refresh appended the last
    bucket again) are deduplicated on read: their row groups read whole and
    every row ranked (scan_cost.h). A per-minute rollup of readings 10 s apart
    then costs more than the raw data for a 5-minute count of every host and
    stays unrouted; a 10-minute one still routes; once maintenance merges the
    per-minute rollup's files, it routes again."""
    path = str(tmp_path / "lake")
    lake = timelake.Lake(path)
    t = lake.create_table("m.raw", SCHEMA, time_column="time", series_key=["host"])
    hosts = 40
    for hour in range(4):
        t.append(ten_second_rows(hour * 3600, 360, hosts, hour), maintain=False)
    for width, name in (("1 minute", "r1m"), ("10 minutes", "r10m")):
        lake.sql(f"CREATE MATERIALIZED ROLLUP m.{name} AS SELECT host, time_bucket(INTERVAL '{width}', time) "
                 "AS bucket, count(*) AS n, max(m0) AS mx0 FROM m.raw GROUP BY host, bucket")
    t.append(ten_second_rows(4 * 3600 - 5, 1, hosts, 9), maintain=False)  # after the last reading
    for name in ("r1m", "r10m"):
        lake.sql(f"REFRESH MATERIALIZED ROLLUP m.{name}")
        assert lake.table(f"m.{name}").info()["files"] == 2  # the last bucket again: overlapping
    assert lake.table("m.raw").info()["files"] == 5  # none overlapping
    count = ("SELECT time_bucket(INTERVAL '{}', time) AS b, count(*) AS n, max(m0) AS m FROM m.raw "
             "GROUP BY 1 ORDER BY 1")
    five, ten = count.format("5 minutes"), count.format("10 minutes")
    roll, rest, alone, routes = route_cost(lake, five)
    assert not routes and not routed(lake, five), (roll, rest, alone)
    # Its files whole read less than the raw data: ranking their rows is
    # what costs more.
    r1m_bytes = sum(f.stat().st_size for f in Path(path, "m", "r1m", "data").rglob("*.parquet"))
    assert r1m_bytes < alone < roll, (r1m_bytes, alone, roll)
    assert "timelake_preagg" in kinds(lake, five), plans(lake, five)
    same_answer(path, five)
    roll, rest, alone, routes = route_cost(lake, ten)
    assert routes and routed(lake, ten), (roll, rest, alone)
    same_answer(path, ten)
    lake.table("m.r1m").maintain()
    assert lake.table("m.r1m").info()["files"] == 1
    roll, rest, alone, routes = route_cost(lake, five)
    assert routes and routed(lake, five), (roll, rest, alone)
    same_answer(path, five)
