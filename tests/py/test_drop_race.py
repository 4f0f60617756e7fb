"""A drop racing concurrent appends wins cleanly: every append that starts
after the drop returned fails with "not found" (KeyError), whichever handle
it uses, and once the writers stop nothing of the table is left (no zombie
version another writer made in the emptied folder, no stray file), so `ls`,
`create` and `sql` behave as for a table that never was. Writers are
separate processes (stale handles and a fresh open per append), locally and
on moto's S3 server; threads sharing one process too.

The guard these races need is the commit point's (table/commit_point.c): a
writer that read the table before the drop and creates its next version
after it finds its parent version gone (or another table's), removes what it
made and fails. A race started by timing rarely stops a commit right there:
an append that starts after the drop mostly fails reading the deleted files
first. So test_a_commit_in_flight_across_the_drop stops one there on
purpose (a proxy holds its conditional create until the drop is done), and
the threads test appends with a handle that reads nothing before its create."""

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import tlc
from conftest import ROOT
from fault_proxy import FaultProxy
from store_servers import server_fixture
from test_maintain import SCHEMA, batch
from writer import SCHEMA as WRITER_SCHEMA

s3 = pytest.fixture(scope="module")(server_fixture("s3"))

CLI = Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "timelake"
WRITER = str(Path(__file__).with_name("drop_race_writer.py"))
AFTER = 3  # appends each writer tries after the drop


def wait_until(pred, timeout=60):
    end = time.time() + timeout
    while not pred():
        assert time.time() < end, "timed out"
        time.sleep(0.05)


def run_writers(url, options, tmp_path, modes):
    """Starts the writers and waits until each has appended once."""
    stop = tmp_path / "stop"
    procs = []
    for i, mode in enumerate(modes):
        out, err = open(tmp_path / f"w{i}.out", "w"), open(tmp_path / f"w{i}.err", "w")
        procs.append((subprocess.Popen([sys.executable, WRITER, url, json.dumps(options), "t", f"w{i}", mode,
                                        str(stop)], stdout=out, stderr=err), out, err))
    try:
        wait_until(lambda: all(Path(f.name).stat().st_size > 0 for _, f, _ in procs))
    except BaseException:
        for p, _, _ in procs:
            p.kill()
            p.wait()
        raise
    return stop, procs


def collect(stop, procs):
    stop.touch()
    results = []
    for p, out, err in procs:
        p.wait(timeout=120)
        out.close()
        err.close()
        assert p.returncode == 0, Path(err.name).read_text()[-3000:]
        results += [json.loads(line) for line in Path(out.name).read_text().splitlines()]
    return results


def tries_after(path, dropped_at):
    """How many appends the writer printing to `path` started after the drop
    (and finished: complete lines only)."""
    text = Path(path).read_text()
    lines = text.splitlines()[:text.count("\n")]
    return sum(json.loads(line)["start"] > dropped_at for line in lines)


def check_outcomes(results, dropped_at):
    before = [r for r in results if r["end"] < dropped_at]
    after = [r for r in results if r["start"] > dropped_at]
    assert any(r["outcome"] == "ok" for r in before), "no append landed before the drop"
    assert after, "no append was tried after the drop"
    wrong = [r for r in after if r["outcome"] != "KeyError"]
    assert not wrong, wrong[:5]


def lake_files(lake_dir):
    return sorted(str(p.relative_to(lake_dir)) for p in Path(lake_dir).rglob("*") if p.is_file())


