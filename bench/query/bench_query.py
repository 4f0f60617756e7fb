"""SQL over the lake, TSBS cpu-only style (and two filtered count(*)s): ours, the reference and DuckDB
(Python) over the same Parquet files, side by side in one run.

usage: python bench/query/bench_query.py [--hosts 1000] [--hours 24] [--repeat 5]
       [--row-group-limit N] [--maintain] [--query NAME ...] [--keep DIR] [--no-duckdb]
       (the default, 1000 hosts x 24 hours, is the issue's size, ~8.6M rows)
The table (hosts x 10 metrics every 10 s) is written by our library in hourly
appends, as they come (24 files), or with --maintain as the writer's inline
maintenance (the default of an append) compacts them; then each query runs
`repeat` times in each engine. Prints median ms
and the ratios reference/ours and ours/DuckDB (ours/DuckDB below 1.5 is the goal),
then the median CPU time of each process per query (all its threads) and that ratio.
--query runs only the named queries (repeatable); --keep DIR writes the table
into DIR once and reuses it in later runs with the same DIR (the layout and size
are the caller's to keep consistent); --no-duckdb leaves out both DuckDB peers.
"DuckDB" is the Python duckdb of .venv; "duck144" is the same read_parquet SQL on
the DuckDB release we embed (1.4.4), in a throwaway virtualenv this script makes
under .deps/ from PyPI when it is absent: the same engine, so the fair peer.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
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
        "count-1h": f"SELECT count(*) FROM cpu WHERE time >= {T.format(5)} AND time < {T.format(6)}",
        "count-host": f"SELECT count(*) FROM cpu WHERE hostname = {h(3)}",
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


def make_cpu(lake, hosts, hours, maintain, properties=None):
    """tsbs.cpu in our lake, one append per hour; returns the table."""
    first = hour_batch(hosts, 0)
    t = lake.create_table("tsbs.cpu", first.schema, time_column="time", series_key=["hostname"],
                          properties=properties)
    for hour in range(hours):
        t.append(first if hour == 0 else hour_batch(hosts, hour), maintain=maintain)
    return t


DUCK_EMBEDDED = "1.4.4"  # scripts/setup.d/duckdb.sh's pin
DUCK_VENV = common.ROOT / ".deps" / f"bench-duckdb-{DUCK_EMBEDDED}"


def embedded_duckdb_python():
    """The python of a virtualenv holding the embedded DuckDB release (made once)."""
    py = DUCK_VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(DUCK_VENV)], check=True)
        pins = [f"duckdb=={DUCK_EMBEDDED}"]
        try:
            import pyarrow

            pins.append(f"pyarrow=={pyarrow.__version__}")
        except ImportError:
            pass
        subprocess.run([str(py), "-m", "pip", "install", "-q", *pins], check=True)
    return py


def raw_duckdb(files, qs, repeat):
    """DuckDB (whichever this python has) over the Parquet files themselves."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE VIEW cpu AS SELECT * FROM read_parquet({files!r}, hive_partitioning = false)")
    fetch = "to_arrow_table" if hasattr(duckdb.DuckDBPyRelation, "to_arrow_table") else "fetch_arrow_table"
    return run(lambda q: getattr(con.sql(q), fetch)(), qs, repeat)


def live_files(work):
    """The table's data files as pyiceberg plans them: after maintenance the
    folder also holds replaced files until orphan removal."""
    from pyiceberg.table import StaticTable

    meta = max(glob.glob(f"{work}/tsbs/cpu/metadata/v*.metadata.json"),
               key=lambda f: int(os.path.basename(f)[1:].split(".")[0]))
    tasks = StaticTable.from_metadata(meta).scan().plan_files()
    return sorted(task.file.file_path.removeprefix("file://") for task in tasks)


