"""karet run, when a table's columns or partition keys change: the rebuild
is one commit of the library's tl_table_replace_schema. Readers querying the
table all along never find it missing or empty, the old version stays in its
history, and a rebuild that fails midway leaves the old table, its rows and
its folder exactly as they were."""

import json
import random
import subprocess
import threading
import uuid

import pytest
from pyiceberg.table import StaticTable

import tlc
from fault_proxy import FaultProxy
from karet_lake import KARET, LocalLake, S3Lake, clean_env, read_table, run_karet, version_of
from store_servers import server_fixture
from test_karet_pipelines import canon, expected, month_of_statements, statement, template
from test_replace_schema import duckdb_iceberg_rows

s3 = pytest.fixture(scope="module")(server_fixture("s3"))


def with_note_column(config):
    """The config with a new column, `note`, and other partition keys."""
    config = json.loads(json.dumps(config))
    config["analytic_tables"][0]["schema"].append({"name": "note", "type": "string"})
    config["mappings"][0]["columns"].append({"name": "note", "expr": {"kind": "concat", "sep": "/", "args": [
        {"kind": "col", "name": "account"}, {"kind": "col", "name": "description"}]}})
    config["analytic_tables"][0]["partition_keys"] = ["account"]
    return config


def start_karet(lake, slug, config, tmp_path, env=None):
    path = tmp_path / f"pipeline-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(config))
    args = [str(KARET), "run", "--lake", lake.url, "--slug", slug, "--pipeline", str(path), "--json"]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env(env))


def test_readers_never_see_the_table_missing_or_empty_during_a_rebuild(tmp_path):
    lake = LocalLake(tmp_path / "lake")
    config = template("bank_statements", "bank")
    prefix = config["source_containers"][0]["path_prefix"]
    rng = random.Random(3)
    for month in range(1, 13):
        lake.put(f"{prefix}2026-{month:02d}.csv", statement(month_of_statements(rng, month, 300)))
    run_karet(lake, "bank", config, tmp_path)
    rows = len(read_table(lake, "bank", "transactions"))
    version = version_of(lake.metadata_files("bank", "transactions")[-1])
    before = StaticTable.from_metadata(lake.metadata_files("bank", "transactions")[-1])

    new = with_note_column(config)
    reader = tlc.Lake(str(lake.root / "warehouse"))
    seen, errors = [], []
    # Small chunks: the rebuild uploads data files before its commit, as a
    # large one does; none may show before the commit.
    proc = start_karet(lake, "bank", new, tmp_path, {"TIMELAKE_APPEND_CHUNK_ROWS": "500"})

    def read():
        while True:
            running = proc.poll() is None
            try:
                seen.append((running, reader.sql("SELECT count(*) AS c FROM bank.transactions").column("c")[0].as_py()))
            except Exception as e:  # a missing table, for one
                errors.append(repr(e))
            if not running:
                return

    th = threading.Thread(target=read)
    th.start()
    out, err = proc.communicate(timeout=600)
    th.join(600)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert summary["run_kind"] == "full" and "columns or partition keys" in summary["full_reason"]
    assert errors == []
    assert any(running for running, _ in seen)  # reads overlapped the rebuild
    assert {count for _, count in seen} == {rows}

    # One commit: the next metadata version, same table, the old snapshot readable.
    files = lake.metadata_files("bank", "transactions")
    after = StaticTable.from_metadata(files[-1])
    assert version_of(files[-1]) == version + 1
    assert after.metadata.table_uuid == before.metadata.table_uuid
    old_ids = {f.name: f.field_id for f in before.schema().fields}
    new_ids = {f.name: f.field_id for f in after.schema().fields}
    assert {k: new_ids[k] for k in old_ids} == old_ids and new_ids["note"] == before.metadata.last_column_id + 1
    assert [f.name for f in after.spec().fields] == ["account"]
    snap = after.current_snapshot()
    assert snap.summary.operation.value == "overwrite" and snap.parent_snapshot_id == before.current_snapshot().snapshot_id
    old = after.scan(snapshot_id=snap.parent_snapshot_id).to_arrow()
    assert old.num_rows == rows and "note" not in old.column_names
    got = read_table(lake, "bank", "transactions")
    assert canon(got) == canon(expected(lake, new, "transactions"))
    assert all(r["note"].startswith("visa-") for r in got)
    location = str(lake.root / "warehouse" / "bank" / "transactions")
    assert duckdb_iceberg_rows(location, "SELECT count(*), count(note) FROM t") == [[rows, rows]]


