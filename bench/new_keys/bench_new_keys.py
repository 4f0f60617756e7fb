"""Which keys of a new file a table holds already: ours (tl_table_filter_new_keys,
the optimised library through ctypes) against DuckDB (Python) anti-joining the
new rows with every live file of the table, side by side, as the table grows.

usage: python bench/new_keys/bench_new_keys.py [--files 100,300,1000] [--rows 10000]
                                               [--new 10000] [--repeat 5]
The table holds --files files of --rows rows each, keyed by (seq, host) with
seq growing file by file (a log shipped in order); the input is --new rows of
which half repeat the newest file's keys (a re-upload) and half are new. Prints
the median time of each and the ratio (DuckDB's time / ours): ours should stay
flat as the table grows, an anti-join over all files cannot. Ours runs in a
fresh process: its first call ("cold") parses every manifest of the table
(one per append here; compaction rewrites them into fewer), later calls use
the parsed manifests the process keeps ("warm", what a long-running service
pays).
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

KEYS = ["seq", "host"]


def build(lake_dir, n_files, rows):
    import pyarrow as pa
    import tlc

    lake = tlc.Lake(lake_dir)
    schema = pa.schema([("seq", pa.int64()), ("host", pa.string()), ("bytes", pa.int64())])
    t = lake.create_table("bench.log", schema)
    hosts = pa.array([f"host-{i % 97}" for i in range(rows)])
    for f in range(n_files):
        seq = pa.array(range(f * rows, (f + 1) * rows), pa.int64())
        t.append(pa.table([seq, hosts, seq], schema=schema), maintain=False)
    return lake, t, schema


def live_files(lake_dir):
    from pyiceberg.table import StaticTable

    metas = glob.glob(f"{lake_dir}/bench/log/metadata/v*.metadata.json")
    newest = max(metas, key=lambda f: int(f.rsplit("/v", 1)[1].split(".")[0]))
    return [t.file.file_path.replace("file://", "") for t in StaticTable.from_metadata(newest).scan().plan_files()]


def new_rows(schema, n_files, rows, n_new):
    import pyarrow as pa

    start = n_files * rows - n_new // 2  # half in the newest file, half beyond it
    seq = pa.array(range(start, start + n_new), pa.int64())
    hosts = pa.array([f"host-{(s - (n_files - 1) * rows) % 97}" for s in seq.to_pylist()])
    return pa.table([seq, hosts, seq], schema=schema)


def timed(fn, repeat):
    """Median wall and CPU milliseconds of fn (CPU of every thread of this process)."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - w) * 1000)
        cpus.append((time.process_time() - c) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def child(lake_dir, n_files, rows, n_new, repeat):
    """In a fresh process: the first call, then the median of `repeat` more."""
    import tlc

    lake = tlc.Lake(lake_dir)
    table = lake.table("bench.log")
    data = new_rows(table.schema, n_files, rows, n_new)
    out = {}

    def run():
        out["kept"] = tlc.filter_new_keys(table, data, KEYS)[0].num_rows

    cold = timed(run, 1)
    warm = timed(run, repeat)
    print(json.dumps({"cold": cold, "warm": warm, "kept": out["kept"]}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="100,300,1000")
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--new", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]), args.rows, args.new, args.repeat)
    common.release_library()
    import duckdb

    print("milliseconds, wall (cpu of all threads); ratio = DuckDB / ours")
    print(f"{'files':>6} {'rows':>10}  {'ours cold':>16} {'ours warm':>16} {'DuckDB anti-join':>18}"
          f"  {'ratio cold':>10} {'warm':>6} {'warm cpu':>8}")
    for n_files in [int(x) for x in args.files.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            lake_dir = f"{tmp}/lake"
            _, _, schema = build(lake_dir, n_files, args.rows)
            data = new_rows(schema, n_files, args.rows, args.new)
            proc = subprocess.run([sys.executable, __file__, "--child", lake_dir, str(n_files), "--rows",
                                   str(args.rows), "--new", str(args.new), "--repeat", str(args.repeat)],
                                  capture_output=True, text=True, env=dict(os.environ))
            if proc.returncode != 0:
                raise SystemExit(proc.stderr)
            ours = json.loads(proc.stdout.strip().splitlines()[-1])
            files = live_files(lake_dir)
            con = duckdb.connect()
            con.register("new_rows", data)
            sql = (f"SELECT n.* FROM new_rows n ANTI JOIN read_parquet({files!r}) t "
                   f"ON n.seq IS NOT DISTINCT FROM t.seq AND n.host IS NOT DISTINCT FROM t.host")
            out = {}

            def duck():
                out["kept"] = con.sql(sql).arrow().read_all().num_rows

            t_duck = timed(duck, args.repeat)
            assert out["kept"] == ours["kept"] == args.new - args.new // 2, (out, ours)
            cell = lambda t: f"{t[0]:.1f} ({t[1]:.1f})"  # noqa: E731
            print(f"{n_files:>6} {n_files * args.rows:>10}  {cell(ours['cold']):>16} {cell(ours['warm']):>16} "
                  f"{cell(t_duck):>18}  {t_duck[0] / ours['cold'][0]:>10.1f} {t_duck[0] / ours['warm'][0]:>6.1f} "
                  f"{t_duck[1] / ours['warm'][1]:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
