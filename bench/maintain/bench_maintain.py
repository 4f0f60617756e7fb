"""Maintenance: many small appends (inline maintenance on), then a full
maintain -- ours and the reference side by side.

usage: python bench/maintain/bench_maintain.py [--appends 300] [--rows 1000] [--full] [--expiry]
                                              [--scaling 100,300,1000,3000] [--batch-ids]
--full runs the issue's size: 1,000 appends of 1,000 rows.
--scaling runs only the append phase at each of these numbers of appends
(every snapshot kept, so each append's history grows) and prints wall and CPU
seconds of both implementations, the cost of the last tenth of the appends
per append, and the size of the last metadata document: the one thing an
append still writes in proportion to the history (Iceberg's vN.metadata.json
lists every kept snapshot); the rest costs the same whatever the history.
--batch-ids gives every append a batch id, so each append also checks that
its batch was not committed before (the cost of that check must not grow
with the history either).
--expiry keeps the default snapshot limits, so inline maintenance also expires
snapshots (the byte counts then cover only the snapshots that survive).
Prints, per implementation: append phase time, full maintain time, bytes
appended and bytes written by compaction (write amplification = all bytes
written / bytes appended), data files before and after the full maintain, and
the latency of one aggregate query (DuckDB over the live files, the same
engine for both tables) before and after. Ratios are reference / ours: above 1
means we are faster or smaller.
"""

import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

START_US = 1_767_225_600_000_000  # 2026-01-01
# Keep every snapshot until the final maintain so the summaries can be added up.
PROPS = {"timelake.max-snapshots": "100000", "timelake.min-snapshots": "100000"}


def newest_metadata(table_dir):
    files = glob.glob(os.path.join(table_dir, "metadata", "v*.metadata.json"))
    return max(files, key=lambda f: int(os.path.basename(f)[1:].split(".")[0]))


def snapshots(table_dir):
    return json.load(open(newest_metadata(table_dir)))["snapshots"]


def bytes_by_operation(snaps):
    out = {}
    for s in snaps:
        op = s["summary"]["operation"]
        out[op] = out.get(op, 0) + int(s["summary"].get("added-files-size", 0))
    return out


def copy_table(src, dst):
    """Copies a table directory while its writer may still be tidying up in the
    background (the reference removes temporary and expired files)."""
    for attempt in range(5):
        try:
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*#*"))
            return
        except shutil.Error:
            shutil.rmtree(dst, ignore_errors=True)
            if attempt == 4:
                raise
            time.sleep(0.2)


