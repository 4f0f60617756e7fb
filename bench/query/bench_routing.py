"""Rollup-routed queries: ours and the reference side by side in one run, over
the same lake and the same rollups.

usage: python bench/query/bench_routing.py [--hosts 1000] [--hours 24] [--repeat 5] [--dir DIR]
                                            [--rollups reference|ours]

--dir keeps the lake in DIR and reuses it when DIR already holds one (made
with the same --hosts, --hours and --rollups): the timings alone, rerun.

bench_query.py's table (hosts x 10 metrics every 10 s, hourly appends) gets
two rollups (CREATE MATERIALIZED ROLLUP): per host and minute, and per host
and hour, made by the reference (--rollups reference, the default) or by
our own implementation (--rollups ours: their layout is ours, as our users
get it; both packages then query them). Then, after a late append of one hour
(unrefreshed: those buckets come from raw data), each GROUP BY time_bucket
query runs `repeat` times in each: ours with routing on (which routes when
the rollup's row groups and the raw rows around them read fewer bytes than
the raw scan alone) and ours with routing off by turns (which first
alternating too), and the reference (which routes as it can); EXPLAIN
tells whether each routed.
Prints median ms, the ratios reference/ours and unrouted/routed, the
median CPU ms of this process (DuckDB's threads included) with routing on
and off, and the load average.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import bench_query  # noqa: E402
from bench_query import METRICS, hour_batch  # noqa: E402

MAXES = ", ".join(f"max({m}) AS max_{m}" for m in METRICS)
ROLLUPS = [
    "CREATE MATERIALIZED ROLLUP tsbs.cpu_1m AS SELECT hostname, time_bucket(INTERVAL '1 minute', time) AS bucket, "
    "count(*) AS n, sum(usage_user) AS sum_user, count(usage_user) AS count_user, "
    f"{MAXES} FROM tsbs.cpu GROUP BY hostname, bucket",
    "CREATE MATERIALIZED ROLLUP tsbs.cpu_1h AS SELECT hostname, time_bucket(INTERVAL '1 hour', time) AS bucket, "
    "count(*) AS n, sum(usage_user) AS sum_user, count(usage_user) AS count_user, avg(usage_user) AS avg_user, "
    f"{MAXES} FROM tsbs.cpu GROUP BY hostname, bucket",
]


ROUTABLE = ["single-groupby-1-1-1", "single-groupby-5-8-1", "cpu-max-all-8", "double-groupby-1"]


def queries(hosts):
    """bench_query's GROUP BY time_bucket queries, and two that read whole rollups."""
    qs = {name: q for name, q in bench_query.queries(hosts).items() if name in ROUTABLE}
    alls = ", ".join(f"max({m}) AS {m}" for m in METRICS)
    return {
        **qs,
        # Narrow: one host, hourly over 8 hours (TSBS cpu-max-all-1). Its raw rows are a few
        # pages of each hourly file; the hourly rollup's file holds every host.
        "cpu-max-all-1": f"SELECT time_bucket(INTERVAL '1 hour', time) AS hour, {alls} FROM cpu "
        f"WHERE hostname = 'host_{3 % hosts}' AND time >= {bench_query.T.format(4)} "
        f"AND time < {bench_query.T.format(12)} GROUP BY 1 ORDER BY 1",
        "max-all-1h-all-hosts": f"SELECT time_bucket(INTERVAL '1 hour', time) AS hour, hostname, {alls} FROM cpu "
        "GROUP BY 1, 2 ORDER BY 1, 2",
        "count-5m-partial-edges": "SELECT time_bucket(INTERVAL '5 minutes', time) AS b, count(*) AS n, "
        f"max(usage_idle) AS m FROM cpu WHERE time >= TIMESTAMPTZ '2026-01-01 02:02:30+00' "
        f"AND time < TIMESTAMPTZ '2026-01-01 20:57:10+00' GROUP BY 1 ORDER BY 1",
        # Not routable (no rollup keeps stddev): what routing costs a query it leaves alone.
        "stddev-1h-one-host": "SELECT time_bucket(INTERVAL '1 hour', time) AS hour, stddev(usage_user) AS s "
        "FROM cpu WHERE hostname = 'host_7' GROUP BY 1 ORDER BY 1",
    }


