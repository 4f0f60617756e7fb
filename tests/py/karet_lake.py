"""Lakes for the Karet tests: a local folder or a prefix of moto's S3, with
what the tests do to them (upload, replace, delete files), running `karet
run` against them, and reading the output tables back independently of our
library (pyiceberg, from the newest metadata file)."""

import json
import os
import subprocess
import uuid
from pathlib import Path

from pyiceberg.table import StaticTable

BUILD = Path(os.environ.get("TL_BUILD", Path(__file__).resolve().parents[2] / "build-asan"))
KARET = BUILD / "karet"


def clean_env(extra=None):
    """karet runs without the sanitizer preload of the test process (it is
    linked with the sanitizers itself)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",)}
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "detect_leaks=0")
    env.update(extra or {})
    return env


class LocalLake:
    def __init__(self, root):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.url = str(self.root)
        self.options = {}

    def put(self, key, data):
        path = self.root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp-" + uuid.uuid4().hex[:6])
        tmp.write_bytes(data)
        os.replace(tmp, path)  # readers never see half a file

    def delete(self, key):
        (self.root / key).unlink(missing_ok=True)

    def keys(self, prefix=""):
        base = self.root / prefix
        if not base.exists():
            return []
        return sorted(str(p.relative_to(self.root)) for p in base.rglob("*") if p.is_file())

    def metadata_files(self, slug, table):
        folder = self.root / "warehouse" / slug / table / "metadata"
        return sorted((str(p) for p in folder.glob("v*.metadata.json")), key=version_of)

    def iceberg_properties(self):
        return {}


class S3Lake:
    def __init__(self, backend, prefix=None):
        import boto3

        self.backend = backend
        self.prefix = prefix or uuid.uuid4().hex[:10]
        self.url = f"s3://{backend.bucket}/{self.prefix}"
        self.options = dict(backend.options)
        self.client = boto3.client("s3", endpoint_url=backend.endpoint, aws_access_key_id="testing",
                                   aws_secret_access_key="testing", region_name="us-east-1")

    def put(self, key, data):
        self.client.put_object(Bucket=self.backend.bucket, Key=f"{self.prefix}/{key}", Body=data)

    def delete(self, key):
        self.client.delete_object(Bucket=self.backend.bucket, Key=f"{self.prefix}/{key}")

    def keys(self, prefix=""):
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.backend.bucket, Prefix=f"{self.prefix}/{prefix}")
        n = len(self.prefix) + 1
        return sorted(o["Key"][n:] for page in pages for o in page.get("Contents", []))

    def metadata_files(self, slug, table):
        keys = [k for k in self.keys(f"warehouse/{slug}/{table}/metadata/") if k.endswith(".metadata.json")]
        return sorted((f"s3://{self.backend.bucket}/{self.prefix}/{k}" for k in keys), key=version_of)

    def iceberg_properties(self):
        return {"s3.endpoint": self.backend.endpoint, "s3.access-key-id": "testing",
                "s3.secret-access-key": "testing", "s3.region": "us-east-1"}


def version_of(path):
    return int(path.rsplit("/v", 1)[1].split(".")[0])


def karet_run_args(lake, slug, config, tmp_path, full=False, job_id=None):
    """The command line of `karet run --json` for this pipeline config (written
    to a file under tmp_path)."""
    path = Path(tmp_path) / f"pipeline-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(config))
    args = [str(KARET), "run", "--lake", lake.url, "--slug", slug, "--pipeline", str(path), "--json"]
    for k, v in lake.options.items():
        args += ["--storage-option", f"{k}={v}"]
    if full:
        args.append("--full")
    if job_id:
        args += ["--job-id", job_id]
    return args


def run_karet(lake, slug, config, tmp_path, full=False, job_id=None, timeout=600, check=True):
    """Runs `karet run --json`; returns (exit code, summary)."""
    args = karet_run_args(lake, slug, config, tmp_path, full, job_id)
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=clean_env())
    summary = json.loads(proc.stdout) if proc.stdout.strip() else None
    if check and proc.returncode != 0:
        raise AssertionError(f"karet run exited {proc.returncode}: {proc.stderr}\n{proc.stdout[:3000]}")
    return proc.returncode, summary


def read_table(lake, slug, table):
    """The rows of an output table as pyiceberg reads them (list of dicts),
    or None when the table does not exist."""
    files = lake.metadata_files(slug, table)
    if not files:
        return None
    t = StaticTable.from_metadata(files[-1], properties=lake.iceberg_properties())
    return t.scan().to_arrow().to_pylist()
