"""Object storage: ours and the reference side by side over moto's S3 server.

usage: python bench/s3/bench_s3.py [--appends 10] [--rows 10000] [--hold-ms 0]
Both talk to the same moto server through a recording proxy (no faults), which
gives, per operation, the storage requests and the *sequential round trips*
(requests overlapping in time count as one). Prints median latency, round
trips and requests for an append, a cold open (new process state: table()
and info()), a cold latest() and a cold filtered query, and the latency ratio
(reference / ours: above 1 means we are faster). An operation an
implementation cannot do yet is shown as "-".

On localhost requests are so quick that requests sent one after another may
not overlap and parallel ones may not either: --hold-ms N holds every request
N ms in the proxy (as a distant store would), which makes the round-trip
counts exact; the latencies then mostly measure round trips x N. Cold reads
of ours go through the head object (metadata/timelake-c-head) that appends
PUT beside their conditional create; the reference's through its
metadata/timelake-head. Our cold latest() is read from the last-value index
without starting the SQL engine.
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


def workload(lake_cls, url, options, appends, rows):
    """Runs in either implementation; returns {op: [(start, end), ...]} on the
    system-wide monotonic clock, which the proxy also uses."""
    out = {"append": [], "cold open": [], "cold latest": [], "cold filtered query": []}
    lake = lake_cls(url, options)
    first = common.metrics_table(rows, START_US)
    table = lake.create_table("bench.s3", first.schema, time_column="time", series_key=["host", "region"])
    batches = [common.metrics_table(rows, START_US + i * rows * 10_000, seed=i) for i in range(appends)]
    for b in batches:
        time.sleep(0.05)  # keep operations apart in the proxy's log
        t0 = time.monotonic()
        table.append(b, maintain=False)
        out["append"].append((t0, time.monotonic()))

    def cold(op, fn):
        for _ in range(3):
            time.sleep(0.05)
            t0 = time.monotonic()
            try:
                fn(lake_cls(url, options))
            except Exception as e:  # not supported by this implementation (yet)
                out[op] = {"error": str(e)[:200]}
                return
            out[op].append((t0, time.monotonic()))

    cold("cold open", lambda lk: lk.table("bench.s3").info())
    cold("cold latest", lambda lk: lk.latest("bench.s3"))
    cold("cold filtered query", lambda lk: lk.sql(
        "SELECT count(*) AS n FROM bench.s3 WHERE host = 'host_001' AND time < TIMESTAMPTZ '2026-01-01 00:00:30+00'"))
    return out


def summarize(intervals, proxy):
    if isinstance(intervals, dict):
        return None
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
    ap.add_argument("--appends", type=int, default=10)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--hold-ms", type=float, default=0, help="hold every request this long in the proxy")
    ap.add_argument("--as-reference", nargs=2, metavar=("URL", "OPTIONS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.as_reference:
        import timelake

        url, options = args.as_reference
        print(json.dumps(workload(timelake.Lake, url, json.loads(options), args.appends, args.rows)))
        return

    if "TL_LIB" not in os.environ:  # else the caller's build (e.g. a Release dir of its own)
        common.release_library()
    import tlc
    from store_servers import start_moto, stop

    proc, s3 = start_moto(tempfile.mkdtemp(prefix="tl-bench-s3-"))
    try:
        with common.holding_proxy(s3.endpoint, args.hold_ms) as proxy:
            opts = s3.option_list(aws_endpoint=proxy.endpoint)
            ours = workload(tlc.Lake, s3.url("ours"), opts, args.appends, args.rows)
            ref = common.run_reference(__file__, "--appends", str(args.appends), "--rows", str(args.rows),
                                       "--as-reference", s3.url("reference"), json.dumps(opts))
            results = {op: (summarize(ours[op], proxy), summarize(ref[op], proxy)) for op in ours}
    finally:
        stop(proc)

    held = f", every request held {args.hold_ms:g} ms" if args.hold_ms else ""
    print(f"S3 (moto, local) -- {args.appends} appends of {args.rows} rows{held}; medians")
    print(f"{'operation':22} {'ours ms':>9} {'ref ms':>9} {'ratio':>6}   {'round trips ours/ref':>20}   {'requests ours/ref':>17}")
    for op, (o, r) in results.items():
        f = lambda v, fmt: (fmt % v) if v is not None else "-"
        ratio = f"{r[0] / o[0]:.2f}" if o and r else "-"
        print(f"{op:22} {f(o and o[0], '%.1f'):>9} {f(r and r[0], '%.1f'):>9} {ratio:>6}   "
              f"{f(o and o[1], '%d'):>9} / {f(r and r[1], '%d'):<9}   {f(o and o[2], '%d'):>7} / {f(r and r[2], '%d'):<7}")


if __name__ == "__main__":
    main()
