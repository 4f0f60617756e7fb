"""Notification ingest: the native server (`timelake serve-notifications`)
against the seed's notify.py on the reference package, side by side in one run,
both fed from the same landing bucket on moto's S3 server.

usage: .venv/bin/python bench/notify/bench_notify.py [--files 200] [--mb 1] [--senders 4]
Prints, for 1 MB CSV files: notifications/s with one sender (each request one
file, answered once it is committed), p50/p99 time to commit, and notifications/s
with several concurrent senders; the ratio is ours over the reference's
(above 1 means we are faster), and each server's CPU time (all its threads,
the work it does after replying included). TL_BUILD=DIR uses one's own optimised build instead
of building build/; TL_BUILD_BASELINE=DIR runs an older build alongside ("before").
"""

import argparse
import concurrent.futures
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402

import notify_support as ns  # noqa: E402  (tests/py, on the path through common)
import store_servers  # noqa: E402

TOKEN = "bench-token"
START_US = 1_767_225_600_000_000
COLUMNS = "time:timestamptz,host:string,region:string,m0:float64,m1:float64,m2:float64,m3:float64,m4:float64"


def csv_file(i, mb):
    """A CSV file of about `mb` MB of metrics rows, distinct for each i."""
    import pyarrow.csv as pacsv

    rows = int(mb * 9_000)
    buf = io.BytesIO()
    pacsv.write_csv(common.metrics_table(rows, START_US + i * rows * 10_000, seed=i), buf)
    return buf.getvalue()


def upload(s3, n, mb):
    for phase in ("seq", "conc"):
        for i in range(n):
            s3.put_object(Bucket="landing", Key=f"{phase}/{i:05d}.csv", Body=csv_file(i + (n if phase == "conc" else 0), mb))


def create_table(cli, lake_dir, reference):
    args = ["create", "bench.notify", "--lake", str(lake_dir), "--schema", COLUMNS, "--time-column", "time",
            "--series-key", "host,region"]
    if not reference:
        subprocess.run([str(cli), *args], check=True, capture_output=True)
        return
    code = (
        "import sys, pyarrow as pa, timelake\n"
        "s = pa.schema([('time', pa.timestamp('us', tz='UTC')), ('host', pa.string()), ('region', pa.string())]"
        " + [(f'm{i}', pa.float64()) for i in range(5)])\n"
        "timelake.Lake(sys.argv[1]).create_table('bench.notify', s, time_column='time', series_key=['host', 'region'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TL_LIB")}
    subprocess.run([str(common.REF_PYTHON), "-c", code, str(lake_dir)], check=True, env=env)


def start(cmd, env, port, log):
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    store_servers.wait_for(f"http://127.0.0.1:{port}/health", proc)
    return proc


def send(url, key):
    t0 = time.perf_counter()
    status = ns.post(url, {"events": [{"eventName": "OBJECT_CREATED_PUT", "bucket": "landing",
                                       "object": {"key": key, "size": 1, "etag": '"x"'}}]}, TOKEN)
    if status != 200:
        raise SystemExit(f"{url}: {key} answered {status}")
    return (time.perf_counter() - t0) * 1000


def cpu_s(proc):
    """CPU time of a process, all its threads (utime + stime)."""
    fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def until_quiet(proc):
    """Waits until a server has done the work it left after answering (our
    maintainer runs after the reply), so that it never lands in the other
    server's turn; returns when its CPU time last rose."""
    last, last_t, t = cpu_s(proc), time.perf_counter(), time.perf_counter()
    while time.perf_counter() - last_t < 0.05 and time.perf_counter() - t < 30:
        time.sleep(0.005)
        now = cpu_s(proc)
        if now != last:
            last, last_t = now, time.perf_counter()
    return last_t


