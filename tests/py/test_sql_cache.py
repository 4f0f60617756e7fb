"""What the query engine keeps between queries (live files, views, search
path) never hides a change to the lake, and Timelake's integer time_bucket
gives what the epoch-aligned definition (the reference's date_bin) gives."""
import datetime as dt
import random

import duckdb
import pyarrow as pa
import pytest

import tlc

SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()),
                    ("temp", pa.float64())])
T0 = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)


def rows(n, start=T0, temp=1.0, devices=3):
    return pa.table({"time": [start + dt.timedelta(minutes=i) for i in range(n)],
                     "device_id": [f"d{i % devices}" for i in range(n)],
                     "temp": [temp] * n}, schema=SCHEMA)


def count(lake, where=""):
    return lake.sql(f"SELECT count(*) AS n, sum(temp) AS s FROM m {where}").to_pylist()[0]


def test_appends_are_seen_by_the_next_query(lake):
    t = lake.create_table("m", SCHEMA, time_column="time", series_key=["device_id"])
    assert count(lake)["n"] == 0
    t.append(rows(10))
    assert count(lake) == {"n": 10, "s": 10.0}
    t.append(rows(5, start=T0 + dt.timedelta(days=2), temp=2.0))
    assert count(lake) == {"n": 15, "s": 20.0}
    assert count(lake, "WHERE device_id = 'd1'")["n"] == 5
    assert count(lake, "WHERE device_id IN ('d1', 'd2')")["n"] == 9
    assert count(lake)["n"] == 15  # the view is widened again


def test_another_handle_append_and_recreate_are_seen(lake, lake_dir):
    lake.create_table("m", SCHEMA, time_column="time", series_key=["device_id"]).append(rows(4))
    assert count(lake)["n"] == 4
    other = tlc.Lake(str(lake_dir))
    other.table("m").append(rows(4, start=T0 + dt.timedelta(hours=1), temp=3.0))
    assert count(lake) == {"n": 8, "s": 16.0}
    assert {r["device_id"] for r in lake.latest("m").to_pylist()} == {"d0", "d1", "d2"}
    other.drop_table("m")
    with pytest.raises(KeyError):
        count(lake)
    other.create_table("m", SCHEMA, time_column="time", series_key=["device_id"]).append(
        rows(2, temp=7.0, devices=1))
    assert count(lake) == {"n": 2, "s": 14.0}
    assert [r["device_id"] for r in lake.latest("m").to_pylist()] == ["d0"]


def test_dedup_winner_after_a_cached_query(lake):
    t = lake.create_table("m", SCHEMA, time_column="time", series_key=["device_id"])
    t.append(rows(6))
    assert count(lake)["s"] == 6.0
    t.append(rows(6, temp=5.0))  # the same (series, time): the later write wins
    assert count(lake) == {"n": 6, "s": 30.0}


def test_namespaces_switch_between_queries(lake):
    lake.create_table("a.m", SCHEMA, time_column="time", series_key=["device_id"]).append(rows(3))
    lake.create_table("b.m", SCHEMA, time_column="time", series_key=["device_id"]).append(rows(5))
    for _ in range(2):
        assert lake.sql("SELECT count(*) AS n FROM m", namespace="a")["n"][0].as_py() == 3
        assert lake.sql("SELECT count(*) AS n FROM m", namespace="b")["n"][0].as_py() == 5


def epoch_floor(ts_us, width_us):
    return ts_us - ts_us % width_us  # Python's % floors: right before the epoch too


@pytest.mark.parametrize("width,width_us", [("7 days", 7 * 86400_000_000), ("5 hours", 5 * 3600_000_000),
                                            ("90 seconds", 90_000_000), ("1 hour", 3600_000_000),
                                            ("3 days 2 hours", (3 * 24 + 2) * 3600_000_000)])
