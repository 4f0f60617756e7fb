"""The head object (metadata/timelake-c-head) on object stores: an append
still in two sequential round trips (the head PUT beside the conditional
create), a cold latest() in one, a cold open in one, the metadata of a cold
filtered query in one, on S3, Azure and GCS, and after a maintain too; a
stale, replaced, corrupt, truncated or foreign head is detected and the
newest commit is read instead, and so is a head of the newest version number
whose metadata is not the committed vN's (a race's loser, a dropped and
recreated table): the listing's size and MD5 of vN tell; the reference's own
head goes stale after our commits and the reference sees that."""

import hashlib
import struct

import datetime as dt
import time
import urllib.parse
import urllib.request

import boto3
import pyarrow as pa
import pytest

import tlc
from fault_proxy import FaultProxy, WaveProxy, round_trips
from store_servers import azure_request, server_fixture
from test_s3 import READINGS, readings

s3 = pytest.fixture(scope="module")(server_fixture("s3"))
azure = pytest.fixture(scope="module")(server_fixture("azure"))
gcs = pytest.fixture(scope="module")(server_fixture("gcs"))

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
HEAD = "metadata/timelake-c-head"
QUERY = ("SELECT count(*) AS n FROM iot.r WHERE device_id = 'd1' "
         "AND time < TIMESTAMPTZ '2026-01-02 00:10:00+00'")


class SlowProxy(FaultProxy):
    """Holds every request, so parallel requests overlap and sequential ones cannot."""

    def _choose(self):
        return "delay", 0.2


def traced(proxy, fn, *waves):
    """What fn returns and the requests it made (the proxy logs a request
    before answering it: all are in when fn returns). With waves, the proxy
    (WaveProxy) holds each until all of it has arrived, so requests sent in
    parallel overlap in the log however the client's threads are scheduled."""
    if waves:
        proxy.expect(*waves)
    mark, start = proxy.mark(), time.monotonic()
    out = fn()
    if waves:
        assert proxy.incomplete == [], proxy.incomplete
    return out, sorted(r for r in proxy.requests_since(mark) if r[0] >= start)


# A cold open on S3: the listing of the versions and the head, at once.
COLD = [("listing", lambda m, p: m == "GET" and "list-type=2" in p, 1),
        ("head", lambda m, p: m == "GET" and p.endswith("/" + HEAD), 1)]


def bucket(s3):
    return boto3.client("s3", endpoint_url=s3.endpoint, aws_access_key_id="testing",
                        aws_secret_access_key="testing", region_name="us-east-1")


def key_of(s3, url, table, name):
    return f"{url.split('/', 3)[3]}/{table}/{name}"


def three_days(n, k):
    return pa.concat_tables([readings(n, start=T0 + dt.timedelta(days=d, hours=k), device=f"d{d}")
                             for d in range(3)])


def make_table(backend, url, appends=3, properties=None):
    lake = tlc.Lake(url, backend.options)
    t = lake.create_table("iot.r", READINGS, time_column="time", series_key=["device_id"],
                          properties=properties)
    for k in range(appends):
        t.append(three_days(10 + k, k), batch_id=f"b{k}", maintain=False)
    return lake, t


def newest(lake):
    return sorted((r["device_id"], r["time"], r["temp"]) for r in lake.latest("iot.r").to_pylist())


def test_cold_reads_in_one_round_trip(s3):
    url = s3.url()
    _, t = make_table(s3, url)
    t.close()
    expect_latest = newest(tlc.Lake(url, s3.options))
    assert [d for d, *_ in expect_latest] == ["d0", "d1", "d2"]
    with WaveProxy(s3.endpoint) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint)
        got, reqs = traced(proxy, lambda: newest(tlc.Lake(url, opts)), COLD)
        assert got == expect_latest
        assert round_trips(reqs) == 1, [r[2:4] for r in reqs]
        assert sorted(r[2] for r in reqs) == ["GET", "GET"]  # the listing and the head

        info, reqs = traced(proxy, lambda: tlc.Lake(url, opts).table("iot.r").info(), COLD)
        assert info["version"] == 4 and info["rows"] == 3 * (10 + 11 + 12)
        assert round_trips(reqs) == 1, [r[2:4] for r in reqs]

        n, reqs = traced(proxy, lambda: tlc.Lake(url, opts).sql(QUERY).column("n")[0].as_py(), COLD)
        assert n == 10  # d1's rows of the first append fall before 00:10 on day 2 (one a minute)
        meta = [r for r in reqs if "/data/" not in r[3]]
        data = [r for r in reqs if "/data/" in r[3]]
        assert round_trips(meta) == 1, [r[2:4] for r in reqs]
        assert data and min(r[0] for r in data) >= max(r[1] for r in meta) - 0.01
        assert len(data) == 1  # pruned to day 2 by the carried manifests' bounds