def phases(servers, n, senders):
    """Both servers take turns, file by file (then chunk by chunk with several
    senders), so that load from elsewhere on the machine hits both alike; who
    goes first alternates. A turn ends once its server is quiet, so work a
    server defers past its replies (our maintainer's) never lands in the other's
    turn: it counts in the server's CPU time, and in the concurrent phase's
    wall time too. Latency is to the reply, as a sender sees it."""
    names = list(servers)
    for url, proc in servers.values():
        until_quiet(proc)
    lat = {name: [] for name in names}
    conc_s = {name: 0.0 for name in names}
    cpu = {name: [0.0, 0.0] for name in names}
    for i in range(n):
        for name in names if i % 2 == 0 else names[::-1]:
            url, proc = servers[name]
            c0 = cpu_s(proc)
            lat[name].append(send(url, f"seq/{i:05d}.csv"))
            until_quiet(proc)
            cpu[name][0] += cpu_s(proc) - c0
    for k, lo in enumerate(range(0, n, 2 * senders)):
        chunk = range(lo, min(n, lo + 2 * senders))
        for name in names if k % 2 == 0 else names[::-1]:
            url, proc = servers[name]
            c0, t0 = cpu_s(proc), time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(senders) as pool:
                list(pool.map(lambda i: send(url, f"conc/{i:05d}.csv"), chunk))
            replied = time.perf_counter()
            conc_s[name] += max(until_quiet(proc), replied) - t0
            cpu[name][1] += cpu_s(proc) - c0
    out = {}
    for name in names:
        ms = sorted(lat[name])
        out[name] = {"rate": n / (sum(ms) / 1000), "p50": statistics.median(ms),
                     "p99": ms[min(n - 1, int(n * 0.99))], "rate_conc": n / conc_s[name],
                     "cpu": cpu[name][0], "cpu_conc": cpu[name][1]}
    return out


def breakdown(log):
    """Where our server's time goes, per phase: it logs each load."""
    loads = [json.loads(line) for line in open(log) if '"event":"load"' in line]
    passes = [json.loads(line) for line in open(log) if '"event":"maintained"' in line]
    print(f"ours: {len(passes)} maintenance passes after commits (off the requests' path), "
          f"{sum(p['ms'] for p in passes):.0f} ms in all")
    # A pass belongs to the phase whose commits it follows: the one-sender
    # phase ends with its last load's version.
    seq_end = max((l["version"] for l in loads if l["key"].startswith("seq/")), default=0)
    for phase in ("seq", "conc"):
        mine_passes = [p for p in passes if (p["version"] <= seq_end) == (phase == "seq")]
        print(f"ours, {phase}: {len(mine_passes)} maintenance passes, {sum(p['ms'] for p in mine_passes):.0f} ms, "
              f"longest {max((p['ms'] for p in mine_passes), default=0):.0f} ms")
    for phase in ("seq", "conc"):
        mine = [l for l in loads if l["key"].startswith(phase + "/")]
        fetch = statistics.median(l["fetch_ms"] for l in mine)
        append = statistics.median(l["ms"] - l["fetch_ms"] for l in mine)
        commit = statistics.median(l.get("commit_ms", 0) for l in mine)
        group = statistics.mean(l.get("group", 1) for l in mine)
        print(f"ours, {phase}: median {fetch:.1f} ms fetching, {append:.1f} ms appending "
              f"(parsing and lock waits included; {commit:.1f} ms encoding and committing "
              f"a commit of {group:.1f} requests on average)")


