"""Maintenance against other processes: concurrent appenders and a
maintainer, and a maintainer killed at random points."""

import collections
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from pyiceberg.table import StaticTable

import tlc
from test_interop import metadata_file
from writer import ROWS, SCHEMA, batch

HERE = Path(__file__).parent
WRITER = str(HERE / "writer.py")

# Maintains until killed (or, with a count, that many times), tolerating the
# conflicts of a compaction whose files a concurrent commit replaced.
MAINTAINER = """
import sys
sys.path.insert(0, sys.argv[3])
import tlc
t = tlc.Lake(sys.argv[1]).table("t")
n = int(sys.argv[2])
done = 0
while n < 0 or done < n:
    try:
        r = t.maintain()
        print(r["files_rewritten"], r["snapshots_expired"], flush=True)
    except tlc.TimelakeError as e:
        print("conflict", e, flush=True)
    done += 1
"""


def spawn(*args, env=None):
    return subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def spawn_maintainer(lake_dir, count=-1, env=None):
    return spawn("-c", MAINTAINER, str(lake_dir), str(count), str(HERE), env=env)


def batches_in(lake_dir):
    table = StaticTable.from_metadata(metadata_file(lake_dir, "default/t"))
    rows = table.scan(selected_fields=("writer", "seq")).to_arrow().to_pylist()
    return collections.Counter((r["writer"], r["seq"]) for r in rows), table


def make_table(lake_dir, **props):
    return tlc.Lake(str(lake_dir)).create_table("t", SCHEMA, time_column="time", series_key=["writer", "seq"],
                                                dedup=False, properties=props)


def test_appenders_and_a_maintainer_every_batch_once(lake_dir):
    make_table(lake_dir, **{"timelake.compact-min-files": "4", "timelake.max-snapshots": "6",
                            "timelake.min-snapshots": "2"})
    writers = [spawn(WRITER, str(lake_dir), "t", f"w{i}", "0", "30") for i in range(3)]
    maintainer = spawn_maintainer(lake_dir)
    for p in writers:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    # On a loaded machine the writers can finish before the maintainer's
    # first pass: with them gone, its next pass must succeed.
    seen = []
    while not any(line.split() and line.split()[0] != "conflict" for line in seen):
        line = maintainer.stdout.readline()
        assert line, f"the maintainer stopped: {seen} {maintainer.stderr.read()}"
        seen.append(line)
    maintainer.send_signal(signal.SIGTERM)
    maintainer.communicate(timeout=60)
    t = tlc.Lake(str(lake_dir)).table("t")
    t.maintain()
    counts, table = batches_in(lake_dir)
    assert len(counts) == 90 and set(counts.values()) == {ROWS}
    # Every partition is one sorted file after a full maintain.
    parts = collections.Counter(str(task.file.partition) for task in table.scan().plan_files())
    assert set(parts.values()) == {1}


def test_sigkill_during_maintain_loses_nothing_and_orphans_go_later(lake_dir):
    t = make_table(lake_dir, **{"timelake.auto-maintain": "false", "timelake.max-snapshots": "1",
                                "timelake.min-snapshots": "1", "timelake.target-file-size-bytes": "4000"})
    rnd = random.Random(5)
    expected = collections.Counter()
    k = 0
    for round_ in range(5):
        for _ in range(15):
            t.append(batch("w", k), maintain=False)
            expected[("w", k)] = ROWS
            k += 1
        p = spawn_maintainer(lake_dir, 1)
        time.sleep(rnd.uniform(0.05, 0.8))
        p.send_signal(signal.SIGKILL)
        p.wait()
        t = tlc.Lake(str(lake_dir)).table("t")  # opens at a committed version
        counts, _ = batches_in(lake_dir)
        assert counts == expected
        assert t.info()["rows"] == sum(expected.values())
    # Orphans of the killed maintainers (and of expired snapshots) go once
    # they are older than the safety window, here shortened to zero.
    os.environ["TIMELAKE_ORPHAN_WINDOW"] = "0s"
    try:
        t.maintain()
        t.maintain()
    finally:
        del os.environ["TIMELAKE_ORPHAN_WINDOW"]
    counts, table = batches_in(lake_dir)
    assert counts == expected
    live = {task.file.file_path.replace("file://", "") for task in table.scan().plan_files()}
    on_disk = {str(p) for p in (Path(lake_dir) / "default" / "t" / "data").rglob("*.parquet")}
    assert on_disk == live
    snap = table.current_snapshot()
    referenced = {snap.manifest_list.replace("file://", "")}
    referenced |= {m.manifest_path.replace("file://", "") for m in snap.manifests(table.io)}
    avro = {str(p) for p in (Path(lake_dir) / "default" / "t" / "metadata").glob("*.avro")}
    # Appends name their manifests without a time, so only ours are aged: the
    # manifests and lists maintenance wrote are all referenced or gone.
    ours = {a for a in avro if "-added-m" in a or "-existing-m" in a or "-deleted-m" in a}
    assert ours <= referenced


def test_orphan_cleanup_removes_parts_of_a_crashed_upload_only(lake_dir):
    t = make_table(lake_dir, **{"timelake.auto-maintain": "false"})
    t.append(batch("w", 0), maintain=False)
    live = next((Path(lake_dir) / "default" / "t" / "data").rglob("*.parquet"))
    # Named after the upload's object, whose uuidv7 dates it.
    part = live.with_name(live.name + ".tl-part-0123456789abcdef-0000")
    other = live.with_name(live.name + ".notes")
    part.write_bytes(b"part")
    other.write_bytes(b"a user's file")
    os.environ["TIMELAKE_ORPHAN_WINDOW"] = "0s"
    try:
        t.maintain()
    finally:
        del os.environ["TIMELAKE_ORPHAN_WINDOW"]
    assert not part.exists()
    assert other.exists() and live.exists()
    assert t.info()["rows"] == ROWS
