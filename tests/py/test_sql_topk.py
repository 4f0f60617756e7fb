"""ORDER BY <time or time_bucket> DESC|ASC LIMIT k answered from a window of the
newest (or oldest) data: every shape equal to DuckDB (Python) over the table's
Parquet files after dedup, the window taken where it is sound (fewer files and
row groups read than the table has) and not where it would be wrong."""
import glob

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest


START_US = 1_767_225_600_000_000  # 2026-01-01 00:00 UTC
HOUR = 3_600_000_000
HOSTS = 6
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("hostname", pa.string()),
                    ("usage_user", pa.float64()), ("region", pa.string())])


def hour_batch(hour, hosts=HOSTS, step_s=10, seed=None):
    """Every host every step_s seconds through one hour."""
    rng = np.random.default_rng(hour if seed is None else seed)
    steps = 3600 // step_s
    t = START_US + hour * HOUR + np.arange(steps, dtype=np.int64) * step_s * 1_000_000
    n = hosts * steps
    return pa.table({
        "time": pa.array(np.tile(t, hosts), pa.timestamp("us", tz="UTC")),
        "hostname": pa.array(np.repeat(np.array([f"host_{i}" for i in range(hosts)]), steps)),
        "usage_user": pa.array(np.round(rng.random(n) * 100, 3)),
        "region": pa.array(np.repeat(np.array([f"r{i % 3}" for i in range(hosts)]), steps)),
    }, schema=SCHEMA)


def oracle(lake_dir, table, query):
    """DuckDB over the table's files, deduplicated by the latest write, with
    time_bucket aligned to the Unix epoch as ours and the reference's are."""
    files = sorted(glob.glob(f"{lake_dir}/m/{table}/data/*/*.parquet"))
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    con.execute("CREATE MACRO time_bucket(w, ts) AS system.main.time_bucket(w, ts, TIMESTAMPTZ '1970-01-01 00:00:00+00'), "
                "(w, ts, origin) AS system.main.time_bucket(w, ts, origin)")
    con.execute("CREATE MACRO date_bin(w, ts) AS time_bucket(w, ts), (w, ts, origin) AS time_bucket(w, ts, origin)")
    if not files:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM (SELECT NULL::TIMESTAMPTZ AS time, NULL::VARCHAR AS hostname, "
                    "NULL::DOUBLE AS usage_user, NULL::VARCHAR AS region, NULL::TIMESTAMPTZ AS _ingest_ts) WHERE false")
    else:
        con.execute(f"""CREATE VIEW {table} AS SELECT * EXCLUDE (rn, file_row_number) FROM (
            SELECT *, row_number() OVER (PARTITION BY hostname, time
                   ORDER BY _ingest_ts DESC, file_row_number DESC) rn
            FROM read_parquet({files!r}, file_row_number=true, hive_partitioning=false)) WHERE rn = 1""")
    return con.sql(query).to_arrow_table()


def rows(table):
    return [tuple(f"{v:.9g}" if isinstance(v, float) else str(v) for v in r.values()) for r in table.to_pylist()]


def check(lake, lake_dir, table, query):
    """Ours equals the oracle, row for row in order; returns our stats."""
    stats = {}
    got, want = lake.sql(query, namespace="m", stats=stats), oracle(lake_dir, table, query)
    assert rows(got) == rows(want), query
    assert got.schema.names == want.schema.names
    return stats


@pytest.fixture
def cpu(lake):
    """Six hourly files of six hosts every 10 s, then a gap, then a sparse
    last hour in which only host_0 reports, once a minute."""
    t = lake.create_table("m.cpu", SCHEMA, time_column="time", series_key=["hostname"], chunk="hour")
    for hour in range(6):
        t.append(hour_batch(hour))
    t.append(hour_batch(9, hosts=1, step_s=60))
    return t