@pytest.mark.parametrize("kind", ["s3", "azure", "gcs"])
def test_append_writes_the_head_beside_the_commit(request, kind):
    """Three round trips: the batch, then the conditional create and the
    head's PUT in parallel, then the start of the parent version read back
    (commit_point.h) and the version hint's PUT; then a cold open, latest() and the metadata of a
    filtered query in one round trip each, through that head."""
    backend = request.getfixturevalue(kind)
    url = backend.url()
    lake, t = make_table(backend, url, appends=1)
    t.close()
    with SlowProxy(backend.endpoint) as proxy:
        opts = backend.through(proxy)
        t = tlc.Lake(url, opts).table("iot.r")
        _, reqs = traced(proxy, lambda: t.append(three_days(5, 7), batch_id="x", maintain=False))
        reads = [r for r in reqs if r[2] == "GET"]
        hints = [r for r in reqs if "version-hint.text" in urllib.parse.unquote(r[3])]
        assert len(hints) == 1, reqs
        writes = [r for r in reqs if r[2] != "GET" and r not in hints]
        assert round_trips(writes) == 2, [r[2:4] for r in reqs]
        last = [r for r in writes if r[0] >= max(q[1] for q in reqs if q[0] == reqs[0][0]) - 0.01]
        assert any(HEAD.replace("/", "%2F") in r[3] or r[3].endswith(HEAD) for r in last), last
        # (GCS names a conditional create's object in its body.)
        assert any("v3.metadata.json" in r[3] or "ifGenerationMatch=0" in r[3] for r in last), last
        assert all(r[2] in ("PUT", "POST") for r in writes)  # the handle held every manifest
        # The parent read back, after the create: one ranged GET of v2.
        assert len(reads) == 1 and "v2.metadata.json" in reads[0][3], reads
        create = [r for r in last if "v3.metadata.json" in r[3] or "ifGenerationMatch=0" in r[3]]
        assert reads[0][0] >= create[0][1] - 0.01, reqs  # may overlap the head's PUT
        t.close()
        for fn in (lambda: tlc.Lake(url, opts).table("iot.r").info(), lambda: newest(tlc.Lake(url, opts))):
            _, reqs = traced(proxy, fn)
            assert round_trips(reqs) == 1, [r[2:4] for r in reqs]
        n, reqs = traced(proxy, lambda: tlc.Lake(url, opts).sql(QUERY).column("n")[0].as_py())
        assert n == 10
        assert round_trips(reqs) == 2, [r[2:4] for r in reqs]
    assert newest(tlc.Lake(url, backend.options))[0][1] == T0 + dt.timedelta(hours=7, minutes=4)


def test_cold_read_after_maintain_is_one_round_trip(s3):
    """A maintenance commit writes the head as an append does."""
    url = s3.url()
    _, t = make_table(s3, url, appends=3)
    before = t.version
    report = t.maintain(retention=False, expire=False)
    assert t.version > before, report
    t.close()
    expect = newest(tlc.Lake(url, s3.options))
    with WaveProxy(s3.endpoint) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint)
        got, reqs = traced(proxy, lambda: newest(tlc.Lake(url, opts)), COLD)
        assert round_trips(reqs) == 1, [r[2:4] for r in reqs]
        info, reqs = traced(proxy, lambda: tlc.Lake(url, opts).table("iot.r").info(), COLD)
        assert round_trips(reqs) == 1, [r[2:4] for r in reqs]
    assert got == expect
    assert info["version"] == before + 1 and info["rows"] == 3 * (10 + 11 + 12)


