"""Atomic replace (tl_table_replace), compare-and-swap (expect_version),
summary entries and attachments, through the ctypes binding: read back by
pyiceberg, fastavro and the reference timelake==0.7.0; under concurrent and
killed writers; on moto's S3."""

import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import tlc
from conftest import table_files
from store_objects import list_names, object_name
from store_servers import server_fixture
from test_interop import metadata_file
from writer import ROWS, SCHEMA as TS_SCHEMA

WRITER = str(Path(__file__).with_name("writer.py"))
SCHEMA = pa.schema([("region", pa.string()), ("n", pa.int64())])


def rows(regions, first=0):
    return pa.table({"region": regions, "n": list(range(first, first + len(regions)))}, schema=SCHEMA)


def sorted_rows(table):
    return sorted(table.to_pylist(), key=lambda r: (r["region"] or "", r["n"]))


def test_replace_is_one_overwrite_snapshot_readers_agree_on(lake, lake_dir, reference):
    t = lake.create_table("k.r", SCHEMA, partition_by=["region"])
    t.append(rows(["eu", "us", "eu"]), maintain=False)
    t.append(rows(["us", "ap"], 10), maintain=False)
    new = rows(["eu", "sa"], 100)
    res = t.replace(new, summary={"karet.run": "full"}, attachments={"karet.files": b"a.csv\nb.csv"})
    assert (res["rows"], res["files"], res["version"]) == (2, 2, 4)
    assert sorted_rows(lake.sql("SELECT * FROM k.r")) == sorted_rows(new)

    table = StaticTable.from_metadata(metadata_file(lake_dir, "k/r"))
    snap = table.current_snapshot()
    assert snap.summary.operation.value == "overwrite"
    s = snap.summary.additional_properties
    assert (s["added-records"], s["deleted-records"], s["total-records"], s["deleted-data-files"]) == \
        ("2", "5", "2", "4")
    assert s["karet.run"] == "full" and json.loads(s["timelake.attachments"]) == ["karet.files"]
    assert sorted_rows(table.scan().to_arrow()) == sorted_rows(new)
    # The previous version is still there for time travel.
    parent = table.snapshot_by_id(snap.parent_snapshot_id)
    assert table.scan(snapshot_id=parent.snapshot_id).to_arrow().num_rows == 5

    # The manifest list, as fastavro reads it: the added manifest and one of the
    # four files removed, each entry DELETED with its original sequence number.
    with open(urllib.parse.urlparse(snap.manifest_list).path, "rb") as fh:
        manifests = list(fastavro.reader(fh))
    assert sorted((m["added_files_count"], m["deleted_files_count"]) for m in manifests) == [(0, 4), (2, 0)]
    deleted = next(m for m in manifests if m["deleted_files_count"])
    with open(urllib.parse.urlparse(deleted["manifest_path"]).path, "rb") as fh:
        entries = list(fastavro.reader(fh))
    assert {e["status"] for e in entries} == {2}
    assert sorted(e["sequence_number"] for e in entries) == [1, 1, 2, 2]
    # The attachment: an object in metadata/ holding the bytes, named by its URL.
    path = urllib.parse.urlparse(s["karet.files"]).path
    assert Path(path).parent == lake_dir / "k" / "r" / "metadata" and Path(path).read_bytes() == b"a.csv\nb.csv"
    assert t.attachment("karet.files") == b"a.csv\nb.csv"

    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        print(json.dumps(lake.sql("SELECT region, n FROM k.r ORDER BY n").to_pylist()))
        """
    )
    assert out == sorted(new.to_pylist(), key=lambda r: r["n"])

    # An empty stream empties the table.
    t.replace(rows([]))
    assert lake.sql("SELECT count(*) AS c FROM k.r").column("c")[0].as_py() == 0
    table = StaticTable.from_metadata(metadata_file(lake_dir, "k/r"))
    assert table.scan().to_arrow().num_rows == 0
    assert t.attachment("karet.files") == b"a.csv\nb.csv"  # inherited


def test_replace_of_a_time_series_table_rebuilds_its_index(lake, lake_dir, reference):
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("v", pa.float64())])
    t = lake.create_table("iot.m", schema, time_column="time", series_key=["host"])
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    t.append(pa.table({"time": [t0, t0 + dt.timedelta(days=3)], "host": ["a", "b"], "v": [1.0, 2.0]}, schema=schema))
    t.replace(pa.table({"time": [t0 + dt.timedelta(days=1)], "host": ["c"], "v": [3.0]}, schema=schema))
    assert lake.latest("iot.m").select(["host", "v"]).to_pylist() == [{"host": "c", "v": 3.0}]
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        print(json.dumps(lake.latest("iot.m").select(["host", "v"]).to_pylist()))
        """
    )
    assert out == [{"host": "c", "v": 3.0}]


