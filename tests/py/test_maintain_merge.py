"""Compaction as a streaming merge of sorted files: outputs sorted and
deduplicated (latest write wins) across many inputs and row groups, and inputs
the merge cannot take (a file not sorted as the table says, a series key of a
type it does not compare) still compacted correctly by the in-memory path.
Oracles: a model of the rows, pyarrow (the order inside each file), pyiceberg
and the reference."""

import datetime as dt
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import StaticTable

from test_interop import metadata_file

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("dev", pa.int32()),
                    ("val", pa.float64())])
NO_AUTO = {"timelake.auto-maintain": "false"}


def batch(rows, schema=SCHEMA):
    """rows: (host, dev, minutes after T0, val)."""
    return pa.table({"time": [T0 + dt.timedelta(minutes=m) for _, _, m, _ in rows],
                     "host": [h for h, _, _, _ in rows], "dev": [d for _, d, _, _ in rows],
                     "val": [v for _, _, _, v in rows]}, schema=schema)


def random_appends(t, rnd, appends, model, keys=("a", "b", "ab", "b\x00", "")):
    val = 0.0
    for _ in range(appends):
        rows = []
        for _ in range(rnd.randint(5, 40)):
            val += 1
            rows.append((rnd.choice(keys), rnd.randint(-3, 3), rnd.randrange(0, 3 * 24 * 60, 11), val))
        t.append(batch(rows), maintain=False)
        model.update({(h, d, m): v for h, d, m, v in rows})


def live_files(lake_dir):
    table = StaticTable.from_metadata(metadata_file(lake_dir, "default/t"))
    return table, [task.file.file_path.replace("file://", "") for task in table.scan().plan_files()]


def check(lake_dir, model, reference=None):
    table, paths = live_files(lake_dir)
    for path in paths:  # each file sorted by (series key..., time)
        f = pq.read_table(path)
        keys = list(zip(f["host"].to_pylist(), f["dev"].to_pylist(), f["time"].cast(pa.int64()).to_pylist()))
        assert keys == sorted(keys), path
    rows = table.scan(selected_fields=("host", "dev", "time", "val")).to_arrow().to_pylist()
    got = sorted((r["host"], r["dev"], r["time"], r["val"]) for r in rows)
    want = sorted((h, d, T0 + dt.timedelta(minutes=m), v) for (h, d, m), v in model.items())
    assert got == want
    if reference:
        ref = reference_rows_of(reference, lake_dir)
        assert ref == sorted((h, d, (T0 + dt.timedelta(minutes=m)).isoformat(), v) for (h, d, m), v in model.items())
    return paths


def reference_rows_of(reference, lake_dir):
    rows = reference(f"""
        import json, timelake
        t = timelake.Lake({str(lake_dir)!r}).sql("SELECT host, dev, time, val FROM t")
        print(json.dumps([(r["host"], r["dev"], r["time"].isoformat(), r["val"]) for r in t.to_pylist()]))
    """)
    return sorted(tuple(r) for r in rows)


def rewrite_file(path, shuffle=False, row_group_size=None):
    """Replaces a data file by the same rows, written by pyarrow (field ids
    kept): shuffled, or in row groups of the given size."""
    f = pq.read_table(path)
    if shuffle:
        f = f.take(np.random.default_rng(5).permutation(f.num_rows))
    pq.write_table(f, path, row_group_size=row_group_size)


def test_merge_many_files_sorted_and_latest_write_wins(lake, lake_dir, reference):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], properties=NO_AUTO)
    model = {}
    random_appends(t, random.Random(1), 25, model)
    r = t.maintain()
    assert r["partitions_compacted"] == 3 and r["files_written"] == 3
    assert r["rows_rewritten"] - r["duplicates_removed"] == len(model)
    check(lake_dir, model, reference)
    assert t.maintain()["files_rewritten"] == 0


