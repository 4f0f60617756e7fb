"""The object-store fault guarantees on every backend (moto, Azurite,
fake-gcs-server), through the fault-injecting proxy:
- bounded retries on 5xx, 429, S3's SlowDown, cut connections and timeouts,
  with the retry count taken from the options;
- a commit whose answer is lost is resolved by reading back (reported once,
  never twice), and when even that fails, the landed commit keeps its files;
- concurrent appenders through random faults (fixed seed) commit every batch
  exactly once, data files going up in parts, and the table stays readable.
S3-only versions of the last two live in test_s3.py and test_s3_roundtrips.py."""

import asyncio
import collections
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tlc
from fault_proxy import FaultProxy, Faults
from store_objects import list_names, object_name, read
from store_servers import server_fixture
from test_store_multipart import upload
from writer import ROWS, SCHEMA, batch

WRITER = str(Path(__file__).with_name("store_writer.py"))

s3_server = pytest.fixture(scope="module")(server_fixture("s3"))
azure_server = pytest.fixture(scope="module")(server_fixture("azure"))
gcs_server = pytest.fixture(scope="module")(server_fixture("gcs"))


def through(backend, proxy, **extra):
    return backend.through(proxy, **extra)


@pytest.fixture(params=["s3", "azure", "gcs"])
def backend(request):
    return request.getfixturevalue(f"{request.param}_server")


def make_table(backend, url):
    tlc.Lake(url, backend.options).create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"],
                                                dedup=False)


def is_commit(backend, method, path, body, version=None):
    """The conditional create of a metadata file (of `version` if given)."""
    name = f"/v{version}.metadata.json" if version else ".metadata.json"
    if backend.name == "gcs":  # the name travels in the multipart body
        return method == "POST" and "ifGenerationMatch=0" in path and name.encode() in body[:4096]
    return method == "PUT" and path.split("?")[0].endswith(name) and "?" not in path


def answer(status, body=b"", reason="Injected"):
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            .encode() + body)


# ---- bounded retries ----

def test_retries_are_bounded_and_configurable(backend, tmp_path):
    """Every request answered 503: a put is tried 1 + max_retries times, then
    fails saying so; a table operation fails with a storage error."""
    url = backend.url()
    make_table(backend, url)
    with FaultProxy(backend.endpoint, Faults(error503=1.0), seed=1) as proxy:
        for retries in (0, 3):
            mark = proxy.mark()
            line = upload(url, through(backend, proxy, max_retries=str(retries), retry_backoff="1ms"), [100], tmp_path)
            assert line.startswith("upload: failed") and "503" in line, line
            time.sleep(0.2)  # the proxy logs a request just after answering it
            tries = collections.Counter((r[2], r[3]) for r in proxy.requests_since(mark)
                                        if "obj-0.bin" in r[3].replace("%2F", "/"))
            assert list(tries.values()) == [retries + 1], tries
            with pytest.raises(RuntimeError, match="503|retries"):
                tlc.Lake(url, through(backend, proxy, max_retries=str(retries), retry_backoff="1ms")).table("t")


@pytest.mark.parametrize("fault", ["429", "slowdown", "500", "cut", "timeout"])
def test_transient_faults_are_retried(backend, fault):
    """The first two attempts of every request meet the fault; the third gets
    through: the appends succeed, each batch once."""
    url = backend.url()
    make_table(backend, url)
    slowdown = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        original, seen = proxy._forward, collections.Counter()

        async def forward(method, path, headers, body):
            # A ranged read (a commit reads its parent's first KiB back) is
            # another request than a whole read of the same object.
            ranges = tuple(h for h in headers if h.lower().startswith(("range:", "x-ms-range:")))
            key = (method, path, ranges, hash(body))
            seen[key] += 1
            if seen[key] <= 2:
                if fault == "429":
                    return answer(429, reason="Too Many Requests")
                if fault == "slowdown":
                    return answer(503, slowdown, "Slow Down")
                if fault == "500":
                    return answer(500, b"<Error><Code>InternalError</Code></Error>")
                if fault == "timeout":
                    await asyncio.sleep(1.0)
                    return await original(method, path, headers, body)
                await original(method, path, headers, body)
                raise ConnectionResetError("cut after forwarding")
            return await original(method, path, headers, body)
        proxy._forward = forward
        # Only the timeout fault needs a short timeout: with it on every case,
        # a loaded machine made a third attempt that got through outlast it.
        timeout = "300ms" if fault == "timeout" else "30s"
        opts = through(backend, proxy, max_retries="3", retry_backoff="1ms", timeout=timeout)
        t = tlc.Lake(url, opts).table("t")
        for k in range(2):
            res = t.append(batch("w", k), batch_id=f"w-{k}")
            assert res["rows"] == ROWS and not res["duplicate"]
    # The third attempt passes through; a timeout fault's may still outlast
    # the 300 ms timeout on a loaded machine, and the fourth (max_retries 3)
    # is the last one allowed.
    assert max(seen.values()) == 3 if fault != "timeout" else 3 <= max(seen.values()) <= 4
    t = tlc.Lake(url, backend.options).table("t")
    assert t.version == 3 and t.info()["rows"] == 2 * ROWS


