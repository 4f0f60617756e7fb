"""Inline compaction folded into the append's commit (src/table/maintain_fold.c):
an append whose compaction is due makes one metadata version holding two
snapshots, the append's then the compaction's, both readable by other
engines; a compaction that fails leaves the append committed alone, and a
folded commit that loses a race retries the append alone; nothing is left
behind in either case. Inline expiry is folded too: the version leaves out
the snapshots expiry drops, and what only they named is deleted."""

import json
from pathlib import Path

import fastavro
from pyiceberg.table import StaticTable

from test_interop import metadata_file
from test_maintain import SCHEMA, batch, reference_rows
from test_version_hint import duckdb_iceberg_count

PROPS = {"timelake.compact-min-files": "3"}


def metadata(lake_dir):
    return json.load(open(metadata_file(lake_dir, "default/t")))


def local(url):
    return url[len("file://"):] if url.startswith("file://") else url


def avro(url):
    with open(local(url), "rb") as f:
        return list(fastavro.reader(f))


def referenced(md):
    """Every object the snapshots of md name (lists, manifests, data, indexes)."""
    out = set()
    for s in md["snapshots"]:
        out.add(local(s["manifest-list"]))
        if "timelake.last-value-index" in s["summary"]:
            out.add(local(s["summary"]["timelake.last-value-index"]))
        for m in avro(s["manifest-list"]):
            out.add(local(m["manifest_path"]))
            out.update(local(e["data_file"]["file_path"]) for e in avro(m["manifest_path"]))
    return out


def objects(lake_dir):
    """The table's data and metadata objects on disk, less versions and hint."""
    root = Path(lake_dir) / "default" / "t"
    return {str(p) for p in root.rglob("*") if p.is_file() and not p.name.endswith(".metadata.json")
            and p.name != "version-hint.text"}


def test_due_compaction_is_one_version_of_two_snapshots(lake, lake_dir, reference):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    for i in range(2):
        assert "maintenance" not in t.append(batch([(1, i, float(i)), (2, i, 1.0)]), batch_id=f"b{i}")
    before = t.info()["version"]
    r = t.append(batch([(1, 2, 2.0), (2, 2, 2.0)]), batch_id="b2")
    assert r["maintenance"]["partitions_compacted"] == 1 and r["maintenance"]["files_rewritten"] == 3
    assert r["version"] == before + 1  # one version for both commits
    md = metadata(lake_dir)
    append, replace = md["snapshots"][-2:]
    assert append["summary"]["operation"] == "append" and replace["summary"]["operation"] == "replace"
    assert append["summary"]["timelake.batch-id"] == "b2"
    assert replace["parent-snapshot-id"] == append["snapshot-id"]
    assert replace["sequence-number"] == append["sequence-number"] + 1 == md["last-sequence-number"]
    assert md["current-snapshot-id"] == replace["snapshot-id"]
    assert [e["snapshot-id"] for e in md["snapshot-log"][-2:]] == [append["snapshot-id"], replace["snapshot-id"]]
    # The compaction keeps the newest row of every series: the append's index serves both.
    assert replace["summary"]["timelake.last-value-index"] == append["summary"]["timelake.last-value-index"]
    # The metadata log names only versions that exist.
    assert all(Path(local(e["metadata-file"])).exists() for e in md["metadata-log"])
    assert len(md["metadata-log"]) == before
    want = sorted((d, float(v)) for i in range(3) for d, v in ((1, i), (2, 1.0 if i < 2 else 2.0)))
    # Time travel to the append's snapshot reads the rows right after the append, in three files.
    table = StaticTable.from_metadata(metadata_file(lake_dir, "default/t"))
    for sid, files in ((append["snapshot-id"], 3), (replace["snapshot-id"], 1)):
        scan = table.scan(snapshot_id=sid, selected_fields=("dev", "val"))
        assert len(list(scan.plan_files())) == files
        assert sorted((x["dev"], x["val"]) for x in scan.to_arrow().to_pylist()) == want
        n = lake.sql(f"SELECT count(*) AS n FROM t AT (VERSION => {sid})").to_pylist()
        assert n == [{"n": 6}]
    assert duckdb_iceberg_count(Path(lake_dir) / "default" / "t") == 6
    assert len(reference_rows(reference, lake_dir)) == 6
    # A redelivered batch is found in the append's snapshot, under the compaction's.
    assert t.append(batch([(1, 2, 9.0)]), batch_id="b2")["duplicate"]
    assert objects(lake_dir) == referenced(md)