def test_compare_and_swap_lets_one_writer_per_version_win(lake, lake_dir):
    lake.create_table("k.c", SCHEMA, properties={"timelake.auto-maintain": "false"})
    handles = [tlc.Lake(str(lake_dir)).table("k.c") for _ in range(4)]
    results = []

    def worker(i, t):
        for k in range(6):
            t.refresh()
            v = t.version
            try:
                t.append(rows([f"w{i}"], k), expect_version=v, attachments={"who": f"{i}-{k}".encode()})
                results.append(("ok", v))
            except tlc.TimelakeError as e:
                assert "version" in str(e)
                results.append(("conflict", v))

    threads = [threading.Thread(target=worker, args=(i, h)) for i, h in enumerate(handles)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wins = [v for kind, v in results if kind == "ok"]
    assert len(wins) == len(set(wins)) > 0  # one commit per version at most
    t = lake.table("k.c")
    assert t.version == 1 + len(wins) and t.info()["rows"] == len(wins)
    # Nothing of the losers is left: every data file and attachment is referenced.
    table = StaticTable.from_metadata(metadata_file(lake_dir, "k/c"))
    named = {urllib.parse.urlparse(task.file.file_path).path for task in table.scan().plan_files()}
    named |= {urllib.parse.urlparse(s.summary.additional_properties["who"]).path for s in table.snapshots()}
    on_disk = {str(lake_dir / f) for f in table_files(lake_dir)
               if "/data/" in f or os.path.basename(f).startswith("att-")}
    assert on_disk == named


def test_concurrent_replaces_rebase_and_one_wins_whole(lake, lake_dir):
    lake.create_table("k.x", SCHEMA)
    handles = [tlc.Lake(str(lake_dir)).table("k.x") for _ in range(3)]
    handles[0].append(rows(["base"] * 3))

    def worker(i, t):
        for k in range(4):
            t.replace(rows([f"w{i}-{k}"] * (i + 2)), attachments={"batch": f"w{i}-{k}".encode()})

    threads = [threading.Thread(target=worker, args=(i, h)) for i, h in enumerate(handles)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t = lake.table("k.x")
    got = lake.sql("SELECT region, count(*) AS c FROM k.x GROUP BY 1").to_pylist()
    assert len(got) == 1  # one replace's rows, whole
    name = got[0]["region"]
    assert got[0]["c"] == int(name[1]) + 2
    assert t.attachment("batch") == name.encode()
    assert t.version == 2 + 12


def test_killed_replacers_leave_one_whole_batch_with_its_attachment(lake_dir):
    tlc.Lake(str(lake_dir)).create_table("t", TS_SCHEMA, time_column="time", series_key=["writer", "seq"], dedup=False,
                                         properties={"timelake.auto-maintain": "false"})
    rnd = random.Random(11)
    for round_ in range(6):
        procs = [subprocess.Popen([sys.executable, WRITER, str(lake_dir), "t", f"k{round_}-{i}", "0", "0", "--forever",
                                   "--replace"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(2)]
        time.sleep(rnd.uniform(0.4, 1.5))
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()
        t = tlc.Lake(str(lake_dir)).table("t")
        got = t._lake.sql("SELECT writer, seq, count(*) AS c FROM t GROUP BY 1, 2").to_pylist()
        if t.version == 1:
            continue
        assert len(got) == 1 and got[0]["c"] == ROWS
        assert t.attachment("batch") == f"{got[0]['writer']}-{got[0]['seq']}".encode()
        table = StaticTable.from_metadata(metadata_file(lake_dir, "default/t"))
        assert table.scan().to_arrow().num_rows == ROWS


def test_attachments_survive_the_references_maintenance(lake, lake_dir, reference):
    """The reference compacts our table: it keeps our attachment objects (even
    old ones) but its snapshot does not name them; they are read through its
    parent, the next commit of ours names them again, and our expiry keeps
    the snapshot they come from until then. (The reference's own expiry does
    not: README.)"""
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("v", pa.float64())])
    t = lake.create_table("iot.a", schema, time_column="time", series_key=["host"],
                          properties={"timelake.auto-maintain": "false", "timelake.min-snapshots": "1",
                                      "timelake.max-snapshots": "1"})
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    one = lambda k: pa.table({"time": [t0 + dt.timedelta(minutes=k)], "host": ["a"], "v": [float(k)]}, schema=schema)
    for k in range(3):
        t.append(one(k), attachments={"karet.files": b"files-0"} if k == 0 else None)
    att = [p for p in (lake_dir / "iot" / "a" / "metadata").iterdir() if p.name.startswith("att-")]
    assert len(att) == 1
    old = time.time() - 7 * 86400  # as if written a week ago: past any orphan window
    os.utime(att[0], (old, old))
    reference(
        f"""
        import json, timelake
        t = timelake.Lake({str(lake_dir)!r}).table("iot.a")
        print(json.dumps(dict(t.maintain(expire=False))))
        """
    )
    summary = StaticTable.from_metadata(metadata_file(lake_dir, "iot/a")).current_snapshot().summary
    assert summary.operation.value == "replace" and "karet.files" not in summary.additional_properties
    assert att[0].exists()
    t.refresh()
    assert t.attachment("karet.files") == b"files-0"
    # Our expiry keeps the snapshot that names it, as long as the current one inherits it.
    os.environ["TIMELAKE_ORPHAN_WINDOW"] = "0s"
    try:
        t.maintain()
        assert att[0].exists() and t.attachment("karet.files") == b"files-0"
        t.append(one(9))  # names it again
        assert "karet.files" in StaticTable.from_metadata(
            metadata_file(lake_dir, "iot/a")).current_snapshot().summary.additional_properties
        t.maintain()
        assert att[0].exists() and t.attachment("karet.files") == b"files-0"
    finally:
        del os.environ["TIMELAKE_ORPHAN_WINDOW"]


s3_server = pytest.fixture(scope="module")(server_fixture("s3"))


def test_on_s3(s3_server):
    url = s3_server.url()
    lake = tlc.Lake(url, s3_server.options)
    t = lake.create_table("k.s", SCHEMA, partition_by=["region"])
    t.append(rows(["eu", "us"]), attachments={"files": b"one"})
    v = t.version
    t.replace(rows(["ap"]), expect_version=v)
    assert lake.sql("SELECT region FROM k.s").to_pylist() == [{"region": "ap"}]
    before = list_names(s3_server, object_name(url))
    stale = tlc.Lake(url, s3_server.options).table("k.s")
    stale_version = stale.version
    t.append(rows(["sa"]))
    with pytest.raises(tlc.TimelakeError, match="version"):
        stale.replace(rows(["zz"] * 3), expect_version=stale_version, attachments={"files": b"two"})
    after = list_names(s3_server, object_name(url))
    added = set(after) - set(before)
    # Only the winner's commit added objects: its data file, manifest, list, metadata.
    assert not any("zz" in n or "/att-" in n for n in added)
    assert t.attachment("files") == b"one"
    other = tlc.Lake(url, s3_server.options).table("k.s")
    assert other.attachment("files") == b"one"
    assert sorted(r["region"] for r in lake.sql("SELECT region FROM k.s").to_pylist()) == ["ap", "sa"]
