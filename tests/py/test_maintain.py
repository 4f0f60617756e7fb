"""Maintenance: compaction with dedup, retention, snapshot expiry, inline and
on demand; checked against a model of the rows, pyiceberg and the reference."""

import datetime as dt
import json
import os
import random
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import tlc
from test_interop import metadata_file

SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
REPORT_KEYS = {"partitions_compacted", "files_rewritten", "files_written", "rows_rewritten", "duplicates_removed",
               "partitions_dropped", "snapshots_expired", "objects_deleted", "rollups_refreshed", "rollup_rows", "seconds"}


def batch(rows):
    """rows: (dev, minutes after T0, val)."""
    return pa.table({"time": [T0 + dt.timedelta(minutes=m) for _, m, _ in rows], "dev": [d for d, _, _ in rows],
                     "val": [v for _, _, v in rows]}, schema=SCHEMA)


def iceberg_rows(lake_dir, name="default/t"):
    table = StaticTable.from_metadata(metadata_file(lake_dir, name))
    rows = table.scan(selected_fields=("dev", "time", "val")).to_arrow().to_pylist()
    return sorted((r["dev"], r["time"].isoformat(), r["val"]) for r in rows), table


def model_rows(model):
    return sorted((d, (T0 + dt.timedelta(minutes=m)).isoformat(), v) for (d, m), v in model.items())


def reference_rows(reference, lake_dir, name="t"):
    rows = reference(f"""
        import json, timelake
        t = timelake.Lake({str(lake_dir)!r}).sql("SELECT dev, time, val FROM {name}")
        print(json.dumps([(r["dev"], r["time"].isoformat(), r["val"]) for r in t.to_pylist()]))
    """)
    return sorted(tuple(r) for r in rows)


def data_files_on_disk(lake_dir, table="default/t"):
    return {str(p) for p in (Path(lake_dir) / table / "data").rglob("*.parquet")}


def test_inline_size_tier_compaction_like_the_reference(lake, lake_dir):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    results = [t.append(batch([(1, i, float(i)), (2, i, float(i))])) for i in range(12)]
    # Eight small files make a full tier: the eighth append compacts them.
    assert [("maintenance" in r) for r in results] == [False] * 7 + [True] + [False] * 4
    m = results[7]["maintenance"]
    assert set(m) == REPORT_KEYS
    assert (m["partitions_compacted"], m["files_rewritten"], m["files_written"], m["rows_rewritten"]) == (1, 8, 1, 16)
    assert results[7]["version"] == 9  # one version: the append's snapshot, then the replace
    assert t.info()["files"] == 5
    snap = json.load(open(metadata_file(lake_dir, "default/t")))["snapshots"]
    ops = [s["summary"]["operation"] for s in snap]
    assert ops.count("replace") == 1
    replace = next(s for s in snap if s["summary"]["operation"] == "replace")
    assert replace["summary"]["deleted-data-files"] == "8" and replace["summary"]["added-records"] == "16"
    rows, _ = iceberg_rows(lake_dir)
    assert len(rows) == 24


def test_append_maintain_argument_overrides_the_table_setting(lake):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"],
                          properties={"timelake.auto-maintain": "false", "timelake.compact-min-files": "2"})
    assert "maintenance" not in t.append(batch([(1, 0, 1.0)]))
    assert "maintenance" not in t.append(batch([(1, 1, 1.0)]))
    r = t.append(batch([(1, 2, 1.0)]), maintain=True)
    assert r["maintenance"]["files_rewritten"] == 3
    t2 = lake.create_table("t2", SCHEMA, time_column="time", series_key=["dev"],
                           properties={"timelake.compact-min-files": "2"})
    t2.append(batch([(1, 0, 1.0)]))
    assert "maintenance" not in t2.append(batch([(1, 1, 1.0)]), maintain=False)


