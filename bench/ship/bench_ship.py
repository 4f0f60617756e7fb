"""karet ship against the seed's example script (seeds/004, run as written:
`aws s3 cp` from awscli and `curl`), shipping the same NDJSON log to moto's S3
with a run request to a real `karet serve` after each upload.

usage: .venv/bin/python bench/ship/bench_ship.py [--mb 256] [--append-mb 8] [--rounds 3]
Prints, for each: the first call on a backlog of --mb MB (karet ship splits it
into 64 MB files; the script reads it whole into memory and uploads one file),
then --rounds calls each after --append-mb MB were appended (the cron case),
as MB/s and seconds per call, the peak memory of the call, and the ratios
(above 1: karet ship is faster). TL_BUILD=DIR picks the build (default build/,
a Release build made if missing). Both go through the same moto server, whose
own speed caps both: the ratio is a floor of karet ship's advantage.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402,F401  (puts tests/py on the path)

import karet_service as ks  # noqa: E402
import ship_support as ss  # noqa: E402
import store_servers  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def build_dir():
    d = Path(os.environ.get("TL_BUILD", ROOT / "build"))
    if not (d / "karet").exists():
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(d), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
                       check=True, capture_output=True)
        subprocess.run(["cmake", "--build", str(d), "--target", "karet"], check=True)
    os.environ["TL_BUILD"] = str(d)
    return d


def write_log(path, mb, start):
    """mb MB of distinct NDJSON lines from line number start; returns the next."""
    k, size = start, 0
    with open(path, "a") as f:
        while size < mb << 20:
            chunk = ss.lines(range(k, k + 10000))
            f.write(chunk)
            size += len(chunk)
            k += 10000
    return k


def timed(cmd, env):
    """Seconds and peak memory (MB, the largest process of the call) of one call."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {p.stderr.read().decode()[-2000:]}")
    return secs, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--append-mb", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    build_dir()
    if not (ss.AWSCLI_BIN / "aws").exists():
        sys.exit("awscli is missing: scripts/setup.sh --test installs it into .deps/awscli")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        proc, backend = store_servers.start_moto(tmp)
        srv = None
        try:
            prefix = "bench-lake"
            srv = ks.Server(tmp / "data", f"s3://{backend.bucket}/{prefix}", options=backend.options).start()
            calls = {}
            for slug in ("seed", "web"):
                pp = f"pipelines/{slug}/events/"
                ks.make_pipeline(srv.worker(), slug=slug, config=ss.ndjson_config(prefix=pp))
                d = tmp / slug
                d.mkdir()
                log = d / "events.log"
                url = f"{srv.base}/api/p/{slug}/jobs"
                dest = f"s3://{backend.bucket}/{prefix}/{pp}"
                if slug == "seed":
                    (d / "home").mkdir()
                    script = ss.seed_script(d, log, dest, url)
                    calls[slug] = (log, [sys.executable, str(script)], ss.seed_env(d / "home", backend))
                else:
                    shipper = ss.Shipper(log, dest, d / "state.json", run_url=url, options=backend.options)
                    env = {k: v for k, v in shipper.env.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
                    calls[slug] = (log, shipper.cmd("--quiet"), env)
            results = {}
            for slug, (log, cmd, env) in calls.items():
                nxt = write_log(log, args.mb, 0)
                size = log.stat().st_size
                secs, mem = timed(cmd, env)
                rounds = []
                for _ in range(args.rounds):
                    before = log.stat().st_size
                    nxt = write_log(log, args.append_mb, nxt)
                    time.sleep(1.1)  # the script names files by the second
                    s, m = timed(cmd, env)
                    rounds.append((s, m, log.stat().st_size - before))
                results[slug] = (size, secs, mem, rounds)
            print(f"karet ship vs the seed's script, NDJSON log to moto S3 + run request ({args.mb} MB backlog, "
                  f"{args.rounds} x {args.append_mb} MB appended)")
            for slug, name in (("web", "karet ship"), ("seed", "seed script")):
                size, secs, mem, rounds = results[slug]
                per = sum(r[0] for r in rounds) / len(rounds)
                mbs = sum(r[2] for r in rounds) / (1 << 20) / sum(r[0] for r in rounds)
                print(f"  {name:12s} backlog {size / (1 << 20) / secs:7.1f} MB/s ({secs:6.2f} s, peak {mem:7.0f} MB)"
                      f"   appended {mbs:6.1f} MB/s ({per:5.2f} s a call, peak {max(r[1] for r in rounds):6.0f} MB)")
            w, s = results["web"], results["seed"]
            print(f"  ratio (seed time / karet ship time): backlog {s[1] / w[1]:.2f}x, "
                  f"appended {sum(r[0] for r in s[3]) / sum(r[0] for r in w[3]):.2f}x; "
                  f"peak memory {s[2] / w[2]:.1f}x smaller")
        finally:
            if srv:
                srv.stop()
            store_servers.stop(proc)


if __name__ == "__main__":
    main()
