"""Warehouses and storage options beside s3://, gs://, az:// and folders
(issue 19): read-only http(s):// warehouses, in-memory ones (memory://), and
the reference's object_store option names, each shown to do what it says by
what reaches the server (a recording proxy in front of moto's S3,
fake-gcs-server or Azurite) or by what the server then holds."""

import datetime as dt
import functools
import http.server
import json
import os
import random
import re
import shutil
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest

import tlc
from fault_proxy import FaultProxy
from store_servers import AZ_ACCOUNT, azure_request, server_fixture

CLI = Path(os.environ.get("TL_BUILD", Path(__file__).resolve().parents[2] / "build-asan")) / "timelake"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
BIG = 200_000
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("temp", pa.float64())])

s3 = pytest.fixture(scope="module")(server_fixture("s3"))
gcs = pytest.fixture(scope="module")(server_fixture("gcs"))
azure = pytest.fixture(scope="module")(server_fixture("azure"))


def readings(n, start=T0, devices=4):
    return pa.table({"time": [start + dt.timedelta(seconds=i // devices) for i in range(n)],
                     "device": [f"d{i % devices}" for i in range(n)],
                     "temp": [float(i) for i in range(n)]}, schema=SCHEMA)


def fill(lake, big=False):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"])
    t.append(readings(100))
    t.append(readings(100, start=T0 + dt.timedelta(days=1)))
    if big:  # one file over 1 MiB (random doubles do not compress): read by ranges
        rng = random.Random(19)
        t.append(pa.table({"time": [T0 + dt.timedelta(days=2, milliseconds=i) for i in range(BIG)],
                           "device": [f"d{i % 7}" for i in range(BIG)],
                           "temp": [rng.random() * 1000 for _ in range(BIG)]}, schema=SCHEMA),
                 maintain=False)
    lake.create_table("plain", pa.schema([("id", pa.int64())])).append(pa.table({"id": [1, 2, 3]}))
    return t


# One device of the large file: one of its row groups (they are sorted by
# device), which a remote reader fetches by a ranged read.
NARROW = ("SELECT count(*) AS n, round(max(temp), 6) AS m FROM iot.t WHERE device = 'd3' AND "
          "time >= '2026-01-03 00:00:10+00' AND time < '2026-01-03 00:02:50+00'")


def answers(lake):
    """What a lake of fill() answers (sums rounded: the order of a float sum may differ)."""
    return (lake.sql(NARROW).to_pylist(),  # first: a fresh lake has no copy of the file yet
            lake.tables(),
            lake.sql("SELECT device, count(*) AS n, round(sum(temp), 3) AS s FROM iot.t GROUP BY 1 "
                     "ORDER BY 1").to_pylist(),
            lake.sql("SELECT sum(id) AS s FROM plain").to_pylist(),
            sorted(lake.latest("iot.t").column("device").to_pylist()))


# ---- memory:// ----


def test_memory_lake():
    lake = tlc.Lake("memory:///scratch")
    assert lake.location == "memory:///scratch" and lake.tables() == []
    t = fill(lake)
    assert answers(lake)[1] == ["default.plain", "iot.t"]
    assert lake.sql("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 200}]
    for i in range(3):  # small files, the first repeating keys stored already
        t.append(readings(8, start=T0 + dt.timedelta(minutes=i)), maintain=False)
    report = t.maintain()
    assert (report["files_rewritten"], report["duplicates_removed"]) == (4, 8), report
    assert (t.info()["files"], t.info()["rows"]) == (2, 216)
    assert lake.sql("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 216}]
    t.set_properties({"read_dedup": "false"})
    assert lake.table("iot.t").properties()["timelake.read-dedup"] == "false"
    lake.put_object("notes/a.txt", b"hello")
    assert lake.get_object("notes/a.txt") == b"hello"
    assert [o["key"] for o in lake.list_objects("notes/", recursive=False)] == ["notes/a.txt"]
    lake.drop_table("plain")
    assert lake.tables() == ["iot.t"]
    # Each lake opened on a memory URL starts empty, as the reference's.
    assert tlc.Lake("memory:///scratch").tables() == []
    assert tlc.Lake("memory://bucket/x").location == "memory://bucket/x"
    with pytest.raises(ValueError, match="aws_region"):
        tlc.Lake("memory:///x", {"aws_region": "x"})


# ---- http(s):// ----


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """A static file server that honours single Range headers (206), records
    every request, and refuses every write."""

    log = None
    ranges = True

    def log_message(self, *args):
        pass

    def send_head(self):
        if self.path.startswith("http://"):  # the absolute form, from a proxy
            self.path = "/" + self.path.split("/", 3)[3]
        self.log.append((self.command, self.path, self.headers.get("Range")))
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range") or "") if self.ranges else None
        if m is None:
            return super().send_head()
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        data = open(path, "rb").read()
        lo, hi = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {lo}-{hi}/{len(data)}")
        self.send_header("Content-Length", str(hi - lo + 1))
        self.end_headers()
        import io
        return io.BytesIO(data[lo:hi + 1])

    def do_PUT(self):
        self.log.append(("PUT", self.path, None))
        self.send_error(405)

    do_DELETE = do_POST = do_PUT


@pytest.fixture(params=["ranges", "no-ranges"])
def served(request, tmp_path):
    """A lake written locally, moved to another folder (its file:// paths no
    longer lead anywhere) and served over HTTP; with and without Range support."""
    lake = tmp_path / "lake"
    want = answers_of_filled(lake)
    copy = tmp_path / "served"
    shutil.copytree(lake, copy)
    shutil.rmtree(lake)
    log = []
    handler = type("H", (RangeHandler,), {"log": log, "ranges": request.param == "ranges"})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(copy)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", want, log, copy, request.param
    finally:
        server.shutdown()
        server.server_close()


def answers_of_filled(lake_dir, options=None):
    lake = tlc.Lake(lake_dir, options)
    fill(lake, big=True)
    return answers(lake)


def files_of(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in Path(folder).rglob("*") if p.is_file())


def test_http_lake_reads_as_the_local_one(served):
    url, want, log, copy, mode = served
    lake = tlc.Lake(url)
    assert lake.location == url
    assert answers(lake) == want
    assert want[0][0]["n"] > 0
    info = lake.table("iot.t").info()
    assert (info["version"], info["rows"]) == (4, BIG + 200)
    assert any("/data/" in p for _, p, _ in log)  # the data came over HTTP
    # The large file is read by ranges (a server without Range support
    # answers them with the whole file, which serves as well).
    assert any(r and "/data/" in p for _, p, r in log)


def test_http_lake_refuses_every_write(served):
    url, _, log, copy, _ = served
    before = files_of(copy)
    lake = tlc.Lake(url)
    t = lake.table("iot.t")
    calls = {
        "append": lambda: t.append(readings(3)),
        "create": lambda: lake.create_table("x", SCHEMA),
        "drop": lambda: lake.drop_table("iot.t"),
        "maintain": lambda: t.maintain(),
        "alter": lambda: t.set_properties({"read_dedup": "false"}),
        "put_object": lambda: lake.put_object("a.txt", b"x"),
        "delete_object": lambda: lake.delete_object("timelake-tables.json"),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=rf"read-only over http\(s\).*{re.escape(url)}|{re.escape(url)}.*read-only"):
            call()
    assert not any(m in ("PUT", "POST", "DELETE") for m, *_ in log)
    assert files_of(copy) == before
    with pytest.raises(KeyError, match="version-hint"):
        lake.table("iot.nope")
    with pytest.raises(ValueError, match="no listing"):
        lake.list_objects("")


def test_the_package_reads_an_http_lake(served):
    """Our timelake package (the CPython extension) on the same lake."""
    url, want, log, copy, _ = served
    sys.path.insert(0, str(CLI.parent / "python"))
    timelake = pytest.importorskip("timelake")
    assert Path(timelake.__file__).parent.parent == CLI.parent / "python", timelake.__file__
    lake = timelake.Lake(url)
    assert lake.sql(NARROW).to_pylist() == want[0]
    assert lake.tables() == want[1]
    assert lake.sql("SELECT device, count(*) AS n, round(sum(temp), 3) AS s FROM iot.t GROUP BY 1 "
                    "ORDER BY 1").to_pylist() == want[2]
    t = lake.table("iot.t")
    with pytest.raises(ValueError, match=r"cannot append to iot\.t: the warehouse .* is read-only over http\(s\)"):
        t.append(readings(3))
    with pytest.raises(ValueError, match="read-only"):
        t.set_properties({"read_dedup": "false"})
    assert not any(m in ("PUT", "POST", "DELETE") for m, *_ in log)


def cli(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TIMELAKE_WAREHOUSE", "TIMELAKE_TABLE")}
    env["ASAN_OPTIONS"] = "detect_leaks=1"
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, env=env, timeout=600)


def test_the_cli_reads_an_http_lake_and_writes_nothing(served, tmp_path):
    url, want, log, copy, _ = served
    before = files_of(copy)
    p = cli("-w", url, "ls")
    assert p.returncode == 0, p.stderr
    assert [line.split()[:3] for line in p.stdout.splitlines()[1:]] == [["default.plain", "2", "3"],
                                                                       ["iot.t", "4", str(BIG + 200)]]
    p = cli("-w", url, "sql", "--json", "SELECT device, count(*) AS n, round(sum(temp), 3) AS s FROM iot.t "
            "GROUP BY 1 ORDER BY 1")
    assert p.returncode == 0, p.stderr
    assert [json.loads(line) for line in p.stdout.splitlines()] == want[2]
    p = cli("-w", url, "info", "iot.t", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["rows"] == BIG + 200, p.stderr
    snapshot = json.loads(p.stdout)["snapshot_id"]
    # A plan only, without listing: the local copy's steps, and the head that
    # a lake on a store (not a folder) carries.
    p, local = (cli("-w", w, "upgrade", "iot.t", "--dry-run") for w in (url, copy))
    assert p.returncode == 0 and local.returncode == 0, p.stderr + local.stderr
    steps = local.stdout.splitlines()[1:] if "would take" in local.stdout else []
    assert p.stdout.splitlines() == ["iot.t would take these steps:", *steps, "  write the head object"], p.stdout
    csv = tmp_path / "more.csv"
    csv.write_text("time,device,temp\n2026-02-01T00:00:00Z,d1,1.5\n")
    for args in (("append", csv, "--table", "iot.t"), ("drop", "iot.t"), ("maintain", "iot.t"),
                 ("alter", "iot.t", "--set", "read_dedup=false"), ("rollback", "iot.t", snapshot),
                 ("upgrade", "iot.t"),
                 ("create", "x", "--schema", "time:timestamptz,v:float64", "--time-column", "time")):
        p = cli("-w", url, *args)
        assert p.returncode != 0 and "read-only over http(s)" in p.stderr and url in p.stderr, (args, p.stderr)
    assert not any(m in ("PUT", "POST", "DELETE") for m, *_ in log)
    assert files_of(copy) == before


def test_an_s3_lake_read_over_http(s3):
    """A lake written to S3 and read through the bucket's plain HTTP address
    (moto's path-style URLs answer anonymous GETs, as a public bucket does)."""
    import boto3
    bucket = f"public-{os.urandom(4).hex()}"
    client = boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
    client.create_bucket(Bucket=bucket)
    client.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}))
    url = f"s3://{bucket}/lake"
    want = answers_of_filled(url, s3.options)
    web = f"{s3.endpoint}/{bucket}/lake"
    with FaultProxy(s3.endpoint) as proxy:
        lake = tlc.Lake(web.replace(s3.endpoint, proxy.endpoint))
        assert answers(lake) == want
    assert not any("list-type" in p for _, p, _ in proxy.requests)
    assert not any("authorization" in h for _, _, h in proxy.requests)


def test_an_http_lake_the_reference_wrote(tmp_path, reference):
    """Tables the reference wrote (its registry timelake-tables.json, its
    version hints), served over HTTP from where they were written."""
    lake = tmp_path / "lake"
    theirs = reference(f"""
        import datetime as dt, json, pyarrow as pa, timelake
        lake = timelake.Lake({str(lake)!r})
        s = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("temp", pa.float64())])
        t = lake.create_table("iot.t", s, time_column="time", series_key=["device"])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        for k in range(3):
            t.append(pa.table({{"time": [t0 + dt.timedelta(minutes=i + 10 * k) for i in range(6)],
                                "device": ["a", "b"] * 3, "temp": [float(i + k) for i in range(6)]}}, schema=s))
        print(json.dumps(lake.sql("SELECT count(*) AS n, sum(temp) AS s FROM iot.t").to_pylist()))
        """)
    handler = type("H", (RangeHandler,), {"log": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(lake)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        web = tlc.Lake(f"http://127.0.0.1:{server.server_address[1]}")
        assert web.tables() == ["iot.t"]
        assert web.sql("SELECT count(*) AS n, sum(temp) AS s FROM iot.t").to_pylist() == theirs
    finally:
        server.shutdown()
        server.server_close()


# ---- object_store option names ----


def test_s3_endpoint_alias_unsigned_payload_and_encryption(s3):
    import boto3
    client = boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
    url = s3.url()
    with FaultProxy(s3.endpoint) as proxy:
        opts = {k: v for k, v in s3.options.items() if k != "aws_endpoint"}
        opts.update(aws_endpoint_url_s3=proxy.endpoint, aws_unsigned_payload="true",
                    aws_server_side_encryption="AES256")
        lake = tlc.Lake(url, opts)
        fill(lake)
        assert lake.sql("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 200}]
    puts = [h for m, p, h in proxy.requests if m == "PUT"]
    assert puts and all(h["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD" for h in puts)
    assert all(h.get("x-amz-server-side-encryption") == "AES256" for h in puts)
    assert "x-amz-content-sha256" in proxy.requests[-1][2]  # GETs are signed as before
    prefix = url.split("/", 3)[3]
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=s3.bucket, Prefix=prefix)["Contents"]]
    data = [k for k in keys if k.endswith(".parquet")]
    assert data and all(client.head_object(Bucket=s3.bucket, Key=k)["ServerSideEncryption"] == "AES256"
                        for k in data)
    with pytest.raises(ValueError, match="not an encryption type"):
        tlc.Lake(url, dict(s3.options, aws_server_side_encryption="bogus"))
    # KMS: the key id goes with it.
    with FaultProxy(s3.endpoint) as proxy:
        lake = tlc.Lake(s3.url(), s3.through(proxy, aws_server_side_encryption="aws:kms",
                                              aws_sse_kms_key_id="my-key", aws_sse_bucket_key_enabled="true"))
        lake.create_table("k", SCHEMA)
    puts = [h for m, p, h in proxy.requests if m == "PUT"]
    assert all(h["x-amz-server-side-encryption"] == "aws:kms" and
               h["x-amz-server-side-encryption-aws-kms-key-id"] == "my-key" and
               h["x-amz-server-side-encryption-bucket-key-enabled"] == "true" for h in puts)


def test_proxy_url_sends_every_request_through_the_proxy(s3):
    url = s3.url()
    with FaultProxy(s3.endpoint) as proxy:
        lake = tlc.Lake(url, dict(s3.options, proxy_url=proxy.endpoint))
        fill(lake)
        assert lake.sql("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 200}]
        assert proxy.requests and all(p.startswith(s3.endpoint) for _, p, _ in proxy.requests)  # absolute form
        n = len(proxy.requests)
        host = s3.endpoint.split("//")[1].split(":")[0]
        lake = tlc.Lake(url, dict(s3.options, proxy_url=proxy.endpoint, proxy_excludes=host))
        assert lake.sql("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 200}]
        assert len(proxy.requests) == n  # excluded: straight to the server


def test_google_skip_signature(gcs):
    url = gcs.url()
    tlc.Lake(url, gcs.options).create_table("t", SCHEMA).append(readings(4))
    with FaultProxy(gcs.endpoint) as proxy:
        signed = tlc.Lake(url, gcs.through(proxy, google_bearer_token="tok"))
        assert signed.sql("SELECT count(*) AS n FROM t").to_pylist() == [{"n": 4}]
        assert proxy.authorizations and set(proxy.authorizations) == {"Bearer tok"}
        proxy.authorizations.clear()
        anonymous = tlc.Lake(url, gcs.through(proxy, google_bearer_token="tok", google_skip_signature="true"))
        assert anonymous.sql("SELECT count(*) AS n FROM t").to_pylist() == [{"n": 4}]
        assert proxy.authorizations == []


def test_azure_skip_signature_reads_a_public_container(azure):
    azure_request(azure.endpoint, "PUT", "/public", "restype=container",
                  headers={"x-ms-blob-public-access": "container"})
    url = f"az://public/{os.urandom(4).hex()}"
    tlc.Lake(url, azure.options).create_table("t", SCHEMA).append(readings(4))
    anon = {k: v for k, v in azure.options.items() if k != "azure_storage_account_key"}
    with pytest.raises(ValueError, match="no Azure credentials"):
        tlc.Lake(url, anon)
    with FaultProxy(azure.endpoint) as proxy:
        lake = tlc.Lake(url, dict(anon, azure_skip_signature="true",
                                  azure_storage_endpoint=f"{proxy.endpoint}/{AZ_ACCOUNT}"))
        assert lake.table("t").info()["rows"] == 4
        assert lake.sql("SELECT count(*) AS n FROM t").to_pylist() == [{"n": 4}]
    assert proxy.requests and not any("authorization" in h for _, _, h in proxy.requests)


# ---- timelake_* keys ----


def data_gets(proxy, since=0):
    return [(p, h.get("range")) for m, p, h in proxy.requests[since:] if m == "GET" and "/data/" in p]


def test_timelake_cache_modes(s3, tmp_path, monkeypatch):
    """A query that narrows a large file reads ranges of it through the
    store's cache (whole small files the engine keeps itself). A lake's first
    run of it takes the footer from the table's head, the next ones read the
    file's tail: from the third run on, everything is in the cache, if any."""
    url = s3.url()
    fill(tlc.Lake(url, s3.options), big=True)
    q = "SELECT device, max(temp) AS m FROM iot.t WHERE device = 'd3' AND time >= '2026-01-03 00:00:30+00' GROUP BY 1"
    with FaultProxy(s3.endpoint) as proxy:
        for mode, again in (("off", True), ("memory", False)):
            lake = tlc.Lake(url, s3.through(proxy, timelake_cache=mode))
            lake.query(q)
            lake.query(q)
            mark = len(proxy.requests)
            lake.query(q)
            assert bool(data_gets(proxy, mark)) == again, mode
        # disk: a fresh lake reads what another one cached, from the default folder.
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        tlc.Lake(url, s3.through(proxy, timelake_cache="disk")).query(q)
        assert any((tmp_path / "xdg" / "timelake").iterdir())
        mark = len(proxy.requests)
        tlc.Lake(url, s3.through(proxy, timelake_cache="disk")).query(q)
        assert data_gets(proxy, mark) == []
        # memory with a directory: nothing on disk.
        tlc.Lake(url, s3.through(proxy, timelake_cache="memory", timelake_cache_dir=str(tmp_path / "d"))).query(q)
        assert not (tmp_path / "d").exists()
    for bad, message in (({"timelake_cache": "true"}, "must be off, memory or disk"),
                         ({"timelake_cache_block_bytes": "1MiB"}, "must be a number of bytes"),
                         ({"timelake_warm_connections": "x"}, "must be a non-negative integer"),
                         ({"timelake_version_lookup": "x"}, "must be list or hint")):
        with pytest.raises(ValueError, match=message):
            tlc.Lake(url, dict(s3.options, **bad))


def test_timelake_cache_blocks(s3):
    url = s3.url()
    fill(tlc.Lake(url, s3.options), big=True)
    q = ("SELECT device, round(avg(temp), 6) AS a FROM iot.t WHERE device = 'd3' AND time >= '2026-01-03 00:00:30+00' "
         "GROUP BY 1 ORDER BY 1")
    want = tlc.Lake(url, s3.options).sql(q).to_pylist()
    block = 256 * 1024
    with FaultProxy(s3.endpoint) as proxy:
        lake = tlc.Lake(url, s3.through(proxy, timelake_cache_block_bytes=str(block),
                                         timelake_cache_request_bytes=str(2 * block)))
        assert lake.sql(q).to_pylist() == want
        assert lake.sql(q).to_pylist() == want  # reads the tail (the first took the head's footer)
        ranges = [r for _, r in data_gets(proxy) if r]
        assert ranges
        for r in ranges:  # aligned blocks, at most two per request
            lo, hi = map(int, r.removeprefix("bytes=").split("-"))
            assert lo % block == 0 and hi - lo + 1 <= 2 * block, r
        mark = len(proxy.requests)
        assert lake.sql(q, stats={}).to_pylist() == want
        assert data_gets(proxy, mark) == []  # every block held


def test_version_lookup_hint_and_warm_connections(s3):
    url = s3.url()
    fill(tlc.Lake(url, s3.options))
    with FaultProxy(s3.endpoint) as proxy:
        lake = tlc.Lake(url, s3.through(proxy, timelake_version_lookup="hint", timelake_warm_connections="3"))
        warm = [p for m, p, _ in proxy.requests if m == "HEAD"]
        assert len(warm) == 3 and all(p.endswith("/timelake-tables.json") for p in warm)
        mark = len(proxy.requests)
        assert lake.table("iot.t").info()["rows"] == 200
        paths = [p for _, p, _ in proxy.requests[mark:]]
        assert any(p.endswith("/iot/t/metadata/version-hint.text") for p in paths)
        assert not any("list-type" in p for p in paths)  # no listing
        mark = len(proxy.requests)
        tlc.Lake(url, s3.through(proxy)).table("iot.t")
        assert any("list-type" in p for _, p, _ in proxy.requests[mark:])  # the default lists


# ---- unknown names ----


@pytest.mark.parametrize("location,key", [
    ("s3://b/p", "google_skip_signature"),  # another store's name
    ("s3://b/p", "aws_endpoint_url_gcs"),
    ("gs://b/p", "aws_unsigned_payload"),
    ("az://c/p", "timelake_cache_size"),
    ("http://127.0.0.1:9/lake", "aws_region"),  # an http(s) warehouse has no S3 options
    ("memory:///x", "timelake_cache"),  # nor an in-memory one any
])
def test_unknown_option_names_are_errors_naming_them(location, key):
    with pytest.raises(ValueError, match=re.escape(f'"{key}"')):
        tlc.Lake(location, {key: "1"})
    p = cli("-w", location, "-o", f"{key}=1", "ls")
    assert p.returncode != 0 and f'"{key}"' in p.stderr, p.stderr


def test_http_options(served):
    """What an http(s) warehouse takes: the cache, timeouts, retries, a proxy."""
    url, want, _, _, _ = served
    with FaultProxy(url) as proxy:
        lake = tlc.Lake(url, {"proxy_url": proxy.endpoint, "timelake_cache": "memory", "timeout": "60s",
                              "max_retries": "2"})
        assert answers(lake) == want
    assert proxy.requests and all(p.startswith(url + "/") for _, p, _ in proxy.requests)  # absolute form


# ---- every name the reference takes: honoured, or refused saying why ----

# object_store's configuration keys (S3, GCS, Azure and its HTTP client's,
# with their aliases and store prefixes) and the reference's timelake_* keys:
# the candidates the reference is asked about.
CLIENT_KEYS = ["allow_http", "allow_invalid_certificates", "connect_timeout", "default_content_type", "http1_only",
               "http2_only", "http2_keep_alive_interval", "http2_keep_alive_timeout", "http2_keep_alive_while_idle",
               "http2_max_frame_size", "pool_idle_timeout", "pool_max_idle_per_host", "proxy_url",
               "proxy_ca_certificate", "proxy_excludes", "randomize_addresses", "timeout", "user_agent"]
TIMELAKE_KEYS = ["timelake_cache", "timelake_cache_dir", "timelake_cache_memory_bytes", "timelake_cache_disk_bytes",
                 "timelake_cache_block_bytes", "timelake_cache_request_bytes", "timelake_warm_connections",
                 "timelake_version_lookup", "timelake_freshness_check", "timelake_local_root"]
STORE_KEYS = {
    "s3://b/p": ["aws_access_key_id", "access_key_id", "aws_secret_access_key", "secret_access_key",
                 "aws_default_region", "default_region", "aws_region", "region", "aws_bucket", "aws_bucket_name",
                 "bucket_name", "bucket", "aws_endpoint_url", "aws_endpoint", "endpoint_url", "endpoint",
                 "aws_endpoint_url_s3", "aws_session_token", "aws_token", "session_token", "token",
                 "aws_virtual_hosted_style_request", "virtual_hosted_style_request", "aws_s3_express", "s3_express",
                 "aws_imdsv1_fallback", "imdsv1_fallback", "aws_metadata_endpoint", "metadata_endpoint",
                 "aws_unsigned_payload", "unsigned_payload", "aws_checksum_algorithm", "checksum_algorithm",
                 "aws_container_credentials_relative_uri", "aws_container_credentials_full_uri",
                 "aws_container_authorization_token_file", "aws_skip_signature", "skip_signature",
                 "aws_copy_if_not_exists", "copy_if_not_exists", "aws_conditional_put", "conditional_put",
                 "aws_disable_tagging", "disable_tagging", "aws_request_payer", "request_payer",
                 "aws_server_side_encryption", "aws_sse_kms_key_id", "aws_sse_bucket_key_enabled",
                 "aws_sse_customer_key_base64", "aws_role_arn", "aws_web_identity_token_file", "aws_role_session_name",
                 "aws_allow_http"] + ["aws_" + k for k in CLIENT_KEYS],
    "gs://b/p": ["google_service_account", "service_account", "google_service_account_path", "service_account_path",
                 "google_service_account_key", "service_account_key", "google_bucket", "google_bucket_name",
                 "google_application_credentials", "application_credentials", "google_skip_signature", "bucket",
                 "bucket_name", "skip_signature"] + ["google_" + k for k in CLIENT_KEYS],
    "az://c/p": ["azure_storage_account_name", "account_name", "azure_storage_account_key", "azure_storage_access_key",
                 "azure_storage_master_key", "master_key", "account_key", "access_key", "azure_storage_client_id",
                 "azure_client_id", "client_id", "azure_storage_client_secret", "azure_client_secret", "client_secret",
                 "azure_storage_tenant_id", "azure_storage_authority_id", "azure_tenant_id", "azure_authority_id",
                 "tenant_id", "authority_id", "azure_storage_authority_host", "azure_authority_host", "authority_host",
                 "azure_storage_sas_key", "azure_storage_sas_token", "sas_key", "sas_token", "azure_storage_token",
                 "bearer_token", "token", "azure_storage_use_emulator", "use_emulator", "azure_storage_endpoint",
                 "azure_endpoint", "endpoint", "azure_msi_endpoint", "azure_identity_endpoint", "identity_endpoint",
                 "msi_endpoint", "azure_object_id", "object_id", "azure_msi_resource_id", "msi_resource_id",
                 "azure_federated_token_file", "federated_token_file", "azure_use_fabric_endpoint",
                 "use_fabric_endpoint", "azure_use_azure_cli", "use_azure_cli", "azure_skip_signature",
                 "skip_signature", "azure_container_name", "container_name", "azure_disable_tagging",
                 "disable_tagging", "azure_fabric_token_service_url", "azure_fabric_workload_host",
                 "azure_fabric_session_token", "azure_fabric_cluster_identifier"] + ["azure_" + k for k in CLIENT_KEYS],
}
# What a store needs besides the option tried, so that only the option decides.
BASE = {"s3://b/p": {"aws_access_key_id": "k", "aws_secret_access_key": "s"}, "gs://b/p": {"google_skip_signature": "true"},
        "az://c/p": {"azure_storage_account_name": "a", "azure_storage_account_key": "a2V5"}}
# "0" before "4": timelake_warm_connections=4 would open connections to the
# real cloud endpoints (10-15 s each to fail without a network); 0 is honoured
# without any. Every other name gets the verdict it got without "0".
GOOD_VALUES = ["true", "30s", "0", "4", "list", "etag", "AES256", "memory", "https://127.0.0.1:9", "x"]


def test_every_name_the_reference_takes_is_honoured_or_refused_saying_why(reference, tmp_path):
    keyfile = tmp_path / "sa.json"
    keyfile.write_text("{}")
    candidates = {loc: sorted(set(keys + CLIENT_KEYS + TIMELAKE_KEYS)) for loc, keys in STORE_KEYS.items()}
    taken = reference(
        f"""
        import json, timelake
        out = {{}}
        for loc, keys in {candidates!r}.items():
            for k in keys:
                try:
                    timelake.Lake(loc, storage_options={{k: "zzz"}})
                    out.setdefault(loc, []).append(k)
                except Exception as e:
                    if "unknown" not in str(e):
                        out.setdefault(loc, []).append(k)
        print(json.dumps(out))
        """
    )
    assert len(taken["s3://b/p"]) > 90, taken  # the reference judges each name, not values only
    verdicts = {}
    for loc, keys in taken.items():
        for key in keys:
            verdict, refusal = "judged", False  # judged: its name is known, a value judged wrong (a key file)
            for value in GOOD_VALUES:
                if "service_account" in key or "credentials" in key:
                    value = str(keyfile) if value == "x" else value
                try:
                    tlc.Lake(loc, {**BASE[loc], key: value})
                    verdict = "honoured"
                    break
                except ValueError as e:
                    assert "unknown" not in str(e), (loc, key, str(e))
                    if "is not supported" in str(e):
                        assert key in str(e)
                        refusal = True
            if verdict != "honoured" and refusal:
                verdict = "refused"
            verdicts[f"{loc[:2]}:{key}"] = verdict
    refused = {k for k, v in verdicts.items() if v == "refused"}
    # Spot checks of both kinds.
    assert {"s3:aws_role_arn", "s3:http2_max_frame_size", "az:azure_client_secret", "s3:timelake_local_root"} <= refused
    assert not {"s3:user_agent", "s3:aws_user_agent", "s3:aws_request_payer", "gs:google_allow_http",
                "az:azure_timeout", "s3:allow_invalid_certificates", "s3:timelake_freshness_check",
                "s3:aws_conditional_put", "s3:default_region", "az:container_name"} & refused


def test_refused_values_say_what_timelake_does():
    for key, value, msg in [("timelake_freshness_check", "head", "only list is"),
                            ("aws_conditional_put", "dynamo:t", "only etag is"),
                            ("aws_disable_tagging", "false", "writes no object tags"),
                            ("aws_imdsv1_fallback", "true", "give aws_access_key_id"),
                            ("aws_checksum_algorithm", "sha256", "x-amz-content-sha256")]:
        with pytest.raises(ValueError, match=re.escape(key) + ".*" + re.escape(msg)):
            tlc.Lake("s3://b/p", {key: value})
    with pytest.raises(ValueError, match="choose one"):
        tlc.Lake("s3://b/p", {"http1_only": "true", "http2_only": "true"})
    with pytest.raises(ValueError, match="az account get-access-token"):
        tlc.Lake("az://c/p", {"azure_client_id": "x"})


def test_client_options_reach_the_requests(s3):
    url = s3.url()
    with FaultProxy(s3.endpoint) as proxy:
        lake = tlc.Lake(url, s3.through(proxy, aws_user_agent="probe/1.0", aws_request_payer="true",
                                        default_content_type="application/x-probe", pool_idle_timeout="30s",
                                        pool_max_idle_per_host="0", randomize_addresses="true",
                                        http1_only="true", allow_invalid_certificates="true"))
        fill(lake)
        assert lake.sql("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 200}]
    assert proxy.requests and all(h.get("user-agent") == "probe/1.0" for _, _, h in proxy.requests)
    assert all(h.get("x-amz-request-payer") == "requester" for _, _, h in proxy.requests)
    assert all("x-amz-request-payer" in h["authorization"] for _, _, h in proxy.requests)  # signed
    data_puts = [h for m, p, h in proxy.requests if m == "PUT" and p.endswith(".parquet")]
    assert data_puts and all(h["content-type"] == "application/x-probe" for h in data_puts)
    # HTTP/2 only: the first request to moto (HTTP/1.1) fails, as asked; never silently HTTP/1.1.
    with pytest.raises(tlc.TimelakeError, match="timelake-tables.json"):  # a transport error
        tlc.Lake(url, dict(s3.options, http2_only="true", max_retries="0")).tables()


def test_allow_invalid_certificates_reads_a_self_signed_https_lake(tmp_path):
    """An https:// warehouse behind a self-signed certificate: refused by the
    certificate check, read with allow_invalid_certificates."""
    lake = tmp_path / "lake"
    want = answers_of_filled(lake)
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    handler = type("H", (RangeHandler,), {"log": [], "ranges": True})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(lake)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"https://127.0.0.1:{server.server_address[1]}"
        with pytest.raises((tlc.TimelakeError, KeyError), match="certificate|SSL"):
            answers(tlc.Lake(url, {"max_retries": "0"}))
        assert answers(tlc.Lake(url, {"allow_invalid_certificates": "true"})) == want
    finally:
        server.shutdown()
        server.server_close()
