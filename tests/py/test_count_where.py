"""SELECT count(*) FROM t WHERE <time and series-key restrictions> answered
from the Parquet footers (row groups inside the restrictions count whole,
the pages statistics cannot decide are decoded and compared in C), whenever
no duplicates are pending and no delete file exists. Every answer is checked
against DuckDB over the live Parquet files themselves and against the same
query with the optimisation off (filter_pushdown = false), on random WHERE
clauses over files of many row groups and pages, appended and compacted."""

import datetime as dt
import random

import duckdb
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import tlc
from test_codec import newest_metadata

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("v", pa.float64())])
DEVICES = [f"d{i}" for i in range(8)]
STEP_US = 7_000_500  # 7.0005 s: times that are not whole seconds
HOURS = 6


def hour(h):
    n = 3600_000_000 // STEP_US
    start = int(T0.timestamp() * 1e6) + h * 3600_000_000
    times = [start + i * STEP_US for i in range(n)]
    return pa.table({
        "time": pa.array([t for t in times for _ in DEVICES], pa.timestamp("us", tz="UTC")),
        "device": [d for _ in times for d in DEVICES],
        "v": [float(i) for i in range(n * len(DEVICES))],
    }, schema=SCHEMA)


def make(lake, name, compact):
    props = {"timelake.data-page-rows": "97", "write.parquet.row-group-limit": "1000"}
    t = lake.create_table(name, SCHEMA, time_column="time", series_key=["device"], properties=props)
    for h in range(HOURS):
        t.append(hour(h), maintain=False)
    if compact:
        t.maintain()
    return t


def live_files(lake_dir, table):
    meta = newest_metadata(lake_dir, table)
    return sorted(task.file.file_path.removeprefix("file://")
                  for task in StaticTable.from_metadata(meta).scan().plan_files())


def literal(us, rnd):
    """A time literal in one of the forms DuckDB compares with the time column."""
    t = dt.datetime.fromtimestamp(us / 1e6, UTC)
    text = t.strftime("%Y-%m-%d %H:%M:%S") + (f".{t.microsecond:06d}" if t.microsecond else "")
    form = rnd.randrange(5)
    if form == 0:
        return f"'{text}+00'"
    if form == 1:
        return f"TIMESTAMPTZ '{text}+00'"
    if form == 2:
        return f"CAST('{text}' AS TIMESTAMP)"
    if form == 3:
        return f"'{(t + dt.timedelta(hours=2)).strftime('%Y-%m-%d %H:%M:%S')}{text[19:]}+02:00'"
    return f"DATE '{t.strftime('%Y-%m-%d')}'"


