"""What the `karet serve` tests share: a server the test starts and stops (real
process, real HTTP), a small HTTP client, the seed's pipeline and its files."""

import io
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "worker-token-for-tests"
SECRET = "webhook-secret-for-tests"
SLUG = "web"
PREFIX = f"pipelines/{SLUG}/events/"


def karet_bin():
    build = Path(os.environ.get("TL_BUILD", ROOT / "build-asan"))
    return str(build / "karet")


def pipeline_config(prefix=PREFIX, dedup=("user", "time")):
    """The seed's shape: CSV files of events under a source prefix, mapped into
    one table whose dedup keys identify a row."""
    cols = [{"name": "time", "type": "string"}, {"name": "user", "type": "string"},
            {"name": "value", "type": "float64"}]
    return {
        "version": 1,
        "source_containers": [{"id": "events_src", "name": "Events", "path_prefix": prefix, "format": "csv",
                               "schema": cols}],
        "dimensions": [],
        "mappings": [{"id": "events_map", "name": "Events", "source_container_id": "events_src",
                      "analytic_table_id": "events",
                      "columns": [{"name": c["name"], "expr": {"kind": "col", "name": c["name"]}} for c in cols]}],
        "analytic_tables": [{"id": "events", "name": "Events", "schema": cols, "partition_keys": [],
                             "dedup_keys": list(dedup)}],
    }


def csv_rows(start, n, user="u"):
    """n rows (distinct by user and time) starting at second `start`."""
    lines = ["time,user,value"]
    lines += [f"2026-11-12T03:{(start + i) // 60 % 60:02d}:{(start + i) % 60:02d},{user}{(start + i) % 7},{i}.5"
              for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body) if self.body else None


class Client:
    """HTTP with a bearer token or a session cookie (and its Origin)."""

    def __init__(self, base, token=None, cookie=None, origin=True):
        self.base, self.token, self.cookie, self.origin = base, token, cookie, origin

    def request(self, method, path, body=None, headers=None, raw=None, timeout=60):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        h = dict(headers or {})
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        if self.cookie:
            h["Cookie"] = f"karet_session={self.cookie}"
            if self.origin:
                h["Origin"] = self.base
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return Response(r.status, r.headers, r.read())
        except urllib.error.HTTPError as e:
            return Response(e.code, e.headers, e.read())

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)


class Server:
    """One `karet serve` process on a free port of 127.0.0.1."""

    def __init__(self, data_dir, lake, options=None, env=None, workers=2, extra=(), listen="127.0.0.1:0"):
        self.data_dir, self.lake, self.options = str(data_dir), str(lake), dict(options or {})
        self.listen = listen
        self.env = {**os.environ, "KARET_WORKER_TOKEN": TOKEN, "KARET_WEBHOOK_SECRET": SECRET, **(env or {})}
        self.workers, self.extra = workers, list(extra)
        self.proc, self.lines, self.port = None, [], None

    def start(self, timeout=60):
        cmd = [karet_bin(), "serve", "--data-dir", self.data_dir, "--lake", self.lake,
               "--listen", self.listen, "--workers", str(self.workers), *self.extra]
        for k, v in self.options.items():
            cmd += ["--storage-option", f"{k}={v}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, text=True)
        self.banner = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.banner), daemon=True).start()
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in list(self.lines):
                if line.get("event") == "listening":
                    self.port = line["port"]
                    self.base = f"http://127.0.0.1:{self.port}"
                    return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"karet serve exited {self.proc.returncode}: {''.join(map(str, self.banner))}")
            time.sleep(0.05)
        raise RuntimeError("karet serve did not start listening")

    @staticmethod
    def _pump(stream, sink):
        for line in stream:
            if sink is not None:
                try:
                    sink.append(json.loads(line) if line.startswith("{") else line)
                except ValueError:
                    sink.append(line)

    def client(self, **kw):
        return Client(self.base, **kw)

    def worker(self):
        return Client(self.base, token=TOKEN)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=timeout)
        return self.proc.returncode if self.proc else None

    def kill(self):
        return self.stop(signal.SIGKILL)

    def job_events(self):
        return [line for line in self.lines if isinstance(line, dict) and line.get("event") == "job"]


def make_pipeline(client, slug=SLUG, config=None):
    r = client.post("/api/pipelines", {"name": slug.title(), "slug": slug, "config": config or pipeline_config()})
    assert r.status == 200, r.body
    return r.json()


def jobs(client, slug=SLUG):
    r = client.get(f"/api/p/{slug}/jobs?pageSize=100")
    assert r.status == 200, r.body
    return r.json()["jobs"]


def wait_jobs(client, pred, slug=SLUG, timeout=90):
    """Polls the jobs list until pred(jobs) holds; returns the jobs."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        js = jobs(client, slug)
        if pred(js):
            return js
        time.sleep(0.2)
    raise AssertionError(f"jobs never reached the state: {json.dumps(jobs(client, slug), indent=1)}")


def finished(js, n):
    done = [j for j in js if j["status"] in ("completed", "failed", "cancelled", "abandoned")]
    return len(js) >= n and len(done) == len(js)


def table(client, slug=SLUG, tid="events"):
    r = client.get(f"/api/p/{slug}/tables")
    assert r.status == 200, r.body
    return next(t for t in r.json()["tables"] if t["id"] == tid)


def s3_event(bucket, key):
    return {"Records": [{"eventName": "s3:ObjectCreated:Put",
                         "s3": {"bucket": {"name": bucket}, "object": {"key": key}}}]}


def post_event(client, body):
    return client.post("/events/s3", body, headers={"X-Karet-Webhook-Secret": SECRET})


def iso_ms(s):
    from datetime import datetime

    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
