"""Materialized rollups (src/query/rollup_*.c) beyond the checks shared with the
reference (package_contract.py: statements, errors, refresh, rollback): every
aggregate against DuckDB's own GROUP BY of the raw rows, each implementation
refreshing the other's rollups, the inline refresh after an append, the CLI,
and a rollup read by DuckDB's iceberg_scan."""

import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import package_contract as contract
from conftest import ROOT
from test_version_hint import duckdb_iceberg_count

PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")
CLI = Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "timelake"

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("site", pa.string()),
                    ("temp", pa.float64()), ("k", pa.int64())])
AGGS = ("count(*) AS n, count(temp) AS nt, sum(temp) AS s, sum(k) AS sk, min(temp) AS mn, max(k) AS mk, "
        "avg(temp) AS av, first_value(temp ORDER BY time) AS fv, last_value(k ORDER BY time) AS lk")
COLS = ["n", "nt", "s", "sk", "mn", "mk", "av", "fv", "lk"]


def rows(start, n, step_s=97, devices=("a", "b", "c"), seed=1):
    """n readings from `start`, every step_s seconds, some temps null."""
    out = {"time": [], "device": [], "site": [], "temp": [], "k": []}
    for i in range(n):
        out["time"].append(start + dt.timedelta(seconds=i * step_s))
        out["device"].append(devices[(i * seed) % len(devices)])
        out["site"].append("x" if i % 5 else "y")
        out["temp"].append(None if i % 11 == 3 else float((i * 37 * seed) % 101) / 4)
        out["k"].append(i * seed)
    return pa.table(out, schema=SCHEMA)


