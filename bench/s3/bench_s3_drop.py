"""Dropping a table of many versions: ours and the reference side by side over
moto's S3 server.

usage: python bench/s3/bench_s3_drop.py [--versions 100] [--hold-ms 5] [--repeat 3]
Each implementation makes a table of --versions metadata versions (its
creation, then appends of 10 rows without maintenance: each adds a data file,
a manifest and a manifest list too) and drops it, --repeat times. Both talk to
the same moto server through a recording proxy that holds every request
--hold-ms ms (as a distant store would: on localhost requests sent one after
another barely overlap), which gives the drop's storage requests and its
*sequential round trips* (requests overlapping in time count as one). Prints
the medians and the latency ratio (reference / ours: above 1 means we are
faster).
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

START_US = 1_767_225_600_000_000  # 2026-01-01


def workload(lake_cls, url, options, versions, repeat):
    """Runs in either implementation; returns the drops' (start, end) on the
    system-wide monotonic clock, which the proxy also uses."""
    lake = lake_cls(url, options)
    out = []
    for r in range(repeat):
        name = f"bench.drop{r}"
        first = common.metrics_table(10, START_US)
        table = lake.create_table(name, first.schema, time_column="time", series_key=["host", "region"])
        for i in range(versions - 1):
            table.append(common.metrics_table(10, START_US + i * 100_000, seed=i), maintain=False)
        time.sleep(0.05)  # keep the drop apart in the proxy's log
        t0 = time.monotonic()
        lake.drop_table(name)
        out.append((t0, time.monotonic()))
        time.sleep(0.05)
    return out


def summarize(intervals, proxy):
    from fault_proxy import round_trips

    ms, trips, reqs = [], [], []
    for t0, t1 in intervals:
        inside = [r for r in proxy.log if r[0] >= t0 - 0.001 and r[1] <= t1 + 0.001]
        ms.append((t1 - t0) * 1000)
        trips.append(round_trips(inside))
        reqs.append(len(inside))
    return statistics.median(ms), statistics.median(trips), statistics.median(reqs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=100)
    ap.add_argument("--hold-ms", type=float, default=5, help="hold every request this long in the proxy")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--as-reference", nargs=2, metavar=("URL", "OPTIONS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.as_reference:
        import timelake

        url, options = args.as_reference
        print(json.dumps(workload(timelake.Lake, url, json.loads(options), args.versions, args.repeat)))
        return

    if "TL_LIB" not in os.environ:  # else the caller's build (e.g. a Release dir of its own)
        common.release_library()
    import tlc
    from store_servers import start_moto, stop

    proc, s3 = start_moto(tempfile.mkdtemp(prefix="tl-bench-s3-drop-"))
    try:
        with common.holding_proxy(s3.endpoint, args.hold_ms) as proxy:
            opts = s3.option_list(aws_endpoint=proxy.endpoint)
            cpu0 = time.process_time()
            ours = summarize(workload(tlc.Lake, s3.url("ours"), opts, args.versions, args.repeat), proxy)
            cpu = time.process_time() - cpu0
            ref = None
            if not args.no_reference:
                ref = summarize(common.run_reference(
                    __file__, "--versions", str(args.versions), "--repeat", str(args.repeat),
                    "--as-reference", s3.url("reference"), json.dumps(opts)), proxy)
    finally:
        stop(proc)

    print(f"S3 (moto, local) -- drop of a table of {args.versions} versions, every request held "
          f"{args.hold_ms:g} ms; medians of {args.repeat} (ours: {cpu:.1f} s CPU for the whole run)")
    print(f"{'':10} {'drop ms':>9} {'round trips':>12} {'requests':>9}")
    for who, r in (("ours", ours), ("reference", ref)):
        if r:
            print(f"{who:10} {r[0]:9.1f} {r[1]:12g} {r[2]:9g}")
    if ref:
        print(f"ratio (reference / ours): {ref[0] / ours[0]:.2f}")


if __name__ == "__main__":
    main()
