"""Inline maintenance kept cheap: snapshot expiry after appends batched as the
reference batches it, and the in-process cache of parsed manifests staying
right when several handles (writers) change the same table."""

import json
import random

import tlc
from test_interop import metadata_file
from test_maintain import SCHEMA, batch, iceberg_rows, model_rows, reference_rows

PROPS = {"timelake.max-snapshots": "4", "timelake.min-snapshots": "1", "timelake.compact-min-files": "1000"}


def snapshot_count(lake_dir):
    return len(json.load(open(metadata_file(lake_dir, "default/t")))["snapshots"])


def test_inline_expiry_waits_like_the_reference(lake, lake_dir, reference, tmp_path):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], properties=PROPS)
    ours = []
    for i in range(30):
        r = t.append(batch([(1, i, float(i))]))
        ours.append(snapshot_count(lake_dir))
        if "maintenance" in r:
            assert r["maintenance"]["snapshots_expired"] == ours[-2] + 1 - ours[-1]
    ref_dir = tmp_path / "ref"
    theirs = reference(f"""
        import datetime as dt, glob, json, os, pyarrow as pa, timelake
        schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.int32()), ("val", pa.float64())])
        t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        t = timelake.Lake({str(ref_dir)!r}).create_table("t", schema, time_column="time", series_key=["dev"],
                                                         properties={PROPS!r})
        out = []
        for i in range(30):
            t.append(pa.table({{"time": [t0 + dt.timedelta(minutes=i)], "dev": [1], "val": [float(i)]}},
                              schema=schema))
            md = glob.glob({str(ref_dir)!r} + "/default/t/metadata/v*.metadata.json")
            latest = max(md, key=lambda f: int(os.path.basename(f)[1:].split(".")[0]))
            out.append(len(json.load(open(latest))["snapshots"]))
        print(json.dumps(out))
    """)
    assert ours == theirs, repr((ours, theirs))
    assert max(ours) == 23 and ours[23] == 4  # 20 over the limit, then down to it
    # A maintain call expires down to the limit at once.
    t.append(batch([(1, 100, 1.0)]), maintain=False)
    r = t.maintain(compact=False)
    assert snapshot_count(lake_dir) == 4 and r["snapshots_expired"] >= 1


def test_two_handles_appending_and_maintaining_inline(lake, lake_dir, reference):
    """Two handles in one process (sharing the manifest cache) take turns at
    appends with inline compaction and expiry: every row ends up as the model
    says."""
    a = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"], chunk="hour",
                          properties={"timelake.compact-min-files": "3", "timelake.max-snapshots": "5",
                                      "timelake.min-snapshots": "1"})
    b = tlc.Lake(str(lake_dir)).table("t")
    rnd = random.Random(7)
    model, val = {}, 0.0
    for step in range(30):
        rows = []
        for _ in range(rnd.randint(1, 6)):
            val += 1
            rows.append((rnd.randint(1, 3), rnd.choice(range(0, 180, 13)), val))
        writer = a if rnd.random() < 0.5 else b
        writer.refresh()  # the other handle may have expired the snapshot this one last saw
        writer.append(batch(rows))
        model.update({(d, m): v for d, m, v in rows})
        if step % 10 == 9:  # files may overlap until a full maintain: read with dedup
            assert reference_rows(reference, lake_dir) == model_rows(model)
    a.refresh()
    a.maintain()
    assert iceberg_rows(lake_dir)[0] == model_rows(model)
    assert reference_rows(reference, lake_dir) == model_rows(model)


def test_table_dropped_and_made_again_at_the_same_place(lake, lake_dir):
    """Cached manifests are keyed by unique names: a new table in the place of
    an old one is compacted from its own files."""
    for round_ in range(2):
        t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"],
                              properties={"timelake.compact-min-files": "2"})
        model = {}
        for i in range(5):
            t.append(batch([(round_, i, float(i + 10 * round_))]))
            model[(round_, i)] = float(i + 10 * round_)
        t.maintain()
        assert iceberg_rows(lake_dir)[0] == model_rows(model)
        lake.drop_table("t")
