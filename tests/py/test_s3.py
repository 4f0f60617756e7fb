"""S3 end to end against moto's server: independent readers (pyiceberg over
pyarrow's S3 filesystem, the reference timelake==0.7.0) of our tables, our
appends to the reference's, concurrent appenders in separate processes, and
the same through a fault-injecting proxy (fixed seed)."""

import collections
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import boto3
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import tlc
from fault_proxy import FaultProxy, Faults
from store_servers import clean_env, server_fixture
from writer import ROWS, SCHEMA, batch

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
WRITER = str(Path(__file__).with_name("store_writer.py"))
READINGS = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])

s3 = pytest.fixture(scope="module")(server_fixture("s3"))


def client(s3):
    return boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing", region_name="us-east-1")


def keys_under(s3, url):
    prefix = url.split("/", 3)[3] + "/"
    pages = client(s3).get_paginator("list_objects_v2").paginate(Bucket=s3.bucket, Prefix=prefix)
    return sorted(o["Key"] for page in pages for o in page.get("Contents", []))


def latest_metadata(s3, url, table):
    versions = [k for k in keys_under(s3, f"{url}/{table}") if k.endswith(".metadata.json")]
    best = max(versions, key=lambda k: int(k.rsplit("/v", 1)[1].split(".")[0]))
    return f"s3://{s3.bucket}/{best}"


def iceberg(s3, url, table):
    props = {"s3.endpoint": s3.endpoint, "s3.access-key-id": "testing", "s3.secret-access-key": "testing",
             "s3.region": "us-east-1"}
    return StaticTable.from_metadata(latest_metadata(s3, url, table), properties=props)


def readings(n, start=T0, device="pump-7"):
    return pa.table({"time": [start + dt.timedelta(minutes=i) for i in range(n)], "device_id": [device] * n,
                     "temp": [float(i) for i in range(n)]}, schema=READINGS)


def test_pyiceberg_reads_our_s3_table(s3):
    url = s3.url()
    lake = tlc.Lake(url, s3.options)
    t = lake.create_table("iot.readings", READINGS, time_column="time", series_key=["device_id"])
    t.append(readings(50), batch_id="a")
    t.append(readings(30, start=T0 + dt.timedelta(days=2), device="pump-8"), batch_id="b")
    table = iceberg(s3, url, "iot/readings")
    rows = table.scan().to_arrow()
    assert rows.num_rows == 80
    assert sorted(collections.Counter(rows.column("device_id").to_pylist()).items()) == [("pump-7", 50), ("pump-8", 30)]
    assert table.current_snapshot().summary["timelake.batch-id"] == "b"


def test_failed_append_leaves_no_objects(s3):
    url = s3.url()
    t = tlc.Lake(url, s3.options).create_table("t", READINGS, time_column="time", series_key=["device_id"])
    before = keys_under(s3, url)
    with pytest.raises(ValueError):
        t.append(pa.table({"time": [T0], "device_id": [None], "temp": [1.0], "extra": [1]}))
    assert keys_under(s3, url) == before
    tlc.Lake(url, s3.options).drop_table("t")
    assert [k for k in keys_under(s3, url) if "/default/t/" in k] == []


def test_reference_reads_and_appends_to_our_s3_table(s3, reference):
    url = s3.url()
    t = tlc.Lake(url, s3.options).create_table("iot.readings", READINGS, time_column="time", series_key=["device_id"])
    t.append(readings(20), batch_id="ours-1")
    out = reference(f"""
        import json, timelake, datetime as dt, pyarrow as pa
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        t = lake.table("iot.readings")
        n = lake.sql("SELECT count(*) AS n FROM iot.readings").column("n")[0].as_py()
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
        res = t.append(pa.table({{"time": [dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)], "device_id": ["ref"], "temp": [9.0]}}, schema=schema), batch_id="ref-1")
        dup = t.append(pa.table({{"time": [dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)], "device_id": ["ref"], "temp": [9.0]}}, schema=schema), batch_id="ours-1")
        print(json.dumps({{"n": n, "version": res["version"], "dup": dup["duplicate"]}}))
    """)
    assert out["n"] == 20 and out["dup"] is True
    t.refresh()
    assert t.version == out["version"]
    assert t.append(readings(1), batch_id="ref-1")["duplicate"]
    t.append(readings(5, start=T0 + dt.timedelta(days=9)), batch_id="ours-2")
    assert t.info()["rows"] == 26
    assert iceberg(s3, url, "iot/readings").scan().to_arrow().num_rows == 26


def test_we_append_to_a_reference_s3_table(s3, reference):
    url = s3.url()
    reference(f"""
        import json, timelake, datetime as dt, pyarrow as pa
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
        t = lake.create_table("iot.readings", schema, time_column="time", series_key=["device_id"])
        now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        t.append(pa.table({{"time": [now, now], "device_id": ["a", "b"], "temp": [1.0, 2.0]}}, schema=schema), batch_id="r1")
        print(json.dumps(t.info()))
    """)
    lake = tlc.Lake(url, s3.options)
    t = lake.table("iot.readings")
    assert t.info()["rows"] == 2
    assert t.append(readings(1, start=T0 + dt.timedelta(days=1), device="c"), batch_id="c1")["rows"] == 1
    assert t.append(readings(1), batch_id="r1")["duplicate"]
    out = reference(f"""
        import json, timelake
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        rows = lake.sql("SELECT device_id, temp FROM iot.readings ORDER BY device_id").to_pylist()
        print(json.dumps({{"rows": rows, "version": lake.table("iot.readings").version}}))
    """)
    assert out["rows"] == [{"device_id": "a", "temp": 1.0}, {"device_id": "b", "temp": 2.0}, {"device_id": "c", "temp": 0.0}]
    assert out["version"] == t.version


