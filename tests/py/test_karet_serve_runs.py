"""`karet serve` running pipelines with the real engine: the seed's flow on
moto's S3 (upload, bucket event, a `webhook` run about 5 s later reading one
file, the row count growing by the new rows less duplicates; the seed's curl
giving 202 and a `manual` run that writes nothing), event plus API call making
two runs of which the second writes nothing, a stop and a SIGKILL during a
run, 20 concurrent clients while runs go on, and the demo."""

import os
import subprocess
import threading
import time
import uuid

import pytest

import store_servers
from karet_service import (PREFIX, SLUG, TOKEN, Server, csv_rows, finished, iso_ms, jobs, make_pipeline,
                           pipeline_config, post_event, s3_event, table, wait_jobs)


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    proc, backend = store_servers.start_moto(tmp_path_factory.mktemp("moto"))
    yield backend
    store_servers.stop(proc)


@pytest.fixture
def local(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    yield srv
    srv.stop()


def boto(backend):
    import boto3

    return boto3.client("s3", endpoint_url=backend.endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing", region_name="us-east-1")


def test_seed_flow_on_s3(tmp_path, moto):
    prefix = uuid.uuid4().hex[:10]
    srv = Server(tmp_path / "data", f"s3://{moto.bucket}/{prefix}", moto.option_list()).start()
    try:
        api = srv.worker()
        make_pipeline(api)
        s3 = boto(moto)
        key = f"{prefix}/{PREFIX}access_1794449450_1794450001.csv"
        s3.put_object(Bucket=moto.bucket, Key=key, Body=csv_rows(0, 10))
        sent = time.time()
        r = post_event(api, s3_event(moto.bucket, key))
        assert r.status == 200 and r.json() == {"received": 1, "scheduled": [SLUG]}
        js = wait_jobs(api, lambda js: finished(js, 1))
        job = js[0]
        assert job["trigger"] == "webhook" and job["status"] == "completed", job
        assert job["files_processed"] == 1
        # Debounced: queued once 5 s passed without another event.
        assert iso_ms(job["enqueuedAt"]) >= sent + 4.0
        assert table(api)["rowCount"] == 10

        # A second batch: 6 rows, 2 of them already in the table (dedup keys).
        key2 = f"{prefix}/{PREFIX}access_1794450001_1794450601.csv"
        s3.put_object(Bucket=moto.bucket, Key=key2, Body=csv_rows(8, 6))
        post_event(api, s3_event(moto.bucket, key2))
        js = wait_jobs(api, lambda js: finished(js, 2))
        assert js[0]["files_processed"] == 1 and js[0]["trigger"] == "webhook"
        assert table(api)["rowCount"] == 10 + 6 - 2

        # The seed's curl, exactly as written.
        out = subprocess.run(["curl", "-s", "-X", "POST", "-H", f"Authorization: Bearer {TOKEN}", "-o",
                              "/dev/null", "-w", "%{http_code}\n", f"{srv.base}/api/p/{SLUG}/jobs"],
                             capture_output=True, text=True, check=True, timeout=60,
                             env={k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")})
        assert out.stdout == "202\n"
        js = wait_jobs(api, lambda js: finished(js, 3))
        assert js[0]["trigger"] == "manual" and js[0]["status"] == "completed"
        assert js[0]["files_processed"] == 0 and js[0]["rows_written"] == 0
        assert table(api)["rowCount"] == 14
    finally:
        srv.stop()



def test_event_and_api_call_make_two_runs_the_second_writes_nothing(local):
    api = local.worker()
    make_pipeline(api)
    r = api.request("PUT", f"/api/lake?key={PREFIX}a_0001.csv", raw=csv_rows(0, 5))
    assert r.status == 200 and r.json()["scheduled"] == [SLUG]
    assert api.post(f"/api/p/{SLUG}/jobs").status == 202
    js = wait_jobs(api, lambda js: finished(js, 2))
    by_trigger = {j["trigger"]: j for j in js}
    assert set(by_trigger) == {"manual", "webhook"}
    first, second = sorted(js, key=lambda j: j["startedAt"])
    assert first["files_processed"] == 1 and first["rows_written"] == 5
    assert second["files_processed"] == 0 and second["rows_written"] == 0
    assert table(api)["rowCount"] == 5



def big_csv(rows):
    """rows distinct by (user, time): one a second from 2026-11-12 on."""
    lines = ["time,user,value"]
    lines += [f"2026-11-{12 + i // 86400:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d},u{i % 7},{i}.5"
              for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def test_restart_with_queued_and_running_jobs(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake", workers=1).start()
    api = srv.worker()
    make_pipeline(api)
    make_pipeline(api, "second", pipeline_config("pipelines/second/events/"))
    api.request("PUT", f"/api/lake?key={PREFIX}big.csv", raw=big_csv(200_000))
    api.request("PUT", "/api/lake?key=pipelines/second/events/s.csv", raw=csv_rows(0, 3))
    api.post(f"/api/p/{SLUG}/jobs")
    api.post("/api/p/second/jobs")
    wait_jobs(api, lambda js: any(j["status"] == "running" for j in js))
    # SIGTERM during the run: the running job is queued again, the queued one
    # stays, and the uploads' pending (debounced) runs become queued jobs.
    assert srv.stop() == 0
    last = {}
    for e in srv.job_events():
        last[e["id"]] = (e["status"], e["trigger"], e["pipeline"])
    assert sorted(last.values()) == sorted([("queued", t, p) for t in ("manual", "webhook") for p in (SLUG, "second")])
    assert any(e["status"] == "running" for e in srv.job_events())
    srv = Server(tmp_path / "data", tmp_path / "lake", workers=1).start()
    try:
        api = srv.worker()
        for slug in (SLUG, "second"):
            js = wait_jobs(api, lambda js: finished(js, 2), slug=slug, timeout=300)
            assert [j["status"] for j in js] == ["completed", "completed"]
            assert sorted(j["files_processed"] for j in js) == [0, 1]  # the second finds nothing new
        assert set(last) == {j["id"] for s in (SLUG, "second") for j in jobs(api, s)}
        assert table(api)["rowCount"] == 200_000 and table(api, "second")["rowCount"] == 3
    finally:
        srv.stop()


def test_sigkill_during_a_run_then_restart(tmp_path):
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    api = srv.worker()
    make_pipeline(api)
    n = 1_000_000
    api.request("PUT", f"/api/lake?key={PREFIX}big.csv", raw=big_csv(n))
    api.post(f"/api/p/{SLUG}/jobs")
    wait_jobs(api, lambda js: js and js[0]["status"] == "running")
    time.sleep(0.3)
    srv.kill()
    srv = Server(tmp_path / "data", tmp_path / "lake").start()
    try:
        api = srv.worker()
        js = wait_jobs(api, lambda js: finished(js, 1))
        assert js[0]["status"] == "completed" and js[0]["attempts"] == 2, js
        assert table(api)["rowCount"] == n
        # Rows exactly once: the table agrees with what it says it holds.
        r = api.post(f"/api/p/{SLUG}/query", {"sql": "SELECT (SELECT count(*) FROM events) AS n, "
                                               "(SELECT count(*) FROM (SELECT DISTINCT user, time FROM events)) AS d"})
        assert r.json()["rows"] == [{"n": n, "d": n}]
    finally:
        srv.stop()



def test_twenty_concurrent_clients_while_runs_go_on(local):
    api = local.worker()
    make_pipeline(api)
    errors = []

    def client(i):
        c = local.worker()
        for k in range(10):
            try:
                if k % 5 == 0:
                    r = c.request("PUT", f"/api/lake?key={PREFIX}c_{i:02d}_{k}.csv", raw=csv_rows(i * 100 + k * 10, 5))
                elif k % 5 == 1:
                    r = c.post(f"/api/p/{SLUG}/jobs")
                else:
                    r = c.get(["/api/pipelines", f"/api/p/{SLUG}/jobs", f"/api/p/{SLUG}/tables"][k % 3])
                if r.status >= 300:
                    errors.append((i, k, r.status, r.body[:200]))
            except Exception as e:  # noqa: BLE001 -- collected and reported
                errors.append((i, k, repr(e)))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    js = wait_jobs(api, lambda js: finished(js, 40) and len(jobs(api)) == len(js), timeout=240)
    assert all(j["status"] == "completed" for j in js)
    # Files arrive out of name order: a run that meets one sorting before a
    # file already read stays incremental while its keys are new to the
    # table, and is full otherwise. The rows must be there once either way.
    assert all(j["run_kind"] == "full" or j["files_processed"] <= 40 for j in js)
    assert table(api)["rowCount"] == 20 * 2 * 5
    r = api.post(f"/api/p/{SLUG}/query", {"sql": "SELECT count(*) AS n FROM (SELECT DISTINCT user, time FROM events)"})
    assert r.json()["rows"] == [{"n": 200}]


def test_demo_run_finishes_with_a_table(tmp_path):
    # The demo's files start a run after a 1 s quiet window, not the default 5 s.
    srv = Server(tmp_path / "data", tmp_path / "lake", extra=["--demo"], env={"KARET_DEBOUNCE_QUIET_MS": "1000"}).start()
    try:
        api = srv.worker()
        js = wait_jobs(api, lambda js: finished(js, 1), slug="demo")
        assert js[0]["status"] == "completed" and js[0]["files_processed"] == 3, js
        # 3 files of 200 rows; the second and third repeat 5 rows of the one before.
        assert table(api, "demo")["rowCount"] == 600
        assert js[0]["rows_deduped"] == 10
    finally:
        srv.stop()


def test_storage_failures_are_retried_with_backoff(tmp_path, moto):
    from fault_proxy import Faults, FaultProxy

    prefix = uuid.uuid4().hex[:10]
    with FaultProxy(moto.endpoint) as proxy:
        # The library's own retries of a request (ten, as by default) wait at
        # most 200 ms each, not up to 5 s: the run still fails as transient
        # storage trouble, and the job's retry with backoff is what is tested.
        opts = moto.option_list(aws_endpoint=proxy.endpoint, retry_max_backoff="200ms")
        srv = Server(tmp_path / "data", f"s3://{moto.bucket}/{prefix}", opts,
                     env={"KARET_RETRY_BACKOFF_MS": "1000"}).start()
        try:
            api = srv.worker()
            make_pipeline(api)
            boto(moto).put_object(Bucket=moto.bucket, Key=f"{prefix}/{PREFIX}a.csv", Body=csv_rows(0, 4))
            proxy.faults = Faults(error503=1.0)
            job = api.post(f"/api/p/{SLUG}/jobs").json()
            deadline = time.time() + 120
            while not any(e["id"] == job["id"] and e["status"] == "queued" and "retrying" in (e.get("error") or "")
                          for e in srv.job_events()):
                assert time.time() < deadline, srv.job_events()
                time.sleep(0.1)
            proxy.faults = Faults()
            js = wait_jobs(api, lambda js: finished(js, 1), timeout=180)
            assert js[0]["status"] == "completed" and js[0]["attempts"] >= 2, js
            assert js[0]["files_processed"] == 1 and table(api)["rowCount"] == 4
        finally:
            srv.stop()
