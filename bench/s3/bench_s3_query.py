"""Query-time I/O over S3: ours and the reference side by side over moto.

usage: python bench/s3/bench_s3_query.py [--files 3] [--rows 200000]
Each implementation writes the same table (one large data file per append,
of 8 columns), then runs cold queries (a new lake each time, so nothing is
cached in memory) through a recording proxy, which gives per query the
latency, the sequential storage round trips, the requests, and the bytes
the store sent. Ours reads large files by ranges (footer, then only the
column chunks needed); prints medians and the latency ratio (reference /
ours: above 1 means we are faster).

"filtered, after maintain" writes the same appends to a second table whose
files have several row groups (write.parquet.row-group-limit: rows / 4),
compacts it with a full maintain, and runs the filtered query cold: the
compacted file's footer is in our head object (the row groups to read are
known from it), so the data comes in the second round trip.
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
QUERIES = {
    "cold filtered query": "SELECT avg(m0) AS a FROM bench.q WHERE host = 'host_001' "
                           "AND time >= TIMESTAMPTZ '2026-01-01 00:10:00+00' "
                           "AND time < TIMESTAMPTZ '2026-01-01 00:20:00+00'",
    "cold one-column scan": "SELECT max(m1) AS m FROM bench.q",
    "cold full scan": "SELECT count(*) AS n, sum(m4) AS s FROM bench.q WHERE region <> 'x'",
}
AFTER_MAINTAIN = "filtered, after maintain"


def workload(lake_cls, url, options, files, rows):
    """Runs in either implementation; returns {query: [(start, end), ...]} on
    the system-wide monotonic clock, which the proxy also uses."""
    lake = lake_cls(url, options)
    first = common.metrics_table(rows, START_US)
    table = lake.create_table("bench.q", first.schema, time_column="time", series_key=["host", "region"])
    for i in range(files):
        table.append(common.metrics_table(rows, START_US + i * rows * 10_000, seed=i), maintain=False)
    compacted = lake.create_table("bench.m", first.schema, time_column="time", series_key=["host", "region"],
                                  properties={"write.parquet.row-group-limit": str(max(rows // 4, 1))})
    for i in range(files):
        compacted.append(common.metrics_table(rows, START_US + i * rows * 10_000, seed=i), maintain=False)
    compacted.maintain()
    queries = dict(QUERIES)
    queries[AFTER_MAINTAIN] = QUERIES["cold filtered query"].replace("bench.q", "bench.m")
    out = {q: [] for q in queries}
    for name, sql in queries.items():
        for _ in range(3):
            time.sleep(0.05)  # keep queries apart in the proxy's log
            lk = lake_cls(url, options)
            t0 = time.monotonic()
            try:
                lk.sql(sql)
            except Exception as e:  # not supported by this implementation
                out[name] = {"error": str(e)[:200]}
                break
            out[name].append((t0, time.monotonic()))
    return out


def summarize(intervals, proxy):
    if isinstance(intervals, dict):
        return None
    from fault_proxy import round_trips

    ms, trips, reqs, sent = [], [], [], []
    for t0, t1 in intervals:
        inside = [r for r in proxy.log if r[0] >= t0 - 0.001 and r[1] <= t1 + 0.001]
        ms.append((t1 - t0) * 1000)
        trips.append(round_trips(inside))
        reqs.append(len(inside))
        sent.append(sum(n for at, n in proxy.sent if t0 - 0.001 <= at <= t1 + 0.001))
    return statistics.median(ms), statistics.median(trips), statistics.median(reqs), statistics.median(sent)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=3)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--as-reference", nargs=2, metavar=("URL", "OPTIONS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.as_reference:
        import timelake

        url, options = args.as_reference
        print(json.dumps(workload(timelake.Lake, url, json.loads(options), args.files, args.rows)))
        return

    if "TL_LIB" not in os.environ:  # else the caller's build (e.g. a Release dir of its own)
        common.release_library()
    import tlc
    from fault_proxy import FaultProxy
    from store_servers import start_moto, stop

    class BytesProxy(FaultProxy):
        """Also records when each answer was sent and its size."""

        def __init__(self, upstream):
            super().__init__(upstream)
            self.sent = []

        async def _forward(self, *a):
            data = await super()._forward(*a)
            with self._lock:
                self.sent.append((time.monotonic(), len(data)))
            return data

    proc, s3 = start_moto(tempfile.mkdtemp(prefix="tl-bench-s3q-"))
    try:
        with BytesProxy(s3.endpoint) as proxy:
            opts = s3.option_list(aws_endpoint=proxy.endpoint)
            ours = workload(tlc.Lake, s3.url("ours"), opts, args.files, args.rows)
            ref = common.run_reference(__file__, "--files", str(args.files), "--rows", str(args.rows),
                                       "--as-reference", s3.url("reference"), json.dumps(opts))
            results = {q: (summarize(ours[q], proxy), summarize(ref[q], proxy)) for q in ours}
    finally:
        stop(proc)

    print(f"S3 query I/O (moto, local) -- {args.files} files of {args.rows} rows; medians of 3 cold runs")
    print(f"{'query':24} {'ours ms':>8} {'ref ms':>8} {'ratio':>6}   {'round trips':>11}   "
          f"{'requests':>9}   {'bytes ours / ref':>22}")
    for q, (o, r) in results.items():
        f = lambda v, fmt: (fmt % v) if v is not None else "-"
        ratio = f"{r[0] / o[0]:.2f}" if o and r else "-"
        print(f"{q:24} {f(o and o[0], '%.1f'):>8} {f(r and r[0], '%.1f'):>8} {ratio:>6}   "
              f"{f(o and o[1], '%d'):>4} / {f(r and r[1], '%d'):<4}   {f(o and o[2], '%d'):>3} / {f(r and r[2], '%d'):<3}   "
              f"{f(o and o[3], '%d'):>10} / {f(r and r[3], '%d'):<10}")


if __name__ == "__main__":
    main()