def spawn(url, options, writer, first, count):
    return subprocess.Popen([sys.executable, WRITER, url, json.dumps(options), "t", writer, str(first), str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_writers(url, options, n_writers, n_batches, timeout=600):
    procs = [spawn(url, options, f"w{i}", 0, n_batches) for i in range(n_writers)]
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, err[-3000:]


def check_exactly_once(s3, url, n_writers, n_batches):
    table = iceberg(s3, url, "default/t")
    rows = table.scan(selected_fields=("writer", "seq")).to_arrow().to_pylist()
    counts = collections.Counter((r["writer"], r["seq"]) for r in rows)
    assert len(counts) == n_writers * n_batches
    assert set(counts.values()) == {ROWS}
    # Inline maintenance may add compaction snapshots; no batch id is committed twice.
    batch_ids = [s.summary["timelake.batch-id"] for s in table.snapshots()
                 if s.summary.operation.value == "append" and "timelake.batch-id" in s.summary]
    assert len(batch_ids) == len(set(batch_ids))
    return table


def make_table(url, options):
    tlc.Lake(url, options).create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"], dedup=False)


def test_concurrent_appenders_commit_each_batch_once(s3):
    url = s3.url()
    make_table(url, s3.options)
    run_writers(url, s3.options, 3, 12)
    check_exactly_once(s3, url, 3, 12)
    # The same batch ids again from other processes: nothing changes.
    run_writers(url, s3.options, 3, 12)
    check_exactly_once(s3, url, 3, 12)


def test_appenders_through_a_faulty_network(s3):
    url = s3.url()
    make_table(url, s3.options)
    faults = Faults(delay=0.05, max_delay=0.2, error500=0.04, error503=0.04, drop=0.03, cut=0.04)
    with FaultProxy(s3.endpoint, faults, seed=20261129) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint, max_retries="8", retry_backoff="5ms",
                              retry_max_backoff="100ms", timeout="10s")
        run_writers(url, opts, 3, 8)
    # Every kind of fault happened, and nothing was committed twice or lost.
    assert all(proxy.counts.get(k, 0) > 0 for k in ("error500", "error503", "drop", "cut", "delay")), proxy.counts
    table = check_exactly_once(s3, url, 3, 8)
    # The table stays readable by us and by pyiceberg, every data file present.
    assert tlc.Lake(url, s3.options).table("t").info()["rows"] == 3 * 8 * ROWS
    assert table.scan().to_arrow().num_rows == 3 * 8 * ROWS


def test_a_handle_far_behind_never_commits_into_a_freed_version_number(s3):
    """timelake 0.7.0's snapshot expiry deletes the metadata files that left the
    metadata log, on object stores too (whatever the table's properties), which
    frees their numbers. A handle opened before then created its next version
    into one: a branch no reader follows, and its append was reported committed
    with its rows lost (found looping our writers beside the reference's maintain
    on moto). Here the pruning is done directly, as the reference does it."""
    url = s3.url()
    lake = tlc.Lake(url, s3.options)
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"], dedup=False,
                          properties={"timelake.auto-maintain": "false"})
    stale = tlc.Lake(url, s3.options)
    behind = stale.table("t")  # at version 1
    for k in range(24):
        t.append(batch("w", k), batch_id=f"w-{k}", maintain=False)
    for v in range(1, 5):
        lake.delete_object(f"default/t/metadata/v{v}.metadata.json")
    r = behind.append(batch("s", 0), batch_id="s-0", maintain=False)
    assert r["version"] == 26 and r["attempts"] == 2
    assert not any(k.endswith("/v2.metadata.json") for k in keys_under(s3, url))
    rows = iceberg(s3, url, "default/t").scan(selected_fields=("writer", "seq")).to_arrow().to_pylist()
    counts = collections.Counter((r["writer"], r["seq"]) for r in rows)
    assert counts[("s", 0)] == ROWS and len(counts) == 25 and set(counts.values()) == {ROWS}
    behind.close()
    t.close()
    stale.close()
    lake.close()


def test_lost_answer_to_the_commit_is_resolved_by_reading_back(s3):
    """Every conditional create is forwarded and its answer cut off: the
    writer must find its own bytes there and report success, not retry into
    a 412 and call it a lost race, nor commit twice."""
    url = s3.url()
    make_table(url, s3.options)

    with FaultProxy(s3.endpoint, Faults(), seed=1) as proxy:
        # Cut the answer to the first PUT of each metadata file (the commit).
        cut_paths = set()
        original = proxy._forward

        async def forward(method, path, headers, body):
            answer = await original(method, path, headers, body)
            if method == "PUT" and path.endswith(".metadata.json") and path not in cut_paths:
                cut_paths.add(path)
                raise ConnectionResetError("cut after forwarding")
            return answer
        proxy._forward = forward
        opts = s3.option_list(aws_endpoint=proxy.endpoint, retry_backoff="1ms")
        t = tlc.Lake(url, opts).table("t")
        from writer import batch
        for k in range(3):
            res = t.append(batch("w", k), batch_id=f"w-{k}")
            assert res["rows"] == ROWS and not res["duplicate"] and res["attempts"] == 1
    assert len(cut_paths) == 3
    check_exactly_once(s3, url, 1, 3)
