"""The native notification server (`timelake serve-notifications`) against
moto's S3 server: every row of every notified file lands exactly once, in two
tables chosen by key prefix, whatever the redeliveries and their order; and
hostile or broken input is refused with the right status and never crashes it.
Rows are read back with pyiceberg, independently of our reader."""

import concurrent.futures
import gzip
import io
import json
import os
import select
import socket
import subprocess
import time
import urllib.request
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import notify_support as ns
import store_servers
from conftest import ROOT, table_files

BUILD = ROOT / os.environ.get("TL_BUILD", "build-asan")
CLI = BUILD / "timelake"
TOKEN = "n0tify-t0ken"
KINDS = ("csv", "csv.gz", "tsv", "ndjson", "parquet")
SCHEMA_SPEC = "time:timestamptz,device_id:string,temp:float64,file:int64,row:int64"
TABLES = {"site-a/": "iot.site_a", "site-b/": "iot.site_b"}


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")
    proc, backend = store_servers.start_moto(tmp_path_factory.mktemp("moto"))
    yield backend
    store_servers.stop(proc)


def s3_client(endpoint):
    import boto3

    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def encode(table, kind):
    """The bytes of `table` as a file of `kind`."""
    buf = io.BytesIO()
    if kind == "parquet":
        pq.write_table(table, buf)
        return buf.getvalue()
    if kind == "ndjson":
        rows = table.to_pylist()
        return "".join(json.dumps({**r, "time": r["time"].isoformat()}) + "\n" for r in rows).encode()
    delimiter = "\t" if kind.startswith("tsv") else ","
    pacsv.write_csv(table, buf, pacsv.WriteOptions(delimiter=delimiter))
    return gzip.compress(buf.getvalue()) if kind.endswith(".gz") else buf.getvalue()


def upload(s3, bucket, n):
    """n files over the five formats and the two prefixes; returns their keys."""
    keys = []
    for i in range(n):
        kind, prefix = KINDS[i % len(KINDS)], list(TABLES)[i % 2]
        key = f"{prefix}{i:05d}.{kind}"
        s3.put_object(Bucket=bucket, Key=key, Body=encode(ns.file_rows(i), kind))
        keys.append(key)
    return keys


def create_tables(lake_dir, names):
    for name in names:
        subprocess.run([str(CLI), "create", name, "--lake", str(lake_dir), "--schema", SCHEMA_SPEC,
                        "--time-column", "time", "--series-key", "device_id"],
                       check=True, capture_output=True, env=server_env())


def server_env(**extra):
    env = store_servers.clean_env()
    env.update(ASAN_OPTIONS="detect_leaks=1", **extra)
    return env