def test_cold_read_after_snapshot_expiry_is_one_round_trip(s3):
    """The expiry commit writes the head too: a cold reader does not wait for
    the next append to be back at one round trip."""
    url = s3.url()
    _, t = make_table(s3, url, appends=4,
                      properties={"timelake.max-snapshots": "2", "timelake.min-snapshots": "1"})
    before = t.version
    report = t.maintain(compact=False, retention=False, expire=True)
    assert report["snapshots_expired"] >= 2, report
    assert t.version == before + 1, report  # the expiry is the only commit
    t.close()
    direct = tlc.Lake(url, s3.options)
    expect_latest, expect_n = newest(direct), direct.sql(QUERY).column("n")[0].as_py()
    with WaveProxy(s3.endpoint) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint)
        got, reqs = traced(proxy, lambda: newest(tlc.Lake(url, opts)), COLD)
        assert round_trips(reqs) == 1, [r[2:4] for r in reqs]
        info, reqs = traced(proxy, lambda: tlc.Lake(url, opts).table("iot.r").info(), COLD)
        assert round_trips(reqs) == 1, [r[2:4] for r in reqs]
        n, reqs = traced(proxy, lambda: tlc.Lake(url, opts).sql(QUERY).column("n")[0].as_py(), COLD)
        assert round_trips([r for r in reqs if "/data/" not in r[3]]) == 1, [r[2:4] for r in reqs]
    assert got == expect_latest and n == expect_n == 10
    assert info["version"] == before + 1 and info["snapshots"] <= 2
    assert info["rows"] == 3 * (10 + 11 + 12 + 13)


def test_no_head_when_the_table_says_none(s3):
    url = s3.url()
    make_table(s3, url, appends=1, properties={"timelake.head-format": "none"})
    keys = [o["Key"] for o in bucket(s3).list_objects_v2(Bucket=s3.bucket, Prefix=url.split("/", 3)[3])["Contents"]]
    assert not any(k.endswith(HEAD) for k in keys)
    assert tlc.Lake(url, s3.options).table("iot.r").info()["rows"] == 30


def replace_head(s3, url, fn):
    key = key_of(s3, url, "iot/r", HEAD)
    c = bucket(s3)
    old = c.get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    c.put_object(Bucket=s3.bucket, Key=key, Body=fn(old))
    return old