# Each taken, and each (written with a total order) equal to the oracle.
TAKEN = [
    # The bench shape and its variants.
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM cpu "
    "WHERE time < TIMESTAMPTZ '2026-01-01 04:00:00+00' GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM cpu "
    "WHERE time < '2026-01-01 04:00:00' GROUP BY minute ORDER BY minute DESC LIMIT 5 OFFSET 3",
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM cpu "
    "WHERE time >= TIMESTAMPTZ '2026-01-01 01:00:00+00' GROUP BY 1 ORDER BY 1 ASC LIMIT 5",
    "SELECT max(usage_user) AS m, time_bucket(INTERVAL 5 MINUTE, time) AS b FROM cpu "
    "WHERE time <= '2026-01-01 05:00:00' GROUP BY time_bucket(INTERVAL 5 MINUTE, time) ORDER BY 2 DESC LIMIT 4",
    # Other group keys, the bucket first in ORDER BY and a tie-breaker.
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, hostname, avg(usage_user) AS m FROM cpu "
    "WHERE time < '2026-01-01 05:00:00' GROUP BY 1, 2 ORDER BY 1 DESC, 2 LIMIT 9",
    "SELECT hostname, time_bucket(INTERVAL '10 minutes', time) AS b, count(*) AS n FROM cpu "
    "GROUP BY hostname, b ORDER BY b, hostname LIMIT 8",
    # HAVING: groups are whole on either side of the window's edge.
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM cpu "
    "WHERE time < '2026-01-01 05:00:00' GROUP BY 1 HAVING max(usage_user) > 99 ORDER BY 1 DESC LIMIT 3",
    # WHERE on the series key and on a metric.
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM cpu "
    "WHERE hostname = 'host_2' GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
    "SELECT * FROM cpu WHERE usage_user > 50 AND hostname IN ('host_1', 'host_4') "
    "AND time < '2026-01-01 05:30:00' ORDER BY time DESC, hostname LIMIT 6",
    # An origin, and a width that does not divide an hour.
    "SELECT time_bucket(INTERVAL '7 minutes', time, TIMESTAMPTZ '2000-01-01 00:00:30+00') AS b, "
    "count(*) AS n, min(usage_user) AS lo FROM cpu WHERE time < '2026-01-01 05:00:00' GROUP BY 1 ORDER BY 1 DESC LIMIT 4",
    "SELECT time_bucket(INTERVAL '7 minutes', time) AS b, count(*) AS n FROM cpu "
    "WHERE time < '2026-01-01 05:00:00' GROUP BY 1 ORDER BY 1 DESC LIMIT 4",
    "SELECT date_bin(INTERVAL '7 minutes', time, TIMESTAMPTZ '2000-01-01 00:00:30+00') AS b, count(*) AS n "
    "FROM cpu WHERE time < '2026-01-01 05:00:00' GROUP BY 1 ORDER BY 1 DESC LIMIT 4",
    # No GROUP BY: plain rows by time, both ways, with OFFSET.
    "SELECT time, hostname, usage_user FROM cpu ORDER BY time DESC, hostname LIMIT 5",
    "SELECT * FROM cpu ORDER BY time, hostname DESC LIMIT 7 OFFSET 11",
    "SELECT hostname, usage_user * 2 AS u, time AS t FROM cpu WHERE time < '2026-01-01 03:00:00' "
    "ORDER BY t DESC, hostname LIMIT 10 OFFSET 4",
    "SELECT c.time, c.hostname FROM cpu AS c ORDER BY c.time DESC NULLS LAST, 2 LIMIT 3",
    # The sparse newest hour: the first window is too small and widens.
    "SELECT time_bucket(INTERVAL '1 minute', time) AS minute, count(*) AS n FROM cpu "
    "WHERE hostname <> 'host_0' GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
]


@pytest.mark.parametrize("query", TAKEN)
def test_window_taken_and_exact(lake, lake_dir, cpu, query):
    stats = check(lake, lake_dir, "cpu", query)
    assert stats["files_read"] < stats["files_total"] / 2, stats


# Shapes where a window would change the answer, or that ask for everything:
# run over every file the query's own pruning leaves.
NOT_TAKEN = [
    # a window sees the rows before the window's edge
    "SELECT time, hostname, lag(usage_user) OVER (PARTITION BY hostname ORDER BY time) AS prev FROM cpu "
    "ORDER BY time DESC, hostname LIMIT 5",
    # ROLLUP's total row aggregates every bucket
    "SELECT time_bucket(INTERVAL '1 minute', time) AS b, count(*) AS n FROM cpu GROUP BY ROLLUP (b) "
    "ORDER BY b DESC NULLS FIRST LIMIT 3",
    # the ordered expression is not a group key
    "SELECT hostname, max(time) AS t FROM cpu GROUP BY hostname ORDER BY max(time) DESC, 1 LIMIT 3",
    # an alias that shadows the time column
    "SELECT hostname, min(time) AS time FROM cpu GROUP BY hostname ORDER BY time DESC, 1 LIMIT 3",
    # a second reference to the table
    "SELECT * FROM cpu WHERE usage_user > (SELECT avg(usage_user) FROM cpu) ORDER BY time DESC, hostname LIMIT 3",
    "SELECT a.time, a.hostname FROM cpu a JOIN cpu b ON a.time = b.time AND a.hostname = b.hostname "
    "ORDER BY a.time DESC, 2 LIMIT 3",
    # months have no fixed width
    "SELECT time_bucket(INTERVAL '1 month', time) AS b, count(*) AS n FROM cpu GROUP BY 1 ORDER BY 1 DESC LIMIT 1",
    # DISTINCT, set operations, no LIMIT, a LIMIT too large
    "SELECT DISTINCT hostname, time FROM cpu ORDER BY time DESC, hostname LIMIT 3",
    "SELECT time FROM cpu UNION ALL SELECT time FROM cpu ORDER BY time DESC LIMIT 3",
    "SELECT time_bucket(INTERVAL '1 hour', time) AS b, count(*) AS n FROM cpu GROUP BY 1 ORDER BY 1 DESC",
    "SELECT time, hostname FROM cpu ORDER BY time DESC, hostname LIMIT 20000",
    # the first key is not time
    "SELECT time, hostname FROM cpu ORDER BY hostname, time DESC LIMIT 3",
]


