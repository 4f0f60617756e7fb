"""Idempotency across snapshot expiry: the batch ids of expired snapshots move
to the batch ledger (timelake.batch-ledger), so a late redelivery of any batch
ever committed appends nothing. Checked against fastavro (the ledger file),
pyiceberg (the rows) and the reference (reads and writes such a table)."""

import json
import threading
import time
from pathlib import Path

import fastavro
import pytest

import tlc
from store_servers import server_fixture
from test_interop import metadata_file
from test_maintain import SCHEMA, batch, iceberg_rows, reference_rows

s3 = pytest.fixture(scope="module")(server_fixture("s3"))

# Small thresholds: inline expiry runs every 20 appends.
PROPS = {"timelake.max-snapshots": "4", "timelake.min-snapshots": "1"}


def metadata(lake_dir):
    return json.load(open(metadata_file(lake_dir, "default/t")))


def ledger(lake_dir):
    """The ledger's lineage roots and its entries, {root: {batch id}} (None:
    untagged, every line's)."""
    url = metadata(lake_dir)["properties"]["timelake.batch-ledger"]
    path = Path(url.removeprefix("file://"))
    assert path.is_relative_to(Path(lake_dir) / "default/t/metadata")
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        roots = {int(r) for r in reader.metadata["timelake.lineages"].split(",") if r}
        keys = [(r["batch_id"], r["lineage"] is not None, r["lineage"] or 0) for r in reader]
    assert keys == sorted(set(keys))  # sorted and unique, untagged first
    entries = {}
    for batch_id, tagged, root in keys:
        assert not tagged or root in roots
        entries.setdefault(root if tagged else None, set()).add(batch_id)
    return roots, entries


def ledger_ids(lake_dir):
    return sorted(set().union(*ledger(lake_dir)[1].values()))


def live_ids(lake_dir):
    return {s["summary"].get("timelake.batch-id") for s in metadata(lake_dir)["snapshots"]} - {None}


def redeliver_all(t, ids, row=lambda i: [(1, i, -1.0)]):
    version = t.version
    for i in ids:
        r = t.append(batch(row(i)), batch_id=f"b{i}")
        assert r["duplicate"] and r["rows"] == 0, (i, r)
    assert t.version == version


@pytest.mark.parametrize("dedup", [False, True])
def test_every_batch_remembered_after_expiry(lake, lake_dir, dedup):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], dedup=dedup,
                          properties=PROPS)
    for i in range(210):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    assert len(metadata(lake_dir)["snapshots"]) < 30  # most snapshots expired
    ids = ledger_ids(lake_dir)
    assert set(ids) | live_ids(lake_dir) >= {f"b{i}" for i in range(210)}
    redeliver_all(t, range(210))
    # A fresh handle (no cache) and a full maintain keep every id too.
    t.maintain()
    t2 = tlc.Lake(str(lake_dir)).table("t")
    redeliver_all(t2, range(0, 210, 7))
    rows, _ = iceberg_rows(lake_dir)
    assert [r[2] for r in rows] == [float(i) for i in range(210)]


