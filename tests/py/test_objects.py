"""The public objects API (tl_lake_list_objects, stat, get, put, delete, the
streaming writer) through the ctypes binding, on a local folder and on moto
(S3), Azurite (Azure Blob) and fake-gcs-server (GCS). What the library says
is checked against the servers' own answers (boto3, Shared Key requests, the
GCS JSON API; os.stat locally), never against itself."""

import hashlib
import os
import time

import pytest

import tlc
from fault_proxy import FaultProxy, Faults
from store_objects import head, list_names, object_name, read, s3_pending_uploads, sends_part, write
from store_servers import server_fixture

PART = 64 << 10
SMALL_PARTS = {"multipart_threshold": str(128 << 10), "multipart_part_size": str(PART)}


# moto enforces S3's 5 MiB minimum part size unless told otherwise.
s3_server = pytest.fixture(scope="module")(server_fixture("s3", {"S3_UPLOAD_PART_MIN_SIZE": str(PART // 2)}))
azure_server = pytest.fixture(scope="module")(server_fixture("azure"))
gcs_server = pytest.fixture(scope="module")(server_fixture("gcs"))


class LocalBackend:
    """A local folder in the shape of store_servers.Backend."""
    name = "local"

    def __init__(self, root):
        self.root = root
        self.options = {}

    def url(self):
        path = self.root / os.urandom(6).hex()
        path.mkdir()
        return str(path)


@pytest.fixture(params=["local", "s3", "azure", "gcs"])
def backend(request, tmp_path):
    if request.param == "local":
        return LocalBackend(tmp_path)
    return request.getfixturevalue(f"{request.param}_server")


def server_names(backend, url):
    """Every key under url, as the server (or the file system) lists it."""
    if backend.name == "local":
        return sorted(os.path.relpath(os.path.join(d, f), url) for d, _, fs in os.walk(url) for f in fs)
    base = object_name(url)
    return [n[len(base):] for n in list_names(backend, base)]


def server_read(backend, url, key):
    if backend.name == "local":
        with open(os.path.join(url, key), "rb") as f:
            return f.read()
    return read(backend, object_name(url, key))


def server_head(backend, url, key):
    """(size, modified seconds, version tag or None) as the server says."""
    if backend.name == "local":
        st = os.stat(os.path.join(url, key))
        return st.st_size, st.st_mtime, None
    return head(backend, object_name(url, key))


KEYS = {
    "pipelines/web/events/b.ndjson": b'{"a": 1}\n',
    "pipelines/web/events/a.ndjson": b"{}\n",
    "pipelines/web/events/2026/11/x.ndjson": b"x" * 10,
    "pipelines/bank/statements/jan 2026.csv": b"a,b\n1,2\n",
    "pipelines/bank/statements/f\u00e9vrier+%41.csv": b"a,b\n3,4\n",
    "top.txt": b"",
}


def fill(lake):
    for k, v in KEYS.items():
        lake.put_object(k, v)


def test_put_then_list_recursive_and_one_level(backend):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    fill(lake)
    # What the server holds is exactly what we put.
    assert server_names(backend, url) == sorted(KEYS)
    for k, v in KEYS.items():
        assert server_read(backend, url, k) == v

    listed = lake.list_objects()
    assert [o["key"] for o in listed] == sorted(KEYS, key=lambda k: k.encode())
    assert {o["key"]: o["size"] for o in listed} == {k: len(v) for k, v in KEYS.items()}
    assert all(o["etag"] and o["modified_ms"] > 0 for o in listed)

    def level(prefix):
        return [(o["key"], o["size"], o["etag"] is None) for o in lake.list_objects(prefix, recursive=False)]

    assert level("") == [("pipelines/", 0, True), ("top.txt", 0, False)]
    assert level("pipelines/") == [("pipelines/bank/", 0, True), ("pipelines/web/", 0, True)]
    assert level("pipelines/web/events/") == [
        ("pipelines/web/events/2026/", 0, True),
        ("pipelines/web/events/a.ndjson", 3, False),
        ("pipelines/web/events/b.ndjson", 9, False),
    ]
    # A prefix is a plain key prefix, as object stores take it.
    assert level("pipelines/w") == [("pipelines/web/", 0, True)]
    assert [o["key"] for o in lake.list_objects("pipelines/web/events/a")] == ["pipelines/web/events/a.ndjson"]
    assert lake.list_objects("no/such/prefix/") == []
    assert lake.list_objects("no/such/prefix/", recursive=False) == []


def test_listing_and_stat_say_what_the_server_says(backend):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    fill(lake)
    listed = {o["key"]: o for o in lake.list_objects()}
    for key in KEYS:
        size, modified, tag = server_head(backend, url, key)
        st = lake.stat_object(key)
        assert st == listed[key]
        assert st["size"] == size
        # Object stores state times to the second (S3, Azure) or finer (GCS).
        assert abs(st["modified_ms"] / 1000 - modified) < 1.0
        if tag is not None:
            assert st["etag"] == tag
    with pytest.raises(KeyError, match="pipelines/missing.csv"):
        lake.stat_object("pipelines/missing.csv")
    with pytest.raises(KeyError):
        lake.stat_object("pipelines/web")  # a folder is no object


def test_etag_changes_when_the_object_is_replaced(backend):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    lake.put_object("a/x.csv", b"one")
    first = lake.stat_object("a/x.csv")
    assert lake.stat_object("a/x.csv")["etag"] == first["etag"]
    lake.put_object("a/x.csv", b"two!")
    second = lake.stat_object("a/x.csv")
    assert second["etag"] != first["etag"] and second["size"] == 4
    if backend.name != "local":
        write(backend, object_name(url, "a/x.csv"), b"three")  # replaced by someone else
        third = lake.stat_object("a/x.csv")
        assert third["etag"] not in (first["etag"], second["etag"])
        assert lake.get_object("a/x.csv") == b"three"
        assert [o["etag"] for o in lake.list_objects("a/")] == [third["etag"]]


def test_get_reads_what_others_wrote_never_a_stale_copy(backend):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    lake.put_object("data/x.parquet", b"PAR1 first")  # a name the read cache would keep
    assert lake.get_object("data/x.parquet") == b"PAR1 first"
    other = tlc.Lake(url, backend.options)
    other.put_object("data/x.parquet", b"PAR1 second")
    assert lake.get_object("data/x.parquet") == b"PAR1 second"
    with pytest.raises(KeyError, match="data/none"):
        lake.get_object("data/none")


def test_delete(backend):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    fill(lake)
    lake.delete_object("pipelines/web/events/2026/11/x.ndjson")
    lake.delete_object("pipelines/web/events/2026/11/x.ndjson")  # missing: fine
    assert "pipelines/web/events/2026/11/x.ndjson" not in server_names(backend, url)
    # The folder went with its last object.
    assert [o["key"] for o in lake.list_objects("pipelines/web/events/", recursive=False)] == [
        "pipelines/web/events/a.ndjson", "pipelines/web/events/b.ndjson"]


@pytest.mark.parametrize("key", ["", "/abs", "a//b", "a/./b", "../up", "a/..", "a/b/", "a\nb"])
def test_bad_keys_are_refused_and_write_nothing(backend, key):
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    with pytest.raises(ValueError, match="invalid object key"):
        lake.put_object(key, b"x")
    for call in (lake.get_object, lake.stat_object, lake.delete_object, lake.object_writer):
        with pytest.raises(ValueError, match="invalid object key"):
            call(key)
    assert server_names(backend, url) == []


def test_bad_prefix_is_refused(backend):
    lake = tlc.Lake(backend.url(), backend.options)
    for prefix in ("/x", "a//", "a/../b/"):
        with pytest.raises(ValueError, match="invalid object prefix"):
            lake.list_objects(prefix)


def small_parts(backend, **extra):
    return {**backend.options, **({} if backend.name == "local" else SMALL_PARTS), **extra}


def payload(n, seed=1):
    out, block = bytearray(), hashlib.sha256(str(seed).encode()).digest()
    while len(out) < n:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:n])


@pytest.mark.parametrize("size", [0, 1000, 5 * PART + 123])
def test_writer_streams_the_object(backend, size):
    """Below the threshold one put; above it parts (S3: its multipart ETag
    proves it). Nothing shows at the key before finish."""
    url = backend.url()
    lake = tlc.Lake(url, small_parts(backend))
    data = payload(size)
    w = lake.object_writer("up/big.bin")
    for i in range(0, size, 10000):
        w.write(data[i:i + 10000])
    assert "up/big.bin" not in server_names(backend, url)
    w.finish()
    assert server_read(backend, url, "up/big.bin") == data
    assert lake.get_object("up/big.bin") == data
    if backend.name == "s3":
        etag = lake.stat_object("up/big.bin")["etag"]
        parts = (size + PART - 1) // PART
        assert etag.endswith(f"-{parts}") == (size > int(SMALL_PARTS["multipart_threshold"]))
        assert s3_pending_uploads(backend, object_name(url)) == []
    assert server_names(backend, url) == ["up/big.bin"]


def test_writer_with_more_parts_than_one_gcs_compose_takes(backend):
    """40 parts: GCS composes at most 32 at once, so groups first."""
    url = backend.url()
    lake = tlc.Lake(url, small_parts(backend))
    data = payload(40 * PART - 7, seed=2)
    with lake.object_writer("many/parts.bin") as w:
        for i in range(0, len(data), PART // 3):
            w.write(data[i:i + PART // 3])
    assert server_read(backend, url, "many/parts.bin") == data
    assert server_names(backend, url) == ["many/parts.bin"]  # no part or group objects left


def test_abort_leaves_nothing_and_keeps_the_old_object(backend):
    url = backend.url()
    lake = tlc.Lake(url, small_parts(backend))
    lake.put_object("k/x.bin", b"old")
    w = lake.object_writer("k/x.bin")
    w.write(payload(4 * PART))  # past the threshold: a multipart upload has begun
    w.abort()
    assert lake.get_object("k/x.bin") == b"old"
    assert server_names(backend, url) == ["k/x.bin"]
    if backend.name == "s3":
        assert s3_pending_uploads(backend, object_name(url)) == []
    if backend.name == "local":
        assert not any(".tmp-" in f for _, _, fs in os.walk(url) for f in fs)


def test_writer_failure_leaves_nothing(backend):
    """The third part fails every time: finish reports it, the upload is
    aborted, and the key keeps nothing."""
    if backend.name == "local":
        pytest.skip("no server to fail")
    url = backend.url()

    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        proxy.refuse(lambda path: sends_part(backend, path, 2))  # the third part, every time
        lake = tlc.Lake(url, backend.through(proxy, **SMALL_PARTS, max_retries="1", retry_backoff="1ms"))
        w = lake.object_writer("f/x.bin")
        with pytest.raises(RuntimeError, match="503"):
            for i in range(8):
                w.write(payload(PART, seed=i))
            w.finish()
        w.abort()  # after a failed write the caller still ends the writer
        time.sleep(0.2)
    assert server_names(backend, url) == []
    if backend.name == "s3":
        assert s3_pending_uploads(backend, object_name(url)) == []


def test_objects_beside_tables(backend):
    """The objects API sees the whole lake, tables' files included."""
    import pyarrow as pa
    url = backend.url()
    lake = tlc.Lake(url, backend.options)
    lake.put_object("landing/a.csv", b"x\n")
    lake.create_table("iot.r", pa.schema([("k", pa.string())]))
    top = [o["key"] for o in lake.list_objects("", recursive=False)]
    assert top == ["iot/", "landing/", "timelake-tables.json"]
    assert "iot/r/metadata/v1.metadata.json" in [o["key"] for o in lake.list_objects("iot/")]
    assert lake.tables() == ["iot.r"]
