"""The Python seed's example (seeds/003), run as written: on a local S3
server (moto) with our package, the way a user would run it."""

import os
import subprocess
import sys
import urllib.request

import pytest

import store_servers
from conftest import ROOT

PKG_DIR = (ROOT / os.environ.get("TL_BUILD", "build-asan") / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")


def seed_example():
    return (ROOT / "tests" / "data" / "seed" / "example.py").read_text()


def run(code, env):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_seed_example_on_s3_as_written(tmp_path):
    proc, backend = store_servers.start_moto(tmp_path)
    try:
        urllib.request.urlopen(urllib.request.Request(f"{backend.endpoint}/my-bucket", method="PUT"))
        env = dict(os.environ, PYTHONPATH=str(PKG_DIR), AWS_ENDPOINT_URL=backend.endpoint, AWS_ALLOW_HTTP="true",
                   AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
        code = seed_example() + "\nprint(hourly.to_pylist())\n"
        out = run(code, env)
        assert "'rows': 1" in out and "'duplicate': False" in out
        assert "'temp': 71.5" in out
        # Run again: the same batch id commits nothing, the hour still averages one reading.
        code = code.replace('t = lake.create_table("iot.readings", schema, time_column="time", series_key=["device_id"], retention="365d")',
                            't = lake.table("iot.readings")')
        out = run(code, env)
        assert "'duplicate': True" in out and "'temp': 71.5" in out
    finally:
        store_servers.stop(proc)
