"""Group commit in the notification server: concurrent requests for one table
land together in one commit, and each keeps its own outcome. Many senders at
once, with good files, bad files and the same objects notified several times;
a server killed with SIGKILL while commits are under way, then every
notification delivered again; two servers racing on one table. The rows
expected are read from the uploaded files with pyarrow, the rows present with
pyiceberg (neither is our reader): every good file's rows exactly once, nothing
of a bad one."""

import asyncio
import concurrent.futures
import io
import os
import signal
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import fault_proxy
import notify_support as ns
import store_servers
import test_notify_server as tns

TABLE = "iot.readings"
# Senders here open a connection per request, and the server counts a closed
# one until its thread has finished with it: a pool of N senders can briefly
# hold N + 1 connections, and one over --max-per-client is reset. The limit
# itself is tested in test_notify_server; these tests give it room.
ROOM = ("--max-per-client", "64")


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    if not tns.CLI.exists():
        pytest.skip(f"{tns.CLI} is not built")
    proc, backend = store_servers.start_moto(tmp_path_factory.mktemp("moto"))
    yield backend
    store_servers.stop(proc)


def rows_of_file(i, n):
    """n rows of file i (file, row identify each)."""
    base = 1_767_225_600 + i * 100_000
    return pa.table({
        "time": pa.array([(base + r) * 1_000_000 for r in range(n)], pa.timestamp("us", tz="UTC")),
        "device_id": [f"dev-{(i + r) % 5}" for r in range(n)],
        "temp": [float(i) + r / 1000 for r in range(n)],
        "file": pa.array([i] * n, pa.int64()),
        "row": pa.array(range(n), pa.int64()),
    })


def upload_good(s3, bucket, prefix, ids, n_rows):
    """CSV and Parquet files; returns {key: the rows pyarrow reads back from the bytes}."""
    expected = {}
    for i in ids:
        kind = ("csv", "parquet")[i % 2]
        buf = io.BytesIO()
        (pq.write_table if kind == "parquet" else pacsv.write_csv)(rows_of_file(i, n_rows), buf)
        key = f"{prefix}{i:04d}.{kind}"
        s3.put_object(Bucket=bucket, Key=key, Body=buf.getvalue())
        back = pq.read_table(io.BytesIO(buf.getvalue())) if kind == "parquet" else \
            pacsv.read_csv(io.BytesIO(buf.getvalue()))
        expected[key] = sorted(zip(back.column("file").to_pylist(), back.column("row").to_pylist()))
    return expected


def upload_bad(s3, bucket, prefix):
    """Files that fail: CSV that does not parse (refused before the group), and
    Parquet that parses but does not fit the table (refused inside the group:
    an unknown column, text in a float column)."""
    bad = {}
    key = f"{prefix}bad-time.csv"
    s3.put_object(Bucket=bucket, Key=key, Body=b"time,device_id,temp\nnot-a-time,d,1.5\n")
    bad[key] = "not-a-time"
    t = rows_of_file(900, 3).append_column("extra", pa.array([1, 2, 3]))
    buf = io.BytesIO()
    pq.write_table(t, buf)
    key = f"{prefix}bad-column.parquet"
    s3.put_object(Bucket=bucket, Key=key, Body=buf.getvalue())
    bad[key] = "extra"
    t = rows_of_file(901, 3).set_column(2, "temp", pa.array(["warm", "hot", "cold"]))
    buf = io.BytesIO()
    pq.write_table(t, buf)
    key = f"{prefix}bad-temp.parquet"
    s3.put_object(Bucket=bucket, Key=key, Body=buf.getvalue())
    bad[key] = "temp"
    return bad


def body_of(bucket, keys):
    return {"events": [tns.event(k, bucket=bucket) for k in keys]}


def post_all_at_once(items, senders):
    """Each (url, body) posted from a pool of `senders` threads, the first
    wave released together (later ones follow as threads free up: a barrier
    for them would wait for a wave that never fills); (status, answer) each."""
    gate = threading.Barrier(min(senders, len(items)))

    def one(numbered):
        i, (url, body) = numbered
        if i < gate.parties:
            try:
                gate.wait(timeout=60)
            except threading.BrokenBarrierError:
                pass
        return tns.post_json(url + "/", body, tns.TOKEN)

    with concurrent.futures.ThreadPoolExecutor(senders) as pool:
        return list(pool.map(one, enumerate(items)))


def send_all_at_once(url, bodies, senders):
    return post_all_at_once([(url, b) for b in bodies], senders)


