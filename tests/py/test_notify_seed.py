"""The seed's notify.py, unmodified, on our Python package and boto3, fed by
notifications for files in a landing bucket on moto's S3 server."""

import os
import subprocess
import sys
import time
import urllib.request

import pytest

import notify_support as ns
import store_servers
from conftest import ROOT

PKG_DIR = (ROOT / os.environ.get("TL_BUILD", "build-asan") / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")
N_FILES = 500
TOKEN = "s3cr3t-token"


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    proc, backend = store_servers.start_moto(tmp_path_factory.mktemp("moto"))
    yield backend
    store_servers.stop(proc)


def s3_client(endpoint):
    boto3 = pytest.importorskip("boto3")
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def start_notify(script, lake_dir, endpoint, port, log):
    env = dict(os.environ)
    env.update(
        NOTIFY_TOKEN=TOKEN, TIMELAKE_WAREHOUSE=str(lake_dir), TIMELAKE_TABLE="iot.readings", PORT=str(port),
        AWS_ENDPOINT_URL_S3=endpoint, AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing", PYTHONPATH=str(PKG_DIR),
    )
    # Its prints go to a file: a pipe nobody reads would fill up and block it.
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
        except urllib.error.HTTPError:
            return proc  # it answers (501 for GET): up
        except OSError:
            if proc.poll() is not None:
                raise AssertionError("notify.py exited at start")
            time.sleep(0.2)
    raise AssertionError("notify.py did not start")


def test_seed_notify_loads_every_row_once(moto, tmp_path):
    lake_dir = tmp_path / "lake"
    lake = timelake.Lake(str(lake_dir))
    lake.create_table("iot.readings", ns.SCHEMA, time_column="time", series_key=["device_id"])
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing")
    keys = ns.upload_files(s3, "landing", N_FILES)
    script = ns.seed_notify_script(tmp_path / "notify.py")
    port = store_servers.free_port()
    log = open(tmp_path / "notify.log", "w")
    proc = start_notify(script, lake_dir, moto.endpoint, port, log)
    try:
        url = f"http://127.0.0.1:{port}/"
        assert ns.post(url, {"events": []}, "wrong") == 401
        assert ns.post(url, {"events": []}, None) == 401
        for body in ns.notifications("landing", keys):
            assert ns.post(url, body, TOKEN) == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
    printed = (tmp_path / "notify.log").read_text()
    assert "Traceback" not in printed, printed[-3000:]
    ns.check_rows_once(lake.sql("SELECT file, row FROM iot.readings").to_pylist(), N_FILES)
    # Append commits are keyed by object key, never twice (inline compaction
    # commits carry no batch id; expiry keeps the newest snapshots only).
    ids = [b for b in ns.batch_ids_of(lake_dir, "iot/readings") if b is not None]
    assert ids and len(ids) == len(set(ids)) and set(ids) <= set(keys)