def test_ids_of_group_commits_are_remembered_one_by_one(lake, lake_dir):
    """Commits carrying several batch ids (an import's groups): after expiry
    every id is in the ledger, each is a duplicate on its own, and a commit
    holding some of them and a new one is refused with nothing written."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    groups = [[f"g{g}/{k}.csv" for k in range(3)] for g in range(45)]
    for g, ids in enumerate(groups):
        assert t.append(batch([(1, g, float(g))]), batch_ids=ids)["rows"] == 1
    every = [i for ids in groups for i in ids]
    assert set(every[:90]) <= set(ledger_ids(lake_dir))  # most groups' snapshots expired
    t2 = tlc.Lake(str(lake_dir)).table("t")
    assert t2.batches_committed(every + ["g0/9.csv", "g0"]) == [True] * len(every) + [False, False]
    version = t2.version
    for g in (0, 20, 44):
        assert t2.append(batch([(1, g, -1.0)]), batch_id=groups[g][1])["duplicate"]
        assert t2.append(batch([(1, g, -1.0)]), batch_ids=groups[g][::-1])["duplicate"]
        with pytest.raises(tlc.TimelakeError, match="g%d/2.csv" % g):
            t2.append(batch([(1, g, -1.0)]), batch_ids=[groups[g][2], "new.csv"])
    assert t2.version == version
    rows, _ = iceberg_rows(lake_dir)
    assert [r[2] for r in rows] == [float(g) for g in range(45)]


def test_concurrent_writers_keep_ids(lake, lake_dir):
    """Two handles append distinct batches while each redelivers the other's:
    expiries race with appends and their rebases; no batch lands twice."""
    lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    errors = []

    def writer(k):
        try:
            t = tlc.Lake(str(lake_dir)).table("t")
            for i in range(k, 160, 2):
                t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
                j = i - 41  # an older batch of the other writer (same rows, as redelivered),
                if j >= 0:  # perhaps not yet committed when one writer runs ahead
                    t.append(batch([(1, j, float(j))]), batch_id=f"b{j}")
        except Exception as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in (0, 1)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    t = tlc.Lake(str(lake_dir)).table("t")
    redeliver_all(t, range(160))
    rows, _ = iceberg_rows(lake_dir)
    assert [r[2] for r in rows] == [float(i) for i in range(160)]


def test_reference_reads_and_keeps_the_ledger(lake, lake_dir, reference):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    for i in range(60):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    assert ledger_ids(lake_dir)
    out = reference(f"""
        import datetime as dt, json, pyarrow as pa, timelake
        t = timelake.Lake({str(lake_dir)!r}).table("t")
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        r = t.append(pa.table({{"time": [t0 + dt.timedelta(minutes=60)], "dev": [1], "val": [60.0]}},
                              schema=schema), batch_id="b60")
        t.maintain(expire=False)  # its expiry would forget ids: it keeps no ledger
        print(json.dumps(r["rows"]))
    """)
    assert out == 1
    assert "timelake.batch-ledger" in metadata(lake_dir)["properties"]
    t = tlc.Lake(str(lake_dir)).table("t")
    redeliver_all(t, range(61))
    expect = [(1, r[1], float(i)) for i, r in enumerate(iceberg_rows(lake_dir)[0])]
    assert reference_rows(reference, lake_dir) == expect and len(expect) == 61


def test_handle_sees_a_batch_the_reference_committed_since(lake, lake_dir, reference):
    """A handle keeps its ancestry's batch ids between appends; a batch the
    reference commits meanwhile is found once the handle's commit loses the
    race to it, and nothing is written twice."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    for i in range(5):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    assert t.batches_committed(["b3", "r1"]) == [True, False]
    out = reference(f"""
        import datetime as dt, json, pyarrow as pa, timelake
        t = timelake.Lake({str(lake_dir)!r}).table("t")
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        r = t.append(pa.table({{"time": [t0 + dt.timedelta(minutes=50)], "dev": [1], "val": [50.0]}},
                              schema=schema), batch_id="r1", maintain=False)
        print(json.dumps(r["rows"]))
    """)
    assert out == 1
    r = t.append(batch([(1, 99, -1.0)]), batch_id="r1")
    assert r["duplicate"] and r["rows"] == 0
    assert t.batches_committed(["b0", "b4", "r1", "r2"]) == [True, True, True, False]
    assert len(reference_rows(reference, lake_dir)) == 6