def test_full_maintain_dedups_latest_write_wins(lake, lake_dir, reference):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"],
                          properties={"timelake.auto-maintain": "false"})
    t.append(batch([(1, 0, 1.0), (1, 0, 2.0), (2, 5, 1.0)]))  # the later row of one append wins
    t.append(batch([(1, 0, 3.0), (2, 5, 4.0), (1, 60 * 30, 5.0)]))  # a later append wins; another day
    t.append(batch([(2, 5, 6.0)]))
    r = t.maintain()
    assert r["partitions_compacted"] == 1 and r["files_rewritten"] == 3 and r["files_written"] == 1
    assert r["rows_rewritten"] == 5 and r["duplicates_removed"] == 3
    want = model_rows({(1, 0): 3.0, (2, 5): 6.0, (1, 1800): 5.0})
    assert iceberg_rows(lake_dir)[0] == want
    assert reference_rows(reference, lake_dir) == want
    assert t.maintain()["files_rewritten"] == 0  # one sorted file per partition already


def test_full_maintain_splits_at_the_target_size(lake, lake_dir):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"],
                          properties={"timelake.auto-maintain": "false", "timelake.target-file-size-bytes": "20000"})
    rnd = random.Random(3)
    for k in range(6):
        t.append(batch([(d, k * 60 + m, rnd.random()) for d in range(20) for m in range(50)]))
    r = t.maintain()
    assert r["files_rewritten"] == 6 and r["files_written"] > 1
    rows, table = iceberg_rows(lake_dir)
    assert len(rows) == 6 * 20 * 50
    sizes = [task.file.file_size_in_bytes for task in table.scan().plan_files()]
    assert max(sizes) < 20000 * 1.5
    assert t.maintain()["files_rewritten"] == 0


def test_retention_drops_whole_old_partitions(lake, lake_dir, reference):
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], retention="2d",
                          properties={"timelake.auto-maintain": "false"})
    for days in range(5):
        t.append(pa.table({"time": [now - dt.timedelta(days=days)] * 2, "dev": [1, 2], "val": [float(days)] * 2},
                          schema=SCHEMA))
    version = t.version
    r = t.maintain(compact=False, expire=False)
    assert r["partitions_dropped"] == 2 and t.version == version + 1
    snap = json.load(open(metadata_file(lake_dir, "default/t")))["snapshots"][-1]
    assert snap["summary"]["operation"] == "delete" and snap["summary"]["deleted-data-files"] == "2"
    rows, _ = iceberg_rows(lake_dir)
    assert sorted({v for _, _, v in rows}) == [0.0, 1.0, 2.0]
    assert sorted({v for _, _, v in reference_rows(reference, lake_dir)}) == [0.0, 1.0, 2.0]
    assert t.maintain(compact=False, expire=False)["partitions_dropped"] == 0


def test_snapshot_expiry_follows_min_max_and_keep_until(lake, lake_dir, tmp_path):
    props = {"timelake.auto-maintain": "false", "timelake.max-snapshots": "3", "timelake.min-snapshots": "1"}
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=props)
    for i in range(8):
        t.append(batch([(1, i, float(i))]))
    files_before = data_files_on_disk(lake_dir)
    r = t.maintain(compact=False)
    assert r["snapshots_expired"] == 5 and t.info()["snapshots"] == 3
    assert r["objects_deleted"] >= 5  # manifest lists and manifests of the expired snapshots
    assert data_files_on_disk(lake_dir) == files_before  # still live: nothing of them deleted
    # Compaction replaces every file; once the old snapshots expire, the old files go.
    r = t.maintain()
    assert r["files_rewritten"] == 8 and r["snapshots_expired"] == 1
    r = t.maintain()
    assert t.info()["snapshots"] == 3
    for _ in range(3):
        t.maintain()
        t.append(batch([(1, 100, 1.0)]), maintain=False)
    t.maintain()
    rows, table = iceberg_rows(lake_dir)
    live = {task.file.file_path.replace("file://", "") for task in table.scan().plan_files()}
    assert len(rows) == 9
    assert live <= data_files_on_disk(lake_dir)
    # keep-snapshots-until: nothing expires before then.
    until = str(int(dt.datetime.now().timestamp() * 1000) + 3_600_000)
    t2 = lake.create_table("t2", SCHEMA, time_column="time", series_key=["dev"],
                           properties={**props, "timelake.keep-snapshots-until": until})
    for i in range(6):
        t2.append(batch([(1, i, float(i))]))
    assert t2.maintain(compact=False)["snapshots_expired"] == 0