def versions(lake_dir):
    return list((Path(lake_dir) / "iot" / "readings" / "metadata").glob("v*.metadata.json"))


def table_rows(lake_dir):
    """(file, row) of every row of the table's current snapshot, by pyiceberg."""
    meta = sorted(versions(lake_dir), key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    t = StaticTable.from_metadata(str(meta)).scan().to_arrow()
    return list(zip(t.column("file").to_pylist(), t.column("row").to_pylist()))


def all_batch_ids(lake_dir):
    """Every batch id of every snapshot, a group's list flattened."""
    return [b for b in ns.batch_ids_of(lake_dir, "iot/readings") if b is not None]


def assert_exactly(lake_dir, expected):
    rows = sorted(table_rows(lake_dir))
    want = sorted(r for rs in expected.values() for r in rs)
    assert len(rows) == len(want), f"{len(rows)} rows in the table, {len(want)} expected"
    assert rows == want


def test_many_senders_good_bad_and_repeated_files(moto, tmp_path):
    lake_dir = tmp_path / "lake"
    tns.create_tables(lake_dir, [TABLE])
    s3 = tns.s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-g")
    good = upload_good(s3, "landing-g", "g/", range(48), 300)
    bad = upload_bad(s3, "landing-g", "g/")
    keys = sorted(good)
    server = tns.Server(lake_dir, moto.endpoint, tmp_path, *ROOM, table=TABLE)
    try:
        # Four objects are in the table already: their ids are among the group's.
        for k in keys[:4]:
            assert server.post(body_of("landing-g", [k]))[0] == 200
        # One request per object, every object twice (the second a concurrent
        # redelivery), the bad ones among them; 24 senders at once.
        single = [[k] for k in keys + sorted(bad)] * 2
        answers = send_all_at_once(server.url, [body_of("landing-g", b) for b in single], 24)
        for (key,), (status, answer) in zip(single, answers):
            detail = answer["results"][0]["detail"]
            if key in bad:
                assert status == 422, answer
                assert key in detail and bad[key] in detail, detail
            else:
                assert status == 200, answer
                assert detail in (f"{key}: loaded", f"{key}: duplicate")
        # A request of several objects, good and bad mixed, sent twice at once.
        mixed = [keys[10], sorted(bad)[1], keys[40]]
        for status, answer in send_all_at_once(server.url, [body_of("landing-g", mixed)] * 2, 2):
            assert status == 422
            assert [r["status"] for r in answer["results"]] == [200, 422, 200]
        loads = server.loads()
    finally:
        server.stop()
    assert_exactly(lake_dir, good)
    # Each good object's id recorded once, by the commit that holds its rows;
    # none of a bad one's.
    ids = all_batch_ids(lake_dir)
    assert sorted(ids) == keys
    # One load per good object; every other answer for it was a duplicate.
    fresh = sorted(l["key"] for l in loads if not l["duplicate"])
    assert fresh == keys
    assert all(l["rows"] == 0 for l in loads if l["duplicate"])
    assert all(l["rows"] == 300 for l in loads if not l["duplicate"])
    # Requests were committed together (24 senders, each commit an fsync or more).
    assert max(l.get("group", 0) for l in loads) > 1, "no commit served more than one request"


class HoldProxy(fault_proxy.FaultProxy):
    """Holds each GET whose path holds `held` until `release` is set."""

    def __init__(self, upstream, held):
        super().__init__(upstream)
        self.held, self.release, self.seen = held, threading.Event(), threading.Event()

    async def _hold(self, method, path):
        if method == "GET" and self.held in path:
            self.seen.set()
            while not self.release.is_set():
                await asyncio.sleep(0.01)

    def answered(self, part):
        with self._lock:
            return any(method == "GET" and part in path for _, _, method, path, _ in self.log)


def test_a_commit_waits_for_a_request_still_fetching(moto, tmp_path, monkeypatch):
    """A request counts as on its way to its table's group from before its
    object is fetched, not only while it parses: a commit ready to start waits
    for it (here without a time limit, so the machine's load cannot split
    them), and the two land in one commit. The slow request's GET is held
    until the fast one has fetched its object and had time to commit alone."""
    monkeypatch.setenv("TIMELAKE_NOTIFY_WAIT_COMING_MS", "60000")
    lake_dir = tmp_path / "lake"
    tns.create_tables(lake_dir, [TABLE])
    s3 = tns.s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-w")
    good = upload_good(s3, "landing-w", "w/", [0, 2], 50)  # two CSV files
    slow, fast = sorted(good)
    with HoldProxy(moto.endpoint, slow) as proxy:
        server = tns.Server(lake_dir, proxy.endpoint, tmp_path, *ROOM, table=TABLE)
        try:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                first = pool.submit(server.post, body_of("landing-w", [slow]))
                assert proxy.seen.wait(30), "the slow object was never fetched"
                second = pool.submit(server.post, body_of("landing-w", [fast]))
                for _ in range(3000):
                    if proxy.answered(fast):
                        break
                    time.sleep(0.01)
                time.sleep(0.3)  # what the fast request needs to commit on its own
                proxy.release.set()
                assert first.result()[0] == 200 and second.result()[0] == 200
            loads = server.loads()
        finally:
            proxy.release.set()
            server.stop()
    assert sorted(l["key"] for l in loads) == [slow, fast]
    assert [l["group"] for l in loads] == [2, 2], loads
    assert_exactly(lake_dir, good)


def test_the_events_of_one_request_load_side_by_side(moto, tmp_path, monkeypatch):
    """A request's events are fetched while the others' are and land in one
    commit: the first object's GET is held until the others' have been
    answered (one after another, they never would be), and the object named
    twice loads once, the other a duplicate."""
    monkeypatch.setenv("TIMELAKE_NOTIFY_WAIT_COMING_MS", "60000")
    lake_dir = tmp_path / "lake"
    tns.create_tables(lake_dir, [TABLE])
    s3 = tns.s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-f")
    good = upload_good(s3, "landing-f", "f/", [0, 1, 2], 50)  # CSV, Parquet, CSV
    held, a, b = sorted(good)
    with HoldProxy(moto.endpoint, held) as proxy:
        server = tns.Server(lake_dir, proxy.endpoint, tmp_path, *ROOM, table=TABLE)
        try:
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                reply = pool.submit(server.post, body_of("landing-f", [held, a, b, a]))
                assert proxy.seen.wait(30), "the held object was never fetched"
                for _ in range(3000):
                    if proxy.answered(a) and proxy.answered(b):
                        break
                    time.sleep(0.01)
                fetched_meanwhile = proxy.answered(a) and proxy.answered(b)
                proxy.release.set()
                status, answer = reply.result()
            loads = server.loads()
        finally:
            proxy.release.set()
            server.stop()
    assert fetched_meanwhile, "the other events waited for the first one's fetch"
    assert status == 200, answer
    assert [r["key"] for r in answer["results"]] == [held, a, b, a]
    duplicate = [r["detail"].endswith("duplicate") for r in answer["results"]]
    assert duplicate[0] is duplicate[2] is False and sorted(duplicate[1::2]) == [False, True], answer
    loaded = [l for l in loads if not l["duplicate"]]
    assert sorted(l["key"] for l in loaded) == sorted(good) and {l["group"] for l in loaded} == {3}, loads
    assert_exactly(lake_dir, good)


class HoldLaterProxy(HoldProxy):
    """Holds the GETs of `held` after its first one (the rest of a large object)."""

    async def _hold(self, method, path):
        with self._lock:
            n = sum(1 for m, p, _ in self.requests if m == "GET" and self.held in p)
        if n > 1:
            await super()._hold(method, path)


def test_a_commit_does_not_wait_for_an_object_too_large_to_join(moto, tmp_path, monkeypatch):
    """An object above the parse-ahead size commits alone once copied to a
    file: as soon as its first GET tells its size, the table's commits stop
    waiting for it. Here the rest of it is held while a small object's request
    commits and answers (a commit waiting for it would wait a minute)."""
    monkeypatch.setenv("TIMELAKE_NOTIFY_WAIT_COMING_MS", "60000")
    monkeypatch.setenv("TIMELAKE_NOTIFY_PARSE_AHEAD_BYTES", "100000")
    lake_dir = tmp_path / "lake"
    tns.create_tables(lake_dir, [TABLE])
    s3 = tns.s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-b")
    small = upload_good(s3, "landing-b", "b/", [0], 50)
    big = upload_good(s3, "landing-b", "b/", [2], 200_000)  # 10 MB: over one GET's 8 MiB
    (big_key,), (small_key,) = big, small
    with HoldLaterProxy(moto.endpoint, big_key) as proxy:
        server = tns.Server(lake_dir, proxy.endpoint, tmp_path, *ROOM, table=TABLE)
        try:
            with concurrent.futures.ThreadPoolExecutor(2) as pool:
                first = pool.submit(server.post, body_of("landing-b", [big_key]))
                assert proxy.seen.wait(60), "the rest of the large object was never asked for"
                second = pool.submit(server.post, body_of("landing-b", [small_key]))
                assert second.result(timeout=30)[0] == 200
                assert not first.done()
                proxy.release.set()
                assert first.result()[0] == 200
            loads = server.loads()
        finally:
            proxy.release.set()
            server.stop()
    assert sorted(l["key"] for l in loads) == sorted([big_key, small_key])
    assert_exactly(lake_dir, {**big, **small})


def test_sigkill_while_committing_then_redelivery(moto, tmp_path):
    """Killed while requests are queued and committing: some commits landed
    unanswered. Every notification delivered again loads each file's rows once:
    what landed is skipped as a duplicate, the rest loads now."""
    lake_dir = tmp_path / "lake"
    tns.create_tables(lake_dir, [TABLE])
    s3 = tns.s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-k")
    good = upload_good(s3, "landing-k", "k/", range(40), 2000)
    keys = sorted(good)
    first = tmp_path / "first"
    first.mkdir()
    server = tns.Server(lake_dir, moto.endpoint, first, *ROOM, table=TABLE)
    try:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(tns.post_json, server.url + "/", body_of("landing-k", [k]), tns.TOKEN)
                       for k in keys]
            # Killed once the first commits are answered, the moment the next
            # commit lands (its metadata file appears), before it is answered
            # if the kill is fast enough: the rest are queued, parsing or
            # committing.
            while len(server.loads()) < 3 and server.proc.poll() is None:
                concurrent.futures.wait(futures, timeout=0.05, return_when=concurrent.futures.FIRST_COMPLETED)
            landed = len(versions(lake_dir))
            while len(versions(lake_dir)) == landed and server.proc.poll() is None:
                concurrent.futures.wait(futures, timeout=0.001)
            os.kill(server.proc.pid, signal.SIGKILL)
            server.proc.wait(timeout=60)
            for f in futures:
                try:
                    f.result()
                except OSError:
                    pass  # cut off by the kill
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
        server.out.close()
        server.err.close()
    answered = {l["key"] for l in server.loads()}
    assert 3 <= len(answered) < len(keys), "the kill came after every commit"
    # Committed by the killed server: every answered key, and those of the
    # commit that was landing (answered or not).
    unanswered = set(all_batch_ids(lake_dir)) - answered
    second = tmp_path / "second"
    second.mkdir()
    server = tns.Server(lake_dir, moto.endpoint, second, *ROOM, table=TABLE)
    try:
        answers = send_all_at_once(server.url, [body_of("landing-k", [k]) for k in keys], 16)
        assert [a[0] for a in answers] == [200] * len(keys)
        loads = server.loads()
    finally:
        server.stop()
    assert_exactly(lake_dir, good)
    assert sorted(all_batch_ids(lake_dir)) == keys
    # What was committed before the kill, answered or not, is a duplicate now.
    dup = {l["key"] for l in loads if l["duplicate"]}
    assert answered | unanswered <= dup
    print(f"killed with {len(unanswered)} keys committed and not answered")


