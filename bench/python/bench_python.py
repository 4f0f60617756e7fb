"""Append and query from Python: our package and the reference side by side.

usage: python bench/python/bench_python.py [--rows 200000] [--repeat 10]
Builds the optimised package (<--build>/python, default build/), runs the same workload in both
and prints median ms and the ratio (reference / ours: above 1 means we are faster).
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

START_US = 1_767_225_600_000_000  # 2026-01-01
QUERIES = {
    "count": "SELECT count(*) FROM bench.metrics",
    "hourly_avg": "SELECT time_bucket(INTERVAL '1 hour', time) AS h, host, avg(m0) FROM bench.metrics GROUP BY 1, 2",
    "one_series": "SELECT max(m1) FROM bench.metrics WHERE host = 'host_007' AND region = 'eu-west-1'",
}


def bench(timelake, work, rows, repeat):
    lake = timelake.Lake(work)
    first = common.metrics_table(rows, START_US)
    table = lake.create_table("bench.metrics", first.schema, time_column="time", series_key=["host", "region"])
    batches = iter([common.metrics_table(rows, START_US + i * rows * 10_000, seed=i) for i in range(repeat)])
    out = {"append": common.timed(lambda: table.append(next(batches), maintain=False), repeat)[0]}
    for name, sql in QUERIES.items():
        out[name] = common.timed(lambda: lake.sql(sql), repeat)[0]
    out["latest"] = common.timed(lambda: lake.latest("bench.metrics"), repeat)[0]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--build", default=str(common.ROOT / "build"), help="release build directory")
    ap.add_argument("--as-reference", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tl-bench-python-")
    try:
        if args.as_reference:
            import timelake

            print(json.dumps(bench(timelake, work, args.rows, args.repeat)))
            return
        build = Path(args.build)
        subprocess.run(["cmake", "-S", str(common.ROOT), "-B", str(build), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", str(build), "--target", "_timelake"], check=True,
                       stdout=subprocess.DEVNULL)
        sys.path.insert(0, str(build / "python"))
        import timelake

        ours = bench(timelake, work + "/ours", args.rows, args.repeat)
        ref = common.run_reference(__file__, "--as-reference", "--rows", str(args.rows), "--repeat", str(args.repeat))
        print(f"{args.rows} rows per append, median of {args.repeat}")
        print(f"{'operation':>12} {'ours ms':>9} {'ref ms':>9} {'ratio':>7}")
        for op in ours:
            print(f"{op:>12} {ours[op]:>9.3f} {ref[op]:>9.3f} {ref[op] / ours[op]:>6.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
