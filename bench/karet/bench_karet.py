"""Karet run benchmark (issue 15).

1. Incremental runs stay cheap as a source grows: with N files x 10,000 rows
   already read (N = 100, 300, 1,000), one new file arrives. Time and bytes
   read by the incremental run, against the same file run into an empty table
   and against a full run over all N+1 files (what the published Karet does on
   every run). Goal: incremental <= 3x the empty-table run, flat in N.
2. Full-run throughput (rows/s, MB/s of input) for CSV and NDJSON, against
   DuckDB (Python) doing the same mapping with read_csv / read_json into
   Parquet, side by side in one run.
3. A new file that sorts before the N files read (karet ship's uploads
   beside files of other names), of keys new to the table: the incremental
   run, which looks its keys up first, against the same file named to sort
   last and against the full run such a file made before session 35.

Bytes read are the karet process's read syscalls (/proc/<pid>/io rchar): the
source files, the table's metadata and whatever data files the dedup check
opens. Runs the optimised build (build/karet).

    .venv/bin/python bench/karet/bench_karet.py [--sizes 100,300,1000] [--rows 10000]
        [--sections incremental,sorting-first,throughput]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from common import release_library  # noqa: E402

KARET = ROOT / "build" / "karet"
PREFIX = "pipelines/bench/events/"

CONFIG = {
    "version": 1,
    "source_containers": [{
        "id": "events", "name": "Events", "path_prefix": PREFIX, "format": "csv",
        "schema": [{"name": "id", "type": "string"}, {"name": "ts", "type": "int64"},
                   {"name": "method", "type": "string"}, {"name": "path", "type": "string"},
                   {"name": "status", "type": "int64"}, {"name": "bytes", "type": "int64"}]}],
    "dimensions": [],
    "mappings": [{
        "id": "m", "name": "Requests", "source_container_id": "events", "analytic_table_id": "requests",
        "columns": [
            {"name": "id", "expr": {"kind": "col", "name": "id"}},
            {"name": "day", "expr": {"kind": "from_unix", "input": {"kind": "col", "name": "ts"}}},
            {"name": "method", "expr": {"kind": "upper", "input": {"kind": "col", "name": "method"}}},
            {"name": "path", "expr": {"kind": "col", "name": "path"}},
            {"name": "status", "expr": {"kind": "col", "name": "status"}},
            {"name": "kb", "expr": {"kind": "div", "left": {"kind": "col", "name": "bytes"},
                                    "right": {"kind": "num", "value": 1024}}},
            {"name": "is_error", "expr": {"kind": "ge", "left": {"kind": "col", "name": "status"},
                                          "right": {"kind": "num", "value": 500}}}],
        "where": {"kind": "ne", "left": {"kind": "col", "name": "method"}, "right": {"kind": "str", "value": "OPTIONS"}}}],
    "analytic_tables": [{
        "id": "requests", "name": "Requests",
        "schema": [{"name": "id", "type": "string"}, {"name": "day", "type": "date"},
                   {"name": "method", "type": "string"}, {"name": "path", "type": "string"},
                   {"name": "status", "type": "int64"}, {"name": "kb", "type": "float64"},
                   {"name": "is_error", "type": "bool"}],
        "partition_keys": ["month(day)"], "dedup_keys": ["id"]}],
}

DUCKDB_MAPPING = """
SELECT id, CAST(to_timestamp(ts) AS DATE) AS day, upper(method) AS method, path, status,
       bytes / 1024.0 AS kb, status >= 500 AS is_error