@pytest.mark.parametrize("damage", ["older", "corrupt", "truncated", "empty", "garbage"])
def test_a_bad_head_is_never_trusted(s3, damage):
    url = s3.url()
    _, t = make_table(s3, url, appends=2)
    key = key_of(s3, url, "iot/r", HEAD)
    old = bucket(s3).get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    t.append(readings(3, start=T0 + dt.timedelta(days=5), device="late"), batch_id="late", maintain=False)
    t.close()
    if damage == "older":
        bad = old  # an earlier head put back: stale
    else:
        cur = bucket(s3).get_object(Bucket=s3.bucket, Key=key)["Body"].read()
        bad = {"corrupt": cur[:100] + bytes([cur[100] ^ 1]) + cur[101:], "truncated": cur[: len(cur) // 2],
               "empty": b"", "garbage": b"TLHD" + bytes(range(200))}[damage]
    replace_head(s3, url, lambda _: bad)
    lake = tlc.Lake(url, s3.options)
    assert ("late", T0 + dt.timedelta(days=5, minutes=2), 2.0) in newest(lake)
    assert lake.table("iot.r").version == 4
    assert lake.sql("SELECT count(*) AS n FROM iot.r").column("n")[0].as_py() == 30 + 33 + 3


def reseal(head, version=None, metadata=None):
    """A head re-encoded with another version number or metadata bytes, its
    SHA-256 seal made right (the layout of src/table/head.h)."""
    body = head[:-32]
    codec_end = 14 + body[13]
    (md_len,) = struct.unpack_from("<Q", body, codec_end)
    md = body[codec_end + 8: codec_end + 8 + md_len]
    version = struct.unpack_from("<Q", body, 5)[0] if version is None else version
    metadata = md if metadata is None else metadata
    new = (body[:5] + struct.pack("<Q", version) + body[13:codec_end] + struct.pack("<Q", len(metadata))
           + metadata + body[codec_end + 8 + md_len:])
    return new + hashlib.sha256(new).digest()


def metadata_of(head):
    codec_end = 14 + head[13]
    (md_len,) = struct.unpack_from("<Q", head, codec_end)
    return head[codec_end + 8: codec_end + 8 + md_len]


def reads_v4(s3, url):
    """Does a cold open read v4.metadata.json itself (the head not trusted)?"""
    with SlowProxy(s3.endpoint) as proxy:
        info, reqs = traced(proxy, lambda: tlc.Lake(url, s3.option_list(aws_endpoint=proxy.endpoint))
                            .table("iot.r").info())
    assert info["version"] == 4
    return any(r[2] == "GET" and r[3].endswith("/metadata/v4.metadata.json") for r in reqs)


@pytest.mark.parametrize("forged", ["previous", "same-size"])
def test_a_head_with_other_metadata_for_the_newest_version_is_never_trusted(s3, forged):
    """What a writer that lost the race for v4 leaves: a well-formed head
    numbered 4 whose metadata is not the committed v4's (here the previous
    version's, or v4's with one digit changed, same size)."""
    url = s3.url()
    _, t = make_table(s3, url, appends=2)
    key = key_of(s3, url, "iot/r", HEAD)
    old = bucket(s3).get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    t.append(readings(3, start=T0 + dt.timedelta(days=5), device="late"), batch_id="late", maintain=False)
    t.close()
    cur = bucket(s3).get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    assert not reads_v4(s3, url)  # the genuine head is trusted
    if forged == "previous":
        bad = reseal(old, version=4)
    else:
        md = metadata_of(cur)
        i = md.index(b'"last-updated-ms":') + len(b'"last-updated-ms":') + 5
        md = md[:i] + bytes([ord("0") + (md[i] - ord("0") + 1) % 10]) + md[i + 1:]
        bad = reseal(cur, metadata=md)
    replace_head(s3, url, lambda _: bad)
    assert reads_v4(s3, url)
    lake = tlc.Lake(url, s3.options)
    assert ("late", T0 + dt.timedelta(days=5, minutes=2), 2.0) in newest(lake)
    assert lake.sql("SELECT count(*) AS n FROM iot.r").column("n")[0].as_py() == 30 + 33 + 3


def test_the_head_of_a_dropped_table_is_never_trusted(s3):
    """A table dropped and created again under the same name reaches the same
    version: the old table's head (same location, same number) is not used."""
    url = s3.url()
    lake, t = make_table(s3, url, appends=3)
    key = key_of(s3, url, "iot/r", HEAD)
    old = bucket(s3).get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    t.close()
    lake.drop_table("iot.r")
    t = lake.create_table("iot.r", READINGS, time_column="time", series_key=["device_id"])
    for k in range(3):
        t.append(readings(2, start=T0 + dt.timedelta(days=20 + k), device=f"new{k}"), batch_id=f"n{k}",
                 maintain=False)
    t.close()
    replace_head(s3, url, lambda _: old)
    assert reads_v4(s3, url)
    assert [d for d, *_ in newest(tlc.Lake(url, s3.options))] == ["new0", "new1", "new2"]


def test_a_foreign_head_is_never_trusted(s3):
    """Another table's head at the same version (copied over ours) names
    another location: it is not used."""
    url = s3.url()
    make_table(s3, url, appends=2)
    other = s3.url()
    lake2 = tlc.Lake(other, s3.options)
    t2 = lake2.create_table("iot.r", READINGS, time_column="time", series_key=["device_id"])
    t2.append(readings(2, device="foreign"), maintain=False)
    t2.append(readings(2, device="foreign"), maintain=False)
    foreign = bucket(s3).get_object(Bucket=s3.bucket, Key=key_of(s3, other, "iot/r", HEAD))["Body"].read()
    replace_head(s3, url, lambda _: foreign)
    assert [d for d, *_ in newest(tlc.Lake(url, s3.options))] == ["d0", "d1", "d2"]


def test_reference_commit_makes_our_head_stale(s3, reference):
    """The reference appends without updating our head: we read its commit."""
    url = s3.url()
    _, t = make_table(s3, url, appends=2)
    t.close()
    reference(f"""
        import json, timelake, datetime as dt, pyarrow as pa
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
        lake.table("iot.r").append(pa.table({{"time": [dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)],
            "device_id": ["ref"], "temp": [7.0]}}, schema=schema), batch_id="ref")
        print(json.dumps({{}}))
    """)
    lake = tlc.Lake(url, s3.options)
    assert ("ref", dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc), 7.0) in newest(lake)
    t = lake.table("iot.r")
    assert t.version >= 4  # its commit (and perhaps its inline maintenance)
    # Our next append writes a fresh head over the reference's commit.
    t.append(readings(1, start=T0 + dt.timedelta(days=3), device="after"), batch_id="after", maintain=False)
    t.close()
    got = newest(tlc.Lake(url, s3.options))
    assert {"ref", "after"} <= {d for d, *_ in got}