def test_table_of_the_reference_then_ours(lake, lake_dir, reference):
    """The reference's own expiry forgets batch ids (it has no ledger); the
    ones still live when we take over are remembered from then on."""
    reference(f"""
        import datetime as dt, json, pyarrow as pa, timelake
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        t = timelake.Lake({str(lake_dir)!r}).create_table("t", schema, time_column="time", series_key=["dev"],
                                                          properties={PROPS!r})
        for i in range(30):
            t.append(pa.table({{"time": [t0 + dt.timedelta(minutes=i)], "dev": [1], "val": [float(i)]}},
                              schema=schema), batch_id=f"b{{i}}")
        print(json.dumps(0))
    """)
    live_before = sorted(int(b[1:]) for b in live_ids(lake_dir))
    assert live_before
    t = lake.table("t")
    for i in range(30, 100):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    assert set(ledger_ids(lake_dir)) >= {f"b{i}" for i in live_before}
    redeliver_all(t, live_before + list(range(30, 100)))
    assert len(reference_rows(reference, lake_dir)) == 100


# Histories with rollbacks: a batch id is a duplicate exactly when the current
# snapshot or one of its ancestors committed it, expired or not. No inline
# expiry; expire_to expires down to n snapshots (the current one always stays).
BRANCHY = {"timelake.max-snapshots": "100", "timelake.min-snapshots": "1"}
IDS = ["b0", "x", "y", "z", "w"]


def expire_to(t, n):
    t.set_properties({"timelake.max-snapshots": str(n)})
    return t.maintain(compact=False, retention=False, rollups=False)["snapshots_expired"]


def add(t, minute, batch_id):
    r = t.append(batch([(1, minute, float(minute))]), batch_id=batch_id)
    assert r["rows"] == 1 and not r["duplicate"], (batch_id, r)
    return t.info()["snapshot_id"]


def committed(t, lake_dir, want):
    """Asks this handle and a fresh one (no cached ledger or ids)."""
    want = [i in want for i in IDS]
    assert t.batches_committed(IDS) == want
    t2 = tlc.Lake(str(lake_dir)).table("t")
    assert t2.batches_committed(IDS) == want
    t2.close()


def current_minutes(lake_dir):
    """The minutes of the current rows (add() gives each the value of its minute)."""
    return sorted(int(r[2]) for r in iceberg_rows(lake_dir)[0])


def test_rollback_onto_a_line_whose_batches_expired(lake, lake_dir):
    """s0 (b0) <- s1 (x) <- s2 (z); back to s0, then expiry removes s1 and
    keeps s2 (the newest) and s0 (current). Rolled forward to s2, the table
    holds the rows of b0, x and z again: each is a duplicate (x was in no
    ledger: expiry recorded only the current line's ids, and x redelivered
    landed twice)."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=BRANCHY)
    s0 = add(t, 0, "b0")
    add(t, 1, "x")
    s2 = add(t, 2, "z")
    t.rollback(s0)
    committed(t, lake_dir, {"b0"})
    assert expire_to(t, 1) == 1
    assert {s["snapshot-id"] for s in metadata(lake_dir)["snapshots"]} == {s0, s2}
    committed(t, lake_dir, {"b0"})
    t.rollback(s2)
    committed(t, lake_dir, {"b0", "x", "z"})
    version = t.version
    for minute, i in enumerate(["b0", "x", "z"]):
        assert t.append(batch([(1, minute, -1.0)]), batch_id=i)["duplicate"]
    assert t.version == version and current_minutes(lake_dir) == [0, 1, 2]
    # s2's ledger entries hold its ancestors' ids; s0, a root too, has none.
    assert ledger(lake_dir) == ({s0, s2}, {s2: {"b0", "x"}})


def test_rollback_onto_a_line_without_an_expired_batch(lake, lake_dir):
    """s0 (b0) <- s1 (x) <- s2 (z) current, and sa (y) on s0 beside s1.
    Expiry removes s0 and s1. Rolled back to sa, the table does not hold x:
    its redelivery lands (it was dropped as a duplicate, all expired ids
    counting for every line); b0 and y are duplicates. Then sa expires too:
    its line's ids move to its child, and s2's line keeps its own."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=BRANCHY)
    s0 = add(t, 0, "b0")
    s1 = add(t, 1, "x")
    t.rollback(s0)
    sa = add(t, 3, "y")
    t.rollback(s1)
    s2 = add(t, 2, "z")
    assert expire_to(t, 2) == 2
    committed(t, lake_dir, {"b0", "x", "z"})
    t.rollback(sa)
    committed(t, lake_dir, {"b0", "y"})
    s3 = add(t, 1, "x")
    assert current_minutes(lake_dir) == [0, 1, 3]
    add(t, 4, "w")
    assert ledger(lake_dir) == ({s2, sa}, {s2: {"b0", "x"}, sa: {"b0"}})
    assert expire_to(t, 3) == 1  # sa
    assert ledger(lake_dir) == ({s2, s3}, {s2: {"b0", "x"}, s3: {"b0", "y"}})
    committed(t, lake_dir, {"b0", "x", "y", "w"})
    t.rollback(s2)
    committed(t, lake_dir, {"b0", "x", "z"})
    assert not t.append(batch([(1, 3, 3.0)]), batch_id="y")["duplicate"]
    assert current_minutes(lake_dir) == [0, 1, 2, 3]