def oracle(raw_rows, keys, width_s):
    """The rollup's rows computed by DuckDB (Python) from the raw rows: buckets
    aligned to the Unix epoch, as Timelake's time_bucket."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("raw", raw_rows)
    k = ", ".join(keys)
    q = (f"SELECT {k}, to_timestamp(floor(epoch(time) / {width_s}) * {width_s}) AS bucket, "
         "count(*) AS n, count(temp) AS nt, sum(temp) AS s, CAST(sum(k) AS BIGINT) AS sk, min(temp) AS mn, "
         "max(k) AS mk, avg(temp) AS av, first(temp ORDER BY time) AS fv, last(k ORDER BY time) AS lk "
         f"FROM raw GROUP BY ALL ORDER BY {k}, bucket")
    return normal(con.sql(q).to_arrow_table().to_pylist())


def normal(rs):
    for r in rs:
        r["bucket"] = r["bucket"].astimezone(UTC)
        for c in ("s", "av"):
            r[c] = None if r[c] is None else round(r[c], 6)
    return rs


def stored(lake, name, keys):
    k = ", ".join(keys)
    return normal(lake.sql(f"SELECT {k}, bucket, {', '.join(COLS)} FROM {name} ORDER BY {k}, bucket").to_pylist())


def raw_rows(lake):
    return lake.sql("SELECT time, device, site, temp, k FROM iot.raw").cast(SCHEMA)


def create(lake, name="iot.h", keys=("device",), width="1 hour", with_=""):
    k = ", ".join(keys)
    return lake.sql(f"CREATE MATERIALIZED ROLLUP {name} AS SELECT {k}, time_bucket(INTERVAL '{width}', time) "
                    f"AS bucket, {AGGS} FROM iot.raw GROUP BY {k}, bucket {with_}").to_pylist()


@pytest.fixture
def raw(tmp_path):
    lake = timelake.Lake(str(tmp_path))
    t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"])
    t.append(rows(T0, 600), maintain=False)
    return lake, t


@pytest.mark.parametrize("keys,width,width_s", [(("device",), "1 hour", 3600),
                                                (("site", "device"), "90 minutes", 5400),
                                                (("device",), "1 day", 86400)])
def test_every_aggregate_equals_the_raw_group_by(raw, keys, width, width_s):
    lake, t = raw
    want = oracle(raw_rows(lake), list(keys), width_s)
    assert create(lake, keys=keys, width=width) == [{"rollup": "iot.h", "rows": len(want)}]
    assert stored(lake, "iot.h", keys) == want
    # Appends touching old buckets (late rows) and new ones, then a refresh.
    t.append(rows(T0 + dt.timedelta(seconds=97 * 3 + 13), 5, seed=2), maintain=False)
    t.append(rows(T0 + dt.timedelta(days=3), 40), maintain=False)
    refreshed = lake.sql("REFRESH MATERIALIZED ROLLUP iot.h").to_pylist()[0]["rows"]
    want = oracle(raw_rows(lake), list(keys), width_s)
    assert stored(lake, "iot.h", keys) == want
    assert 0 < refreshed <= len(want)


def test_null_keys_are_a_group_of_their_own(tmp_path):
    """NULL series keys: the rollup stores a NULL group, refreshed by REFRESH
    and by maintenance (the coarser rollup from the finer one)."""
    lake = timelake.Lake(str(tmp_path))
    t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"])
    t.append(rows(T0, 600, devices=("a", None, "c")), maintain=False)
    create(lake, name="iot.q", keys=("site", "device"), width="15 minutes")
    create(lake, name="iot.h", keys=("device",))
    for name, keys, width_s in [("iot.q", ["site", "device"], 900), ("iot.h", ["device"], 3600)]:
        assert [r for r in stored(lake, name, keys) if r["device"] is None]
        assert stored(lake, name, keys) == oracle(raw_rows(lake), keys, width_s)
    t.append(rows(T0 + dt.timedelta(seconds=97 * 5 + 11), 30, devices=(None,), seed=3), maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.q")
    assert stored(lake, "iot.q", ["site", "device"]) == oracle(raw_rows(lake), ["site", "device"], 900)
    t.append(rows(T0 + dt.timedelta(hours=2, seconds=7), 30, devices=(None, "b"), seed=5), maintain=False)
    assert t.maintain(rollups=True)["rollups_refreshed"] == 2
    for name, keys, width_s in [("iot.q", ["site", "device"], 900), ("iot.h", ["device"], 3600)]:
        assert stored(lake, name, keys) == oracle(raw_rows(lake), keys, width_s)


def test_refresh_computes_a_coarser_rollup_from_a_fresh_finer_one(tmp_path):
    """REFRESH of a coarser rollup reads a finer one refreshed from the raw
    table's current snapshot (a row put into the hourly rollup by hand shows
    in the daily one), and raw data while the finer one is behind."""
    lake = timelake.Lake(str(tmp_path))
    t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"])
    t.append(rows(T0, 12, step_s=600, devices=("a",)), maintain=False)
    for name, width in (("daily", "1 day"), ("hourly", "1 hour")):
        lake.sql(f"CREATE MATERIALIZED ROLLUP iot.{name} AS SELECT device, time_bucket(INTERVAL '{width}', time) "
                 "AS bucket, count(*) AS n, max(k) AS hi FROM iot.raw GROUP BY device, bucket")
    hourly = lake.table("iot.hourly")
    fake = pa.table({"device": ["a"], "bucket": [T0 + dt.timedelta(hours=5)], "n": [1000], "hi": [1000]})
    hourly.append(fake.cast(pa.schema([hourly.schema.field(c) for c in fake.column_names])), maintain=False)
    t.append(rows(T0 + dt.timedelta(hours=3), 1, devices=("a",)), maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.daily")  # the hourly one is behind: from raw data
    assert lake.sql("SELECT n, hi FROM iot.daily").to_pylist() == [{"n": 13, "hi": 11}]
    t.append(rows(T0 + dt.timedelta(hours=4), 1, devices=("a",)), maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.hourly")
    assert lake.sql("REFRESH MATERIALIZED ROLLUP iot.daily").to_pylist() == [{"rollup": "iot.daily", "rows": 1}]
    assert lake.sql("SELECT n, hi FROM iot.daily").to_pylist() == [{"n": 1014, "hi": 1000}]


def test_refresh_writes_only_the_touched_buckets(raw):
    lake, t = raw
    create(lake)
    t.append(pa.table({"time": [T0 + dt.timedelta(hours=30, minutes=5)], "device": ["a"], "site": ["x"],
                       "temp": [1.0], "k": [7]}, schema=SCHEMA), maintain=False)
    # One bucket (hour 30) holds the new row; the rollup groups by device: 1 row.
    assert lake.sql("REFRESH MATERIALIZED ROLLUP iot.h").to_pylist() == [{"rollup": "iot.h", "rows": 1}]
    assert stored(lake, "iot.h", ["device"]) == oracle(raw_rows(lake), ["device"], 3600)


def test_the_rollups_own_compaction_keeps_refreshes_incremental(raw):
    lake, t = raw
    create(lake)
    t.append(rows(T0 + dt.timedelta(days=1), 30), maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.h")
    # Compaction commits to the rollup without the source snapshot in its summary.
    assert lake.table("iot.h").maintain()["files_rewritten"] > 0
    t.append(pa.table({"time": [T0 + dt.timedelta(hours=30, minutes=5)], "device": ["a"], "site": ["x"],
                       "temp": [1.0], "k": [7]}, schema=SCHEMA), maintain=False)
    assert lake.sql("REFRESH MATERIALIZED ROLLUP iot.h").to_pylist() == [{"rollup": "iot.h", "rows": 1}]
    assert stored(lake, "iot.h", ["device"]) == oracle(raw_rows(lake), ["device"], 3600)


def test_retention_of_the_raw_table_keeps_the_rollup_rows(tmp_path):
    lake = timelake.Lake(str(tmp_path))
    t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"], retention="30d")
    now = dt.datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    t.append(rows(now - dt.timedelta(days=60), 20), maintain=False)
    t.append(rows(now - dt.timedelta(hours=3), 20), maintain=False)
    create(lake, with_="WITH (retention = '365d')")
    before = stored(lake, "iot.h", ["device"])
    report = t.maintain()
    assert report["partitions_dropped"] == 1 and t.info()["rows"] == 20, report
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.h")
    assert stored(lake, "iot.h", ["device"]) == before  # the aggregates outlive the raw rows


def test_inline_refresh_once_the_interval_has_passed(raw):
    lake, t = raw
    create(lake, with_="WITH (refresh_interval = '1s')")
    create(lake, name="iot.d", width="1 day")  # no interval: maintenance refreshes it
    created = time.time()
    late = rows(T0 + dt.timedelta(days=5), 6)
    while time.time() < created + 1.2:  # the clock must pass the interval; nothing else to wait for
        time.sleep(0.05)
    report = t.append(late, maintain=True)
    assert report["maintenance"]["rollups_refreshed"] == 1, report
    assert report["maintenance"]["rollup_rows"] > 0, report
    assert stored(lake, "iot.h", ["device"]) == oracle(raw_rows(lake), ["device"], 3600)
    assert stored(lake, "iot.d", ["device"]) != oracle(raw_rows(lake), ["device"], 86400)
    # An append with maintenance off leaves the rollups alone.
    t.append(rows(T0 + dt.timedelta(days=6), 3), maintain=False)
    assert stored(lake, "iot.h", ["device"]) != oracle(raw_rows(lake), ["device"], 3600)
    report = t.maintain()
    assert report["rollups_refreshed"] == 2, report
    assert stored(lake, "iot.d", ["device"]) == oracle(raw_rows(lake), ["device"], 86400)


LATE = {"time": [T0 + dt.timedelta(minutes=m, seconds=13) for m in (1, 400, 401, 9000)],
        "device": ["a", "b", "z", "a"], "site": ["x", "x", "y", "x"], "temp": [100.0, None, 6.0, 7.5],
        "k": [1, 2, 3, 4]}


def test_each_implementation_refreshes_the_others_rollups(tmp_path, reference):
    setup = f"""
        import json, datetime as dt, pyarrow as pa, timelake
        T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("site", pa.string()),
                            ("temp", pa.float64()), ("k", pa.int64())])
        LATE = pa.table({{"time": [T0 + dt.timedelta(minutes=m, seconds=13) for m in (1, 400, 401, 9000)],
                         "device": ["a", "b", "z", "a"], "site": ["x", "x", "y", "x"],
                         "temp": [100.0, None, 6.0, 7.5], "k": [1, 2, 3, 4]}}, schema=SCHEMA)
    """
    # The reference creates; we append and refresh.
    reference(setup + f"""
        lake = timelake.Lake({str(tmp_path / "ref")!r})
        t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"])
        t.append(pa.table({{"time": [T0 + dt.timedelta(seconds=97 * i) for i in range(300)],
                           "device": ["abc"[i % 3] for i in range(300)], "site": ["x"] * 300,
                           "temp": [float(i % 17) for i in range(300)], "k": list(range(300))}}, schema=SCHEMA))
        lake.sql("CREATE MATERIALIZED ROLLUP iot.h AS SELECT device, time_bucket(INTERVAL '1 hour', time) AS bucket, "
                 "{AGGS} FROM iot.raw GROUP BY device, bucket")
        print(json.dumps(1))
    """)
    lake = timelake.Lake(str(tmp_path / "ref"))
    lake.table("iot.raw").append(pa.table(LATE, schema=SCHEMA), maintain=False)
    out = lake.sql("REFRESH MATERIALIZED ROLLUP iot.h").to_pylist()
    assert out[0]["rows"] > 0, out
    assert stored(lake, "iot.h", ["device"]) == oracle(raw_rows(lake), ["device"], 3600)
    # We create; the reference appends and refreshes, and its rows are the raw GROUP BY too.
    ours = timelake.Lake(str(tmp_path / "ours"))
    t = ours.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"])
    t.append(rows(T0, 300))
    create(ours)
    out = reference(setup + f"""
        lake = timelake.Lake({str(tmp_path / "ours")!r})
        lake.table("iot.raw").append(LATE, maintain=False)
        print(json.dumps(lake.sql("REFRESH MATERIALIZED ROLLUP iot.h").to_pylist()))
    """)
    assert out[0]["rollup"] == "iot.h" and out[0]["rows"] > 0, out
    assert stored(ours, "iot.h", ["device"]) == oracle(raw_rows(ours), ["device"], 3600)
    # And we refresh after the reference did: nothing left to do.
    assert ours.sql("REFRESH MATERIALIZED ROLLUP iot.h").to_pylist()[0]["rows"] == 0


def test_cli_sql_runs_the_statements_and_maintain_refreshes(raw, tmp_path):
    lake, t = raw
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env["LD_PRELOAD"] = os.environ.get("LD_PRELOAD", "")

    def cli(*args):
        p = subprocess.run([str(CLI), *args, "--lake", str(tmp_path)], capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        return p.stdout

    out = cli("sql", f"CREATE MATERIALIZED ROLLUP iot.h AS SELECT device, time_bucket(INTERVAL '1 hour', time) "
                     f"AS bucket, {AGGS} FROM iot.raw GROUP BY device, bucket", "--json")
    assert json.loads(out.splitlines()[0])["rollup"] == "iot.h"
    t.append(rows(T0 + dt.timedelta(days=2), 10), maintain=False)
    report = json.loads(cli("maintain", "iot.raw", "--json"))
    assert report["rollups_refreshed"] == 1 and report["rollup_rows"] > 0, report
    assert stored(lake, "iot.h", ["device"]) == oracle(raw_rows(lake), ["device"], 3600)
    dropped = json.loads(cli("sql", "DROP MATERIALIZED ROLLUP iot.h", "--json").splitlines()[0])
    assert dropped == {"rollup": "iot.h", "rows": 0}
    assert not (tmp_path / "iot" / "h").exists()


def test_duckdb_iceberg_scan_reads_a_rollup(raw, tmp_path):
    lake, t = raw
    create(lake)
    t.append(rows(T0 + dt.timedelta(days=1), 30), maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.h")
    # Refreshed buckets are appended again (dedup keeps the newest): a plain Iceberg reader sees
    # every stored row; after maintenance, one row a bucket.
    lake.table("iot.h").maintain()
    assert duckdb_iceberg_count(tmp_path / "iot" / "h") == len(oracle(raw_rows(lake), ["device"], 3600))

