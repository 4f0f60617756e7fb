"""An append larger than a chunk (src/table/append_merge.c): each chunk is
laid out on its own, and the files of a partition whose (series, time)
ranges overlap are merged at the end, so one append writes files of
disjoint ranges per partition whatever its size, and queries answer as
from one sort of the whole input."""

import datetime as dt
import json
import random
import struct

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from conftest import table_files

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("v", pa.float64())])
TIME_ID, HOST_ID = 1, 2
CHUNK = 1000


def shuffled(n, hosts=40, seed=7):
    """n readings over two days (two partitions) of `hosts` series, in random
    order, the last 300 of them repeated at the end with new values: the later
    rows win, across chunks too."""
    rng = random.Random(seed)
    rows = [(T0 + dt.timedelta(minutes=7 * (i // hosts)), f"h{i % hosts:03d}", float(i)) for i in range(n)]
    rng.shuffle(rows)
    rows += [(t, h, -v) for t, h, v in rows[:300]]
    cols = list(zip(*rows))
    return pa.table({"time": list(cols[0]), "host": list(cols[1]), "v": list(cols[2])}, schema=SCHEMA)


def by_series(data):
    return data.sort_by([("host", "ascending"), ("time", "ascending")])


def create(lake, name, **props):
    props = {k: str(v) for k, v in props.items()}
    return lake.create_table(name, SCHEMA, time_column="time", series_key=["host"], properties=props or None)


def live_files(lake_dir, name):
    """The current snapshot's data files: (path, rows, (host lo, time lo), (host hi, time hi))."""
    meta = lake_dir / "default" / name / "metadata"
    hint = int((meta / "version-hint.text").read_text())
    md = json.loads((meta / f"v{hint}.metadata.json").read_text())
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    out = []
    with open(snap["manifest-list"].removeprefix("file://"), "rb") as fh:
        manifests = [m["manifest_path"] for m in fastavro.reader(fh)]
    for m in manifests:
        with open(m.removeprefix("file://"), "rb") as fh:
            for e in fastavro.reader(fh):
                if e["status"] == 2:
                    continue
                df = e["data_file"]
                lo = {kv["key"]: kv["value"] for kv in df["lower_bounds"]}
                hi = {kv["key"]: kv["value"] for kv in df["upper_bounds"]}

                def key(b):
                    return (b[HOST_ID].decode(), struct.unpack("<q", b[TIME_ID])[0])

                out.append((df["file_path"].removeprefix("file://"), df["record_count"], key(lo), key(hi),
                            json.dumps(df["partition"], default=str)))
    return out


def check_disjoint(files):
    """Per partition, files sorted by their first row: each one's last row
    (read from the file) comes before the next one's first, and the manifest
    bounds of the series key do not cross."""
    parts = {}
    for f in files:
        parts.setdefault(f[4], []).append(f)
    for fs in parts.values():
        ends = []
        for path, _, lo, hi, _ in fs:
            t = pq.read_table(path, columns=["host", "time"]).to_pylist()
            first, last = (t[0]["host"], t[0]["time"]), (t[-1]["host"], t[-1]["time"])
            assert lo[0] == first[0] and hi[0] == last[0]
            ends.append((first, last, lo, hi))
        ends.sort()
        for a, b in zip(ends, ends[1:]):
            assert a[1] < b[0], (a, b)  # (series, time) of one file's last row < next's first
            assert a[3][0] <= b[2][0], (a, b)  # series bounds touch at most where a series is split
    return parts


ANSWERS = [
    "SELECT count(*) AS n, sum(v) AS s FROM {t}",
    "SELECT host, count(*) AS n, sum(v) AS s, min(time) AS lo, max(time) AS hi FROM {t} GROUP BY host ORDER BY host",
    "SELECT time_bucket(INTERVAL '1 hour', time) AS b, count(*) AS n, max(v) AS m FROM {t} "
    "WHERE host BETWEEN 'h010' AND 'h020' GROUP BY b ORDER BY b",
    "SELECT time, host, v FROM {t} WHERE host = 'h033' AND time >= '2026-01-01 12:00:00+00' ORDER BY time",
]


def answers(lake, name):
    got = [lake.sql(q.format(t=name)).to_pylist() for q in ANSWERS]
    latest = sorted(lake.latest(name).select(["host", "time", "v"]).to_pylist(), key=lambda r: r["host"])
    return got, latest


def test_overlapping_chunks_are_merged_into_disjoint_files(lake, lake_dir, monkeypatch):
    data = shuffled(12000)
    one = create(lake, "one")
    one.append(data, maintain=False)  # a chunk of its own: one sort
    monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", str(CHUNK))
    many = create(lake, "many")
    res = many.append(data.to_reader(max_chunksize=CHUNK), batch_id="b1", maintain=False)
    files = live_files(lake_dir, "many")
    assert len(check_disjoint(files)) == 2 and len(files) == 2  # one file per day, as one sort writes
    assert res["rows"] == sum(f[1] for f in files) == 12000  # duplicates across chunks dropped
    assert sorted(f[1] for f in files) == sorted(f[1] for f in live_files(lake_dir, "one"))
    assert answers(lake, "many") == answers(lake, "one")
    # Nothing else in the store: the chunks' files were never written, or were deleted.
    data_dir = lake_dir / "default" / "many" / "data"
    assert sorted(str(p) for p in data_dir.rglob("*.parquet")) == sorted(f[0] for f in files)
    # The same batch again commits nothing and writes nothing.
    before = table_files(lake_dir)
    again = many.append(data.to_reader(max_chunksize=CHUNK), batch_id="b1", maintain=False)
    assert again["duplicate"] and again["rows"] == 0 and table_files(lake_dir) == before


def test_merged_files_are_split_at_the_target_size(lake, lake_dir, monkeypatch):
    """Output files of about the target size, still of disjoint ranges, also
    when the chunks went to the store first (more than an append holds) and
    are read back from it, or when some were held as rows and some encoded
    (a limit a chunk or two of rows fit in), read a slice of 128 rows at a
    time (TIMELAKE_MERGE_SLICE_ROWS)."""
    data = shuffled(12000, seed=11)
    one = create(lake, "one")
    one.append(data, maintain=False)
    monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", str(CHUNK))
    monkeypatch.setenv("TIMELAKE_MERGE_SLICE_ROWS", "128")
    for hold in ("0", "60000", None):
        if hold is None:
            monkeypatch.delenv("TIMELAKE_APPEND_HOLD_BYTES")
        else:
            monkeypatch.setenv("TIMELAKE_APPEND_HOLD_BYTES", hold)
        name = f"split{hold}"
        t = create(lake, name, **{"timelake.target-file-size-bytes": 20000})
        t.append(data.to_reader(max_chunksize=CHUNK), maintain=False)
        files = live_files(lake_dir, name)
        parts = check_disjoint(files)
        assert len(parts) == 2 and all(len(fs) >= 3 for fs in parts.values()), files
        assert answers(lake, name) == answers(lake, "one")
        data_dir = lake_dir / "default" / name / "data"
        assert sorted(str(p) for p in data_dir.rglob("*.parquet")) == sorted(f[0] for f in files)


def test_runs_that_do_not_overlap_are_left_as_written(lake, lake_dir, monkeypatch):
    """An input sorted by series makes chunks of disjoint ranges: no merge,
    each chunk's file stays as it was written."""
    data = by_series(shuffled(12000, seed=3).slice(0, 12000))
    monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", str(CHUNK))
    t = create(lake, "sorted")
    t.append(data.to_reader(max_chunksize=CHUNK), maintain=False)
    files = live_files(lake_dir, "sorted")
    assert len(check_disjoint(files)) == 2
    # A file per chunk and day it touches, of the chunk's rows.
    days = [len({x.date() for x in data.slice(k, CHUNK).column("time").to_pylist()}) for k in range(0, 12000, CHUNK)]
    assert len(files) == sum(days) > 12 and max(f[1] for f in files) <= CHUNK


def test_inline_compaction_still_folds_after_merged_appends(lake, lake_dir, monkeypatch):
    """Appends of several chunks into the same days, each overwriting some
    readings of the one before: the inline compaction folded into their
    commits merges them, and every answer is the one of the same appends
    made in one chunk each."""
    monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", str(CHUNK))
    t = create(lake, "folded", **{"timelake.compact-min-files": 2})
    one = create(lake, "one")
    compacted = 0
    for k in range(3):
        data = shuffled(3000 + 500 * k, seed=20 + k)
        res = t.append(data.to_reader(max_chunksize=CHUNK), maintain=True)
        assert "maintenance_error" not in res
        compacted += res.get("maintenance", {}).get("partitions_compacted", 0)
        monkeypatch.delenv("TIMELAKE_APPEND_CHUNK_ROWS")
        one.append(data, maintain=False)
        monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", str(CHUNK))
    assert compacted > 0
    assert answers(lake, "folded") == answers(lake, "one")
    check_disjoint(live_files(lake_dir, "folded"))


def test_a_table_sorted_by_nothing_keeps_its_chunks_files(lake, lake_dir, monkeypatch):
    """No time column and no series key: no ranges to keep apart, nothing merged."""
    monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", str(CHUNK))
    plain = lake.create_table("plain", pa.schema([("id", pa.int64()), ("label", pa.string())]))
    data = pa.table({"id": list(range(3000)), "label": [f"x{i % 7}" for i in range(3000)]})
    res = plain.append(data.to_reader(max_chunksize=CHUNK), maintain=False)
    assert res["files"] == 3 and res["rows"] == 3000
    assert sorted(r["id"] for r in lake.sql("SELECT id FROM plain").to_pylist()) == list(range(3000))