def test_maintain_plain_table_and_empty_table(lake, lake_dir):
    t = lake.create_table("p", pa.schema([("x", pa.int64())]), properties={"timelake.auto-maintain": "false"})
    assert t.maintain()["files_rewritten"] == 0
    for i in range(3):
        t.append(pa.table({"x": [i, i]}))
    r = t.maintain()
    assert r["files_rewritten"] == 3 and r["duplicates_removed"] == 0
    table = StaticTable.from_metadata(metadata_file(lake_dir, "default/p"))
    assert sorted(table.scan().to_arrow()["x"].to_pylist()) == [0, 0, 1, 1, 2, 2]


def leftover_temporaries(lake_dir, table="default/t", hours_old=2):
    """What an append killed mid-commit leaves: the local store's temporary
    files (.tmp-<uuid>, never listed), here dated hours_old hours ago."""
    root = Path(lake_dir) / table
    made = []
    for d in [root / "metadata", next((root / "data").iterdir())]:
        p = d / f".tmp-{uuid.uuid4()}"
        p.write_bytes(b"partial")
        if hours_old:
            past = dt.datetime.now().timestamp() - hours_old * 3600
            os.utime(p, (past, past))
        made.append(p)
    return made


def test_orphan_cleanup_removes_temporaries_of_killed_appends(lake, lake_dir):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    t.append(batch([(1, 0, 1.0)]))
    old, young = leftover_temporaries(lake_dir), leftover_temporaries(lake_dir, hours_old=0)
    r = t.maintain()
    # Older than the safety window (1 h) they go; a young one may be a live writer's.
    assert not any(p.exists() for p in old) and all(p.exists() for p in young)
    assert r["objects_deleted"] >= 2
    assert iceberg_rows(lake_dir)[0] == [(1, T0.isoformat(), 1.0)]