class Server:
    def __init__(self, lake_dir, endpoint, log_dir, *args, table=None):
        self.port = store_servers.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out = open(Path(log_dir) / "server.out", "w")
        self.err_path = Path(log_dir) / "server.err"
        self.err = open(self.err_path, "w")
        env = server_env(NOTIFY_TOKEN=TOKEN, TIMELAKE_WAREHOUSE=str(lake_dir), PORT=str(self.port),
                         AWS_ENDPOINT_URL_S3=endpoint, AWS_REGION="us-east-1",
                         AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
        if table:
            env["TIMELAKE_TABLE"] = table
        self.proc = subprocess.Popen([str(CLI), "serve-notifications", *args], env=env,
                                     stdout=self.out, stderr=self.err)
        store_servers.wait_for(self.url + "/health", self.proc)
        self.out_path = Path(log_dir) / "server.out"

    def stop(self):
        """SIGTERM: it must finish cleanly (exit 0, no sanitizer report)."""
        self.proc.terminate()
        code = self.proc.wait(timeout=60)
        self.out.close()
        self.err.close()
        assert code == 0, self.err_path.read_text()[-4000:]

    def post(self, body, token=TOKEN):
        return post_json(self.url + "/", body, token)

    def loads(self):
        return [json.loads(line) for line in self.out_path.read_text().splitlines()
                if '"event":"load"' in line]


def post_json(url, body, token):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def rows_of(lake_dir, name):
    ns_, table = name.split(".")
    meta = sorted((Path(lake_dir) / ns_ / table / "metadata").glob("v*.metadata.json"),
                  key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    return StaticTable.from_metadata(str(meta)).scan().to_arrow().select(["file", "row"]).to_pylist()


def test_every_row_once_with_redeliveries_and_two_tables(moto, tmp_path):
    n = 500
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, TABLES.values())
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-e2e")
    keys = upload(s3, "landing-e2e", n)
    routes = [f"--route={p}={t}" for p, t in TABLES.items()]
    server = Server(lake_dir, moto.endpoint, tmp_path, *routes)
    try:
        bodies = ns.notifications("landing-e2e", keys)
        # Several senders at once: the two tables are appended concurrently,
        # each table's appends one at a time.
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(lambda b: server.post(b)[0], bodies))
        assert statuses == [200] * len(bodies)
        assert server.post({"events": []})[0] == 200
    finally:
        server.stop()
    for i, (prefix, name) in enumerate(TABLES.items()):
        rows = rows_of(lake_dir, name)
        files = {int(k[len(prefix):].split(".")[0]) for k in keys if k.startswith(prefix)}
        assert len(rows) == len(files) * ns.ROWS_PER_FILE
        assert {r["file"] for r in rows} == files
        assert len({(r["file"], r["row"]) for r in rows}) == len(rows), "a row landed twice"
        ids = [b for b in ns.batch_ids_of(lake_dir, name.replace(".", "/")) if b is not None]
        assert len(ids) == len(set(ids)) and set(ids) <= set(keys)
    # One log line per load, with what an operator needs; the redeliveries are duplicates.
    loads = server.loads()
    assert {l["key"] for l in loads} == set(keys)
    assert all({"key", "table", "rows", "version", "ms", "duplicate"} <= set(l) for l in loads)
    # Every redelivery is a duplicate, even one arriving after maintenance
    # expired its batch's snapshot (the batch ledger remembers it).
    fresh = [l["key"] for l in loads if not l["duplicate"]]
    assert sorted(fresh) == sorted(keys)
    assert any(l["duplicate"] and l["rows"] == 0 for l in loads)
    # Maintenance ran after commits, off the requests' path, and logged it.
    out = server.out_path.read_text()
    assert '"event":"maintained"' in out


@pytest.fixture(scope="module")
def hostile(moto, tmp_path_factory):
    """One server with a small body limit, for the hostile-input tests."""
    tmp = tmp_path_factory.mktemp("hostile")
    lake_dir = tmp / "lake"
    create_tables(lake_dir, ["iot.readings"])
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-h")
    server = Server(lake_dir, moto.endpoint, tmp, "--max-body", "65536", "--max-events", "50",
                    table="iot.readings")
    yield server, s3, lake_dir
    server.stop()


def event(key, bucket="landing-h", name="OBJECT_CREATED_PUT"):
    return {"eventName": name, "bucket": bucket, "object": {"key": key, "size": 1, "etag": '"x"'}}


def put(s3, key, i, kind="csv"):
    s3.put_object(Bucket="landing-h", Key=key, Body=encode(ns.file_rows(i), kind))


def assert_unchanged(lake_dir, before):
    assert table_files(lake_dir) == before


def test_token_is_required(hostile):
    server, s3, lake_dir = hostile
    put(s3, "auth/1.csv", 1)
    before = table_files(lake_dir)
    body = {"events": [event("auth/1.csv")]}
    assert server.post(body, token="wrong")[0] == 401
    assert server.post(body, token=TOKEN + "x")[0] == 401
    assert server.post(body, token="")[0] == 401
    assert server.post(body, token=None)[0] == 401
    assert_unchanged(lake_dir, before)
    assert urllib.request.urlopen(server.url + "/health").status == 200