def test_time_bucket_is_the_epoch_floor(lake, width, width_us):
    rng = random.Random(width_us)
    stamps = [rng.randrange(-3 * 10**17, 3 * 10**17) // 1000 * 1000 for _ in range(200)] + [0, -1, 1]
    t = pa.table({"ts": pa.array(stamps, pa.timestamp("us")),
                  "tz": pa.array(stamps, pa.timestamp("us", tz="UTC"))})
    con = duckdb.connect()
    con.register("t", t)
    values = ", ".join(f"({s})" for s in stamps)
    got = lake.sql(f"SELECT epoch_us(time_bucket(INTERVAL '{width}', make_timestamp(v))) AS a, "
                   f"epoch_us(time_bucket(INTERVAL '{width}', make_timestamp(v)::TIMESTAMPTZ)) AS b "
                   f"FROM (VALUES {values}) AS x(v)").to_pylist()
    want = [epoch_floor(s, width_us) for s in stamps]
    assert [r["a"] for r in got] == want
    assert [r["b"] for r in got] == want
    bucket_type = lake.sql(f"SELECT time_bucket(INTERVAL '{width}', TIMESTAMPTZ '2024-01-01') AS b").schema
    assert bucket_type.field("b").type == pa.timestamp("us", tz="UTC")


def test_time_bucket_nulls_months_and_bad_widths(lake):
    r = lake.sql("SELECT time_bucket(INTERVAL '1 hour', NULL::TIMESTAMPTZ) AS n, "
                 "time_bucket(INTERVAL '1 month', TIMESTAMPTZ '2024-05-17 10:00:00+00') AS m, "
                 "time_bucket(INTERVAL '1 hour', TIMESTAMP '2024-05-17 10:42:00') AS t").to_pylist()[0]
    assert r["n"] is None
    assert r["m"] == dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    assert r["t"] == dt.datetime(2024, 5, 17, 10)
    with pytest.raises(RuntimeError, match="must not be zero"):
        lake.sql("SELECT time_bucket(INTERVAL '0 seconds', TIMESTAMP '2024-05-17 10:42:00')")
    with pytest.raises(RuntimeError, match="months cannot also have days"):
        lake.sql("SELECT time_bucket(INTERVAL '1 month 1 day', TIMESTAMP '2024-05-17 10:42:00')")
    # A negative width truncates toward the origin, as the reference's date_bin does.
    r = lake.sql("SELECT time_bucket(INTERVAL '-1 hour', TIMESTAMP '2024-05-17 10:42:00') AS a, "
                 "time_bucket(INTERVAL '-1 hour', TIMESTAMP '1969-12-31 22:42:00') AS b").to_pylist()[0]
    assert (r["a"], r["b"]) == (dt.datetime(2024, 5, 17, 10), dt.datetime(1969, 12, 31, 23))


# ---- Prepared statements (statement_cache.h): a repeated query text runs the
# statement prepared the first time; whatever changed in between, it gives
# what DuckDB gives over the live files.

WIDE = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()),
                  ("temp", pa.float64()), ("hum", pa.float64())])


def random_rows(rnd, start_us, n, devices, schema):
    times = sorted(start_us + rnd.randrange(3600_000_000) for _ in range(n))
    cols = {"time": pa.array(times, pa.timestamp("us", tz="UTC")),
            "device_id": [rnd.choice(devices) for _ in range(n)],
            "temp": [rnd.choice([None, rnd.uniform(-50, 50)]) for _ in range(n)]}
    if "hum" in schema.names:
        cols["hum"] = [rnd.uniform(0, 100) for _ in range(n)]
    return pa.table(cols, schema=schema)


def live_parquet(lake_dir, table):
    from pyiceberg.table import StaticTable
    from test_codec import newest_metadata

    meta = newest_metadata(lake_dir, table)
    return sorted(task.file.file_path.removeprefix("file://")
                  for task in StaticTable.from_metadata(meta).scan().plan_files())