def test_reference_expiry_keeps_our_ledger_ids(lake, lake_dir, reference):
    """The reference's expiry removes the lineage root our ledger names and
    writes no ledger: every id our ledger held stays a duplicate (a root the
    ledger does not list counts all of its ids), also after our next expiry."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    for i in range(45):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    for i in range(45, 50):  # more snapshots than the reference keeps
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}", maintain=False)
    roots, _ = ledger(lake_dir)
    ours = sorted(int(i[1:]) for i in ledger_ids(lake_dir))
    assert ours
    reference(f"""
        import json, timelake
        timelake.Lake({str(lake_dir)!r}).table("t").maintain()
        print(json.dumps(0))
    """)
    snapshots = {s["snapshot-id"] for s in metadata(lake_dir)["snapshots"]}
    assert not roots & snapshots and ledger(lake_dir)[0] == roots  # roots gone, same ledger
    t2 = tlc.Lake(str(lake_dir)).table("t")
    redeliver_all(t2, ours)
    for i in range(50, 75):  # our inline expiry writes the next ledger
        t2.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    assert ledger(lake_dir)[0] != roots
    redeliver_all(t2, ours)
    t2.close()
    assert [r[2] for r in iceberg_rows(lake_dir)[0]] == [float(i) for i in range(75)]


def test_retention_bounds_the_ledger(lake, lake_dir):
    # Long enough that the first 25 appends fit in it on a loaded machine.
    props = dict(PROPS, **{"timelake.batch-id-retention": "5s"})
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=props)
    for i in range(25):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    early = set(ledger_ids(lake_dir))
    assert "b0" in early
    time.sleep(5.2)
    for i in range(25, 50):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    assert not early & set(ledger_ids(lake_dir))  # older than the retention: forgotten
    r = t.append(batch([(2, 0, 0.0)]), batch_id="b0")
    assert not r["duplicate"] and r["rows"] == 1


def test_ledger_settings_are_checked(lake, lake_dir):
    with pytest.raises(ValueError, match="batch-id-retention"):
        lake.create_table("t", SCHEMA, properties={"timelake.batch-id-retention": "soon"})
    with pytest.raises(ValueError, match="set by Timelake"):
        lake.create_table("t", SCHEMA, properties={"timelake.batch-ledger": "file:///x.avro"})
    assert not Path(lake_dir, "default/t").exists()


def test_ledger_on_object_storage(s3):
    """The same on S3 (moto): the ledger is an object like the rest."""
    url = s3.url()
    lake = tlc.Lake(url, s3.options)
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    for i in range(45):
        t.append(batch([(1, i, float(i))]), batch_id=f"b{i}")
    t2 = tlc.Lake(url, s3.options).table("t")
    redeliver_all(t2, range(45))
    assert t2.info()["rows"] == 45 and t2.info()["snapshots"] < 30  # expired, ids kept