def test_a_rebuild_failing_midway_leaves_the_old_table(tmp_path, s3):
    lake = S3Lake(s3)
    config = template("bank_statements", "bank")
    prefix = config["source_containers"][0]["path_prefix"]
    rng = random.Random(4)
    for month in range(1, 7):
        lake.put(f"{prefix}2026-{month:02d}.csv", statement(month_of_statements(rng, month, 120)))
    run_karet(lake, "bank", config, tmp_path)
    old_rows = read_table(lake, "bank", "transactions")
    warehouse = lake.keys("warehouse/")
    new = with_note_column(config)
    with FaultProxy(s3.endpoint) as proxy:
        # The last file cannot be read: the rebuild has read, mapped and
        # (in small chunks) uploaded the others' rows when it fails.
        proxy.refuse(lambda path: path.split("?")[0].endswith("/2026-06.csv"), 503)
        # Its ten retries (as by default) wait at most 200 ms each, not up to 5 s.
        lake.options = s3.through(proxy, retry_max_backoff="200ms")
        path = tmp_path / "new.json"
        path.write_text(json.dumps(new))
        args = [str(KARET), "run", "--lake", lake.url, "--slug", "bank", "--pipeline", str(path), "--json"]
        for k, v in lake.options.items():
            args += ["--storage-option", f"{k}={v}"]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=600,
                              env=clean_env({"TIMELAKE_APPEND_CHUNK_ROWS": "50"}))
        lake.options = dict(s3.options)
    assert proc.returncode != 0, proc.stdout
    assert "2026-06.csv" in json.loads(proc.stdout)["error"]
    assert lake.keys("warehouse/") == warehouse  # nothing left behind, nothing changed
    assert canon(read_table(lake, "bank", "transactions")) == canon(old_rows)
    meta = StaticTable.from_metadata(lake.metadata_files("bank", "transactions")[-1],
                                     properties=lake.iceberg_properties())
    assert "note" not in meta.schema().column_names and len(meta.schemas()) == 1
    # Once the file can be read, the rebuild lands.
    _, summary = run_karet(lake, "bank", new, tmp_path)
    assert summary["run_kind"] == "full"
    got = read_table(lake, "bank", "transactions")
    assert len(got) == len(old_rows) and all(r["note"].startswith("visa-") for r in got)


def test_a_rebuild_cancelled_while_it_reads_leaves_the_old_table(tmp_path, s3):
    """karet serve: a config change (a new column) makes the next job a
    rebuild; the job is cancelled while its last file is being read (the
    proxy holds that request until the cancel is in); nothing changes."""
    import asyncio

    from karet_service import PREFIX, SLUG, Server, csv_rows, finished, make_pipeline, pipeline_config, wait_jobs

    lake = S3Lake(s3)
    with FaultProxy(s3.endpoint) as proxy:
        srv = Server(tmp_path / "data", lake.url, s3.through(proxy), env={"TIMELAKE_APPEND_CHUNK_ROWS": "20"}).start()
        try:
            api = srv.worker()
            make_pipeline(api)
            for i, name in enumerate(("a.csv", "b.csv", "c.csv")):
                lake.put(f"{PREFIX}{name}", csv_rows(100 * i, 60))
            api.post(f"/api/p/{SLUG}/jobs")
            js = wait_jobs(api, lambda js: finished(js, 1), timeout=180)
            assert js[0]["status"] == "completed", js
            old_rows = read_table(lake, SLUG, "events")
            assert len(old_rows) == js[0]["rows_written"] > 0
            before = lake.keys("warehouse/")
            cfg = pipeline_config()
            cfg["analytic_tables"][0]["schema"].append({"name": "note", "type": "string"})
            cfg["mappings"][0]["columns"].append({"name": "note", "expr": {"kind": "upper", "input": {
                "kind": "col", "name": "user"}}})
            version = api.get(f"/api/p/{SLUG}/config").headers["X-Karet-Config-Version"]
            r = api.put(f"/api/p/{SLUG}/config", cfg, headers={"X-Karet-Config-Version": version})
            assert r.status == 200, r.body

            arrived, release = threading.Event(), threading.Event()
            forward = proxy._forward

            async def hold_last_file(method, path, headers, body):
                if method == "GET" and path.split("?")[0].endswith("/c.csv"):
                    arrived.set()
                    while not release.is_set():
                        await asyncio.sleep(0.05)
                return await forward(method, path, headers, body)

            proxy._forward = hold_last_file
            job = api.post(f"/api/p/{SLUG}/jobs").json()
            assert arrived.wait(180), "the rebuild never read the last file"
            r = api.post(f"/api/p/{SLUG}/jobs/{job['id']}/cancel")
            assert r.status in (200, 202), r.body
            release.set()
            js = wait_jobs(api, lambda js: finished(js, 2), timeout=180)
            assert js[0]["id"] == job["id"] and js[0]["status"] == "cancelled", js
            proxy._forward = forward
            assert lake.keys("warehouse/") == before  # no stray data file, manifest or metadata version
            assert canon(read_table(lake, SLUG, "events")) == canon(old_rows)
            meta = StaticTable.from_metadata(lake.metadata_files(SLUG, "events")[-1],
                                             properties=lake.iceberg_properties())
            assert "note" not in meta.schema().column_names
        finally:
            srv.stop()
