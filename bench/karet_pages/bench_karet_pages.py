"""How fast Karet's pages answer on a real pipeline: the Jobs page with 10,000
jobs recorded (its first page, a page deep in the history, the live region
the page fetches on each change), the Data page of a pipeline with 50 tables
(each written by the timelake CLI, so row counts, files and bytes are read
from real Iceberg metadata), the pipelines page and the editor.

usage: .venv/bin/python bench/karet_pages/bench_karet_pages.py [--jobs 10000] [--tables 50]
       [--repeat 30] [--browser-loads 10] [--no-browser] [--s3 [--latency-ms 40]]
Prints, per page, the server's answer time (p50 and p99 of --repeat sequential
requests on a keep-alive connection, body read) and, in headless Chromium, the
time from navigation to the load event (p50 of --browser-loads loads, scripts
run and the page drawn), against the goal of issue 17: well under a second.
The published Karet's pages (Next.js) cannot run here, so there is no peer
column: the ratio printed is to the one-second budget. TL_BUILD=DIR picks the
build (default build/, a Release build made if missing)."""

import argparse
import http.client
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402,F401  (puts tests/py on the path)

import karet_service as ks  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SLUG = "bench"


def build_dir():
    d = Path(os.environ.get("TL_BUILD", ROOT / "build"))
    if not (d / "karet").exists() or not (d / "timelake").exists():
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(d), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
                       check=True, capture_output=True)
        subprocess.run(["cmake", "--build", str(d), "--target", "karet", "timelake_cli"], check=True)
    os.environ["TL_BUILD"] = str(d)
    return d


def config(n_tables):
    cols = [{"name": "time", "type": "string"}, {"name": "user", "type": "string"},
            {"name": "value", "type": "float64"}]
    src = {"id": "events_src", "name": "Events", "path_prefix": f"pipelines/{SLUG}/events/", "format": "csv",
           "schema": cols}
    tables, maps = [], []
    for i in range(n_tables):
        tables.append({"id": f"t{i:02d}", "name": f"Table {i}", "schema": cols, "partition_keys": [],
                       "dedup_keys": ["time", "user"]})
        maps.append({"id": f"m{i:02d}", "name": f"Mapping {i}", "source_container_id": "events_src",
                     "analytic_table_id": f"t{i:02d}",
                     "columns": [{"name": c["name"], "expr": {"kind": "col", "name": c["name"]}} for c in cols]})
    return {"version": 1, "source_containers": [src], "dimensions": [], "mappings": maps, "analytic_tables": tables}


def write_tables(build, lake, n_tables, tmp, env):
    """Each table as karet would leave it: the warehouse's <slug>.<id>, two appends."""
    cli = str(build / "timelake")
    wh = lake.rstrip("/") + "/warehouse"
    f = tmp / "rows.csv"
    f.write_text("time,user,value\n" + "".join(f"2026-11-12T03:{i // 60 % 60:02d}:{i % 60:02d},u{i % 7},{i}.5\n"
                                                for i in range(2000)))
    for i in range(n_tables):
        name = f"{SLUG}.t{i:02d}"
        subprocess.run([cli, "create", name, "--lake", wh, "--schema", "time:string,user:string,value:float64"],
                       check=True, capture_output=True, env=env)
        for _ in range(2):
            subprocess.run([cli, "append", str(f), "--table", name, "--lake", wh], check=True, capture_output=True,
                           env=env)