def main():
    ap = argparse.ArgumentParser()
    # At 60 files the four-sender phase lasted under a second and runs differed by 25%.
    ap.add_argument("--files", type=int, default=200, help="files per phase")
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--senders", type=int, default=4)
    args = ap.parse_args()
    if os.environ.get("TL_BUILD"):  # an optimised build of one's own, as for the library
        build = Path(os.environ["TL_BUILD"]).resolve()
    else:
        common.release_library()
        build = common.ROOT / "build"
    cli = build / "timelake"
    work = tempfile.mkdtemp(prefix="tl-bench-notify-")
    moto, backend = store_servers.start_moto(work)
    try:
        import boto3

        s3 = boto3.client("s3", endpoint_url=backend.endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.create_bucket(Bucket="landing")
        upload(s3, args.files, args.mb)
        base = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TL_LIB", "ASAN_OPTIONS")}
        base.update(NOTIFY_TOKEN=TOKEN, TIMELAKE_TABLE="bench.notify", AWS_ENDPOINT_URL_S3=backend.endpoint,
                    AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
        servers, procs, logs = {}, [], []
        try:
            # TL_BUILD_BASELINE: an older build of ours, run alongside as "before".
            baseline = os.environ.get("TL_BUILD_BASELINE")
            for name in ("ours", "reference") + (("before",) if baseline else ()):
                lake_dir = Path(work) / f"lake-{name}"
                create_table(cli, lake_dir, name == "reference")
                port = store_servers.free_port()
                env = dict(base, TIMELAKE_WAREHOUSE=str(lake_dir), PORT=str(port))
                if name in ("ours", "before"):
                    exe = cli if name == "ours" else Path(baseline).resolve() / "timelake"
                    cmd = [str(exe), "serve-notifications"]
                else:
                    cmd = [str(common.REF_PYTHON), str(ns.seed_notify_script(Path(work) / "notify.py"))]
                logs.append(open(Path(work) / f"{name}.log", "w"))
                procs.append(start(cmd, env, port, logs[-1]))
                servers[name] = (f"http://127.0.0.1:{port}/", procs[-1])
            results = phases(servers, args.files, args.senders)
        finally:
            for proc in procs:
                store_servers.stop(proc)
            for log in logs:
                log.close()
        breakdown(Path(work) / "ours.log")
        o, r = results["ours"], results["reference"]
        print(f"{args.files} files of {args.mb:g} MB CSV per phase")
        print(f"{'':24} {'ours':>10} {'reference':>10} {'ratio':>7}")
        print(f"{'notifications/s (1)':24} {o['rate']:>10.2f} {r['rate']:>10.2f} {o['rate'] / r['rate']:>6.2f}x")
        print(f"{'p50 ms to commit':24} {o['p50']:>10.1f} {r['p50']:>10.1f} {r['p50'] / o['p50']:>6.2f}x")
        print(f"{'p99 ms to commit':24} {o['p99']:>10.1f} {r['p99']:>10.1f} {r['p99'] / o['p99']:>6.2f}x")
        label = f"notifications/s ({args.senders})"
        print(f"{label:24} {o['rate_conc']:>10.2f} {r['rate_conc']:>10.2f} {o['rate_conc'] / r['rate_conc']:>6.2f}x")
        print(f"{'server CPU s (1)':24} {o['cpu']:>10.2f} {r['cpu']:>10.2f} {r['cpu'] / o['cpu']:>6.2f}x")
        print(f"{f'server CPU s ({args.senders})':24} {o['cpu_conc']:>10.2f} {r['cpu_conc']:>10.2f} "
              f"{r['cpu_conc'] / o['cpu_conc']:>6.2f}x")
        if "before" in results:
            b = results["before"]
            print(f"before (TL_BUILD_BASELINE), against the same reference run:")
            print(f"{'notifications/s (1)':24} {b['rate']:>10.2f} {r['rate']:>10.2f} {b['rate'] / r['rate']:>6.2f}x")
            print(f"{'p50 ms to commit':24} {b['p50']:>10.1f} {r['p50']:>10.1f} {r['p50'] / b['p50']:>6.2f}x")
            print(f"{'p99 ms to commit':24} {b['p99']:>10.1f} {r['p99']:>10.1f} {r['p99'] / b['p99']:>6.2f}x")
            print(f"{label:24} {b['rate_conc']:>10.2f} {r['rate_conc']:>10.2f} {b['rate_conc'] / r['rate_conc']:>6.2f}x")
            print(f"{'server CPU s (1)':24} {b['cpu']:>10.2f} {r['cpu']:>10.2f} {r['cpu'] / b['cpu']:>6.2f}x")
            print(f"{f'server CPU s ({args.senders})':24} {b['cpu_conc']:>10.2f} {r['cpu_conc']:>10.2f} "
                  f"{r['cpu_conc'] / b['cpu_conc']:>6.2f}x")
    finally:
        store_servers.stop(moto)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
