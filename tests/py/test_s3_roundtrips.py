"""The append's write path over S3 (moto) through a recording proxy: three
sequential storage round trips (one parallel batch, then the conditional
create with the head object's PUT beside it, tests/py/test_s3_head.py, then
the parent version's start read back to tell a dropped table, beside the
version hint's PUT); a
lost race re-uploading only the manifest list and the index, a cold open in
one round trip (the listing and the head at once), and an unknown commit
outcome that keeps the files a landed commit refers to (checked by pyiceberg
reading every row)."""

import asyncio
import datetime as dt

import pytest

import tlc
from fault_proxy import FaultProxy, Faults, WaveProxy, round_trips
from store_servers import server_fixture
from test_s3 import READINGS, iceberg, keys_under, readings

s3 = pytest.fixture(scope="module")(server_fixture("s3"))

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def trips_of(proxy, fn, *waves):
    """The requests fn makes and their round trips. The proxy holds each of
    `waves` until all of it has arrived (fault_proxy.WaveProxy), so requests
    sent in parallel overlap in the log however the client's threads are
    scheduled; a request is logged before it is answered, so the log is
    complete when fn returns."""
    proxy.expect(*waves)
    mark = proxy.mark()
    fn()
    assert proxy.incomplete == [], proxy.incomplete
    reqs = sorted(proxy.requests_since(mark))
    return round_trips(reqs), reqs


def put_of(name):
    return lambda method, path: method == "PUT" and path.endswith("/metadata/" + name)


def is_batch(method, path):
    """A PUT of an append's batch: not a version, the head or the hint."""
    return method == "PUT" and "/metadata/v" not in path and not path.endswith(
        ("/metadata/timelake-c-head", "/metadata/version-hint.text"))


def three_days(n):
    """Rows over three daily partitions: three data files."""
    return [readings(n, start=T0 + dt.timedelta(days=d), device=f"d{d}") for d in range(3)]


def concat(tables):
    import pyarrow as pa
    return pa.concat_tables(tables)


def test_append_is_three_round_trips(s3):
    url = s3.url()
    with WaveProxy(s3.endpoint) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint)
        t = tlc.Lake(url, opts).create_table("iot.r", READINGS, time_column="time", series_key=["device_id"])
        for k in range(3):
            rows = concat(three_days(20 + k))
            parent_get = (lambda k: lambda m, p: m == "GET" and p.endswith(f"/metadata/v{k + 1}.metadata.json"))(k)
            trips, reqs = trips_of(proxy, lambda: t.append(rows, batch_id=f"b{k}", maintain=False),
                                   [("batch", is_batch, 6)],
                                   [("create", put_of(f"v{k + 2}.metadata.json"), 1), ("head", put_of("timelake-c-head"), 1)],
                                   [("parent", parent_get, 1), ("hint", put_of("version-hint.text"), 1)])
            paths = [r[3] for r in reqs]
            # The batch: 3 data files, manifest, manifest list, index; then the
            # commit and, in parallel with it, the head; then the start of
            # the parent version read back (a drop racing the commit would
            # have deleted it: the commit is then undone, commit_point.h),
            # beside the version hint's PUT.
            parent = [r for r in reqs if r[2] == "GET"]
            hint = [r for r in reqs if r[3].endswith("/metadata/version-hint.text")]
            assert len(hint) == 1 and hint[0][0] >= [r for r in reqs if r[3].endswith(
                f"/metadata/v{k + 2}.metadata.json")][0][1], reqs
            assert len(parent) == 1 and parent[0][3].endswith(f"/metadata/v{k + 1}.metadata.json"), reqs
            create = [r for r in reqs if r[3].endswith(f"/metadata/v{k + 2}.metadata.json")]
            head = [r for r in reqs if r[3].endswith("/metadata/timelake-c-head")]
            batch = [r for r in reqs if r not in create + head + parent + hint]
            assert all(r[2] == "PUT" for r in batch + create + head), reqs
            assert len(create) == 1 and len(head) == 1, paths
            assert round_trips(batch) == 1, paths
            assert min(create[0][0], head[0][0]) >= max(r[1] for r in batch), reqs
            assert round_trips(batch + create + head) == 2, reqs
            assert parent[0][0] >= create[0][1], reqs  # may overlap the head's PUT
            assert trips in (2, 3), paths
            assert sum(p.endswith(".parquet") and "/data/" in p for p in paths) == 3
            assert sum(p.endswith("-m0.avro") for p in paths) == 1
            assert sum("/metadata/snap-" in p for p in paths) == 1
            assert sum("/metadata/lvi-" in p for p in paths) == 1
            assert round_trips(parent + hint) == 1, reqs
        # A cold open: list the versions and read the head at once.
        trips, reqs = trips_of(proxy, lambda: tlc.Lake(url, opts).table("iot.r"),
                               [("list", lambda m, p: m == "GET" and "list-type=2" in p, 1),
                                ("head", lambda m, p: m == "GET" and p.endswith("/metadata/timelake-c-head"), 1)])
        assert trips == 1, [r[3] for r in reqs]
        assert sorted((r[2], "list-type=2" in r[3] or r[3].endswith("/timelake-c-head")) for r in reqs) == [
            ("GET", True), ("GET", True)]
    assert iceberg(s3, url, "iot/r").scan().to_arrow().num_rows == 3 * (20 + 21 + 22)
    assert tlc.Lake(url, s3.options).table("iot.r").version == 4


