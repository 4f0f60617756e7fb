"""What the `karet ship` tests and bench/ship share: running karet ship and
the seed's script, writing logs, reading back what reached the lake (a local
folder or an S3 bucket), and the pipeline the log feeds."""

import gzip
import json
import os
import subprocess
from pathlib import Path

from karet_service import PREFIX, ROOT, SLUG, TOKEN, karet_bin

SEED_SCRIPT = Path(__file__).with_name("seed_ship_script.py")
AWSCLI_BIN = ROOT / ".deps" / "awscli" / "bin"


def ndjson_config(prefix=PREFIX, fmt="ndjson", dedup=("user", "time")):
    """An events source (NDJSON or CSV) mapped into one table whose dedup keys
    identify a line, so table rows equal the log's distinct lines."""
    cols = [{"name": "time", "type": "string"}, {"name": "user", "type": "string"},
            {"name": "value", "type": "float64"}]
    return {
        "version": 1,
        "source_containers": [{"id": "events_src", "name": "Events", "path_prefix": prefix, "format": fmt,
                               "schema": cols}],
        "dimensions": [],
        "mappings": [{"id": "events_map", "name": "Events", "source_container_id": "events_src",
                      "analytic_table_id": "events",
                      "columns": [{"name": c["name"], "expr": {"kind": "col", "name": c["name"]}} for c in cols]}],
        "analytic_tables": [{"id": "events", "name": "Events", "schema": cols, "partition_keys": [],
                             "dedup_keys": list(dedup)}],
    }


def event(k, user="u"):
    """Line k of a log: unique (user, time)."""
    return json.dumps({"time": f"2026-11-12T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}.{k // 86400:03d}",
                       "user": f"{user}{k % 5}", "value": k + 0.5, "k": k}, separators=(",", ":")) + "\n"


def csv_event(k, user="u"):
    return f"2026-11-12T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}.{k // 86400:03d},{user}{k % 5},{k}.5\n"


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


def lines(ks, fn=event):
    return "".join(fn(k) for k in ks)


class Shipper:
    """karet ship with fixed --log, --to, --state and storage options."""

    def __init__(self, log, to, state, run_url=None, options=None, extra=(), env=None):
        self.log, self.to, self.state, self.run_url = str(log), str(to), str(state), run_url
        self.options, self.extra = dict(options or {}), list(extra)
        self.env = {**os.environ, "KARET_WORKER_TOKEN": TOKEN, **(env or {})}

    def cmd(self, *more):
        c = [karet_bin(), "ship", "--log", self.log, "--to", self.to, "--state", self.state, *self.extra]
        if self.run_url:
            c += ["--run-url", self.run_url]
        for k, v in self.options.items():
            c += ["--storage-option", f"{k}={v}"]
        return c + list(more)

    def __call__(self, *more, env=None, timeout=600):
        p = subprocess.run(self.cmd(*more), capture_output=True, text=True, timeout=timeout,
                           env={**self.env, **(env or {})})
        return p

    def popen(self, *more):
        return subprocess.Popen(self.cmd(*more), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.env)


class LocalDest:
    """Uploads in a folder of a local lake."""

    def __init__(self, lake, prefix=PREFIX):
        self.lake, self.prefix = Path(lake), prefix
        self.to = str(self.lake / prefix)

    def objects(self):
        d = self.lake / self.prefix
        if not d.exists():
            return []
        return [(p.name, p.read_bytes()) for p in sorted(d.iterdir()) if p.is_file()]


class S3Dest:
    """Uploads under a prefix of a bucket of moto's S3 server."""

    def __init__(self, backend, lake_prefix, prefix=PREFIX):
        import boto3

        self.backend, self.lake_prefix, self.prefix = backend, lake_prefix, prefix
        self.to = f"s3://{backend.bucket}/{lake_prefix}/{prefix}"
        self.s3 = boto3.client("s3", endpoint_url=backend.endpoint, aws_access_key_id="testing",
                               aws_secret_access_key="testing", region_name="us-east-1")

    def objects(self):
        out, token = [], None
        while True:
            kw = {"Bucket": self.backend.bucket, "Prefix": f"{self.lake_prefix}/{self.prefix}"}
            if token:
                kw["ContinuationToken"] = token
            r = self.s3.list_objects_v2(**kw)
            for o in r.get("Contents", []):
                name = o["Key"][len(kw["Prefix"]):]
                if "/" not in name:
                    out.append((name, self.s3.get_object(Bucket=self.backend.bucket, Key=o["Key"])["Body"].read()))
            if not r.get("IsTruncated"):
                return sorted(out)
            token = r["NextContinuationToken"]


def data_of(name, body):
    return gzip.decompress(body) if name.endswith(".gz") else body


def shipped_lines(dest, header=None):
    """Every line of every upload, in name order; CSV uploads must each
    start with the header, which is left out."""
    out = []
    for name, body in dest.objects():
        text = data_of(name, body).decode()
        assert text.endswith("\n"), f"{name} ends inside a line"
        ls = text.splitlines(keepends=True)
        if header is not None:
            assert ls and ls[0] == header, f"{name} does not start with the header: {ls[:1]}"
            ls = ls[1:]
        out += ls
    return out


def seed_script(tmp, log, prefix_url, run_url):
    """The seed's example script, with its four settings pointed at the test's
    log, bucket prefix and run URL (and its state in the test's HOME, its
    temporary file in tmp)."""
    text = SEED_SCRIPT.read_text()
    text = text.replace('LOG = "/var/log/app/events.log"', f"LOG = {str(log)!r}")
    text = text.replace('PREFIX = "s3://karet-lake/pipelines/<slug>/events/"', f"PREFIX = {prefix_url!r}")
    text = text.replace('RUN_URL = "https://karet.example/api/p/<slug>/jobs"', f"RUN_URL = {run_url!r}")
    # Its upload's temporary file is named by the second only: in the test's
    # folder, not in a /tmp that other test processes share.
    assert 'tmp = f"/tmp/events_{now}.ndjson"' in text
    text = text.replace('tmp = f"/tmp/events_{now}.ndjson"', f'tmp = {str(Path(tmp) / "events_")!r} + f"{{now}}.ndjson"')
    path = Path(tmp) / "karet-ship-seed.py"
    path.write_text(text)
    return path


def seed_env(home, backend):
    """The environment the seed's cron line gives the script: the token and the
    endpoint for `aws`, with awscli's virtualenv first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    env.update(HOME=str(home), KARET_WORKER_TOKEN=TOKEN, AWS_ENDPOINT_URL=backend.endpoint,
               AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
               PATH=f"{AWSCLI_BIN}:{env.get('PATH', '')}")
    return env


def run_url(server, slug=SLUG):
    return f"{server.base}/api/p/{slug}/jobs"