FROM {source} WHERE upper(method) <> 'OPTIONS'
"""


def make_file(path, n, start, fmt):
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    rng = np.random.default_rng(start)
    t = pa.table({
        "id": pa.array([f"r{start + i}" for i in range(n)]),
        "ts": pa.array(1_700_000_000 + (start + np.arange(n)) * 3, pa.int64()),
        "method": pa.array(np.array(["GET", "POST", "get", "OPTIONS"])[rng.integers(0, 4, n)]),
        "path": pa.array(np.array(["/", "/api/orders", "/static/app.js", "/about"])[rng.integers(0, 4, n)]),
        "status": pa.array(np.array([200, 301, 404, 500])[rng.integers(0, 4, n)], pa.int64()),
        "bytes": pa.array(rng.integers(0, 100_000, n), pa.int64()),
    })
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        pacsv.write_csv(t, path)
    else:
        with open(path, "w") as f:
            for row in t.to_pylist():
                f.write(json.dumps(row) + "\n")


def run(lake, config, full=False):
    """Runs karet; returns (seconds, bytes read, summary)."""
    cfg = Path(lake) / "pipeline.json"
    cfg.write_text(json.dumps(config))
    args = [str(KARET), "run", "--lake", str(lake), "--slug", "bench", "--pipeline", str(cfg), "--json"]
    if full:
        args.append("--full")
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), None
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: /proc/pid/io stays
    seconds = time.perf_counter() - t0
    io = dict(line.split(": ") for line in Path(f"/proc/{proc.pid}/io").read_text().splitlines())
    proc.wait()
    err = proc.stderr.read()
    if proc.returncode != 0:
        raise SystemExit(f"karet run failed: {err.decode()}")
    return seconds, int(io["rchar"]), json.loads(out)


def incremental(sizes, rows, work):
    print(f"incremental run of 1 new file ({rows} rows) vs empty table vs full run (CSV)")
    print(f"{'files':>6} {'incremental':>12} {'empty table':>12} {'full run':>10} {'incr/empty':>10} "
          f"{'incr MB read':>12} {'empty MB':>9} {'full MB':>8}")
    pool = work / "files"
    for i in range(max(sizes) + 1):
        make_file(pool / f"f{i:06d}.csv", rows, i * rows, "csv")
    results = []
    for n in sizes:
        lake = work / f"lake-{n}"
        for i in range(n):
            dst = lake / PREFIX / f"f{i:06d}.csv"
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.link(pool / f"f{i:06d}.csv", dst)
        run(lake, CONFIG)  # the N files already read
        os.link(pool / f"f{n:06d}.csv", lake / PREFIX / f"f{n:06d}.csv")  # one new file
        t_inc, b_inc, s = run(lake, CONFIG)
        assert s["run_kind"] == "incremental" and s["files_processed"] == 1, s
        empty = work / f"empty-{n}"
        (empty / PREFIX).mkdir(parents=True)
        os.link(pool / f"f{n:06d}.csv", empty / PREFIX / f"f{n:06d}.csv")
        t_empty, b_empty, _ = run(empty, CONFIG)
        t_full, b_full, s = run(lake, CONFIG, full=True)
        assert s["files_processed"] == n + 1, s
        results.append({"files": n, "incremental_s": t_inc, "empty_s": t_empty, "full_s": t_full,
                        "incremental_bytes": b_inc, "empty_bytes": b_empty, "full_bytes": b_full})
        print(f"{n:>6} {t_inc:>11.2f}s {t_empty:>11.2f}s {t_full:>9.2f}s {t_inc / t_empty:>10.2f} "
              f"{b_inc / 1e6:>12.2f} {b_empty / 1e6:>9.2f} {b_full / 1e6:>8.1f}")
        shutil.rmtree(lake)
        shutil.rmtree(empty)
    return results


def lake_of(work, name, pool, n):
    """A lake whose table has read the pool's first n files."""
    lake = work / name
    for i in range(n):
        dst = lake / PREFIX / f"f{i:06d}.csv"
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.link(pool / f"f{i:06d}.csv", dst)
    run(lake, CONFIG)
    return lake


