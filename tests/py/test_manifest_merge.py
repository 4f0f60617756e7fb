"""Appends merge the parent's manifests in size tiers (src/table/manifest_merge.h):
the manifest list stays short however many appends a table takes, and what
the merged manifests hold is what the appends wrote, as pyiceberg, fastavro,
DuckDB's iceberg_scan and the reference read it."""

import datetime as dt
import glob
import json
import os

import fastavro
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable
from test_version_hint import duckdb_iceberg_count

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("v", pa.float64())])
FAN_IN = 3


def batch(i, n=5):
    """Rows of append i; every append rewrites host-0's reading at T0 (the latest write wins)."""
    times = [T0] + [T0 + dt.timedelta(minutes=i, seconds=s + 1) for s in range(n - 1)]
    hosts = ["host-0"] + [f"host-{1 + (i + s) % 4}" for s in range(n - 1)]
    return pa.table({"time": times, "host": hosts, "v": [float(i * 100 + s) for s in range(n)]}, schema=SCHEMA)


def latest_metadata(lake_dir, table="m/t"):
    files = glob.glob(str(lake_dir / table / "metadata" / "v*.metadata.json"))
    return max(files, key=lambda f: int(os.path.basename(f)[1:].split(".")[0]))


def current_manifests(lake_dir, table="m/t"):
    md = json.load(open(latest_metadata(lake_dir, table)))
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    with open(snap["manifest-list"].replace("file://", ""), "rb") as f:
        return list(fastavro.reader(f)), snap


def manifest_entries(m):
    with open(m["manifest_path"].replace("file://", ""), "rb") as f:
        return list(fastavro.reader(f))


@pytest.fixture
def merged_table(lake, lake_dir):
    t = lake.create_table("m.t", SCHEMA, time_column="time", series_key=["host"],
                          properties={"commit.manifest.min-count-to-merge": str(FAN_IN)})
    expected = {}
    history = []  # (snapshot id, sequence number, files added) per append
    for i in range(30):
        data = batch(i)
        t.append(data, batch_id=f"b{i}", maintain=False)
        for row in data.to_pylist():
            expected[(row["host"], row["time"])] = row["v"]
        manifests, snap = current_manifests(lake_dir)
        own = [m for m in manifests if m["added_snapshot_id"] == snap["snapshot-id"] and m["added_files_count"]]
        history.append((snap["snapshot-id"], snap["sequence-number"], {e["data_file"]["file_path"]
                                                                       for e in manifest_entries(own[0])}))
    return t, expected, history


def test_list_stays_short_and_entries_keep_their_origin(lake_dir, merged_table):
    t, expected, history = merged_table
    manifests, snap = current_manifests(lake_dir)
    # 30 appends, fan-in 3: at most fan-in - 1 per tier (1, 3, 9, 27 files), plus the newest.
    assert len(manifests) <= 2 * 4 + 1
    assert t.info()["manifests"] == len(manifests)
    origin = {}
    for sid, seq, files in history:
        for f in files:
            origin[f] = (sid, seq)
    seen = set()
    for m in manifests:
        for e in manifest_entries(m):
            path = e["data_file"]["file_path"]
            seen.add(path)
            if e["status"] == 1:  # an append's own manifest, not merged yet: values inherited
                assert m["added_files_count"] == 1 and e["sequence_number"] is None
                got = (e["snapshot_id"] or m["added_snapshot_id"], m["sequence_number"], m["sequence_number"])
            else:  # EXISTING in a merged manifest, values explicit
                assert e["status"] == 0 and m["existing_files_count"] and not m["added_files_count"]
                got = (e["snapshot_id"], e["sequence_number"], e["file_sequence_number"])
                assert m["min_sequence_number"] <= got[1] <= m["sequence_number"]
            sid, seq = origin[path]
            assert got == (sid, seq, seq)
    assert seen == set(origin)
    merged = [m for m in manifests if m["existing_files_count"]]
    assert merged and all(m["added_files_count"] == 0 for m in merged)