def raw_request(port, head, body=b""):
    """Sends raw bytes and returns the status line's code (the server may close early)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head + body)
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ")[1])


def test_huge_body_is_refused_before_it_is_read(hostile):
    server, s3, lake_dir = hostile
    before = table_files(lake_dir)
    # It answers from the headers: the 100 MB announced are never sent.
    head = (f"POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Length: 100000000\r\n\r\n").encode()
    assert raw_request(server.port, head) == 413
    # A chunked body with no length is cut off at the limit as it arrives.
    chunk = b"x" * 40000
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3)) + b"0\r\n\r\n"
    head = (f"POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()
    assert raw_request(server.port, head, chunked) == 413
    status, body = server.post({"events": [event(f"big/{i}.csv") for i in range(51)]})
    assert status == 400 and "at most 50" in body["error"]
    assert_unchanged(lake_dir, before)


@pytest.mark.parametrize("body, reason", [
    (b"{not json", "malformed JSON"),
    (b"", "empty request body: send a JSON object with an \"events\" array"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"Records": []}', "no \"events\""),
    (b'{"events": [42]}', "events[0] is not an object"),
    (b'{"events": [{"eventName": "OBJECT_CREATED_PUT", "bucket": "landing-h"}]}', "events[0].object"),
    (b'{"events": [{"eventName": 7, "bucket": "b", "object": {"key": "k.csv"}}]}', "eventName"),
    (b'{"events": [{"eventName": "OBJECT_CREATED_PUT", "bucket": "landing-h", "object": {"key": 5}}]}', "object.key"),
])
def test_malformed_bodies_get_400_with_a_reason(hostile, body, reason):
    server, s3, lake_dir = hostile
    before = table_files(lake_dir)
    status, answer = server.post(body)
    assert status == 400
    assert reason in answer["error"]
    assert_unchanged(lake_dir, before)


@pytest.mark.parametrize("key, bucket, reason", [
    ("../etc/passwd.csv", "landing-h", "\"..\" segment"),
    ("in/../../x.csv", "landing-h", "\"..\" segment"),
    ("/abs/path.csv", "landing-h", "absolute path"),
    ("in/./x.csv", "landing-h", "\".\" segment"),
    ("in/notes.txt", "landing-h", "notes.txt"),
    ("in/archive.zip", "landing-h", "archive.zip"),
    ("in/x.csv", "Bad_Bucket/..", "bad bucket name"),
])
def test_bad_keys_are_permanent_errors(hostile, key, bucket, reason):
    server, s3, lake_dir = hostile
    before = table_files(lake_dir)
    status, answer = server.post({"events": [event(key, bucket)]})
    assert 400 <= status < 500, answer
    assert reason in answer["results"][0]["detail"]
    assert_unchanged(lake_dir, before)


def test_a_bad_event_does_not_stop_the_good_ones(hostile):
    server, s3, lake_dir = hostile
    put(s3, "mixed/good.parquet", 31, "parquet")
    status, answer = server.post({"events": [event("mixed/../bad.csv"), event("mixed/good.parquet"),
                                             event("mixed/good.parquet", name="OBJECT_DELETED")]})
    assert status == 400
    assert [r["status"] for r in answer["results"]] == [400, 200, 200]
    assert 31 in {r["file"] for r in rows_of(lake_dir, "iot.readings")}


def test_bad_data_is_a_permanent_error_naming_the_object(hostile):
    """The server reads text columns in the table's storage form (64-bit
    offsets): a bad one is still named a string, as the table's type, and
    bytes that are not UTF-8 are described (the answer is JSON)."""
    server, s3, lake_dir = hostile
    before = table_files(lake_dir)
    for key, body, words in (("bad/1.csv", b"time,device_id,temp\nnot-a-time,d,1.5\n", "not-a-time"),
                             ("bad/2.csv", b"time,device_id,temp\n2024-05-01T00:00:00Z,\xff,1.5\n",
                              "text that is not valid UTF-8 is not a valid string")):
        s3.put_object(Bucket="landing-h", Key=key, Body=body)
        status, answer = server.post({"events": [event(key)]})
        assert answer.get("results"), (status, answer)
        detail = answer["results"][0]["detail"]
        assert status == 422 and f"s3://landing-h/{key}" in detail and words in detail, detail
        assert "tl-notify-" not in detail
    assert_unchanged(lake_dir, before)


def test_cut_or_damaged_gzip_loads_nothing_until_the_whole_file_comes(hostile):
    """A .csv.gz cut on a row boundary decompresses to whole rows: only its
    missing trailer tells. It is refused, and its key (the batch id) stays
    free for the whole object."""
    server, s3, lake_dir = hostile
    text = encode(ns.file_rows(41), "csv").decode()
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    cut = z.compress("".join(text.splitlines(keepends=True)[:3]).encode()) + z.flush(zlib.Z_SYNC_FLUSH)
    whole = gzip.compress(text.encode())
    damaged = whole[:-8] + bytes([whole[-8] ^ 1]) + whole[-7:]
    before = table_files(lake_dir)
    body = {"events": [event("gz/41.csv.gz")]}
    for data, words in ((cut, "truncated gzip file"), (damaged, "CRC-32 does not match")):
        s3.put_object(Bucket="landing-h", Key="gz/41.csv.gz", Body=data)
        status, answer = server.post(body)
        detail = answer["results"][0]["detail"]
        assert status == 422 and words in detail and "s3://landing-h/gz/41.csv.gz" in detail, detail
        assert "<fd:" not in detail and "tl-notify-" not in detail
        assert_unchanged(lake_dir, before)
    s3.put_object(Bucket="landing-h", Key="gz/41.csv.gz", Body=whole)
    assert server.post(body)[0] == 200
    rows = [r for r in rows_of(lake_dir, "iot.readings") if r["file"] == 41]
    assert sorted(r["row"] for r in rows) == list(range(ns.ROWS_PER_FILE))


def test_deleted_object_is_retried_until_it_is_back(hostile):
    server, s3, lake_dir = hostile
    put(s3, "gone/7.csv", 7)
    s3.delete_object(Bucket="landing-h", Key="gone/7.csv")
    before = table_files(lake_dir)
    body = {"events": [event("gone/7.csv")]}
    status, answer = server.post(body)
    assert status == 503 and "cannot read the object" in answer["results"][0]["detail"]
    assert_unchanged(lake_dir, before)
    assert "gone/7.csv" in server.err_path.read_text()  # the log line says which object
    put(s3, "gone/7.csv", 7)
    assert server.post(body)[0] == 200
    assert server.post(body)[0] == 200  # redelivered: a duplicate
    rows = [r for r in rows_of(lake_dir, "iot.readings") if r["file"] == 7]
    assert sorted(r["row"] for r in rows) == list(range(ns.ROWS_PER_FILE))


def test_redelivery_checks_the_batch_id_before_fetching(hostile):
    """A redelivered request whose objects are loaded answers without reading
    them again (it would otherwise spend its deadline on them, and the new
    object at its end would time out on every retry): here the loaded object
    is deleted from the bucket before the redelivery, so any fetch fails."""
    server, s3, lake_dir = hostile
    put(s3, "redo/1.csv", 41)
    assert server.post({"events": [event("redo/1.csv")]})[0] == 200
    s3.delete_object(Bucket="landing-h", Key="redo/1.csv")
    put(s3, "redo/2.csv", 42)
    status, answer = server.post({"events": [event("redo/1.csv"), event("redo/2.csv")]})
    assert status == 200, answer
    assert [r["detail"] for r in answer["results"]] == ["redo/1.csv: duplicate", "redo/2.csv: loaded"]
    files = {r["file"] for r in rows_of(lake_dir, "iot.readings")}
    assert {41, 42} <= files


def health_from(port, source, timeout=10):
    """GET /health from a given loopback source address: its status code."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = s.recv(4096)
    return int(data.split(b" ")[1])


