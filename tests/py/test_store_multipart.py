"""Large objects go up in parts (S3 multipart upload, Azure blocks + block
list, GCS part objects composed into one), in parallel, through put_many, on
moto, Azurite and fake-gcs-server; small ones and every conditional create
stay one request. Checked from outside our library: the server's bytes (boto3,
Shared Key requests, the GCS JSON API), S3's multipart ETag, pyarrow reading a
data file, and after a failure ListMultipartUploads (moto) and listings (no
object, no stray parts). Part sizes are tiny here (moto is told to accept
them); the defaults are a 64 MiB threshold and 16 MiB parts."""

import datetime as dt
import hashlib
import io
import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tlc
from fault_proxy import FaultProxy, Faults
from store_objects import list_names, object_name, read, s3_pending_uploads, sends_part
from store_servers import server_fixture

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TL_BUILD", ROOT / "build-asan"))
PART = 64 << 10
SMALL_PARTS = {"multipart_threshold": str(128 << 10), "multipart_part_size": str(PART)}
MIB = 1 << 20


# moto enforces S3's 5 MiB minimum part size unless told otherwise.
s3_server = pytest.fixture(scope="module")(server_fixture("s3", {"S3_UPLOAD_PART_MIN_SIZE": str(PART // 2)}))
azure_server = pytest.fixture(scope="module")(server_fixture("azure"))
gcs_server = pytest.fixture(scope="module")(server_fixture("gcs"))


@pytest.fixture(params=["s3", "azure", "gcs"])
def backend(request):
    return request.getfixturevalue(f"{request.param}_server")


def upload(url, options, sizes, out):
    """Runs the C uploader (tests/unit/test_store_multipart.c): put_many of
    random objects mp/obj-<i>.bin; returns its "upload: ..." line."""
    exe = BUILD / "test_store_multipart"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    env = dict(os.environ, TL_TEST_STORE_URL=url, TL_TEST_SIZES=",".join(map(str, sizes)), TL_TEST_OUT=str(out),
               TL_TEST_STORE_OPTIONS=";".join(f"{k}={v}" for k, v in {**options, "cache_memory": "0"}.items()))
    env.pop("LD_PRELOAD", None)
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    time.sleep(0.2)  # a proxy in between logs each request just after answering it
    return re.search(r"^upload: .*$", proc.stdout, re.M).group(0)


def part_requests(backend, log, name):
    """The requests of log that carry one part of object `name`."""
    base = name.rsplit("/", 1)[1]
    if backend.name == "s3":
        return [r for r in log if base + "?partNumber=" in r[3]]
    if backend.name == "azure":
        return [r for r in log if base + "?blockid=" in r[3]]
    return [r for r in log if r[2] == "POST" and base + ".tl-part-" in r[3]]


def finishing_request(backend, method, path):
    if method not in ("POST", "PUT"):
        return False
    if backend.name == "s3":
        return method == "POST" and "?uploadId=" in path
    if backend.name == "azure":
        return "comp=blocklist" in path
    return path.split("?")[0].endswith("/compose")


def max_overlap(requests):
    events = sorted([(r[0], 1) for r in requests] + [(r[1], -1) for r in requests])
    best = cur = 0
    for _, d in events:
        cur += d
        best = max(best, cur)
    return best


def s3_multipart_etag(data, part):
    digests = b"".join(hashlib.md5(data[i:i + part]).digest() for i in range(0, len(data), part))
    return f'"{hashlib.md5(digests).hexdigest()}-{(len(data) + part - 1) // part}"'


def check_objects(backend, url, sizes, out):
    """Every object is on the server with exactly our bytes, and nothing else is."""
    names = [object_name(url, f"mp/obj-{i}.bin") for i in range(len(sizes))]
    assert list_names(backend, object_name(url)) == sorted(names)
    for i, name in enumerate(names):
        data = (out / f"obj-{i}.bin").read_bytes()
        assert len(data) == sizes[i] and read(backend, name) == data
        if backend.name == "s3":
            head = __import__("store_objects").s3_client(backend).head_object(Bucket=backend.bucket, Key=name)
            assert head["ContentLength"] == sizes[i]
            if sizes[i] > int(SMALL_PARTS["multipart_threshold"]):
                assert head["ETag"] == s3_multipart_etag(data, PART)
    if backend.name == "s3":
        assert s3_pending_uploads(backend, object_name(url)) == []


def test_large_objects_go_up_in_parallel_parts(backend, tmp_path):
    url = backend.url()
    sizes = [10 * PART + 123, 1000, 2 * PART + 1, 0]
    with FaultProxy(backend.endpoint, Faults(delay=1.0, max_delay=0.05), seed=7) as proxy:
        assert upload(url, backend.through(proxy, **SMALL_PARTS), sizes, tmp_path) == "upload: ok"
    log = proxy.requests_since(0)
    big = part_requests(backend, log, object_name(url, "mp/obj-0.bin"))
    assert len({r[3] for r in big}) == 11  # 10 whole parts and the rest
    assert max_overlap(big) > 1  # parts travel at the same time
    assert len({r[3] for r in part_requests(backend, log, object_name(url, "mp/obj-2.bin"))}) == 3
    for small in ("mp/obj-1.bin", "mp/obj-3.bin"):
        assert part_requests(backend, log, object_name(url, small)) == []
    assert sum(finishing_request(backend, r[2], r[3]) for r in log) == 2
    check_objects(backend, url, sizes, tmp_path)


def test_part_failures_are_retried(backend, tmp_path):
    url = backend.url()
    sizes = [20 * PART + 5, 3 * PART]
    faults = Faults(error500=0.1, error503=0.1, drop=0.05, cut=0.1)
    with FaultProxy(backend.endpoint, faults, seed=20261129) as proxy:
        opts = backend.through(proxy, **SMALL_PARTS, max_retries="10", retry_backoff="2ms",
                       retry_max_backoff="20ms")
        assert upload(url, opts, sizes, tmp_path) == "upload: ok"
    assert sum(v for k, v in proxy.counts.items() if k != "pass") >= 5, proxy.counts
    check_objects(backend, url, sizes, tmp_path)


def test_lost_answer_to_the_finishing_request(backend, tmp_path):
    """The request that joins the parts is carried out but its answer is cut.
    Azure and GCS send it again (it is idempotent there); on S3 the retry is
    answered NoSuchUpload, as AWS does once an upload is complete, and the
    object is read back and found to be ours, never assumed."""
    url = backend.url()
    sizes = [4 * PART + 9]
    no_such_upload = b"<Error><Code>NoSuchUpload</Code></Error>"
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        original, finishes = proxy._forward, []

        async def forward(method, path, headers, body):
            if finishing_request(backend, method, path):
                finishes.append(path)
                if len(finishes) == 2 and backend.name == "s3":
                    return (b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                            % len(no_such_upload)) + no_such_upload
            answer = await original(method, path, headers, body)
            if finishing_request(backend, method, path) and len(finishes) == 1:
                raise ConnectionResetError("cut after forwarding")
            return answer
        proxy._forward = forward
        assert upload(url, backend.through(proxy, **SMALL_PARTS, retry_backoff="1ms"), sizes, tmp_path) == "upload: ok"
    assert len(finishes) == 2
    if backend.name == "s3":
        name = object_name(url, "mp/obj-0.bin")
        assert any(r[2] == "GET" and r[3].endswith(name) for r in proxy.requests_since(0))
    check_objects(backend, url, sizes, tmp_path)


def test_lost_finish_is_not_taken_for_success(s3_server, tmp_path):
    """S3: the complete request is lost before reaching the server and the
    retry is answered NoSuchUpload (as if another client aborted it): there
    is no object, so the upload fails rather than guessing it landed."""
    backend, url = s3_server, s3_server.url()
    no_such_upload = b"<Error><Code>NoSuchUpload</Code></Error>"
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        original, finishes = proxy._forward, []

        async def forward(method, path, headers, body):
            if finishing_request(backend, method, path):
                finishes.append(path)
                if len(finishes) == 1:
                    raise ConnectionResetError("dropped after the request was sent")
                return (b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                        % len(no_such_upload)) + no_such_upload
            return await original(method, path, headers, body)
        proxy._forward = forward
        line = upload(url, backend.through(proxy, **SMALL_PARTS, retry_backoff="1ms"), [3 * PART], tmp_path)
    assert line.startswith("upload: failed") and "not ours" in line, line
    assert list_names(backend, object_name(url)) == []
    assert s3_pending_uploads(backend, object_name(url)) == []


@pytest.mark.parametrize("cuts", [1, 99])
def test_lost_answer_to_the_upload_start(s3_server, tmp_path, cuts):
    """S3: CreateMultipartUpload is carried out but its answer is cut, so the
    server holds an upload we never heard of. Whether the upload then
    succeeds (one cut) or fails (every start cut), no pending upload stays."""
    backend, url = s3_server, s3_server.url()
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        original, starts = proxy._forward, []

        async def forward(method, path, headers, body):
            result = await original(method, path, headers, body)
            if method == "POST" and path.endswith("?uploads="):
                starts.append(path)
                if len(starts) <= cuts:
                    raise ConnectionResetError("cut after forwarding")
            return result
        proxy._forward = forward
        opts = backend.through(proxy, **SMALL_PARTS, max_retries="2", retry_backoff="1ms")
        line = upload(url, opts, [3 * PART], tmp_path)
    assert s3_pending_uploads(backend, object_name(url)) == []
    if cuts == 1:
        assert line == "upload: ok" and len(starts) == 2
        check_objects(backend, url, [3 * PART], tmp_path)
    else:
        assert line.startswith("upload: failed") and len(starts) == 3, line
        assert list_names(backend, object_name(url)) == []


def test_failed_upload_leaves_no_object_and_no_parts(backend, tmp_path):
    """One part fails every time: after the retries the upload is aborted."""
    url = backend.url()
    sizes = [6 * PART]
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        proxy.refuse(lambda path: sends_part(backend, path, 2))  # the third part, every time
        opts = backend.through(proxy, **SMALL_PARTS, max_retries="2", retry_backoff="1ms")
        line = upload(url, opts, sizes, tmp_path)
    assert line.startswith("upload: failed") and "503" in line, line
    assert list_names(backend, object_name(url)) == []
    if backend.name == "s3":
        assert s3_pending_uploads(backend, object_name(url)) == []


def big_batch(n, seed):
    rng = np.random.default_rng(seed)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    return pa.table({"time": pa.array([t0 + dt.timedelta(seconds=i) for i in range(n)], pa.timestamp("us", tz="UTC")),
                     "device_id": pa.array([f"dev-{i % 7}" for i in range(n)]),
                     "temp": pa.array(rng.random(n))})


def test_table_data_files_go_up_in_parts_and_commits_do_not(backend):
    """A threshold of 1 KiB: every object bigger than that goes up in parts,
    except the conditional create of the metadata file, which stays one
    request. The table reads back; pyarrow reads the data file."""
    url = backend.url()
    batch = big_batch(40000, 3)
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        opts = backend.through(proxy, multipart_threshold="1KiB", multipart_part_size=str(PART))
        lake = tlc.Lake(url, opts)
        t = lake.create_table("iot.big", batch.schema, time_column="time", series_key=["device_id"])
        mark = proxy.mark()
        assert t.append(batch, batch_id="b1")["rows"] == 40000
        time.sleep(0.2)
        log = proxy.requests_since(mark)
    names = list_names(backend, object_name(url))
    data = [n for n in names if "/data/" in n and n.endswith(".parquet")]
    assert len(data) == 1
    content = read(backend, data[0])
    assert len(content) > 4 * PART
    assert len({r[3] for r in part_requests(backend, log, data[0])}) == (len(content) + PART - 1) // PART
    assert pq.read_table(io.BytesIO(content)).num_rows == 40000
    # The commit: a PUT of the metadata file (S3, Azure); on GCS a POST with
    # ifGenerationMatch=0 (the object's name travels in the body).
    commits = [r for r in log if (r[2] == "PUT" and ".metadata.json" in r[3]) or "ifGenerationMatch=0" in r[3]]
    assert len(commits) == 1
    metadata = [n for n in names if n.endswith("/v2.metadata.json")]
    assert len(metadata) == 1 and len(read(backend, metadata[0])) > 1024  # above the threshold
    assert not any(m in commits[0][3] for m in ("partNumber=", "uploadId=", "blockid=", "tl-part"))
    # No part of any upload belongs to a metadata file.
    assert not any(re.search(r"metadata\.json(\?partNumber|\?uploads|\?blockid|\.tl-part)", r[3]) for r in log)
    assert not any(".tl-part-" in n for n in names)
    fresh = tlc.Lake(url, backend.options).table("iot.big")
    assert fresh.info()["rows"] == 40000
    if backend.name == "s3":
        assert s3_pending_uploads(backend, object_name(url)) == []
