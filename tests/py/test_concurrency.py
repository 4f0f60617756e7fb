"""Concurrent writers in separate processes, and writers killed mid-append."""

import collections
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyiceberg.table import StaticTable

import tlc
from test_interop import metadata_file
from writer import ROWS, SCHEMA, batch

WRITER = str(Path(__file__).with_name("writer.py"))


def spawn(lake_dir, writer, first, count, *extra):
    return subprocess.Popen([sys.executable, WRITER, str(lake_dir), "t", writer, str(first), str(count), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def batches_in(lake_dir):
    """(writer, seq) -> row count, as pyiceberg reads the table."""
    table = StaticTable.from_metadata(metadata_file(lake_dir, "default/t"))
    rows = table.scan(selected_fields=("writer", "seq")).to_arrow().to_pylist()
    return collections.Counter((r["writer"], r["seq"]) for r in rows), table


def make_table(lake_dir):
    # dedup off: each batch's rows must all stay, whatever the timing. Inline
    # maintenance off: these tests count append snapshots (maintenance under
    # concurrency is tested in test_maintain_concurrency.py).
    tlc.Lake(str(lake_dir)).create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"], dedup=False,
                                         properties={"timelake.auto-maintain": "false"})


def test_four_writers_fifty_appends_each(lake_dir):
    make_table(lake_dir)
    procs = [spawn(lake_dir, f"w{i}", 0, 50) for i in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    counts, table = batches_in(lake_dir)
    assert len(counts) == 200 and set(counts.values()) == {ROWS}
    assert len(table.snapshots()) == 200
    # The same batch ids again, from other processes: nothing changes.
    procs = [spawn(lake_dir, f"w{i}", 0, 50) for i in (3, 2, 1, 0)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    counts, table = batches_in(lake_dir)
    assert len(counts) == 200 and len(table.snapshots()) == 200


def test_stale_handle_commits_on_top_of_the_others(lake_dir):
    """A handle more versions behind than the metadata log keeps (20): the
    busy writer's commits pruned its parent and the number after it, which a
    create could take again; its appends must land on the newest version."""
    make_table(lake_dir)
    stale = tlc.Lake(str(lake_dir)).table("t")
    p = spawn(lake_dir, "busy", 0, 30)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    metadata = lake_dir / "default" / "t" / "metadata"
    assert not (metadata / "v2.metadata.json").exists()  # the number is free
    # Processes prune out of order, and a slow writer may write an old hint
    # last: a hint naming v11 with v12 gone must not hold the writer there.
    (metadata / "v12.metadata.json").unlink()
    (metadata / "version-hint.text").write_text("11")
    for k in range(2):
        stale.append(batch("stale", k), batch_id=f"stale-{k}")
    counts, table = batches_in(lake_dir)
    assert len(counts) == 32 and set(counts.values()) == {ROWS}
    assert len(table.snapshots()) == 32
    assert stale.info()["rows"] == 32 * ROWS
    assert not (metadata / "v2.metadata.json").exists()


def test_a_retry_after_an_early_lost_race_uploads_the_data(lake_dir):
    """A handle at a snapshot other processes expired loses its first
    attempt before uploading anything (the parent's manifest list is gone,
    and this process never read it): the attempt that lands must upload the
    data file and the manifest (it once did not, and reported success)."""
    tlc.Lake(str(lake_dir)).create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"],
                                         dedup=False, properties={"timelake.auto-maintain": "false",
                                                                  "timelake.max-snapshots": "2",
                                                                  "timelake.min-snapshots": "1"})
    stale = tlc.Lake(str(lake_dir)).table("t")

    def run(*args):
        _, err = subprocess.Popen([sys.executable, *args], stderr=subprocess.PIPE, text=True).communicate(timeout=120)
        return err

    assert not run(WRITER, str(lake_dir), "t", "first", "0", "1")
    stale.refresh()  # at the snapshot just made, whose manifest list it never read
    assert not run(WRITER, str(lake_dir), "t", "other", "0", "4")
    assert not run("-c", "import sys; sys.path.insert(0, sys.argv[2]); import tlc; "
                   "tlc.Lake(sys.argv[1]).table('t').maintain()", str(lake_dir), str(Path(__file__).parent))
    res = stale.append(batch("stale", 0), batch_id="stale-0", maintain=False)
    assert res["attempts"] >= 2
    counts, _ = batches_in(lake_dir)  # reads every manifest and data file the table names
    assert len(counts) == 6 and set(counts.values()) == {ROWS}


def test_a_reference_writer_far_behind_loses_nothing(lake_dir, reference):
    """The reference does not fence its creates: on its table (made without
    write.metadata.delete-after-commit.enabled) our commits delete no
    metadata file, so its handle, 30 versions behind, cannot take a freed
    number; its appends land on top of ours."""
    env = json.dumps(dict(os.environ))
    out = reference(f"""
        import datetime as dt, json, subprocess
        import pyarrow as pa, timelake
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("writer", pa.string()),
                            ("seq", pa.int64()), ("val", pa.float64())])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        def batch(k):
            return pa.table({{"time": [t0 + dt.timedelta(seconds=i) for i in range({ROWS})],
                              "writer": ["ref"] * {ROWS}, "seq": [k] * {ROWS},
                              "val": [0.0] * {ROWS}}}, schema=schema)
        t = timelake.Lake({str(lake_dir)!r}).create_table(
            "t", schema, time_column="time", series_key=["writer", "seq"], dedup=False,
            properties={{"timelake.auto-maintain": "false"}})
        t.append(batch(0), batch_id="ref-0")
        subprocess.run([{sys.executable!r}, {WRITER!r}, {str(lake_dir)!r}, "t", "ours", "0", "30"],
                       env=json.loads({env!r}), check=True, capture_output=True)
        t.append(batch(1), batch_id="ref-1")
        t.append(batch(2), batch_id="ref-2")
        print(json.dumps(t.version))
    """)
    counts, table = batches_in(lake_dir)
    assert len(counts) == 33 and set(counts.values()) == {ROWS}
    assert len(table.snapshots()) == 33 and out == 34
    assert (lake_dir / "default" / "t" / "metadata" / "v2.metadata.json").exists()


def test_killed_writers_leave_whole_batches(lake_dir):
    make_table(lake_dir)
    rnd = random.Random(7)
    for round_ in range(6):
        procs = [spawn(lake_dir, f"k{round_}-{i}", 0, 0, "--forever") for i in range(2)]
        time.sleep(rnd.uniform(0.3, 1.5))
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()
        t = tlc.Lake(str(lake_dir)).table("t")  # opens at a committed version
        counts, table = batches_in(lake_dir)
        assert set(counts.values()) <= {ROWS}, "a batch was committed partly"
        ids = {s.summary["timelake.batch-id"] for s in table.snapshots()}
        assert ids == {f"{w}-{k}" for w, k in counts}
        assert t.info()["rows"] == sum(counts.values())
    # Killed writers may leave orphan data files, but never a broken table:
    # a new writer still commits on top.
    p = spawn(lake_dir, "after", 0, 3)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    counts, _ = batches_in(lake_dir)
    assert all(counts[("after", k)] == ROWS for k in range(3))