def sorting_first(sizes, rows, work):
    print(f"\na new file ({rows} rows, new keys) sorting before the N files read vs sorting last "
          "vs the full run it made before (CSV)")
    print(f"{'files':>6} {'sorts first':>12} {'sorts last':>11} {'full run':>10} {'first/last':>10} "
          f"{'full/first':>10} {'first MB':>9} {'last MB':>8}")
    pool = work / "files"
    for i in range(max(sizes) + 1):
        if not (pool / f"f{i:06d}.csv").exists():
            make_file(pool / f"f{i:06d}.csv", rows, i * rows, "csv")
    results = []
    for n in sizes:
        first, last = lake_of(work, f"first-{n}", pool, n), lake_of(work, f"last-{n}", pool, n)
        os.link(pool / f"f{n:06d}.csv", first / PREFIX / "e000000.csv")
        os.link(pool / f"f{n:06d}.csv", last / PREFIX / f"f{n:06d}.csv")
        t_first, b_first, s = run(first, CONFIG)
        assert s["run_kind"] == "incremental" and s["files_processed"] == 1, s
        t_last, b_last, s = run(last, CONFIG)
        assert s["run_kind"] == "incremental" and s["files_processed"] == 1, s
        t_full, _, s = run(first, CONFIG, full=True)
        assert s["files_processed"] == n + 1, s
        results.append({"files": n, "sorts_first_s": t_first, "sorts_last_s": t_last, "full_s": t_full,
                        "sorts_first_bytes": b_first, "sorts_last_bytes": b_last})
        print(f"{n:>6} {t_first:>11.2f}s {t_last:>10.2f}s {t_full:>9.2f}s {t_first / t_last:>10.2f} "
              f"{t_full / t_first:>10.1f} {b_first / 1e6:>9.2f} {b_last / 1e6:>8.2f}")
        shutil.rmtree(first)
        shutil.rmtree(last)
    return results


def throughput(rows, files, work):
    import duckdb
    print(f"\nfull-run throughput: {files} files x {rows} rows, karet vs DuckDB (Python) to Parquet")
    print(f"{'format':>7} {'karet rows/s':>13} {'MB/s':>7} {'duckdb rows/s':>14} {'MB/s':>7} {'ratio':>6}")
    out = []
    for fmt in ("csv", "ndjson"):
        lake = work / f"tp-{fmt}"
        config = json.loads(json.dumps(CONFIG))
        config["source_containers"][0]["format"] = fmt
        config["analytic_tables"][0].pop("dedup_keys")  # the same work as the DuckDB query
        for i in range(files):
            make_file(lake / PREFIX / f"f{i:06d}.{fmt}", rows, i * rows, fmt)
        size = sum(p.stat().st_size for p in (lake / PREFIX).iterdir())
        t_k, _, s = run(lake, config)
        written = s["rows_written"]
        con = duckdb.connect()
        glob = str(lake / PREFIX / f"*.{fmt}")
        source = f"read_csv('{glob}')" if fmt == "csv" else f"read_json('{glob}', format='newline_delimited')"
        t0 = time.perf_counter()
        con.execute(f"COPY ({DUCKDB_MAPPING.format(source=source)}) TO '{work}/duck-{fmt}' "
                "(FORMAT parquet, PARTITION_BY (day), OVERWRITE)")
        t_d = time.perf_counter() - t0
        n = rows * files
        print(f"{fmt:>7} {n / t_k:>13,.0f} {size / 1e6 / t_k:>7.1f} {n / t_d:>14,.0f} {size / 1e6 / t_d:>7.1f} "
              f"{t_k / t_d:>6.2f}")
        out.append({"format": fmt, "rows": n, "rows_written": written, "bytes": size, "karet_s": t_k,
                    "duckdb_s": t_d})
        shutil.rmtree(lake)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,300,1000")
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--throughput-files", type=int, default=50)
    ap.add_argument("--sections", default="incremental,sorting-first,throughput")
    ap.add_argument("--skip-build", action="store_true")
    a = ap.parse_args()
    if not a.skip_build:
        release_library()
    sizes = [int(s) for s in a.sizes.split(",")]
    sections = a.sections.split(",")
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-karet-") as d:
        work = Path(d)
        if "incremental" in sections:
            out["incremental"] = incremental(sizes, a.rows, work)
        if "sorting-first" in sections:
            out["sorting_first"] = sorting_first(sizes, a.rows, work)
        if "throughput" in sections:
            out["throughput"] = throughput(a.rows * 4, a.throughput_files, work)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
