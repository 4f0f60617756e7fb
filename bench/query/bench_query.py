"""SQL over the lake, TSBS cpu-only style: ours, the reference and DuckDB
(Python) over the same Parquet files, side by side in one run.

usage: python bench/query/bench_query.py [--hosts 100] [--hours 24] [--repeat 5]
       (--hosts 1000 --hours 24 is the issue's full size, ~8.6M rows)
The table (hosts x 10 metrics every 10 s) is written by our library in hourly
appends; then each query runs `repeat` times in each engine. Prints median ms
and the ratios reference/ours and ours/DuckDB (ours/DuckDB below 1.5 is the goal).
"""

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

START_US = 1_767_225_600_000_000  # 2026-01-01 00:00 UTC
METRICS = ["usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait", "usage_irq",
           "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice"]
T = "TIMESTAMPTZ '2026-01-01 {:02d}:00:00+00'"


def queries(hosts):
    h = lambda i: f"'host_{i % hosts}'"  # noqa: E731
    eight = ", ".join(h(i * 7) for i in range(8))
    five = ", ".join(f"max({m}) AS {m}" for m in METRICS[:5])
    alls = ", ".join(f"max({m}) AS {m}" for m in METRICS)
    return {
        "single-groupby-1-1-1": f"SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m "
        f"FROM cpu WHERE hostname = {h(3)} AND time >= {T.format(5)} AND time < {T.format(6)} GROUP BY 1 ORDER BY 1",
        "single-groupby-5-8-1": f"SELECT time_bucket(INTERVAL '1 minute', time) AS minute, {five} FROM cpu "
        f"WHERE hostname IN ({eight}) AND time >= {T.format(5)} AND time < {T.format(6)} GROUP BY 1 ORDER BY 1",
        "cpu-max-all-8": f"SELECT time_bucket(INTERVAL '1 hour', time) AS hour, {alls} FROM cpu "
        f"WHERE hostname IN ({eight}) AND time >= {T.format(4)} AND time < {T.format(12)} GROUP BY 1 ORDER BY 1",
        "double-groupby-1": f"SELECT time_bucket(INTERVAL '1 hour', time) AS hour, hostname, avg(usage_user) AS m "
        f"FROM cpu WHERE time >= {T.format(6)} AND time < {T.format(18)} GROUP BY 1, 2 ORDER BY 1, 2",
        "high-cpu-1": f"SELECT * FROM cpu WHERE usage_user > 90.0 AND hostname = {h(5)} "
        f"AND time >= {T.format(6)} AND time < {T.format(18)}",
        "groupby-orderby-limit": f"SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(usage_user) AS m "
        f"FROM cpu WHERE time < {T.format(12)} GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
        "lastpoint": "SELECT DISTINCT ON (hostname) * FROM cpu ORDER BY hostname, time DESC",
    }


def hour_batch(hosts, hour):
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(hour)
    steps = 360
    t = START_US + hour * 3_600_000_000 + np.arange(steps, dtype=np.int64) * 10_000_000
    return pa.table({
        "time": pa.array(np.tile(t, hosts), pa.timestamp("us", tz="UTC")),
        "hostname": pa.array(np.repeat(np.array([f"host_{i}" for i in range(hosts)]), steps)),
        **{m: pa.array(rng.random(hosts * steps) * 100) for m in METRICS},
    })


def run(sql, qs, repeat):
    out = {}
    for name, q in qs.items():
        sql(q)  # warm: metadata and the OS page cache
        out[name] = common.timed(lambda: sql(q), repeat)[0]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lake", help=argparse.SUPPRESS)
    args = ap.parse_args()
    qs = queries(args.hosts)
    if args.lake:  # the reference's side, in its own virtualenv
        import timelake

        lake = timelake.Lake(args.lake)
        print(json.dumps(run(lambda q: lake.sql(q, namespace="tsbs"), qs, args.repeat)))
        return
    work = tempfile.mkdtemp(prefix="tl-bench-query-")
    try:
        if not os.environ.get("TL_LIB"):  # TL_LIB set: an optimised library built elsewhere
            common.release_library()
        import duckdb
        import tlc

        lake = tlc.Lake(work)
        first = hour_batch(args.hosts, 0)
        t = lake.create_table("tsbs.cpu", first.schema, time_column="time", series_key=["hostname"])
        for hour in range(args.hours):
            t.append(first if hour == 0 else hour_batch(args.hosts, hour), maintain=False)
        rows = args.hosts * 360 * args.hours
        ours = run(lambda q: lake.sql(q, namespace="tsbs"), qs, args.repeat)
        ref = common.run_reference(__file__, "--lake", work, "--hosts", str(args.hosts), "--repeat", str(args.repeat))
        files = sorted(glob.glob(f"{work}/tsbs/cpu/data/*/*.parquet"))
        con = duckdb.connect()
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"CREATE VIEW cpu AS SELECT * FROM read_parquet({files!r}, hive_partitioning = false)")
        raw = run(lambda q: con.sql(q).to_arrow_table(), qs, args.repeat)
        print(f"{rows:,} rows, {len(files)} files, median of {args.repeat}")
        print(f"{'query':<24} {'ours ms':>9} {'ref ms':>9} {'duckdb ms':>10} {'ref/ours':>9} {'ours/duckdb':>12}")
        for name in qs:
            o, r, d = ours[name], ref[name], raw[name]
            print(f"{name:<24} {o:>9.2f} {r:>9.2f} {d:>10.2f} {r / o:>8.2f}x {o / d:>11.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
