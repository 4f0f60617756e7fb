"""CSV to table: ours (the timelake CLI) against the reference path of the seeds
(pyarrow.csv.read_csv plus the reference's Table.append), side by side in one run.

usage: python bench/ingest/bench_ingest.py [--mb 100] [--repeat 3] [--cli PATH]
Each run is a fresh process on a fresh table; prints MB/s, rows/s and peak RSS
of each and the ratio (reference time / ours: above 1 means we are faster).
--cli defaults to build/timelake, built here in Release mode.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

START_US = 1_767_225_600_000_000  # 2026-01-01
SCHEMA = "time:timestamptz,host:string,region:string,m0:float64,m1:float64,m2:float64,m3:float64,m4:float64"

REFERENCE = """
import sys, pyarrow as pa, pyarrow.csv as csv, timelake
lake, path = sys.argv[1], sys.argv[2]
schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("region", pa.string())]
                   + [(f"m{i}", pa.float64()) for i in range(5)])
t = timelake.Lake(lake).create_table("bench.ingest", schema, time_column="time", series_key=["host", "region"])
t.append(csv.read_csv(path), maintain=False)
"""


def make_csv(path, mb):
    """Writes about `mb` MB of the metrics shape as CSV (ISO 8601 times with Z)."""
    import pyarrow.csv as csv

    rows_per_mb = 8_000
    n = int(mb * rows_per_mb)
    chunk = 500_000
    with open(path, "wb") as f:
        for start in range(0, n, chunk):
            t = common.metrics_table(min(chunk, n - start), START_US + start * 10_000, seed=start)
            csv.write_csv(t, f, csv.WriteOptions(include_header=start == 0, quoting_style="none"))
    return n


def run_measured(cmd, env=None):
    """Runs cmd; returns (seconds, peak RSS in MB) of that child alone."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{cmd[0]} failed: {proc.stderr.read().decode()}")
    return secs, usage.ru_maxrss / 1024


def build_cli():
    root = common.ROOT
    subprocess.run(["cmake", "-S", str(root), "-B", str(root / "build"), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(root / "build"), "--target", "timelake_cli"], check=True,
                   stdout=subprocess.DEVNULL)
    return root / "build" / "timelake"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cli", help="a built timelake CLI (default: build it in build/)")
    args = ap.parse_args()
    cli = Path(args.cli) if args.cli else build_cli()
    work = Path(tempfile.mkdtemp(prefix="tl-bench-ingest-"))
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TL_LIB")}
    try:
        path = work / "data.csv"
        rows = make_csv(path, args.mb)
        mb = path.stat().st_size / 1e6
        ours, ref = [], []
        for i in range(args.repeat):
            lake = work / f"ours{i}"
            subprocess.run([str(cli), "create", "bench.ingest", "--lake", str(lake), "--schema", SCHEMA,
                            "--time-column", "time", "--series-key", "host,region"], check=True, env=env,
                           stdout=subprocess.DEVNULL)
            ours.append(run_measured([str(cli), "append", "--lake", str(lake), "--table", "bench.ingest",
                                      "--no-progress", str(path)], env))
            ref.append(run_measured([str(common.REF_PYTHON), "-c", REFERENCE, str(work / f"ref{i}"), str(path)], env))
            shutil.rmtree(lake)
            shutil.rmtree(work / f"ref{i}")
        o = statistics.median(s for s, _ in ours)
        r = statistics.median(s for s, _ in ref)
        o_rss, r_rss = max(m for _, m in ours), max(m for _, m in ref)
        print(f"CSV {mb:.0f} MB, {rows:,} rows, median of {args.repeat} (whole process, fresh table)")
        print(f"{'':10} {'seconds':>8} {'MB/s':>8} {'rows/s':>12} {'peak RSS MB':>12}")
        print(f"{'ours':10} {o:>8.2f} {mb / o:>8.1f} {rows / o:>12,.0f} {o_rss:>12.0f}")
        print(f"{'reference':10} {r:>8.2f} {mb / r:>8.1f} {rows / r:>12,.0f} {r_rss:>12.0f}")
        print(f"ratio (reference time / ours): {r / o:.2f}x; peak RSS ours/reference: {o_rss / r_rss:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