@pytest.mark.parametrize("query", NOT_TAKEN)
def test_window_not_taken(lake, lake_dir, cpu, query):
    stats = check(lake, lake_dir, "cpu", query)
    assert stats["files_read"] == stats["files_total"], stats


def minutes(start_min, end_min, hosts=2):
    """Every host every 10 s from minute start_min to end_min (UTC, 2026-01-01)."""
    t = START_US + np.arange(start_min * 6, end_min * 6, dtype=np.int64) * 10_000_000
    n = len(t) * hosts
    return pa.table({
        "time": pa.array(np.tile(t, hosts), pa.timestamp("us", tz="UTC")),
        "hostname": pa.array(np.repeat(np.array([f"host_{i}" for i in range(hosts)]), len(t))),
        "usage_user": pa.array(np.arange(n, dtype=np.float64)),
        "region": pa.array(["r0"] * n),
    }, schema=SCHEMA)


@pytest.mark.parametrize("selective", ["auto", "off"])
def test_window_rows_are_exact(lake, lake_dir, monkeypatch, selective):
    """The files the first window needs hold six buckets of 7 minutes, the
    oldest (03:58-04:05) only in part, as it straddles two hourly files, while
    the window itself holds three: the rows DuckDB sees must be exactly the
    window's, whether Timelake decodes them or DuckDB reads whole files, or
    that partial bucket would pass for a whole one."""
    monkeypatch.setenv("TL_SELECTIVE_SCAN", selective)
    t = lake.create_table("m.gaps", SCHEMA, time_column="time", series_key=["hostname"], chunk="hour")
    t.append(minutes(3 * 60 + 50, 4 * 60))  # 03:50-04:00
    t.append(pa.concat_tables([minutes(4 * 60, 4 * 60 + 20), minutes(4 * 60 + 40, 4 * 60 + 41)]))
    t.append(minutes(4 * 60 + 59, 5 * 60))  # 04:59-05:00
    for q in ["SELECT time_bucket(INTERVAL '7 minutes', time) AS b, count(*) AS n, min(usage_user) AS lo "
              "FROM gaps GROUP BY 1 ORDER BY 1 DESC LIMIT 6",
              "SELECT time_bucket(INTERVAL '7 minutes', time) AS b, count(*) AS n FROM gaps "
              "GROUP BY 1 ORDER BY 1 ASC LIMIT 2",
              "SELECT time, hostname FROM gaps ORDER BY time DESC, hostname LIMIT 40"]:
        check(lake, lake_dir, "gaps", q)


def test_aggregate_without_group_by(lake, lake_dir, cpu):
    """One row from every row: DuckDB's binder refuses ordering it by time,
    the window's run and the usual one alike, so the error is DuckDB's."""
    q = "SELECT max(usage_user) AS m FROM cpu ORDER BY time DESC LIMIT 1"
    with pytest.raises(duckdb.BinderException):
        oracle(lake_dir, "cpu", q)
    with pytest.raises(RuntimeError, match="GROUP BY"):
        lake.sql(q, namespace="m")


def test_window_finds_nothing(lake, lake_dir, cpu):
    """No row passes: every widening finds none, then the query runs as usual."""
    q = ("SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM cpu "
         "WHERE usage_user > 1000 GROUP BY 1 ORDER BY 1 DESC LIMIT 5")
    assert lake.sql(q, namespace="m").num_rows == 0
    check(lake, lake_dir, "cpu", q)
    q = "SELECT * FROM cpu WHERE hostname = 'nobody' ORDER BY time LIMIT 5"
    assert lake.sql(q, namespace="m").num_rows == 0
    check(lake, lake_dir, "cpu", q)


def test_fewer_rows_than_limit(lake, lake_dir, cpu):
    """The whole filtered range holds fewer rows than wanted: all of them."""
    q = ("SELECT * FROM cpu WHERE time >= '2026-01-01 09:50:00' ORDER BY time DESC LIMIT 100")
    assert lake.sql(q, namespace="m").num_rows == 10
    check(lake, lake_dir, "cpu", q)