def random_where(rnd):
    start = int(T0.timestamp() * 1e6)
    span = HOURS * 3600_000_000

    def point():
        if rnd.random() < 0.5:  # a stored time exactly, to test the bounds' strictness
            return start + rnd.randrange(span // STEP_US) * STEP_US
        return start + rnd.randrange(-span // 10, span + span // 10)

    parts = []
    for _ in range(rnd.randrange(0, 3)):
        kind = rnd.randrange(4)
        if kind == 0:
            a, b = sorted((point(), point()))
            parts.append(f"time BETWEEN {literal(a, rnd)} AND {literal(b, rnd)}")
        elif kind == 1:
            op = rnd.choice(["<", "<=", ">", ">=", "="])
            parts.append(f"time {op} {literal(point(), rnd)}")
        elif kind == 2:
            op = rnd.choice(["<", "<=", ">", ">="])
            parts.append(f"{literal(point(), rnd)} {op} time")
        else:
            parts.append(f"time = {literal(start + rnd.randrange(span // STEP_US) * STEP_US, rnd)}")
    if rnd.random() < 0.6:
        keys = rnd.sample(DEVICES + ["nope", "d"], rnd.randrange(1, 4))
        parts.append(f"device = '{keys[0]}'" if len(keys) == 1 or rnd.random() < 0.3
                     else f"device IN ({', '.join(repr(k) for k in keys)})")
    if not parts:
        parts.append(f"time >= {literal(point(), rnd)}")
    rnd.shuffle(parts)
    return " AND ".join(parts)


def counts(lake, con, table, where):
    q = f"SELECT count(*) AS n FROM {table} WHERE {where}"
    stats = {}
    ours = lake.query(q, stats=stats).column("n")[0].as_py()
    off = lake.query(q, settings={"filter_pushdown": "false"}).column("n")[0].as_py()
    raw = con.sql(f"SELECT count(*) FROM raw WHERE {where}").fetchall()[0][0]
    return ours, off, raw, stats


@pytest.mark.parametrize("compact", [False, True], ids=["appended", "compacted"])
def test_random_filters_count_as_the_scan_does(tmp_path, compact):
    lake = tlc.Lake(str(tmp_path / "lake"))
    make(lake, "iot.c", compact)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE VIEW raw AS SELECT * FROM read_parquet({live_files(tmp_path / 'lake', 'iot/c')!r})")
    rnd = random.Random(19 + compact)
    for _ in range(60):
        where = random_where(rnd)
        ours, off, raw, _ = counts(lake, con, "iot.c", where)
        assert ours == off == raw, where


def test_stats_decide_whole_row_groups(tmp_path):
    lake = tlc.Lake(str(tmp_path / "lake"))
    make(lake, "iot.c", False)
    con = duckdb.connect()
    con.execute(f"CREATE VIEW raw AS SELECT * FROM read_parquet({live_files(tmp_path / 'lake', 'iot/c')!r})")
    # Hours 1 and 2 exactly: whole files inside, the others outside; nothing decoded.
    where = "time >= '2026-01-01 01:00:00+00' AND time < '2026-01-01 03:00:00+00'"
    ours, off, raw, stats = counts(lake, con, "iot.c", where)
    assert ours == off == raw == 2 * len(hour(0))
    assert stats["files_read"] == 2 and stats["row_groups_read"] == 0 and stats["bytes_read"] == 0
    # A cut inside an hour: only the pages around it are decoded, and only the time column.
    where = "time < '2026-01-01 00:30:00+00'"
    ours, off, raw, stats = counts(lake, con, "iot.c", where)
    assert ours == off == raw and stats["files_read"] == 1
    assert 0 < stats["row_groups_read"] < stats["row_groups_total"]
    off_stats = {}
    lake.query(f"SELECT count(*) FROM iot.c WHERE {where}", stats=off_stats, settings={"filter_pushdown": "false"})
    assert stats["bytes_read"] < off_stats["bytes_read"]


def test_other_shapes_and_pending_duplicates_are_scanned(tmp_path):
    lake = tlc.Lake(str(tmp_path / "lake"))
    t = make(lake, "iot.c", False)
    con = duckdb.connect()
    con.execute(f"CREATE VIEW raw AS SELECT * FROM read_parquet({live_files(tmp_path / 'lake', 'iot/c')!r})")
    for where in ["device <> 'd1'", "time >= '2026-01-01 01:00:00+00' OR device = 'd1'", "v > 100",
                  "device = 'd1' AND device IN ('d1', 'd2')", "NOT (device = 'd1')", "device = 'd1' AND v < 50",
                  "time >= now() - INTERVAL 1 DAY", "device IS NULL", "device = 'd1' AND time IS NOT NULL"]:
        ours, off, raw, _ = counts(lake, con, "iot.c", where)
        assert ours == off == raw, where
    # Rows written twice (the same device and time) merge on read: the files overlap, so scanned.
    again = hour(2).slice(0, 800)
    t.append(again, maintain=False)
    where = "time >= '2026-01-01 02:00:00+00' AND device IN ('d1', 'd2')"
    q = f"SELECT count(*) AS n FROM iot.c WHERE {where}"
    want = lake.query(f"SELECT * FROM iot.c WHERE {where}").num_rows
    assert lake.query(q).column("n")[0].as_py() == want == len(hour(0))
    # Dedup on read off: every stored row, from the footers again.
    stored = lake.query(q, settings={"read_dedup": "false"}).column("n")[0].as_py()
    assert stored == want + 200


@pytest.mark.parametrize("compact", [False, True], ids=["appended", "compacted"])
def test_time_counts_on_page_edges_of_irregular_times(tmp_path, compact):
    """Time-only counts, where the pages a bound cuts are counted as they
    decode (PLAIN pages as appended, DELTA_BINARY_PACKED ones compacted, whose
    even runs count whole): steady steps broken by jitter, repeated times and
    late rows, with bounds on, just before and just after the first and last
    time of pages."""
    import pyarrow.parquet as pq

    rnd = random.Random(7 + compact)
    lake = tlc.Lake(str(tmp_path / "lake"))
    props = {"timelake.data-page-rows": "97", "write.parquet.row-group-limit": "1500"}
    t = lake.create_table("iot.j", SCHEMA, time_column="time", series_key=["device"], properties=props)
    start = int(T0.timestamp() * 1e6)
    for h in range(3):
        times, devices = [], []
        for d in DEVICES:
            x = start + h * 3600_000_000 + rnd.randrange(1000)
            for _ in range(400):
                times.append(x)
                devices.append(d)
                r = rnd.random()
                x += 0 if r < 0.05 else rnd.randrange(1, 50) if r < 0.15 else 9_000_000  # repeats, jitter
        t.append(pa.table({"time": pa.array(times, pa.timestamp("us", tz="UTC")), "device": devices,
                           "v": [float(i) for i in range(len(times))]}, schema=SCHEMA), maintain=False)
    if compact:
        t.maintain()
    files = live_files(tmp_path / "lake", "iot/j")
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE VIEW raw AS SELECT * FROM read_parquet({files!r})")
    edges = []  # the times at the first and last row of each page of each row group
    for f in files:
        meta = pq.ParquetFile(f).metadata
        column = pq.read_table(f, columns=["time"]).column("time").cast(pa.int64()).to_pylist()
        at = 0
        for g in range(meta.num_row_groups):
            rows = meta.row_group(g).num_rows
            for first in range(0, rows, 97):
                edges += [column[at + first], column[at + min(first + 96, rows - 1)]]
            at += rows
    assert len(edges) > 40
    for _ in range(40):
        a, b = sorted(rnd.sample(edges, 2))
        a += rnd.choice([-1, 0, 1])
        b += rnd.choice([-1, 0, 1])
        lo, hi = (literal(x, rnd) for x in (a, b))
        for where in [f"time >= {lo} AND time < {hi}", f"time > {lo} AND time <= {hi}", f"time BETWEEN {lo} AND {hi}",
                      f"time = {lo}", f"time < {hi}"]:
            if "DATE" in where:
                continue
            ours, off, raw, _ = counts(lake, con, "iot.j", where)
            assert ours == off == raw, where
