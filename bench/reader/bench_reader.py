"""Reading pipeline sources into typed Arrow columns: ours (tl_reader, the
optimised library through ctypes) against DuckDB (Python) reading the same
bytes with the same column types, and pyarrow's CSV reader, side by side.

usage: python bench/reader/bench_reader.py [--mb 100] [--repeat 3]
Prints MB/s and rows/s of each (wall time) and the ratio of wall and of
CPU times (theirs / ours: above 1 means we are faster; DuckDB and pyarrow
use every core, ours one, so on a busy machine the CPU ratio is the steadier). Every reader gets the file's bytes in memory (DuckDB
and pyarrow from a file in the page cache). NDJSON lines are nested and
the columns are read at paths, as a pipeline's web-log source does.
"""

import argparse
import io
import statistics
import time
import json
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

CSV_COLS = [("ts", "string"), ("host", "string"), ("status", "int64"), ("bytes", "int64"),
            ("latency", "float64"), ("ok", "bool"), ("day", "date")]
ND_COLS = [("ts", "float64", "ts"), ("host", "string", "request.host"), ("method", "string", "request.method"),
           ("uri", "string", "request.uri"), ("ua", "string", "request.headers.User-Agent[0]"),
           ("status", "int64", "status"), ("size", "int64", "size"), ("duration", "float64", "duration")]
DUCK = {"string": "VARCHAR", "int64": "BIGINT", "float64": "DOUBLE", "bool": "BOOLEAN", "date": "DATE"}


def make_csv(mb):
    rng = random.Random(1)
    out = io.StringIO()
    out.write("ts,host,status,bytes,latency,ok,day,extra\n")
    while out.tell() < mb * 1_000_000:
        for _ in range(1000):
            out.write(f"2026-11-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:00:00Z,"
                      f"host-{rng.randrange(500)}.example,{rng.choice((200, 200, 404, 500))},"
                      f"{rng.randrange(10**7)},{rng.random() * 3:.6f},{rng.choice(('true', 'false'))},"
                      f"2026-11-{rng.randrange(1, 29):02d},\"free, text {rng.randrange(10**6)}\"\n")
    return out.getvalue().encode()


def make_ndjson(mb):
    rng = random.Random(2)
    lines = []
    size = 0
    while size < mb * 1_000_000:
        rec = {"level": "info", "ts": 1788934940 + rng.random() * 1e6, "logger": "http.log.access",
               "request": {"remote_ip": f"10.0.{rng.randrange(256)}.{rng.randrange(256)}", "proto": "HTTP/2.0",
                           "method": rng.choice(["GET", "POST"]), "host": f"site{rng.randrange(50)}.example",
                           "uri": f"/p/{rng.randrange(10**6)}?q={rng.randrange(1000)}",
                           "headers": {"User-Agent": [f"Mozilla/5.0 (X11; Linux) agent/{rng.randrange(100)}"],
                                       "Accept": ["*/*"]}},
               "size": rng.randrange(10**6), "status": rng.choice([200, 200, 304, 404]),
               "duration": rng.random() / 10}
        line = json.dumps(rec, separators=(",", ":"))
        lines.append(line)
        size += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def ours(data, cols, name):
    import tlc

    table, _ = tlc.read(data, cols, name=name)
    return table.num_rows


def duck_csv(path):
    import duckdb

    types = ", ".join(f"'{n}': '{DUCK[t]}'" for n, t in CSV_COLS) + ", 'extra': 'VARCHAR'"
    cols = ", ".join(n for n, _ in CSV_COLS)
    return duckdb.sql(f"SELECT {cols} FROM read_csv('{path}', header=true, columns={{{types}}})").arrow().read_all().num_rows


def duck_ndjson(path):
    import duckdb

    exprs = ", ".join(
        f"CAST(json_extract{'_string' if t == 'string' else ''}(json, '$.{p}') AS {DUCK[t]}) AS {n}"
        for n, t, p in ND_COLS)
    return duckdb.sql(f"SELECT {exprs} FROM read_ndjson_objects('{path}')").arrow().read_all().num_rows


def arrow_csv(path):
    import pyarrow as pa
    import pyarrow.csv as csv

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
             "date": pa.date32()}
    opts = csv.ConvertOptions(column_types={n: types[t] for n, t in CSV_COLS},
                              include_columns=[n for n, _ in CSV_COLS])
    return csv.read_csv(path, convert_options=opts).num_rows


def timed(fn, repeat):
    """Median wall and CPU milliseconds of fn (CPU of every thread of this process)."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - w) * 1000)
        cpus.append((time.process_time() - c) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def report(label, mb, rows, t, base=None):
    wall, cpu = t
    ratio = f"  ratio wall {wall / base[0]:5.2f} cpu {cpu / base[1]:5.2f}" if base else ""
    print(f"  {label:<22} {wall:8.1f} ms (cpu {cpu:7.1f})  {mb / wall * 1000:7.1f} MB/s  "
          f"{rows / wall * 1000 / 1e6:5.2f} M rows/s{ratio}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    common.release_library()
    with tempfile.TemporaryDirectory() as tmp:
        for kind, data, cols in (("CSV", make_csv(args.mb), CSV_COLS), ("NDJSON", make_ndjson(args.mb), ND_COLS)):
            path = os.path.join(tmp, "f.csv" if kind == "CSV" else "f.ndjson")
            Path(path).write_bytes(data)
            mb = len(data) / 1e6
            rows = ours(data, cols, path)
            t_ours = timed(lambda: ours(data, cols, path), args.repeat)
            print(f"{kind}: {mb:.0f} MB, {rows} rows, {len(cols)} typed columns")
            report("ours (tl_reader)", mb, rows, t_ours)
            if kind == "CSV":
                t = timed(lambda: duck_csv(path), args.repeat)
                report("DuckDB read_csv", mb, rows, t, t_ours)
                t = timed(lambda: arrow_csv(path), args.repeat)
                report("pyarrow read_csv", mb, rows, t, t_ours)
            else:
                t = timed(lambda: duck_ndjson(path), args.repeat)
                report("DuckDB json_extract", mb, rows, t, t_ours)


if __name__ == "__main__":
    main()
