"""Appends to a local table: ours and the reference side by side.

usage: python bench/append/bench_append.py [--repeat 20] [--sizes 100000,1000000]
Prints the median ms per append, rows/s and the ratio (reference time / ours:
above 1 means we are faster).
"""

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

START_US = 1_767_225_600_000_000  # 2026-01-01


def bench(lake_cls, lake_dir, sizes, repeat):
    """Runs in either implementation: lake_cls is tlc.Lake or timelake.Lake."""
    results = {}
    for n in sizes:
        lake = lake_cls(str(Path(lake_dir) / f"n{n}"))
        first = common.metrics_table(n, START_US)
        table = lake.create_table(f"bench.append_{n}", first.schema, time_column="time", series_key=["host", "region"])
        batches = [common.metrics_table(n, START_US + i * n * 10_000, seed=i) for i in range(repeat)]
        it = iter(batches)
        median, _ = common.timed(lambda: table.append(next(it), maintain=False), repeat)
        results[n] = median
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--as-reference", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = tempfile.mkdtemp(prefix="tl-bench-append-")
    try:
        if args.as_reference:
            import timelake

            print(json.dumps(bench(timelake.Lake, work, sizes, args.repeat)))
            return
        common.release_library()
        import tlc

        ours = bench(tlc.Lake, work + "/ours", sizes, args.repeat)
        ref = common.run_reference(__file__, "--as-reference", "--repeat", str(args.repeat), "--sizes", args.sizes)
        print(f"{'rows':>9} {'ours ms':>9} {'ref ms':>9} {'ours rows/s':>12} {'ref rows/s':>12} {'ratio':>6}")
        for n in sizes:
            o, r = ours[n], ref[str(n)]
            print(f"{n:>9} {o:>9.1f} {r:>9.1f} {n / o * 1000:>12,.0f} {n / r * 1000:>12,.0f} {r / o:>6.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