def seed_jobs(data_dir, n):
    db = sqlite3.connect(data_dir / "karet.db")
    now = int(time.time() * 1000) - n * 1000
    summary = json.dumps({"files_processed": 1, "rows_read": 2000, "rows_written": 1990, "rows_deduped": 10,
                          "partitions_written": 1, "run_kind": "incremental", "full_reason": None,
                          "errors": [{"file": "pipelines/bench/events/x.csv", "line": 7, "message": "bad value"}]})
    db.executemany("INSERT INTO jobs (id, pipeline, status, trigger, attempts, config_version, enqueued_at, "
                   "started_at, completed_at, summary) VALUES (?, ?, 'completed', 'webhook', 1, 1, ?, ?, ?, ?)",
                   [(f"job-{now + i * 1000}-bench{i % 10}", SLUG, now + i * 1000, now + i * 1000 + 10,
                     now + i * 1000 + 500, summary) for i in range(n)])
    db.commit()
    mid = db.execute("SELECT id FROM jobs ORDER BY enqueued_at DESC LIMIT 1 OFFSET ?", (n // 2,)).fetchone()[0]
    db.close()
    return mid


def server_times(port, path, repeat):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    out, size = [], 0
    for _ in range(repeat + 2):
        t0 = time.perf_counter()
        c.request("GET", path, headers={"Authorization": f"Bearer {ks.TOKEN}", "Accept": "text/html"})
        r = c.getresponse()
        body = r.read()
        out.append(time.perf_counter() - t0)
        if r.status != 200:
            raise SystemExit(f"{path}: {r.status} {body[:200]!r}")
        size = len(body)
    c.close()
    return out[2:], size  # the first two warm the caches


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def browser_times(base, paths, loads, tmp):
    from karet_browser import Browser

    b = Browser(base, tmp)
    api = ks.Client(base, token=ks.TOKEN)
    api.post("/api/users", {"username": "bench", "password": "bench-password", "role": "editor"})
    b.sign_in("bench", "bench-password")
    out = {}
    for name, path in paths:
        xs = []
        for _ in range(loads + 1):
            b.get(path)
            b.wait(lambda: b.js("return performance.getEntriesByType('navigation')[0].loadEventEnd") > 0,
                   what="the load event")
            xs.append(b.js("const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime"))
        out[name] = xs[1:]
    errors = b.js_errors()
    b.quit()
    if errors:
        raise SystemExit(f"console errors: {errors}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--browser-loads", type=int, default=10)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--s3", action="store_true")
    ap.add_argument("--latency-ms", type=float, default=0)
    a = ap.parse_args()
    build = build_dir()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        data, lake, options, env, moto = tmp / "data", str(tmp / "lake"), {}, dict(os.environ), None
        if a.s3:
            from store_servers import start_moto, stop

            moto, backend = start_moto(tmp)
            lake, options = backend.url("karet-bench"), backend.option_list()
            env.update(AWS_ENDPOINT_URL=options["aws_endpoint"], AWS_ACCESS_KEY_ID="testing",
                       AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1", AWS_ALLOW_HTTP="true")
        srv = ks.Server(data, lake, options=options, workers=1).start()
        r = srv.worker().post("/api/pipelines", {"name": "Bench", "slug": SLUG, "config": config(a.tables)})
        assert r.status == 200, r.body
        srv.stop()
        write_tables(build, lake, a.tables, tmp, env)
        mid = seed_jobs(data, a.jobs)
        proxy = None
        if a.s3 and a.latency_ms:
            from fault_proxy import FaultProxy, Faults

            proxy = FaultProxy(options["aws_endpoint"], Faults(delay=1.0, max_delay=a.latency_ms / 1000)).__enter__()
            options = {**options, "aws_endpoint": proxy.endpoint}
        srv = ks.Server(data, lake, options=options, workers=1).start()
        try:
            tables = srv.worker().get(f"/api/p/{SLUG}/tables").json()["tables"]
            rows = sum(t["rowCount"] for t in tables)
            print(f"{a.jobs} jobs recorded; {len(tables)} tables, {rows} rows, "
                  f"{sum(t['fileCount'] for t in tables)} files; lake: {'moto S3' if a.s3 else 'a local folder'}")
            pages = [("Jobs, first page", f"/p/{SLUG}/jobs"),
                     ("Jobs, page at job 5,000", f"/p/{SLUG}/jobs?before={mid}"),
                     ("Jobs, live region", f"/p/{SLUG}/jobs?fragment=1"),
                     (f"Data, {a.tables} tables", f"/p/{SLUG}/data"),
                     ("Pipelines", "/pipelines"),
                     ("Editor", f"/p/{SLUG}/editor")]
            print(f"\n{'page':28} {'server p50':>11} {'p99':>8} {'size':>9} {'p99 / 1 s':>10}")
            for name, path in pages:
                xs, size = server_times(srv.port, path, a.repeat)
                p99 = pct(xs, 99) * 1000
                print(f"{name:28} {statistics.median(xs) * 1000:9.1f} ms {p99:6.1f} ms {size / 1000:7.1f} KB "
                      f"{p99 / 1000:9.3f}")
            if proxy:
                mark = proxy.mark()
                server_times(srv.port, f"/p/{SLUG}/data", 1)  # three loads
                print(f"Data page, one load: {len(proxy.requests_since(mark)) / 3:.0f} requests to the store "
                      f"(each held 0-{a.latency_ms:.0f} ms)")
            if not a.no_browser:
                shots = tmp / "shots"
                shots.mkdir()
                got = browser_times(srv.base, [p for p in pages if "fragment" not in p[1]], a.browser_loads, shots)
                print(f"\n{'page (Chromium)':28} {'to load p50':>12} {'max':>8}")
                for name, xs in got.items():
                    print(f"{name:28} {statistics.median(xs):9.0f} ms {max(xs):6.0f} ms")
        finally:
            srv.stop()
            if proxy:
                proxy.__exit__(None, None, None)
            if moto:
                stop(moto)


if __name__ == "__main__":
    main()