def test_orphans_of_other_writers_are_aged_by_their_modification_time(lake, lake_dir):
    """Files no snapshot names, without a UUIDv7 in their name (the reference's,
    other engines'): deleted once their modification time is three days old,
    since such a writer may take hours to commit; ours still after one hour."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    t.append(batch([(1, 0, 1.0)]))
    root = Path(lake_dir) / "default" / "t"
    part = next((root / "data").iterdir())

    def orphan(path, hours_old):
        path.write_bytes(b"not referenced")
        past = dt.datetime.now().timestamp() - hours_old * 3600
        os.utime(path, (past, past))
        return path

    foreign = [part / f"00000-0-{uuid.uuid4()}.parquet", root / "metadata" / f"{uuid.uuid4()}-m0.avro",
               root / "metadata" / f"snap-42-1-{uuid.uuid4()}.avro"]
    old = [orphan(p, 73) for p in foreign]
    young = [orphan(p.with_name("young-" + p.name), 71) for p in foreign]
    two_hours_ago_ms = int(time.time() * 1000) - 2 * 3600_000
    ours = orphan(part / f"{uuid.UUID(int=two_hours_ago_ms << 80 | 0x7 << 76 | 0x8 << 60)}.parquet", 0)
    other = orphan(root / "metadata" / "notes.txt", 100)  # not a kind of file maintenance owns
    r = t.maintain()
    assert not any(p.exists() for p in old) and not ours.exists()
    assert all(p.exists() for p in young) and other.exists()
    assert r["objects_deleted"] >= 4
    assert iceberg_rows(lake_dir)[0] == [(1, T0.isoformat(), 1.0)]


def test_drop_removes_temporaries_and_folders(lake, lake_dir):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    t.append(batch([(1, 0, 1.0)]))
    leftover_temporaries(lake_dir), leftover_temporaries(lake_dir, hours_old=0)
    t.close()
    lake.drop_table("t")
    assert not (Path(lake_dir) / "default" / "t").exists()
    assert "t" not in [n.split(".")[-1] for n in lake.tables()]


def test_model_check_random_interleavings(lake, lake_dir, reference):
    """Appends with duplicates and out-of-order times, inline and full
    maintenance, in random order: the rows equal the model (latest write wins)."""
    rnd = random.Random(11)
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], chunk="hour",
                          properties={"timelake.compact-min-files": "3", "timelake.max-snapshots": "6",
                                      "timelake.min-snapshots": "2"})
    model = {}
    val = 0.0
    for step in range(40):
        action = rnd.random()
        if action < 0.8:
            rows = []
            for _ in range(rnd.randint(1, 12)):
                val += 1
                rows.append((rnd.randint(1, 4), rnd.choice(range(0, 240, 7)), val))
            t.append(batch(rows), maintain=rnd.choice([None, True, False]))
            for d, m, v in rows:
                model[(d, m)] = v
        elif action < 0.9:
            t.maintain(compact=True, retention=True, expire=rnd.random() < 0.5)
            assert iceberg_rows(lake_dir)[0] == model_rows(model)
        else:
            t.maintain(compact=False)
        if step % 10 == 9:
            assert reference_rows(reference, lake_dir) == model_rows(model)
    t.maintain()
    rows, table = iceberg_rows(lake_dir)
    assert rows == model_rows(model)
    assert reference_rows(reference, lake_dir) == model_rows(model)


def test_reference_interop_both_ways(lake, lake_dir, reference):
    """A table we maintained is appended and maintained by the reference, and
    the other way round; both read the same rows."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"],
                          properties={"timelake.auto-maintain": "false"})
    model = {}
    for i in range(4):
        rows = [(d, i * 3 % 7, float(10 * i + d)) for d in range(3)]
        t.append(batch(rows))
        model.update({(d, m): v for d, m, v in rows})
    t.maintain()
    out = reference(f"""
        import datetime as dt, json, pyarrow as pa, timelake
        t = timelake.Lake({str(lake_dir)!r}).table("t")
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        for k in range(3):
            t.append(pa.table({{"time": [t0, t0 + dt.timedelta(minutes=100)], "dev": [0, 7],
                                "val": [100.0 + k, 200.0 + k]}}, schema=schema), maintain=False)
        r = t.maintain()
        print(json.dumps(r))
    """)
    assert out["files_rewritten"] >= 3
    model.update({(0, 0): 102.0, (7, 100): 202.0})
    assert iceberg_rows(lake_dir)[0] == model_rows(model)
    t.refresh()
    t.append(batch([(0, 0, 300.0)]), maintain=False)
    model[(0, 0)] = 300.0
    r = t.maintain()
    assert r["files_rewritten"] >= 2 and r["duplicates_removed"] == 1
    assert iceberg_rows(lake_dir)[0] == model_rows(model)
    assert reference_rows(reference, lake_dir) == model_rows(model)
    # A reference-made table, compacted by us.
    ref_dir = lake_dir.parent / "ref"
    reference(f"""
        import datetime as dt, pyarrow as pa, timelake
        lake = timelake.Lake({str(ref_dir)!r})
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
        t = lake.create_table("t", schema, time_column="time", series_key=["dev"])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        for k in range(5):
            t.append(pa.table({{"time": [t0 + dt.timedelta(minutes=k % 3)], "dev": [1], "val": [float(k)]}},
                              schema=schema), maintain=False)
        print("null")
    """)
    ours = tlc.Lake(str(ref_dir)).table("t")
    r = ours.maintain()
    assert r["files_rewritten"] == 5 and r["duplicates_removed"] == 2
    want = model_rows({(1, 0): 3.0, (1, 1): 4.0, (1, 2): 2.0})
    assert iceberg_rows(ref_dir)[0] == want
    assert reference_rows(reference, ref_dir) == want