def run(sql, qs, repeat):
    """{query: [median wall ms, median CPU ms of the process]}: on a shared
    machine the CPU time says what each engine costs when the wall time
    mostly says how long it waited for a core."""
    import statistics
    import time

    out = {}
    for name, q in qs.items():
        sql(q)  # warm: metadata and the OS page cache
        cpu = []
        for _ in range(repeat):
            c0 = time.process_time()
            sql(q)
            cpu.append((time.process_time() - c0) * 1000)
        out[name] = [common.timed(lambda: sql(q), repeat)[0], statistics.median(cpu)]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=1000, help="the issue's default: 1,000 hosts x 1 day, 8.6M rows")
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--row-group-limit", type=int, help="write.parquet.row-group-limit of the table")
    ap.add_argument("--maintain", action="store_true", help="append with inline maintenance (compacted files)")
    ap.add_argument("--query", action="append", help="run only this query (repeatable)")
    ap.add_argument("--keep", help="write the table into this folder once and reuse it")
    ap.add_argument("--no-duckdb", action="store_true", help="compare with the reference only")
    ap.add_argument("--lake", help=argparse.SUPPRESS)
    ap.add_argument("--raw", help=argparse.SUPPRESS)
    args = ap.parse_args()
    qs = queries(args.hosts)
    if args.query:
        unknown = set(args.query) - set(qs)
        if unknown:
            ap.error(f"unknown queries {sorted(unknown)}; choose among {list(qs)}")
        qs = {name: q for name, q in qs.items() if name in args.query}
    if args.raw:  # the embedded DuckDB release's side, in its own virtualenv
        print(json.dumps(raw_duckdb(json.loads(Path(args.raw).read_text()), qs, args.repeat)))
        return
    if args.lake:  # the reference's side, in its own virtualenv
        import timelake

        lake = timelake.Lake(args.lake)
        print(json.dumps(run(lambda q: lake.sql(q, namespace="tsbs"), qs, args.repeat)))
        return
    work = args.keep or tempfile.mkdtemp(prefix="tl-bench-query-")
    reuse = args.keep and os.path.isdir(os.path.join(work, "tsbs", "cpu"))
    picked = [a for name in qs for a in ("--query", name)]
    try:
        if not os.environ.get("TL_LIB"):  # TL_LIB set: an optimised library built elsewhere
            common.release_library()
        import duckdb
        import tlc

        lake = tlc.Lake(work)
        props = {"write.parquet.row-group-limit": str(args.row_group_limit)} if args.row_group_limit else None
        if not reuse:
            make_cpu(lake, args.hosts, args.hours, args.maintain, props)
        rows = args.hosts * 360 * args.hours
        ours = run(lambda q: lake.sql(q, namespace="tsbs"), qs, args.repeat)
        ref = common.run_reference(__file__, "--lake", work, "--hosts", str(args.hosts), "--repeat", str(args.repeat),
                                   *picked)
        files = live_files(work)
        if args.no_duckdb:
            raw = raw144 = {name: [float("nan"), float("nan")] for name in qs}
        else:
            raw = raw_duckdb(files, qs, args.repeat)
            listing = Path(tempfile.mkdtemp(prefix="tl-bench-query-files-")) / "files.json"
            listing.write_text(json.dumps(files))
            proc = subprocess.run([str(embedded_duckdb_python()), __file__, "--raw", str(listing), "--hosts",
                                   str(args.hosts), "--repeat", str(args.repeat), *picked], capture_output=True,
                                  text=True, check=True)
            shutil.rmtree(listing.parent, ignore_errors=True)
            raw144 = json.loads(proc.stdout.strip().splitlines()[-1])
        size = sum(os.path.getsize(f) for f in files)
        import pyarrow.parquet as pq

        groups = sum(pq.ParquetFile(f).metadata.num_row_groups for f in files)
        layout = "compacted by inline maintenance" if args.maintain else "as appended"
        print(f"{rows:,} rows, {len(files)} files ({layout}), {groups} row groups, {size / 1e6:.1f} MB; "
              f"median of {args.repeat}; duckdb {duckdb.__version__}, duck144 = DuckDB {DUCK_EMBEDDED}")
        print(f"{'query':<24} {'ours ms':>9} {'ref ms':>9} {'duckdb ms':>10} {'duck144 ms':>11} {'ref/ours':>9} "
              f"{'ours/duckdb':>12} {'ours/duck144':>13} {'ours cpu':>9} {'ref cpu':>9} {'ref/ours cpu':>13}")
        for name in qs:
            (o, oc), (r, rc), d, d4 = ours[name], ref[name], raw[name][0], raw144[name][0]
            print(f"{name:<24} {o:>9.2f} {r:>9.2f} {d:>10.2f} {d4:>11.2f} {r / o:>8.2f}x {o / d:>11.2f}x "
                  f"{o / d4:>12.2f}x {oc:>9.2f} {rc:>9.2f} {rc / oc:>12.2f}x")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