def routed_in_reference(lake, q):
    plan = " ".join(r["plan"] for r in lake.sql("EXPLAIN " + q, namespace="tsbs").to_pylist())
    return "cpu_1m" in plan or "cpu_1h" in plan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", help="keep the lake here, reused when present")
    ap.add_argument("--rollups", choices=["reference", "ours"], default="reference",
                    help="which implementation makes the rollups")
    ap.add_argument("--lake", help=argparse.SUPPRESS)
    ap.add_argument("--make", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    qs = queries(args.hosts)
    if args.lake:  # the reference's side, in its own virtualenv
        import timelake

        lake = timelake.Lake(args.lake)
        if args.make:
            for sql in ROLLUPS:
                lake.sql(sql)
            print(json.dumps({}))
            return
        out = {}
        for name, q in qs.items():
            lake.sql(q, namespace="tsbs")
            ms = common.timed(lambda: lake.sql(q, namespace="tsbs"), args.repeat)[0]
            out[name] = [ms, routed_in_reference(lake, q)]
        print(json.dumps(out))
        return
    work = args.dir or tempfile.mkdtemp(prefix="tl-bench-rollup-")
    made = Path(work, f"made-{args.hosts}-{args.hours}" + ("-ours" if args.rollups == "ours" else ""))
    try:
        if not os.environ.get("TL_LIB"):  # TL_LIB set: an optimised library built elsewhere
            common.release_library()
        import tlc

        if any(Path(work).glob("made-*")) and not made.exists():
            raise SystemExit(f"{work} holds a lake made otherwise (--hosts, --hours or --rollups)")
        if not made.exists():
            lake = tlc.Lake(work)
            t = bench_query.make_cpu(lake, args.hosts, args.hours - 1, maintain=False)
            if args.rollups == "ours":
                for sql in ROLLUPS:
                    lake.sql(sql)
            else:
                common.run_reference(__file__, "--lake", work, "--make")
            # The last hour arrives after the refresh: routing reads it raw.
            t.append(hour_batch(args.hosts, args.hours - 1), maintain=False)
            made.touch()
        lake, unrouted = tlc.Lake(work), tlc.Lake(work)
        unrouted.sql("SET timelake.rollup_routing = false", namespace="tsbs")
        ours, off, routes, cpu = {}, {}, {}, {}
        for name, q in qs.items():
            plans = {r["plan_type"] for r in lake.sql("EXPLAIN " + q, namespace="tsbs").to_pylist()}
            routes[name] = "timelake_rollup" in plans
            # Routing on and off by turns, so that load and caches weigh on both alike.
            lake.sql(q, namespace="tsbs")
            unrouted.sql(q, namespace="tsbs")
            on_ms, off_ms, on_cpu, off_cpu = [], [], [], []
            for i in range(args.repeat):  # which goes first alternates too
                for which in ((lake, on_ms, on_cpu), (unrouted, off_ms, off_cpu))[:: 1 if i % 2 == 0 else -1]:
                    c0 = time.process_time()
                    which[1].extend(common.timed(lambda: which[0].sql(q, namespace="tsbs"), 1)[1])
                    which[2].append((time.process_time() - c0) * 1000)
            ours[name], off[name] = statistics.median(on_ms), statistics.median(off_ms)
            cpu[name] = statistics.median(on_cpu), statistics.median(off_cpu)
        ref = common.run_reference(__file__, "--lake", work, "--hosts", str(args.hosts), "--repeat",
                                   str(args.repeat))
        rows = args.hosts * 360 * args.hours
        files = {name: lake.table(f"tsbs.{name}").info()["files"] for name in ("cpu_1m", "cpu_1h")}
        print(f"{rows:,} rows; rollups per host and minute and per host and hour (made by "
              f"{'our implementation' if args.rollups == 'ours' else 'the reference'}; "
              f"{files['cpu_1m']} and {files['cpu_1h']} files), "
              f"the last hour appended after them; median of {args.repeat}; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'query':<24} {'ours ms':>9} {'routed':>7} {'unrouted':>9} {'ref ms':>9} {'ref routed':>11} "
              f"{'ref/ours':>9} {'unrouted/ours':>14} {'cpu ms on/off':>14}")
        for name in qs:
            o, u, (r, rr) = ours[name], off[name], ref[name]
            print(f"{name:<24} {o:>9.2f} {'yes' if routes[name] else 'no':>7} {u:>9.2f} {r:>9.2f} "
                  f"{'yes' if rr else 'no':>11} {r / o:>8.2f}x {u / o:>13.2f}x "
                  f"{cpu[name][0]:>6.1f}/{cpu[name][1]:<6.1f}")
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