def test_failed_compaction_leaves_the_append_committed_alone(lake, lake_dir):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    for i in range(2):
        t.append(batch([(1, i, float(i))]))
    # A lost data file makes the compaction's read fail.
    lost = next(p for p in objects(lake_dir) if "/data/" in p and p.endswith(".parquet"))
    Path(lost).unlink()
    before = t.info()["version"]
    r = t.append(batch([(1, 2, 2.0)]))
    assert "maintenance" not in r and "no such file" in r["maintenance_error"]
    assert r["version"] == before + 1
    md = metadata(lake_dir)
    assert md["snapshots"][-1]["summary"]["operation"] == "append"
    assert objects(lake_dir) == referenced(md) - {lost}  # nothing of the compaction is left


def test_folded_commit_that_loses_a_race_retries_the_append_alone(lake, lake_dir):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    for i in range(2):
        t.append(batch([(1, i, float(i))]))
    other = lake.table("t")
    other.append(batch([(2, 0, 5.0)]), maintain=False)  # t does not know of it
    r = t.append(batch([(1, 2, 2.0)]))
    assert r["attempts"] == 2
    # The append lands alone; the compaction after it plans on the table as it is now.
    assert r["maintenance"]["files_rewritten"] == 4
    md = metadata(lake_dir)
    assert [s["summary"]["operation"] for s in md["snapshots"][-3:]] == ["append", "append", "replace"]
    assert objects(lake_dir) == referenced(md)  # the folded attempt's files are gone
    assert t.info()["rows"] == 4


def test_due_expiry_is_folded_into_the_appends_version(lake_dir, reference):
    """Every append makes one version, with its compaction and its expiry
    when due: the snapshots kept are the newest max-snapshots of all the
    appends and compactions made, as the expiry after the append keeps
    (test_maintain_inline checks the counts against the reference's)."""
    import tlc
    lake = tlc.Lake(str(lake_dir))
    props = {"timelake.compact-min-files": "3", "timelake.max-snapshots": "2", "timelake.min-snapshots": "1"}
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=props)
    made, expiries = [], 0
    for i in range(24):
        before = t.info()["version"]
        r = t.append(batch([(1, i, float(i)), (2, i, 1.0)]), batch_id=f"b{i}")
        assert r["version"] == before + 1
        md = metadata(lake_dir)
        made += [s["snapshot-id"] for s in md["snapshots"] if s["snapshot-id"] not in made]
        kept = [s["snapshot-id"] for s in md["snapshots"]]
        if r.get("maintenance", {}).get("snapshots_expired"):
            expiries += 1
            assert kept == made[-2:] and r["maintenance"]["snapshots_expired"] == len(made) - 2
            # The two newest: the append's and, at this append, its compaction's.
            assert [s["summary"]["operation"] for s in md["snapshots"]] == ["append", "replace"]
            assert [e["snapshot-id"] for e in md["snapshot-log"]] == kept
            assert r["maintenance"]["objects_deleted"] > 0
            made = made[-2:]
        else:
            assert kept == made
        # The metadata log names the versions before (the newest 20), once each.
        log = [e["metadata-file"] for e in md["metadata-log"]]
        assert len(set(log)) == len(log) == min(before, 20) and log[-1].endswith(f"/v{before}.metadata.json")
        assert all(Path(local(e["metadata-file"])).exists() for e in md["metadata-log"])
    assert expiries == 1
    # The expired snapshots' objects go once the version is durable, on
    # the store's deletion thread: settled when the lake closes.
    t.close()
    lake.close()
    md = metadata(lake_dir)
    ledger = local(md["properties"]["timelake.batch-ledger"])
    assert objects(lake_dir) == referenced(md) | {ledger}
    want = sorted((d, float(v)) for i in range(24) for d, v in ((1, i), (2, 1.0)))
    table = StaticTable.from_metadata(metadata_file(lake_dir, "default/t"))
    assert sorted((x["dev"], x["val"]) for x in table.scan(selected_fields=("dev", "val")).to_arrow().to_pylist()) == want
    assert len(reference_rows(reference, lake_dir)) == 48
    # The expired appends' batch ids moved to the ledger: still duplicates.
    t = tlc.Lake(str(lake_dir)).table("t")
    assert t.append(batch([(1, 0, 9.0)]), batch_id="b0")["duplicate"]
