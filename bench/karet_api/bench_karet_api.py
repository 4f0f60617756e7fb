"""The Karet service: upload-to-committed-rows latency through the event path,
the service's overhead against `timelake append` of the same file, and the
requests per second of the jobs and tables lists with 10,000 jobs recorded.

usage: .venv/bin/python bench/karet_api/bench_karet_api.py [--files 20] [--mb 1] [--jobs 10000]
       [--clients 8] [--seconds 5] [--quiet-ms 5000] [--lists-only]
Prints, for 1 MB CSV files uploaded to the lake (PUT /api/lake, which schedules
the same debounced run a bucket notification does): p50/p99 from the upload's
answer to the rows being in the table (the debounce's quiet period included,
--quiet-ms), p50 of the run itself, and the ratio of the run to `timelake
append` of the same file into a plain table (above 1: the service costs more).
Then requests/s of GET /api/p/<slug>/jobs and /tables with --clients keep-alive
clients (--lists-only: just these). TL_BUILD=DIR picks the build (default build/, built if missing).
"""

import argparse
import http.client
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402,F401  (puts tests/py on the path)

import karet_service as ks  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def build_dir():
    d = Path(os.environ.get("TL_BUILD", ROOT / "build"))
    if not (d / "karet").exists():
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(d), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
                       check=True, capture_output=True)
        subprocess.run(["cmake", "--build", str(d), "--target", "karet", "timelake_cli"], check=True)
    os.environ["TL_BUILD"] = str(d)
    return d


def csv_file(i, mb):
    rows = int(mb * 1_000_000 / 38)
    lines = ["time,user,value"]
    base = i * rows
    lines += [f"2026-11-{12 + (base + r) // 86400 % 15:02d}T{(base + r) // 3600 % 24:02d}:"
              f"{(base + r) // 60 % 60:02d}:{(base + r) % 60:02d},u{(base + r) % 97},{r}.25" for r in range(rows)]
    return ("\n".join(lines) + "\n").encode(), rows


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(tmp, files, mb, quiet_ms):
    srv = ks.Server(tmp / "data", tmp / "lake", env={"KARET_DEBOUNCE_QUIET_MS": str(quiet_ms)}).start()
    api = srv.worker()
    ks.make_pipeline(api)
    waits, runs, total = [], [], 0
    try:
        for i in range(files):
            body, rows = csv_file(i, mb)
            r = api.request("PUT", f"/api/lake?key={ks.PREFIX}f_{i:05d}.csv", raw=body)
            assert r.status == 200, r.body
            t0 = time.perf_counter()
            total += rows
            while ks.table(api)["rowCount"] < total:
                time.sleep(0.02)
            waits.append(time.perf_counter() - t0)
            js = ks.wait_jobs(api, lambda js: ks.finished(js, i + 1))
            job = js[0]
            assert job["status"] == "completed" and job["files_processed"] == 1, job
            runs.append(ks.iso_ms(job["completedAt"]) - ks.iso_ms(job["startedAt"]))
    finally:
        srv.stop()
    return waits, runs


def append_times(tmp, files, mb):
    cli = Path(os.environ["TL_BUILD"]) / "timelake"
    lake = tmp / "append-lake"
    subprocess.run([str(cli), "create", "bench.events", "--lake", str(lake), "--schema",
                    "time:string,user:string,value:float64"], check=True, capture_output=True)
    out = []
    for i in range(files):
        body, _ = csv_file(i, mb)
        f = tmp / f"a_{i}.csv"
        f.write_bytes(body)
        t0 = time.perf_counter()
        subprocess.run([str(cli), "append", str(f), "--table", "bench.events", "--lake", str(lake)], check=True,
                       capture_output=True)
        out.append(time.perf_counter() - t0)
    return out


def seed_jobs(data_dir, slug, n):
    """n finished jobs written straight into the control plane (the server is stopped)."""
    db = sqlite3.connect(data_dir / "karet.db")
    now = int(time.time() * 1000) - n * 1000
    summary = json.dumps({"files_processed": 1, "rows_read": 100, "rows_written": 100, "rows_deduped": 0,
                          "partitions_written": 1, "run_kind": "incremental", "full_reason": None})
    db.executemany("INSERT INTO jobs (id, pipeline, status, trigger, attempts, config_version, enqueued_at, "
                   "started_at, completed_at, summary) VALUES (?, ?, 'completed', 'webhook', 1, 1, ?, ?, ?, ?)",
                   [(f"job-{now + i * 1000}-bench{i % 10}", slug, now + i * 1000, now + i * 1000 + 10,
                     now + i * 1000 + 500, summary) for i in range(n)])
    db.commit()
    db.close()


def rps(port, path, clients, seconds):
    counts, errors = [0] * clients, []
    stop = time.perf_counter() + seconds

    def run(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.perf_counter() < stop:
            c.request("GET", path, headers={"Authorization": f"Bearer {ks.TOKEN}"})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                errors.append(r.status)
            counts[k] += 1
        c.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
    return sum(counts) / seconds


def lists(tmp, n_jobs, clients, seconds):
    srv = ks.Server(tmp / "data2", tmp / "lake2").start()
    ks.make_pipeline(srv.worker())
    srv.stop()
    seed_jobs(tmp / "data2", ks.SLUG, n_jobs)
    srv = ks.Server(tmp / "data2", tmp / "lake2").start()
    try:
        return {p: rps(srv.port, f"/api/p/{ks.SLUG}/{p}", clients, seconds) for p in ("jobs", "tables")}
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--mb", type=float, default=1)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--quiet-ms", type=int, default=5000)
    ap.add_argument("--lists-only", action="store_true")
    a = ap.parse_args()
    build_dir()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for path, v in lists(tmp, a.jobs, a.clients, a.seconds).items():
            print(f"GET /api/p/<slug>/{path} with {a.jobs} jobs, {a.clients} clients: {v:.0f} requests/s")
        if a.lists_only:
            return
        waits, runs = latency(tmp, a.files, a.mb, a.quiet_ms)
        appends = append_times(tmp, a.files, a.mb)
        print(f"upload -> rows committed ({a.files} files of {a.mb} MB, debounce {a.quiet_ms} ms): "
              f"p50 {statistics.median(waits):.3f} s, p99 {pct(waits, 99):.3f} s")
        print(f"run p50 {statistics.median(runs):.3f} s; timelake append p50 {statistics.median(appends):.3f} s; "
              f"ratio run/append {statistics.median(runs) / statistics.median(appends):.2f}")


if __name__ == "__main__":
    main()