def append_phase(lake_cls, lake_dir, appends, rows, expiry=False, batch_ids=False):
    """The appends, in either implementation (lake_cls is tlc.Lake or
    timelake.Lake): the table, wall and CPU seconds, and those of the last tenth."""
    lake = lake_cls(lake_dir)
    first = common.metrics_table(rows, START_US)
    table = lake.create_table("bench.m", first.schema, time_column="time", series_key=["host", "region"],
                              properties={} if expiry else PROPS)
    # Overlapping times (each batch restarts within the same hour range) make duplicates and out-of-order data.
    batches = [common.metrics_table(rows, START_US + (i % 50) * rows * 7_000, seed=i) for i in range(appends)]
    tail = appends - max(1, appends // 10)
    t0, c0 = time.perf_counter(), time.process_time()
    for i, b in enumerate(batches):
        if i == tail:
            t1, c1 = time.perf_counter(), time.process_time()
        if batch_ids:
            table.append(b, batch_id=f"gateway-3-{i:06d}")
        else:
            table.append(b)
    t2, c2 = time.perf_counter(), time.process_time()
    n_tail = appends - tail
    return table, {"append_s": t2 - t0, "append_cpu_s": c2 - c0, "tail_ms": (t2 - t1) * 1000 / n_tail,
                   "tail_cpu_ms": (c2 - c1) * 1000 / n_tail,
                   "metadata_bytes": os.path.getsize(newest_metadata(os.path.join(lake_dir, "bench", "m")))}


def bench(lake_cls, lake_dir, appends, rows, expiry=False):
    """Runs in either implementation: lake_cls is tlc.Lake or timelake.Lake."""
    table, phase = append_phase(lake_cls, lake_dir, appends, rows, expiry)
    append_s = phase["append_s"]
    table_dir = os.path.join(lake_dir, "bench", "m")
    before = bytes_by_operation(snapshots(table_dir))
    copy_table(table_dir, table_dir + ".before")  # for the query before maintaining
    files_before = table.info()["files"]
    t0 = time.perf_counter()
    report = table.maintain(compact=True, retention=True, expire=False)
    maintain_s = time.perf_counter() - t0
    after = bytes_by_operation(snapshots(table_dir))
    return {
        "append_s": append_s, "maintain_s": maintain_s, "files_before": files_before,
        "files_after": table.info()["files"], "appended_bytes": before.get("append", 0),
        "inline_rewritten_bytes": before.get("replace", 0),
        "final_rewritten_bytes": after.get("replace", 0) - before.get("replace", 0),
        "rows_rewritten": report["rows_rewritten"], "duplicates_removed": report["duplicates_removed"],
    }


def query_ms(table_dir, repeat=5):
    """One aggregate over the table's live files with DuckDB: the layout's effect on a reader."""
    import duckdb
    from pyiceberg.table import StaticTable

    latest = newest_metadata(table_dir)
    paths = [t.file.file_path.replace("file://", "") for t in StaticTable.from_metadata(latest).scan().plan_files()]
    con = duckdb.connect()
    q = f"SELECT host, avg(m0), max(time) FROM read_parquet({paths!r}) WHERE region = 'eu-west-1' GROUP BY host"
    median, _ = common.timed(lambda: con.execute(q).fetchall(), repeat)
    return median


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--appends", type=int, default=300)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--full", action="store_true", help="the issue's size: 1,000 appends of 1,000 rows")
    ap.add_argument("--expiry", action="store_true", help="default snapshot limits: inline expiry on")
    ap.add_argument("--no-build", action="store_true", help="use the library TL_LIB names instead of building build/")
    ap.add_argument("--scaling", metavar="N,N,...", help="append phase only, at each number of appends")
    ap.add_argument("--batch-ids", action="store_true", help="--scaling: each append with a batch id")
    ap.add_argument("--as-reference", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.full:
        args.appends, args.rows = 1000, 1000
    if args.as_reference:
        import timelake

        if args.scaling:
            res = append_phase(timelake.Lake, args.as_reference, args.appends, args.rows, args.expiry,
                               args.batch_ids)[1]
        else:
            res = bench(timelake.Lake, args.as_reference, args.appends, args.rows, args.expiry)
        print(json.dumps(res))
        return
    work = tempfile.mkdtemp(prefix="tl-bench-maintain-")
    try:
        if not args.no_build:
            common.release_library()
        import tlc

        if args.scaling:
            scaling(tlc, work, [int(n) for n in args.scaling.split(",")], args.rows, args.expiry, args.batch_ids)
            return

        ours = bench_with_queries(tlc.Lake, work + "/ours", args.appends, args.rows, args.expiry)
        ref_dir = work + "/ref"
        ref = common.run_reference(__file__, "--appends", str(args.appends), "--rows", str(args.rows),
                                   "--as-reference", ref_dir, *(["--expiry"] if args.expiry else []))
        ref["query_before_ms"] = query_ms(ref_dir + "/bench/m.before")
        ref["query_after_ms"] = query_ms(ref_dir + "/bench/m")
        print(f"{args.appends} appends of {args.rows} rows, inline maintenance on"
              f"{' (snapshot expiry too)' if args.expiry else ''}, then a full maintain")
        rows = [("append phase s", "append_s"), ("full maintain s", "maintain_s"),
                ("files before", "files_before"), ("files after", "files_after"),
                ("bytes appended", "appended_bytes"), ("bytes rewritten inline", "inline_rewritten_bytes"),
                ("bytes rewritten by maintain", "final_rewritten_bytes"), ("write amplification", "write_amp"),
                ("query before ms", "query_before_ms"), ("query after ms", "query_after_ms")]
        for r in (ours, ref):
            r["write_amp"] = (r["appended_bytes"] + r["inline_rewritten_bytes"] + r["final_rewritten_bytes"]) / max(
                1, r["appended_bytes"])
        print(f"{'':28} {'ours':>14} {'reference':>14} {'ratio':>7}")
        for label, key in rows:
            o, r = ours[key], ref[key]
            ratio = r / o if o else float("nan")
            fmt = "{:>14,.3f}" if isinstance(o, float) else "{:>14,}"
            print(f"{label:28} {fmt.format(o)} {fmt.format(r)} {ratio:>6.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def scaling(tlc, work, sizes, rows, expiry, batch_ids):
    print(f"appends of {rows} rows{' with batch ids' if batch_ids else ''}, inline maintenance on, "
          f"{'default snapshot expiry' if expiry else 'every snapshot kept'}; "
          "wall and CPU seconds of the append phase, ms per append over its last tenth, and the size of "
          "the metadata document each append writes at the end (Iceberg's, listing every kept snapshot)")
    print(f"{'appends':>8} {'ours s':>8} {'cpu':>7} {'ref s':>8} {'cpu':>7} {'ratio':>6} {'cpu':>6}"
          f" | {'ours ms':>8} {'cpu':>6} {'ref ms':>8} {'cpu':>6} | {'doc MB':>6} {'ref':>6}")
    for n in sizes:
        ours = append_phase(tlc.Lake, f"{work}/ours{n}", n, rows, expiry, batch_ids)[1]
        shutil.rmtree(f"{work}/ours{n}", ignore_errors=True)
        ref = common.run_reference(__file__, "--scaling", "x", "--appends", str(n), "--rows", str(rows),
                                   "--as-reference", f"{work}/ref{n}", *(["--expiry"] if expiry else []),
                                   *(["--batch-ids"] if batch_ids else []))
        shutil.rmtree(f"{work}/ref{n}", ignore_errors=True)
        print(f"{n:>8} {ours['append_s']:>8.2f} {ours['append_cpu_s']:>7.2f} {ref['append_s']:>8.2f}"
              f" {ref['append_cpu_s']:>7.2f} {ref['append_s'] / ours['append_s']:>5.2f}x"
              f" {ref['append_cpu_s'] / ours['append_cpu_s']:>5.2f}x"
              f" | {ours['tail_ms']:>8.1f} {ours['tail_cpu_ms']:>6.1f} {ref['tail_ms']:>8.1f}"
              f" {ref['tail_cpu_ms']:>6.1f} | {ours['metadata_bytes'] / 1e6:>6.2f}"
              f" {ref['metadata_bytes'] / 1e6:>6.2f}", flush=True)


def bench_with_queries(lake_cls, lake_dir, appends, rows, expiry=False):
    res = bench(lake_cls, lake_dir, appends, rows, expiry)
    res["query_before_ms"] = query_ms(lake_dir + "/bench/m.before")
    res["query_after_ms"] = query_ms(lake_dir + "/bench/m")
    return res


if __name__ == "__main__":
    main()