def test_two_servers_race_on_one_table(moto, tmp_path):
    """Two servers append to one table and get the same notifications at once
    (a redelivery sent to another instance): their groups overlap in batch ids,
    and commits race. Every row lands once."""
    lake_dir = tmp_path / "lake"
    tns.create_tables(lake_dir, [TABLE])
    s3 = tns.s3_client(moto.endpoint)
    s3.create_bucket(Bucket="landing-r")
    good = upload_good(s3, "landing-r", "r/", range(30), 200)
    keys = sorted(good)
    servers = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        servers.append(tns.Server(lake_dir, moto.endpoint, tmp_path / name, *ROOM, table=TABLE))
    try:
        work = [(s.url, body_of("landing-r", [k])) for k in keys for s in servers]
        answers = post_all_at_once(work, 16)
        # A request that lost every commit race answers 503 (the sender
        # retries); retried once more here, all must be in.
        retry = [w for w, a in zip(work, answers) if a[0] != 200]
        assert all(a[0] in (200, 503) for a in answers), answers
        for url, body in retry:
            assert tns.post_json(url + "/", body, tns.TOKEN)[0] == 200
    finally:
        for s in servers:
            s.stop()
    assert_exactly(lake_dir, good)
    assert sorted(all_batch_ids(lake_dir)) == keys