def cut_off(s):
    """The server closed the connection: reading it gives the end (or a
    reset) at once."""
    if not select.select([s], [], [], 0)[0]:
        return False
    try:
        return s.recv(4096, socket.MSG_PEEK) == b""
    except ConnectionResetError:
        return True


def test_slow_loris_cannot_hold_the_server(moto, tmp_path):
    """64 connections trickling a header byte every half second (each byte
    resets the idle timeout) hold neither every connection slot (a client gets
    at most --max-per-client of them) nor any slot for long (--header-timeout);
    /health keeps answering, from another client at once and from the same
    one once the deadline has cut the slow ones off."""
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])
    server = Server(lake_dir, moto.endpoint, tmp_path, "--header-timeout", "3",
                    "--idle-timeout", "30", table="iot.readings")
    slow = []
    try:
        for _ in range(64):
            try:
                slow.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            except OSError:
                pass
        header = b"POST / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
        # Trickling until the server has cut every trickler off (each reads
        # the end, or a reset), where before the fix a connection was held
        # open as long as bytes came; the backstop is twice the idle timeout.
        deadline = time.monotonic() + 60
        i = 0
        while not all(cut_off(s) for s in slow):
            assert time.monotonic() < deadline, "the trickling connections were never cut off"
            for s in slow:
                try:
                    s.sendall(header[i:i + 1])
                except OSError:
                    pass  # cut off already
            if i == 1:
                assert health_from(server.port, "127.0.0.2") == 200
            i += 1
            time.sleep(0.5)
        assert i >= 2  # the other client was answered while the tricklers held their slots
        assert health_from(server.port, "127.0.0.1") == 200
    finally:
        for s in slow:
            s.close()
        server.stop()


