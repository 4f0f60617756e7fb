"""Rollup refresh: a raw table of --rows rows (issue #2's metrics shape: 300
series, 10 ms apart), an hourly and a one-minute rollup of five aggregates;
then --appends times: one append of --batch new rows and a REFRESH of each
rollup, timed -- ours and the reference side by side in one run.

usage: python bench/rollup/bench_rollup.py [--rows 1000000] [--batch 10000] [--appends 5]

Prints the CREATE time and the median refresh time after one append of both
implementations, the rows each refresh wrote, and the ratio reference / ours
(above 1: we are faster).
"""

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

START_US = 1_767_225_600_000_000  # 2026-01-01
AGGS = "count(*) AS n, sum(m0) AS s0, min(m1) AS lo1, max(m2) AS hi2, avg(m3) AS mean3"


def create_sql(name, width):
    return (f"CREATE MATERIALIZED ROLLUP bench.{name} AS SELECT host, region, "
            f"time_bucket(INTERVAL '{width}', time) AS bucket, {AGGS} FROM bench.m GROUP BY host, region, bucket")


def rows_of(result):
    return int(result.column("rows").to_pylist()[0])


def bench(lake_cls, lake_dir, rows, batch, appends):
    lake = lake_cls(lake_dir)
    data = common.metrics_table(rows, START_US)
    t = lake.create_table("bench.m", data.schema, time_column="time", series_key=["host", "region"])
    for off in range(0, rows, 200_000):
        t.append(data.slice(off, 200_000), maintain=False)
    out = {"create_s": {}, "refresh_ms": {}, "refresh_rows": {}}
    for name, width in (("minutely", "1 minute"), ("hourly", "1 hour")):
        t0 = time.perf_counter()
        lake.sql(create_sql(name, width))
        out["create_s"][name] = time.perf_counter() - t0
        out["refresh_ms"][name], out["refresh_rows"][name] = [], []
    for i in range(appends):
        start = START_US + (rows + i * batch) * 10_000
        t.append(common.metrics_table(batch, start, seed=2 + i), maintain=False)
        for name in ("minutely", "hourly"):
            t0 = time.perf_counter()
            n = rows_of(lake.sql(f"REFRESH MATERIALIZED ROLLUP bench.{name}"))
            out["refresh_ms"][name].append((time.perf_counter() - t0) * 1000)
            out["refresh_rows"][name].append(n)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--appends", type=int, default=5)
    ap.add_argument("--no-build", action="store_true", help="use the library TL_LIB names instead of building build/")
    ap.add_argument("--as-reference", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.as_reference:
        import timelake

        print(json.dumps(bench(timelake.Lake, args.as_reference, args.rows, args.batch, args.appends)))
        return
    work = tempfile.mkdtemp(prefix="tl-bench-rollup-")
    try:
        if not args.no_build:
            common.release_library()
        import tlc

        ours = bench(tlc.Lake, work + "/ours", args.rows, args.batch, args.appends)
        shutil.rmtree(work + "/ours", ignore_errors=True)
        ref = common.run_reference(__file__, "--rows", str(args.rows), "--batch", str(args.batch),
                                   "--appends", str(args.appends), "--as-reference", work + "/ref")
        print(f"raw table of {args.rows:,} rows (300 series); then {args.appends} times: append {args.batch:,} rows, "
              "REFRESH each rollup")
        print(f"{'':34} {'ours':>10} {'reference':>10} {'ratio':>7}")
        for name in ("minutely", "hourly"):
            o, r = ours["create_s"][name] * 1000, ref["create_s"][name] * 1000
            print(f"{'CREATE ' + name + ' ms':34} {o:>10.1f} {r:>10.1f} {r / o:>6.2f}x")
            o, r = statistics.median(ours["refresh_ms"][name]), statistics.median(ref["refresh_ms"][name])
            print(f"{'REFRESH ' + name + ' after 1 append ms':34} {o:>10.1f} {r:>10.1f} {r / o:>6.2f}x")
            print(f"{'  rows written (median)':34} {statistics.median(ours['refresh_rows'][name]):>10,.0f} "
                  f"{statistics.median(ref['refresh_rows'][name]):>10,.0f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