def test_reference_maintain_leaves_no_trusted_stale_head(s3, reference):
    """The reference compacts our table (a commit that does not update our
    head, which it may also remove as an unreferenced file): we read its
    result, and our next append writes a fresh head."""
    url = s3.url()
    _, t = make_table(s3, url, appends=3)
    t.close()
    out = reference(f"""
        import json, timelake
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        r = lake.table("iot.r").maintain()
        t = lake.table("iot.r")
        print(json.dumps({{"version": t.version, "files": t.info()["files"]}}))
    """)
    lake = tlc.Lake(url, s3.options)
    t = lake.table("iot.r")
    assert t.version == out["version"] > 4
    assert t.info()["files"] == out["files"]
    assert lake.sql("SELECT count(*) AS n FROM iot.r").column("n")[0].as_py() == 3 * (10 + 11 + 12)
    t.append(readings(1, start=T0 + dt.timedelta(days=4), device="z"), batch_id="z", maintain=False)
    t.close()
    with WaveProxy(s3.endpoint) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint)
        got, reqs = traced(proxy, lambda: newest(tlc.Lake(url, opts)), COLD)
        assert round_trips(reqs) == 1
    assert [d for d, *_ in got] == ["d0", "d1", "d2", "z"]


@pytest.mark.parametrize("head_format", ["json", "arrow"])
def test_reference_sees_its_head_go_stale_after_our_append(s3, reference, head_format):
    url = s3.url()
    reference(f"""
        import json, time, timelake, datetime as dt, pyarrow as pa
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
        t = lake.create_table("iot.r", schema, time_column="time", series_key=["device_id"],
                              properties={{"timelake.head-format": {head_format!r}}})
        t.append(pa.table({{"time": [dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)], "device_id": ["a"],
                           "temp": [1.0]}}, schema=schema), batch_id="r1")
        time.sleep(1.5)  # its head is written in the background
        print(json.dumps({{}}))
    """)
    keys = [o["Key"] for o in bucket(s3).list_objects_v2(Bucket=s3.bucket, Prefix=url.split("/", 3)[3])["Contents"]]
    assert any(k.endswith("/metadata/timelake-head") for k in keys)  # the reference's head is there
    lake = tlc.Lake(url, s3.options)
    t = lake.table("iot.r")
    t.append(readings(1, start=T0 + dt.timedelta(days=1), device="b"), batch_id="c1", maintain=False)
    t.close()
    out = reference(f"""
        import json, timelake
        lake = timelake.Lake({url!r}, storage_options={s3.options!r})
        rows = lake.latest("iot.r").to_pylist()
        n = lake.sql("SELECT count(*) AS n FROM iot.r").column("n")[0].as_py()
        print(json.dumps({{"latest": sorted(r["device_id"] for r in rows), "n": n,
                          "version": lake.table("iot.r").version}}))
    """)
    assert out == {"latest": ["a", "b"], "n": 2, "version": 3}
    assert [d for d, *_ in newest(tlc.Lake(url, s3.options))] == ["a", "b"]


def azure_blob(backend, name, body=None):
    path = f"/{backend.bucket}/{name}"
    if body is None:
        return azure_request(backend.endpoint, "GET", path).read()
    azure_request(backend.endpoint, "PUT", path, body=body, headers={"x-ms-blob-type": "BlockBlob", "Content-Type": ""})


def gcs_object(backend, name, body=None):
    quoted = urllib.parse.quote(name, safe="")
    if body is None:
        return urllib.request.urlopen(f"{backend.endpoint}/storage/v1/b/{backend.bucket}/o/{quoted}?alt=media").read()
    req = urllib.request.Request(f"{backend.endpoint}/upload/storage/v1/b/{backend.bucket}/o?uploadType=media&name={quoted}",
                                 data=body, method="POST", headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req).read()


@pytest.mark.parametrize("kind", ["azure", "gcs"])
def test_head_on_azure_and_gcs(request, kind):
    """The same on Azurite and fake-gcs-server: the head is written and used,
    and an older head put back after a newer commit is not trusted."""
    backend = request.getfixturevalue(kind)
    access = azure_blob if kind == "azure" else gcs_object
    url = backend.url()
    _, t = make_table(backend, url, appends=2)
    name = f"{url.split('/', 3)[3]}/iot/r/{HEAD}"
    old = access(backend, name)
    assert old[:4] == b"TLHD"
    assert [d for d, *_ in newest(tlc.Lake(url, backend.options))] == ["d0", "d1", "d2"]
    t.append(readings(2, start=T0 + dt.timedelta(days=9), device="new"), batch_id="n", maintain=False)
    t.close()
    assert access(backend, name) != old  # rewritten
    assert "new" in [d for d, *_ in newest(tlc.Lake(url, backend.options))]
    access(backend, name, old)
    lake = tlc.Lake(url, backend.options)
    assert "new" in [d for d, *_ in newest(lake)]
    assert lake.table("iot.r").version == 4