def cli(lake, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TIMELAKE_WAREHOUSE", "TIMELAKE_TABLE")}
    env["ASAN_OPTIONS"] = "detect_leaks=1"
    return subprocess.run([str(CLI), *args, "--lake", str(lake)], capture_output=True, text=True, env=env)


def check_like_new(lake, options=None):
    """The name is free: not listed, created again, empty, appendable."""
    assert "default.t" not in tlc.Lake(lake, options).tables()
    t = tlc.Lake(lake, options).create_table("t", WRITER_SCHEMA, time_column="time", series_key=["writer"])
    assert t.version == 1
    assert tlc.Lake(lake, options).sql("SELECT count(*) AS n FROM t").column("n")[0].as_py() == 0
    t.append(batch_rows())
    assert tlc.Lake(lake, options).sql("SELECT count(*) AS n FROM t").column("n")[0].as_py() == 5


def batch_rows():
    from writer import batch as writer_batch
    return writer_batch("new", 0)


def race(url, options, tmp_path, modes, versions, enough):
    """Writers of `modes` append to table t until it has more than `enough`
    versions (`versions()` counts them); then the drop, and the writers go on
    for a while. Checks every append's outcome."""
    lake = tlc.Lake(url, options or None)
    lake.create_table("t", WRITER_SCHEMA, time_column="time", series_key=["writer"])
    stop, procs = run_writers(url, options, tmp_path, modes)
    try:
        wait_until(lambda: versions() > enough)
        lake.drop_table("t")
        dropped_at = time.time()
        # The writers go on until each has tried a few appends after the drop.
        wait_until(lambda: all(p.poll() is not None or tries_after(out.name, dropped_at) >= AFTER
                               for p, out, _ in procs), timeout=120)
    finally:
        results = collect(stop, procs)
    check_outcomes(results, dropped_at)


@pytest.mark.parametrize("round_", range(3))
def test_drop_wins_over_appending_processes(lake_dir, tmp_path, round_):
    race(str(lake_dir), {}, tmp_path, ["stale", "stale", "fresh", "stale"],
         lambda: len(list((lake_dir / "default/t/metadata").glob("v*.metadata.json"))), 6 + 3 * round_)
    assert lake_files(lake_dir) == ["timelake-tables.json"]
    p = cli(lake_dir, "ls")
    assert p.returncode == 0 and "default.t" not in p.stdout, p
    p = cli(lake_dir, "append", "--table", "t", str(write_csv(tmp_path)))
    assert p.returncode == 1 and "default.t" in p.stderr, p  # not found
    check_like_new(str(lake_dir))


def write_csv(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("time,writer,seq,val\n2026-01-01T00:00:00Z,cli,1,1.5\n")
    return f


def test_drop_wins_over_appending_processes_on_s3(s3, tmp_path):
    from test_s3 import keys_under
    url = s3.url()
    race(url, s3.options, tmp_path, ["stale", "fresh", "stale"],
         lambda: sum(k.endswith(".metadata.json") for k in keys_under(s3, url)), 6)
    assert [k for k in keys_under(s3, url) if "/default/t/" in k] == []
    check_like_new(url, s3.options)


def test_drop_wins_over_appending_threads(lake_dir):
    """Handles at different versions (each thread's own, one stale from the
    start) commit while the drop runs: their versions in the emptied folder
    are removed again by their writers."""
    lake = tlc.Lake(str(lake_dir))
    lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    stale, untouched = tlc.Lake(str(lake_dir)).table("t"), tlc.Lake(str(lake_dir)).table("t")
    stop, dropped = threading.Event(), threading.Event()
    results, errors = [], []

    def writer(k):
        try:
            t = tlc.Lake(str(lake_dir)).table("t")
            i = 0
            while not stop.is_set():
                after = dropped.is_set()
                try:
                    t.append(batch([(k, i, 1.0)]), maintain=i % 7 == 6)
                    results.append((after, "ok", "", k))
                except Exception as e:
                    results.append((after, type(e).__name__, str(e), k))
                i += 1
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    wait_until(lambda: sum(r[1] == "ok" for r in results) > 20)
    lake.drop_table("t")
    dropped.set()
    # The writers go on until each has tried a few appends after the drop.
    wait_until(lambda: errors or all(sum(r[0] and r[3] == k for r in results) >= AFTER for k in range(4)),
               timeout=120)
    stop.set()
    for th in threads:
        th.join()
    assert not errors, errors
    after = [r for r in results if r[0]]
    assert after and all(r[1] == "KeyError" for r in after), [r for r in after if r[1] != "KeyError"][:5]
    assert any("dropped" in r[2] for r in after)
    with pytest.raises(KeyError, match="dropped"):
        stale.append(batch([(9, 0, 1.0)]))
    assert lake_files(lake_dir) == ["timelake-tables.json"]
    # A handle from before the drop does not write into the table created again.
    lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    for handle in (stale, untouched):
        with pytest.raises(KeyError, match="dropped"):
            handle.append(batch([(9, 0, 1.0)]))
    assert tlc.Lake(str(lake_dir)).table("t").version == 1
    assert lake.sql("SELECT count(*) AS n FROM t").column("n")[0].as_py() == 0


class GateProxy(FaultProxy):
    """Holds the first request `fits(method, path)` accepts until release();
    `arrived` is set once it is held."""

    def __init__(self, upstream, fits):
        super().__init__(upstream)
        self.fits, self.arrived, self._gate, self._used = fits, threading.Event(), None, False

    async def _hold(self, method, path):
        with self._lock:
            mine = not self._used and self.fits(method, path)
            self._used |= mine
        if mine:
            self._gate = asyncio.Event()
            self.arrived.set()
            await self._gate.wait()

    def release(self):
        self._loop.call_soon_threadsafe(self._gate.set)


def conditional_create(method, path):
    return method == "PUT" and re.search(r"/metadata/v\d+\.metadata\.json$", path.split("?")[0]) is not None


@pytest.mark.parametrize("then", ["dropped", "created_again"])
def test_a_commit_in_flight_across_the_drop(s3, then):
    """An append whose reads are done and whose conditional create of v4 is
    held while the table is dropped (and, in the second case, created again
    up to v3: the create then lands beside another table's v3): once let go,
    it lands, finds its parent gone or another table's, removes what it
    made, and fails with KeyError. Nothing of it stays."""
    from test_s3 import client, keys_under
    url = s3.url()
    lake = tlc.Lake(url, s3.options)
    t = lake.create_table("t", WRITER_SCHEMA, time_column="time", series_key=["writer"])
    for k in range(2):
        t.append(batch_of("old", k), maintain=False)
    outcome = []
    with GateProxy(s3.endpoint, conditional_create) as proxy:
        writer = tlc.Lake(url, s3.through(proxy)).table("t")
        assert writer.version == 3

        def append():
            try:
                outcome.append(("ok", writer.append(batch_of("late", 9), maintain=False)))
            except Exception as e:
                outcome.append((type(e).__name__, str(e)))

        th = threading.Thread(target=append)
        th.start()
        try:
            assert proxy.arrived.wait(60), "the append never reached its conditional create"
            lake.drop_table("t")
            assert [k for k in keys_under(s3, url) if "/default/t/" in k] == []
            if then == "created_again":
                again = lake.create_table("t", WRITER_SCHEMA, time_column="time", series_key=["writer"])
                for k in range(2):
                    again.append(batch_of("new", k), maintain=False)
                left = keys_under(s3, url)
                head = next(k for k in left if k.endswith("/default/t/metadata/timelake-c-head"))
                new_head = client(s3).get_object(Bucket=s3.bucket, Key=head)["Body"].read()
        finally:
            proxy.release()
            th.join(120)
    assert [o[0] for o in outcome] == ["KeyError"] and "dropped" in outcome[0][1], outcome
    if then == "dropped":
        assert [k for k in keys_under(s3, url) if "/default/t/" in k] == []
        check_like_new(url, s3.options)
    else:
        # The new table's objects as they were: its head object (the failed
        # writer removes a head only when it is of its own, dropped table), and
        # its version hint naming its own newest version again (DuckDB's
        # iceberg_scan reads through it).
        assert keys_under(s3, url) == left
        assert client(s3).get_object(Bucket=s3.bucket, Key=head)["Body"].read() == new_head
        assert new_head.startswith(b"TLHD")
        hint = next(k for k in left if k.endswith("/default/t/metadata/version-hint.text"))
        assert client(s3).get_object(Bucket=s3.bucket, Key=hint)["Body"].read() == b"3"
        fresh = tlc.Lake(url, s3.options)
        assert fresh.table("t").version == 3
        assert fresh.sql("SELECT DISTINCT writer FROM t").column("writer").to_pylist() == ["new"]


def batch_of(writer, k):
    from writer import batch as writer_batch
    return writer_batch(writer, k)