def test_unknown_bucket_is_a_retryable_error(hostile):
    server, s3, lake_dir = hostile
    status, answer = server.post({"events": [event("x/1.csv", bucket="no-such-bucket")]})
    assert status == 503, answer
    assert urllib.request.urlopen(server.url + "/health").status == 200


def test_health_and_other_methods(hostile):
    server, s3, lake_dir = hostile
    assert urllib.request.urlopen(server.url + "/health").status == 200
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(server.url + "/nothing")
    assert e.value.code == 404
    req = urllib.request.Request(server.url + "/", method="PUT", data=b"x")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req)
    assert e.value.code == 405


def test_start_fails_for_a_missing_table(moto, tmp_path):
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])
    env = server_env(NOTIFY_TOKEN=TOKEN, TIMELAKE_WAREHOUSE=str(lake_dir))
    proc = subprocess.run([str(CLI), "serve-notifications", "--route", "a/=iot.nope",
                           "--port", str(store_servers.free_port())],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "iot.nope" in proc.stderr
    proc = subprocess.run([str(CLI), "serve-notifications", "--table", "iot.readings"],
                          env={k: v for k, v in env.items() if k != "NOTIFY_TOKEN"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "NOTIFY_TOKEN" in proc.stderr


def test_sizes_in_events_are_not_trusted(hostile):
    """The size a notification gives decides nothing: the bucket's is read."""
    server, s3, lake_dir = hostile
    for i, size in ((41, 1), (42, 10**13), (43, -5)):
        key = f"sized/{i}.csv"
        put(s3, key, i)
        ev = event(key)
        ev["object"]["size"] = size
        status, body = server.post({"events": [ev]})
        assert status == 200, body
        assert any(l["key"] == key and l["rows"] == ns.ROWS_PER_FILE for l in server.loads())


def test_listens_on_ipv6_too(hostile):
    server = hostile[0]
    try:
        socket.create_connection(("::1", 1), timeout=1).close()
    except ConnectionRefusedError:
        pass  # IPv6 loopback is there
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with urllib.request.urlopen(f"http://[::1]:{server.port}/health", timeout=30) as resp:
        assert resp.status == 200


def test_large_files_stream_under_the_lock(moto, tmp_path):
    """Files above the parse-ahead size (here every file) are read while
    appending, chunk by chunk: each format loads, and bad data still names the object."""
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-s")
    keys = []
    for i, kind in enumerate(KINDS):
        keys.append(f"s/{i}.{kind}")
        s3.put_object(Bucket="landing-s", Key=keys[-1], Body=encode(ns.file_rows(i), kind))
    s3.put_object(Bucket="landing-s", Key="s/bad.csv", Body=b"time,device_id,temp\nnot-a-time,d,1.5\n")
    os.environ["TIMELAKE_NOTIFY_PARSE_AHEAD_BYTES"] = "0"
    try:
        server = Server(lake_dir, moto.endpoint, tmp_path, table="iot.readings")
    finally:
        del os.environ["TIMELAKE_NOTIFY_PARSE_AHEAD_BYTES"]
    try:
        events = [{"eventName": "OBJECT_CREATED_PUT", "bucket": "landing-s", "object": {"key": k}}
                  for k in keys]
        assert server.post({"events": events})[0] == 200
        status, answer = server.post({"events": [dict(events[0], object={"key": "s/bad.csv"})]})
        assert status == 422 and "s3://landing-s/s/bad.csv" in answer["results"][0]["detail"]
    finally:
        server.stop()
    assert len(rows_of(lake_dir, "iot.readings")) == len(KINDS) * ns.ROWS_PER_FILE


def test_an_object_is_fetched_in_one_round_trip(moto, tmp_path):
    """The bucket's size comes with the first GET (its Content-Range), so a
    small object costs one request and no HEAD; a larger one is read in more
    ranged GETs of at most 8 MiB each."""
    from fault_proxy import FaultProxy, round_trips

    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-rt")
    s3.put_object(Bucket="landing-rt", Key="rt/small.csv", Body=encode(ns.file_rows(1), "csv"))
    n = 400_000  # incompressible columns: a Parquet file of about 9.6 MiB
    rng = np.random.default_rng(7)
    big = pa.table({"time": pa.array(1_767_225_600_000_000 + rng.integers(0, 10**12, n),
                                     pa.timestamp("us", tz="UTC")),
                    "device_id": pa.array(["d"] * n), "temp": rng.random(n),
                    "file": pa.array([2] * n, pa.int64()), "row": rng.integers(0, 2**62, n)})
    buf = io.BytesIO()
    pq.write_table(big, buf, compression="none")
    size = len(buf.getvalue())
    assert 8 << 20 < size < 16 << 20
    s3.put_object(Bucket="landing-rt", Key="rt/big.parquet", Body=buf.getvalue())
    s3.put_object(Bucket="landing-rt", Key="rt/empty.csv", Body=b"")
    with FaultProxy(moto.endpoint) as proxy:
        server = Server(lake_dir, proxy.endpoint, tmp_path, table="iot.readings")
        try:
            def fetch(key):
                mark = proxy.mark()
                status, body = server.post({"events": [event(key, bucket="landing-rt")]})
                return status, body, proxy.requests_since(mark)

            status, body, reqs = fetch("rt/small.csv")
            assert status == 200, body
            assert [r[2] for r in reqs] == ["GET"] and round_trips(reqs) == 1
            status, body, reqs = fetch("rt/big.parquet")
            assert status == 200, body
            assert [r[2] for r in reqs] == ["GET", "GET"] and round_trips(reqs) == 2
            status, body, reqs = fetch("rt/empty.csv")
            assert status < 500, body  # read (and refused or loaded as empty), not retried
            # moto answers the range with the empty body; S3 answers 416, then the size is asked.
            assert [r[2] for r in reqs] in (["GET"], ["GET", "HEAD"])
        finally:
            server.stop()
    counts = {}
    for r in rows_of(lake_dir, "iot.readings"):
        counts[r["file"]] = counts.get(r["file"], 0) + 1
    assert counts == {1: ns.ROWS_PER_FILE, 2: n}


def cpu_quiet(proc, still=0.15, limit=30):
    """Waits until a process's CPU time has stopped rising for `still` seconds
    (the server's maintainer runs after the answer)."""
    def cpu():
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    last, since, start = cpu(), time.monotonic(), time.monotonic()
    while time.monotonic() - since < still and time.monotonic() - start < limit:
        time.sleep(0.01)
        if cpu() != last:
            last, since = cpu(), time.monotonic()


def test_a_maintenance_pass_does_not_make_the_next_commit_retry(moto, tmp_path):
    """The maintainer commits on a handle of its own: the requests' handle
    takes its commit as is, so the next request's commit builds on it at the
    first attempt instead of losing the race for the version (and reloading
    the table's metadata under its lock). Each file is sent once the server
    is quiet, so no pass is under way while a request commits."""
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-m")
    n = 12
    for i in range(n):
        s3.put_object(Bucket="landing-m", Key=f"m/{i}.csv", Body=encode(ns.file_rows(i), "csv"))
    server = Server(lake_dir, moto.endpoint, tmp_path, table="iot.readings")
    try:
        for i in range(n):
            assert server.post({"events": [event(f"m/{i}.csv", bucket="landing-m")]})[0] == 200
            cpu_quiet(server.proc)
    finally:
        server.stop()
    lines = [json.loads(l) for l in server.out_path.read_text().splitlines() if l.startswith("{")]
    passes = [l for l in lines if l["event"] == "maintained" and l["partitions_compacted"]]
    assert passes, "no compaction: the test needs one"
    loads = [l for l in lines if l["event"] == "load"]
    assert len(loads) == n and all(l["rows"] == ns.ROWS_PER_FILE for l in loads)
    after = [l for l in loads if l["version"] > passes[0]["version"]]
    assert after and all(l["attempts"] == 1 for l in after), after
    assert len(rows_of(lake_dir, "iot.readings")) == n * ns.ROWS_PER_FILE


def post_without_pause(moto, tmp_path, lake_dir, bucket, prefix, n, redeliver=()):
    """Posts n files from six senders to a server whose commits do not wait
    for requests on their way (more commits, more maintenance passes to meet
    them), then `redeliver` again one by one; the server's JSON log lines."""
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket=bucket)
    for i in range(n):
        s3.put_object(Bucket=bucket, Key=f"{prefix}/{i}.csv", Body=encode(ns.file_rows(i), "csv"))
    os.environ["TIMELAKE_NOTIFY_WAIT_COMING_MS"] = "0"
    try:
        server = Server(lake_dir, moto.endpoint, tmp_path, "--max-per-client", "64",
                        table="iot.readings")
    finally:
        del os.environ["TIMELAKE_NOTIFY_WAIT_COMING_MS"]

    def post(i):
        return server.post({"events": [event(f"{prefix}/{i}.csv", bucket=bucket)]})[0]

    try:
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            statuses = list(pool.map(post, range(n)))
        assert statuses == [200] * n
        assert [post(i) for i in redeliver] == [200] * len(redeliver)
    finally:
        server.stop()
    return [json.loads(l) for l in server.out_path.read_text().splitlines() if l.startswith("{")]


def test_maintenance_commits_never_make_requests_retry(moto, tmp_path):
    """Requests committing without pause while the maintainer compacts behind
    them: the maintainer's commits take the table's turn like the requests'
    group commits, so no request's commit loses the race for a version (and
    the maintainer's own commits lose none either)."""
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])
    n = 48
    lines = post_without_pause(moto, tmp_path, lake_dir, "landing-c", "c", n)
    loads = [l for l in lines if l["event"] == "load"]
    assert sum(1 for l in lines if l["event"] == "maintained" and l["partitions_compacted"]) >= 1
    assert len(loads) == n and [l for l in loads if l["attempts"] != 1] == []
    assert len(rows_of(lake_dir, "iot.readings")) == n * ns.ROWS_PER_FILE