def test_lost_race_reuploads_only_list_and_index(s3):
    url = s3.url()
    tlc.Lake(url, s3.options).create_table("t", READINGS, time_column="time", series_key=["device_id"])
    with WaveProxy(s3.endpoint) as proxy:
        opts = s3.option_list(aws_endpoint=proxy.endpoint)
        winner, loser = tlc.Lake(url, opts).table("t"), tlc.Lake(url, opts).table("t")
        winner.append(readings(10, device="w"), batch_id="w", maintain=False)
        rows = concat(three_days(5))
        trips, reqs = trips_of(proxy, lambda: loser.append(rows, batch_id="l", maintain=False))
    puts = [r[3] for r in reqs if r[2] == "PUT"]
    data = [p for p in puts if "/data/" in p]
    assert len(data) == 3 and len(set(data)) == 3  # uploaded once, in the first attempt
    assert sum(p.endswith("-m0.avro") for p in puts) == 1
    assert sum("/metadata/snap-" in p for p in puts) == 2  # one per attempt
    assert sum("/metadata/lvi-" in p for p in puts) == 2
    assert sum(p.endswith("/v2.metadata.json") for p in puts) == 1  # lost
    # Each attempt sends its head beside its create: the lost one's may have
    # replaced the winner's head (readers then find it does not match v2).
    assert sum(p.endswith("/metadata/timelake-c-head") for p in puts) == 2
    # The won attempt: its create and head, then the version hint.
    assert {p.rsplit("/", 1)[1] for p in puts[-3:-1]} == {"v3.metadata.json", "timelake-c-head"}
    assert puts[-1].endswith("/metadata/version-hint.text")
    assert loser.version == 3
    # The lost attempt's list and index are gone; the rest is referenced.
    keys = keys_under(s3, url)
    lost = [p.rsplit("/", 1)[1] for p in puts if "-1-" in p and "/metadata/snap-" in p]
    assert not any(k.endswith(lost[0]) for k in keys)
    assert sum("/metadata/lvi-" in k for k in keys) == 2  # the winner's and the loser's retry
    rows = iceberg(s3, url, "default/t").scan().to_arrow()
    assert sorted(set(rows.column("device_id").to_pylist())) == ["d0", "d1", "d2", "w"]
    assert rows.num_rows == 10 + 15


def test_unknown_commit_outcome_keeps_the_landed_files(s3):
    """The conditional create reaches the server but its answer is cut, and
    every read-back fails too: the outcome stays unknown and the append
    reports an error. The commit did land, so its files must all be there."""
    url = s3.url()
    tlc.Lake(url, s3.options).create_table("t", READINGS, time_column="time", series_key=["device_id"])
    with FaultProxy(s3.endpoint, Faults(), seed=1) as proxy:
        original = proxy._forward

        async def forward(method, path, headers, body):
            if path.endswith("/v2.metadata.json") and method in ("GET", "HEAD"):
                raise ConnectionResetError("read-back cut")
            answer = await original(method, path, headers, body)
            if method == "PUT" and path.endswith("/v2.metadata.json"):
                raise ConnectionResetError("commit answer cut")
            return answer
        proxy._forward = forward
        opts = s3.option_list(aws_endpoint=proxy.endpoint, max_retries="2", retry_backoff="1ms")
        t = tlc.Lake(url, opts).table("t")
        with pytest.raises(RuntimeError, match="unknown|v2.metadata.json"):
            t.append(concat(three_days(7)), batch_id="u")
    # It landed: every data file it refers to is there, and the batch is not committed again.
    table = iceberg(s3, url, "default/t")
    assert table.scan().to_arrow().num_rows == 21
    t = tlc.Lake(url, s3.options).table("t")
    assert t.version == 2
    assert t.append(concat(three_days(7)), batch_id="u")["duplicate"]
    assert t.info()["rows"] == 21


def test_definite_failure_removes_everything(s3):
    """Uploads fail for good (every data-file PUT answered 500): nothing was
    committed, and nothing of the append stays behind."""
    url = s3.url()
    tlc.Lake(url, s3.options).create_table("t", READINGS, time_column="time", series_key=["device_id"])
    before = keys_under(s3, url)
    with FaultProxy(s3.endpoint, Faults(), seed=1) as proxy:
        original = proxy._forward

        async def forward(method, path, headers, body):
            if method == "PUT" and "/data/" in path and "time_day%3D2026-01-02" in path:
                await asyncio.sleep(0.05)  # let the rest of the batch land first
                raise ConnectionResetError("upload cut")
            return await original(method, path, headers, body)
        proxy._forward = forward
        opts = s3.option_list(aws_endpoint=proxy.endpoint, max_retries="1", retry_backoff="1ms")
        t = tlc.Lake(url, opts).table("t")
        with pytest.raises(RuntimeError):
            t.append(concat(three_days(4)), batch_id="x")
        assert t.version == 1
    assert keys_under(s3, url) == before