def test_merge_reads_row_group_by_row_group(lake, lake_dir):
    """Inputs of many row groups (as other writers make them), with duplicates
    of a key falling on both sides of a row-group boundary in different files."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], properties=NO_AUTO)
    model = {}
    random_appends(t, random.Random(2), 6, model)
    _, paths = live_files(lake_dir)
    for i, path in enumerate(paths):
        rewrite_file(path, row_group_size=2 + i % 3)
    assert any(pq.ParquetFile(p).num_row_groups > 2 for p in paths)
    r = t.maintain()
    assert r["files_rewritten"] == len(paths)
    check(lake_dir, model)


def run_appends(t, model):
    """Four appends of six series, 60 minutes each, every file over the one
    before by 20: runs of one series per file that no other file holds (the
    merge takes them whole), the rest replaced by the next file."""
    for k in range(4):
        rows = [(h, d, m, float(100 * k + m)) for h in "abc" for d in (0, 1) for m in range(40 * k, 40 * k + 60)]
        t.append(batch(rows), maintain=False)
        model.update({(h, d, m): v for h, d, m, v in rows})


def test_merge_takes_runs_whole(lake, lake_dir):
    """Runs of one input below every other input's row, with duplicates inside
    a file (the later ingest time wins, then the later row) that fall inside
    runs, at their ends and across row-group boundaries."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], properties=NO_AUTO)
    model = {}
    run_appends(t, model)
    _, paths = live_files(lake_dir)
    newest = max(paths, key=lambda p: pq.read_table(p)["val"][0].as_py())
    f = pq.read_table(newest)
    # Every seventh row twice, the copy with another value, written a
    # microsecond later (it wins) or earlier (the first wins) by turns; row
    # groups of 9.
    idx = [j for i in range(f.num_rows) for j in ([i, i] if i % 7 == 3 else [i])]
    copy = [j > 0 and idx[j - 1] == i for j, i in enumerate(idx)]
    g = f.take(idx)
    late = [c and idx[j] % 14 == 3 for j, c in enumerate(copy)]
    val = [v + 1000 * c for v, c in zip(g["val"].to_pylist(), copy)]
    ingest = [t_ + dt.timedelta(microseconds=1 if lt else -1 if c else 0)
              for t_, c, lt in zip(g["_ingest_ts"].to_pylist(), copy, late)]
    for name, values in (("val", val), ("_ingest_ts", ingest)):
        i = g.schema.get_field_index(name)
        g = g.set_column(i, g.schema.field(name), pa.array(values, g.schema.field(name).type))
    pq.write_table(g, newest, row_group_size=9)
    for r, c, lt in zip(g.to_pylist(), copy, late):
        if not c or lt:
            model[(r["host"], r["dev"], int((r["time"] - T0).total_seconds()) // 60)] = r["val"]
    r = t.maintain()
    assert r["files_rewritten"] == 4 and r["files_written"] == 1
    assert r["rows_rewritten"] - r["duplicates_removed"] == len(model)
    check(lake_dir, model)


def test_long_runs_are_copied_with_their_nulls_and_strings(lake, lake_dir):
    """Files that each hold runs of 40 rows per series (the merge copies runs
    this long whole, from their row groups): values, nulls and strings of
    several lengths land where they were, in every run."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], properties=NO_AUTO)
    model = {}
    for k in range(4):
        rows = [(h, d, m, None if (m + d) % 3 == 0 else float(1000 * k + m))
                for h in ("a", "bb", "a-longer-host-name") for d in (0, 1) for m in range(40 * k, 40 * k + 40)]
        t.append(batch(rows), maintain=False)
        model.update({(h, d, m): v for h, d, m, v in rows})
    r = t.maintain()
    assert r["files_rewritten"] == 4 and r["files_written"] == 1
    check(lake_dir, model)


def test_output_written_a_slice_at_a_time(lake, lake_dir, monkeypatch):
    """The merge writes its output a slice of rows at a time (7 here, to cross
    runs, duplicates and file ends), into files split at the target size:
    every row once, latest write winning, each file sorted, and the same
    files (rows per file) as written in one piece."""
    props = {**NO_AUTO, "timelake.target-file-size-bytes": "6000", "timelake.compression-min-saving": "0"}
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], properties=props)
    u = lake.create_table("u", SCHEMA, time_column="time", series_key=["host", "dev"], properties=props)
    model = {}
    random_appends(t, random.Random(7), 30, model)
    random_appends(u, random.Random(7), 30, {})
    monkeypatch.setenv("TIMELAKE_MERGE_SLICE_ROWS", "7")
    r = t.maintain()
    assert r["files_written"] > 3 and r["rows_rewritten"] - r["duplicates_removed"] == len(model)
    paths = check(lake_dir, model)
    monkeypatch.delenv("TIMELAKE_MERGE_SLICE_ROWS")
    assert u.maintain()["files_written"] == r["files_written"]
    whole = StaticTable.from_metadata(metadata_file(lake_dir, "default/u"))
    whole_paths = [task.file.file_path.replace("file://", "") for task in whole.scan().plan_files()]
    rows = sorted(pq.ParquetFile(p).metadata.num_rows for p in paths)
    assert rows == sorted(pq.ParquetFile(p).metadata.num_rows for p in whole_paths) and max(rows) > 7


def test_unsorted_inside_a_run_falls_back(lake, lake_dir):
    """Two neighbours swapped in the middle of a long run, where the merge
    skips rows by galloping: still found unsorted, still compacted right."""
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], properties=NO_AUTO)
    model = {}
    run_appends(t, model)
    _, paths = live_files(lake_dir)
    f = pq.read_table(paths[1])
    idx = list(range(f.num_rows))
    idx[85], idx[86] = idx[86], idx[85]  # series (a, 1), minutes 65 and 66: no other file's
    pq.write_table(f.take(idx), paths[1])
    r = t.maintain()
    assert r["files_rewritten"] == 4 and r["files_written"] == 1
    check(lake_dir, model)


def test_unsorted_input_falls_back_to_sorting_in_memory(lake, lake_dir, reference):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], chunk="month",
                          properties=NO_AUTO)
    model = {}
    random_appends(t, random.Random(3), 5, model)
    _, paths = live_files(lake_dir)
    rewrite_file(paths[2], shuffle=True)
    r = t.maintain()
    assert r["files_rewritten"] == 5 and r["files_written"] == 1
    check(lake_dir, model, reference)


def test_series_key_of_a_type_the_merge_does_not_compare(lake, lake_dir):
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("dev", pa.float64()),
                        ("val", pa.float64())])
    t = lake.create_table("t", schema, time_column="time", series_key=["dev"], properties=NO_AUTO)
    model = {}
    rnd = random.Random(4)
    for k in range(4):
        rows = [("x", float(rnd.randint(-2, 2)), rnd.randrange(0, 600, 7), float(10 * k + i)) for i in range(30)]
        t.append(batch(rows, schema), maintain=False)
        model.update({(d, m): v for _, d, m, v in rows})
    r = t.maintain()
    assert r["files_rewritten"] == 4 and r["files_written"] == 1
    table, _ = live_files(lake_dir)
    got = sorted((r["dev"], r["time"], r["val"]) for r in table.scan().to_arrow().to_pylist())
    assert got == sorted((d, T0 + dt.timedelta(minutes=m), v) for (d, m), v in model.items())


def test_target_size_split_with_dedup_off(lake, lake_dir):
    """Without dedup every row stays; the merge still splits at the target size."""
    # Every chunk compressed, as when the target was chosen: stored
    # uncompressed, each 400-row file is over the target on its own.
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["host", "dev"], dedup=False,
                          properties={**NO_AUTO, "timelake.target-file-size-bytes": "6000",
                                      "timelake.compression-min-saving": "0"})
    rows_in = 0
    rnd = random.Random(6)
    for k in range(5):
        rows = [(rnd.choice("abc"), rnd.randint(0, 3), rnd.randrange(0, 600, 5), float(k)) for _ in range(400)]
        t.append(batch(rows), maintain=False)
        rows_in += len(rows)
    r = t.maintain()
    assert r["duplicates_removed"] == 0 and r["files_written"] > 1
    table, paths = live_files(lake_dir)
    assert table.scan().to_arrow().num_rows == rows_in
    keys = []
    for path in sorted(paths, key=lambda p: pq.read_table(p)["host"][0].as_py()):
        f = pq.read_table(path)
        part = list(zip(f["host"].to_pylist(), f["dev"].to_pylist(), f["time"].cast(pa.int64()).to_pylist()))
        assert part == sorted(part)
        keys.extend(part)
    assert keys == sorted(keys)  # the files follow each other in order