# ---- unknown outcomes ----

def test_lost_answer_to_the_commit_is_resolved_by_reading_back(backend):
    """Every commit reaches the server and its answer is cut: the writer finds
    its own bytes there and reports success once, not a lost race and not a
    second commit."""
    url = backend.url()
    make_table(backend, url)
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        original, cut = proxy._forward, []

        async def forward(method, path, headers, body):
            result = await original(method, path, headers, body)
            if is_commit(backend, method, path, body) and (path, body[:4096]) not in cut:
                cut.append((path, body[:4096]))
                raise ConnectionResetError("cut after forwarding")
            return result
        proxy._forward = forward
        t = tlc.Lake(url, through(backend, proxy, retry_backoff="1ms")).table("t")
        for k in range(3):
            res = t.append(batch("w", k), batch_id=f"w-{k}")
            assert res["rows"] == ROWS and not res["duplicate"] and res["attempts"] == 1
    assert len(cut) == 3
    check_exactly_once(backend, url, {"w": 3})


def test_unknown_outcome_keeps_the_files_of_a_landed_commit(backend):
    """The commit lands but its answer is cut and every read-back fails too:
    the append reports the unknown outcome, and deletes none of the files the
    landed commit refers to. Appending the batch again is a duplicate."""
    url = backend.url()
    make_table(backend, url)
    with FaultProxy(backend.endpoint, Faults(), seed=1) as proxy:
        original = proxy._forward

        async def forward(method, path, headers, body):
            if method in ("GET", "HEAD") and "v2.metadata.json" in path:
                raise ConnectionResetError("read-back cut")
            result = await original(method, path, headers, body)
            if is_commit(backend, method, path, body, version=2):
                raise ConnectionResetError("commit answer cut")
            return result
        proxy._forward = forward
        t = tlc.Lake(url, through(backend, proxy, max_retries="2", retry_backoff="1ms")).table("t")
        with pytest.raises(RuntimeError, match="unknown|v2.metadata.json"):
            t.append(batch("u", 0), batch_id="u-0")
    t = tlc.Lake(url, backend.options).table("t")
    assert t.version == 2
    check_exactly_once(backend, url, {"u": 1})
    assert t.append(batch("u", 0), batch_id="u-0")["duplicate"]


# ---- concurrent appenders ----

def check_exactly_once(backend, url, batches):
    """Every batch of every writer is in the table whole and once; no batch id
    is in two append snapshots; every data file the table refers to is there
    (the count reads them all)."""
    lake = tlc.Lake(url, backend.options)
    rows = lake.sql("SELECT writer, seq, count(*) AS n FROM t GROUP BY writer, seq").to_pylist()
    got = {(r["writer"], r["seq"]): r["n"] for r in rows}
    assert got == {(w, k): ROWS for w, n in batches.items() for k in range(n)}
    metas = [n for n in list_names(backend, object_name(url, "default/t/metadata/")) if n.endswith(".metadata.json")]
    latest = max(metas, key=lambda n: int(n.rsplit("/v", 1)[1].split(".")[0]))
    snapshots = json.loads(read(backend, latest))["snapshots"]
    ids = [s["summary"]["timelake.batch-id"] for s in snapshots
           if s["summary"]["operation"] == "append" and "timelake.batch-id" in s["summary"]]
    assert len(ids) == len(set(ids))
    assert lake.table("t").info()["rows"] == ROWS * sum(batches.values())


def test_appenders_through_a_faulty_network(backend):
    """3 processes x 5 batches through drops, cuts, 500s, 503s and delays;
    every object above 1 KiB goes up in parts, so part uploads, completes and
    aborts meet the faults too."""
    url = backend.url()
    make_table(backend, url)
    faults = Faults(delay=0.05, max_delay=0.2, error500=0.04, error503=0.04, drop=0.03, cut=0.04)
    with FaultProxy(backend.endpoint, faults, seed=20261129) as proxy:
        opts = through(backend, proxy, max_retries="8", retry_backoff="5ms", retry_max_backoff="100ms",
                       timeout="10s", multipart_threshold="1KiB", multipart_part_size="5MiB")
        procs = [subprocess.Popen([sys.executable, WRITER, url, json.dumps(opts), "t", f"w{i}", "0", "5"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-3000:]
    assert all(proxy.counts.get(k, 0) > 0 for k in ("error500", "error503", "drop", "cut", "delay")), proxy.counts
    check_exactly_once(backend, url, {f"w{i}": 5 for i in range(3)})