def test_readers_see_the_same_rows(lake, lake_dir, merged_table):
    t, expected, _ = merged_table
    table = StaticTable.from_metadata(latest_metadata(lake_dir))
    raw = table.scan().to_arrow()
    assert raw.num_rows == 30 * 5  # no file lost or counted twice
    assert len(expected) == 30 * 4 + 1
    got = lake.sql("SELECT host, time, v FROM m.t").to_pylist()
    assert {(r["host"], r["time"]): r["v"] for r in got} == expected
    assert len(got) == len(expected)  # dedup on read still picks the latest write
    assert t.info()["rows"] == 30 * 5
    # A redelivered batch of an append whose manifest was merged is still a duplicate.
    assert t.append(batch(0), batch_id="b0", maintain=False)["duplicate"]


def test_duckdb_iceberg_scan_reads_every_file_once(lake_dir, merged_table):
    assert duckdb_iceberg_count(lake_dir / "m" / "t") == 30 * 5


def test_reference_reads_appends_and_maintains(lake, lake_dir, merged_table, reference):
    _, expected, _ = merged_table
    out = reference(f"""
        import json, timelake, datetime as dt, pyarrow as pa
        lake = timelake.Lake({str(lake_dir)!r})
        t = lake.table("m.t")
        rows = lake.sql("SELECT host, CAST(time AS VARCHAR) AS time, v FROM m.t").to_pylist()
        t.append(pa.table({{"time": [dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)], "host": ["ref"], "v": [1.0]}}),
                 batch_id="ref")
        rep = t.maintain()
        print(json.dumps({{"rows": len(rows), "after": lake.sql("SELECT count(*) AS n FROM m.t").to_pylist(),
                           "files": t.info()["files"]}}))
        """)
    assert out["rows"] == len(expected)
    assert out["after"] == [{"n": len(expected) + 1}]
    t = lake.table("m.t")
    for i in range(30, 40):
        t.append(batch(i), batch_id=f"b{i}", maintain=False)
        expected.update({(r["host"], r["time"]): r["v"] for r in batch(i).to_pylist()})
    assert t.append(batch(3), batch_id="b3", maintain=False)["duplicate"]
    got = lake.sql("SELECT host, time, v FROM m.t WHERE host <> 'ref'").to_pylist()
    assert {(r["host"], r["time"]): r["v"] for r in got} == expected and len(got) == len(expected)
    # The reference's maintain left one row per key; each later batch adds 5 rows.
    table = StaticTable.from_metadata(latest_metadata(lake_dir))
    assert table.scan().to_arrow().num_rows == len(expected) - 10 * 4 + 1 + 10 * 5


def test_merge_can_be_turned_off(lake, lake_dir):
    t = lake.create_table("m.t", SCHEMA, time_column="time", series_key=["host"],
                          properties={"commit.manifest-merge.enabled": "false"})
    for i in range(12):
        t.append(batch(i), maintain=False)
    manifests, _ = current_manifests(lake_dir)
    assert len(manifests) == 12


def test_replace_leaves_no_spent_manifest_behind(lake, lake_dir):
    t = lake.create_table("m.t", SCHEMA, time_column="time", series_key=["host"])
    for i in range(3):
        t.append(batch(i), maintain=False)
    t.replace(batch(10))
    manifests, _ = current_manifests(lake_dir)
    assert any(m["deleted_files_count"] and not m["added_files_count"] for m in manifests)
    t.append(batch(11), maintain=False)
    manifests, _ = current_manifests(lake_dir)
    # The manifest of the replaced files (only DELETED entries) is gone from the list.
    assert all(m["added_files_count"] or m["existing_files_count"] for m in manifests)
    assert len(manifests) == 2
    assert lake.sql("SELECT count(*) AS n FROM m.t").to_pylist() == [{"n": 9}]