def test_expiry_commits_never_make_requests_retry(moto, tmp_path):
    """As above with snapshot expiry: every pass expires (snapshots kept 0 s,
    no compaction), and its commits take the table's turn like the requests'
    group commits: no request's commit loses the race for a version."""
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])
    subprocess.run([str(CLI), "alter", "iot.readings", "--lake", str(lake_dir), "--set",
                    "timelake.snapshot-retention=0s", "--set", "timelake.min-snapshots=1", "--set",
                    "timelake.compact-min-files=1000"], check=True, capture_output=True, env=server_env())
    n = 48
    # Redelivered after the expiries: every one a duplicate.
    again = range(0, n, 7)
    lines = post_without_pause(moto, tmp_path, lake_dir, "landing-e", "e", n, again)
    loads = [l for l in lines if l["event"] == "load"]
    assert sum(1 for l in lines if l["event"] == "maintained" and l["snapshots_expired"]) >= 2
    first = loads[:n]
    assert [l for l in first if l.get("attempts") != 1] == []
    assert all(l["duplicate"] for l in loads[n:]) and len(loads) == n + len(again)
    assert len(rows_of(lake_dir, "iot.readings")) == n * ns.ROWS_PER_FILE


def test_rollups_are_refreshed_once_their_interval_has_passed(moto, tmp_path):
    """Loads commit without inline maintenance (the table's maintainer thread
    runs it after them), and that pass refreshes the rollups whose refresh
    interval has passed, as an append's inline maintenance would: the hourly
    rollup with an interval holds every loaded row's count; the daily one,
    without an interval, is left to an explicit maintain."""
    lake_dir = tmp_path / "lake"
    create_tables(lake_dir, ["iot.readings"])

    def rollup(name, width, with_=""):
        sql = (f"CREATE MATERIALIZED ROLLUP {name} AS SELECT device_id, "
               f"time_bucket(INTERVAL '{width}', time) AS bucket, count(*) AS n "
               f"FROM iot.readings GROUP BY device_id, bucket {with_}")
        subprocess.run([str(CLI), "sql", sql, "--lake", str(lake_dir)], check=True, capture_output=True,
                       env=server_env())

    rollup("iot.readings_h", "1 hour", "WITH (refresh_interval = '1s')")
    rollup("iot.readings_d", "1 day")
    created = time.time()
    s3 = s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-r")
    keys = [f"r/{i}.csv" for i in range(3)]
    for i, key in enumerate(keys):
        s3.put_object(Bucket="landing-r", Key=key, Body=encode(ns.file_rows(i), "csv"))
    while time.time() < created + 1.2:  # the interval must pass; nothing else to wait for
        time.sleep(0.05)
    server = Server(lake_dir, moto.endpoint, tmp_path, table="iot.readings")
    try:
        events = [{"eventName": "OBJECT_CREATED_PUT", "bucket": "landing-r", "object": {"key": k}}
                  for k in keys]
        assert server.post({"events": events})[0] == 200
        deadline = time.time() + 60
        while time.time() < deadline:
            lines = [json.loads(l) for l in server.out_path.read_text().splitlines() if l.startswith("{")]
            refreshed = [l for l in lines if l["event"] == "maintained" and l["rollups_refreshed"]]
            if refreshed:
                break
            time.sleep(0.1)
    finally:
        server.stop()
    assert refreshed and refreshed[0]["rollups_refreshed"] == 1 and refreshed[0]["rollup_rows"] > 0, lines

    def counts(name):
        ns_, table = name.split(".")
        meta = sorted((lake_dir / ns_ / table / "metadata").glob("v*.metadata.json"),
                      key=lambda p: int(p.name[1:].split(".")[0]))[-1]
        rows = StaticTable.from_metadata(str(meta)).scan().to_arrow().to_pylist()
        return sum(r["n"] for r in rows)

    assert counts("iot.readings_h") == len(keys) * ns.ROWS_PER_FILE
    assert counts("iot.readings_d") == 0