def repeated_queries(rnd, hours):
    h = rnd.randrange(hours)
    lo = f"TIMESTAMPTZ '2024-03-01 {h:02d}:00:00+00'"
    hi = f"TIMESTAMPTZ '2024-03-01 {h:02d}:{rnd.randrange(1, 60):02d}:00+00'"
    dev = f"'d{rnd.randrange(6)}'"
    return [
        f"SELECT * FROM m WHERE device_id = {dev} AND time >= {lo} AND time < {hi} ORDER BY time, temp",
        f"SELECT time_bucket(INTERVAL '10 minutes', time) AS b, device_id, max(temp) AS x, count(*) AS n "
        f"FROM m WHERE time >= {lo} GROUP BY 1, 2 ORDER BY 1, 2",
        f"SELECT device_id, count(*) AS n, min(time) AS t FROM m WHERE device_id IN ({dev}, 'd1') "
        "GROUP BY 1 ORDER BY 1",
        "SELECT count(*) AS n, count(temp) AS c, min(temp) AS s, max(time) AS t FROM m",
    ]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("selective", ["always", "off"])
def test_repeated_query_texts_follow_the_lake(lake, lake_dir, monkeypatch, seed, selective):
    """Appends (each an hour of its own, so that nothing is pending a merge),
    the rows replaced by others of a wider schema, and each round's query texts run twice before and after
    the change: every answer is DuckDB's over the live files. With the
    selective scan always on, the rows come through Timelake's rows function
    (a rowset that keeps its id from one query to the next); off, through
    read_parquet views."""
    monkeypatch.setenv("TL_SELECTIVE_SCAN", selective)
    rnd = random.Random(seed)
    devices = [f"d{i}" for i in range(6)]
    t = lake.create_table("m", SCHEMA, time_column="time", series_key=["device_id"])
    start = int(T0.timestamp() * 1e6)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    texts = []
    for hour in range(6):
        new = random_rows(rnd, start + hour * 3600_000_000, rnd.randrange(50, 400), devices,
                          WIDE if hour >= 3 else SCHEMA)
        if hour == 3:  # a new column: the rowsets' columns change, the texts do not
            t.replace(new, schema=WIDE)
        else:
            t.append(new)
        texts = texts[:4] + repeated_queries(rnd, hour + 1)  # the first round's again, and new ones
        files = live_parquet(lake_dir, "default/m")
        con.execute(f"CREATE OR REPLACE VIEW m AS SELECT * FROM read_parquet({files!r}, union_by_name = true, hive_partitioning = false)")
        # texts[0] ends each round and starts the next: its view is the same
        # text from one query to the next, only its rowset changes
        for q in texts + texts[:1]:
            want = con.sql(q).to_arrow_table().to_pylist()
            for _ in range(2):
                got = lake.sql(q).to_pylist()
                assert got == want, (hour, q)


def test_repeated_query_with_new_inputs(lake):
    """An input is a rowset too: the same text over other rows of the same
    columns reads the new rows."""
    q = "SELECT k, sum(v) AS s FROM inp GROUP BY k ORDER BY k"
    for n in (3, 7, 2):
        data = pa.table({"k": [i % 2 for i in range(n)], "v": [float(i) for i in range(n)]})
        want = duckdb.sql(q.replace("inp", "data")).to_arrow_table().to_pylist()
        for _ in range(2):
            assert lake.query(q, inputs={"inp": data}).to_pylist() == want


def test_a_statement_prepared_again_after_many_runs(lake):
    """A cached statement is prepared again after TL_STATEMENT_RUNS_MAX (64)
    runs, which frees what its runs kept: the answer stays the same across it."""
    t = lake.create_table("m", SCHEMA, time_column="time", series_key=["device_id"])
    t.append(rows(30))
    q = "SELECT device_id, count(*) AS n FROM m WHERE device_id = 'd1' GROUP BY 1"
    assert {tuple(r.values()) for _ in range(150) for r in lake.sql(q).to_pylist()} == {("d1", 10)}
