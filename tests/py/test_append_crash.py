"""Appends in the default mode (inline maintenance and expiry on) killed at
random points: whatever was queued for deletion when the writer died, every
append that returned is in the table, whole, and pyiceberg and our reader
read the same rows. The commit's obsolete metadata files and the objects of
expired snapshots are deleted by a thread of the store after the append
returns (store/local_trash.h); a kill can only leave some of them behind."""

import collections
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from pyiceberg.table import StaticTable

import tlc
from test_interop import metadata_file
from writer import ROWS, SCHEMA

WRITER = str(Path(__file__).with_name("writer.py"))
# Expiry every few appends and metadata files leaving the log at every
# append: the deletions this test is about happen all the time.
PROPS = {"timelake.max-snapshots": "2", "timelake.min-snapshots": "1",
         "write.metadata.previous-versions-max": "2"}


def returned_batches(proc):
    """The batches whose append returned before the kill (writer.py prints k+1 after batch k)."""
    out, _ = proc.communicate(timeout=60)
    done = [int(line) for line in out.split()]
    return done[-1] if done else 0


def pyiceberg_batches(lake_dir):
    table = StaticTable.from_metadata(metadata_file(lake_dir, "default/t"))
    rows = table.scan(selected_fields=("writer", "seq")).to_arrow().to_pylist()
    return collections.Counter((r["writer"], r["seq"]) for r in rows)


def our_batches(lake_dir):
    lake = tlc.Lake(str(lake_dir))
    try:
        rows = lake.sql("SELECT writer, seq, count(*) AS n FROM t GROUP BY writer, seq").to_pylist()
    finally:
        lake.close()
    return collections.Counter({(r["writer"], r["seq"]): r["n"] for r in rows})


def test_killed_default_mode_appends_lose_no_returned_commit(lake_dir):
    tlc.Lake(str(lake_dir)).create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"],
                                         properties=PROPS)
    rnd = random.Random(11)
    expected = {}
    for round_ in range(6):
        writer = f"k{round_}"
        proc = subprocess.Popen([sys.executable, WRITER, str(lake_dir), "t", writer, "0", "0", "--forever"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(rnd.uniform(0.5, 2.5))
        proc.send_signal(signal.SIGKILL)
        returned = returned_batches(proc)
        theirs, ours = pyiceberg_batches(lake_dir), our_batches(lake_dir)
        assert theirs == ours
        mine = {k for w, k in theirs if w == writer}
        # Every append that returned is there; the one in flight may be too.
        assert set(range(returned)) <= mine <= set(range(returned + 1)), (returned, sorted(mine))
        expected.update({(writer, k): ROWS for k in mine})
        assert theirs == expected, "a batch was lost, duplicated or committed partly"
    # The table still takes appends, and a full maintain tidies what the
    # killed writers left, every batch still there once.
    proc = subprocess.Popen([sys.executable, WRITER, str(lake_dir), "t", "after", "0", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    tlc.Lake(str(lake_dir)).table("t").maintain()
    expected.update({("after", k): ROWS for k in range(3)})
    assert pyiceberg_batches(lake_dir) == expected == our_batches(lake_dir)