def test_bench_shape_reads_few_row_groups(lake, lake_dir, cpu):
    q = ("SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM cpu "
         "WHERE time < TIMESTAMPTZ '2026-01-01 04:00:00+00' GROUP BY 1 ORDER BY 1 DESC LIMIT 5")
    stats = check(lake, lake_dir, "cpu", q)
    assert stats["files_read"] == 1 and stats["row_groups_read"] == 1, stats
    assert stats["bytes_read"] < sum(f.stat().st_size for f in (lake_dir / "m/cpu/data").rglob("*.parquet")) / 4


def test_dedup_duplicates_and_out_of_order(lake, lake_dir):
    """Rewrites of the newest rows land later, older hours after newer ones:
    the window reads the deduplicated rows."""
    t = lake.create_table("m.dup", SCHEMA, time_column="time", series_key=["hostname"], chunk="hour")
    t.append(hour_batch(3))
    t.append(hour_batch(1))
    newest = hour_batch(3).filter(pc.greater_equal(
        pc.cast(hour_batch(3)["time"], pa.int64()), START_US + 3 * HOUR + 50 * 60_000_000))
    t.append(newest.set_column(2, "usage_user", pa.array([1000.0 + i for i in range(newest.num_rows)])))
    t.append(hour_batch(2))
    t.append(newest.slice(0, 7).set_column(2, "usage_user", pa.array([-5.0] * 7)))  # again, newer still
    for q in ["SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m, count(*) AS n "
              "FROM dup GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
              "SELECT * EXCLUDE (_ingest_ts) FROM dup ORDER BY time DESC, hostname LIMIT 12",
              "SELECT time, hostname, usage_user FROM dup ORDER BY time ASC, hostname LIMIT 12 OFFSET 2"]:
        stats = check(lake, lake_dir, "dup", q)
        assert stats["files_read"] < stats["files_total"], stats


def test_append_only_table_and_plain_timestamp(lake, lake_dir):
    """No dedup (every duplicate counts) and a time column without zone."""
    schema = pa.schema([("time", pa.timestamp("us")), ("hostname", pa.string()), ("usage_user", pa.float64()),
                        ("region", pa.string())])
    t = lake.create_table("m.raw", schema, time_column="time", series_key=["hostname"], chunk="hour", dedup=False)
    for hour in (0, 1, 1, 2):
        t.append(hour_batch(hour).cast(schema))
    for q in ["SELECT time_bucket(INTERVAL '1 minute', time) AS minute, count(*) AS n, sum(usage_user) AS s "
              "FROM raw GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
              "SELECT time, hostname, usage_user FROM raw WHERE time < TIMESTAMP '2026-01-01 02:00:00' "
              "ORDER BY time DESC, hostname, usage_user LIMIT 9"]:
        files = sorted(glob.glob(f"{lake_dir}/m/raw/data/*/*.parquet"))
        con = duckdb.connect()
        con.execute("SET TimeZone='UTC'")
        con.execute(f"CREATE VIEW raw AS SELECT * FROM read_parquet({files!r}, hive_partitioning=false)")
        stats = {}
        assert rows(lake.sql(q, namespace="m", stats=stats)) == rows(con.sql(q).to_arrow_table()), q
        assert stats["files_read"] < stats["files_total"], stats


def test_empty_table(lake, lake_dir):
    lake.create_table("m.none", SCHEMA, time_column="time", series_key=["hostname"])
    for q in ["SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m FROM none "
              "GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
              "SELECT * FROM none ORDER BY time LIMIT 3"]:
        assert lake.sql(q, namespace="m").num_rows == 0
        check(lake, lake_dir, "none", q)


def test_new_data_after_a_window_query(lake, lake_dir, cpu):
    """The view restricted to a window does not outlive its query."""
    q = "SELECT time, hostname FROM cpu ORDER BY time DESC, hostname LIMIT 3"
    check(lake, lake_dir, "cpu", q)
    cpu.append(hour_batch(12, hosts=2, step_s=600))
    check(lake, lake_dir, "cpu", q)
    whole = "SELECT count(*) AS n FROM cpu"
    assert rows(lake.sql(whole, namespace="m")) == rows(oracle(lake_dir, "cpu", whole))


REF_QUERIES = [TAKEN[0], TAKEN[2], TAKEN[4], TAKEN[7], TAKEN[11], TAKEN[12]]


def test_equals_reference(lake, lake_dir, cpu, reference):
    """The reference (DataFusion over the same table) gives the same rows."""
    got = [rows(lake.sql(q, namespace="m")) for q in REF_QUERIES]
    want = reference(f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        out = []
        for q in {REF_QUERIES!r}:
            t = lake.sql(q, namespace="m")
            out.append([tuple(('%.9g' % v) if isinstance(v, float) else str(v) for v in r.values())
                        for r in t.to_pylist()])
        print(json.dumps(out))
    """)
    for q, g, w in zip(REF_QUERIES, got, want):
        assert g == [tuple(r) for r in w], q
