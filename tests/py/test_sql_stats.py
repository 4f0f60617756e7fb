"""Bounded row groups in data files (write.parquet.row-group-limit) and the
exact `sql --stats` of local tables: files, row groups and bytes a query
reads, computed independently here with pyarrow from the same files' footers.
Files are read identically by pyarrow, DuckDB, pyiceberg and the reference;
split_offsets list every row group's start."""
import datetime as dt
import glob
import json
import math
import os
import struct
import subprocess

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import tlc

SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()),
                    ("usage", pa.float64()), ("idle", pa.float64())])
T0 = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
HOSTS = [f"h{i:02d}" for i in range(12)]
LIMIT = 500  # rows per row group: each daily file of 12 hosts x 240 rows has 6


def day(d):
    """12 hosts x 240 rows (every 6 minutes) of day d."""
    times, hosts = [], []
    for h in HOSTS:
        for m in range(240):
            times.append(T0 + dt.timedelta(days=d, minutes=6 * m))
            hosts.append(h)
    n = len(times)
    return pa.table({"time": times, "host": hosts, "usage": [float(i % 97) for i in range(n)],
                     "idle": [float((i * 7) % 89) for i in range(n)]}, schema=SCHEMA)


@pytest.fixture
def table(lake):
    # Every chunk compressed (min-saving 0): pages are then read whole, as the model counts them.
    t = lake.create_table("m.cpu", SCHEMA, time_column="time", series_key=["host"],
                          properties={"write.parquet.row-group-limit": str(LIMIT),
                                      "timelake.compression-min-saving": "0"})
    for d in range(3):
        t.append(day(d))
    return t


def data_files(lake_dir):
    return sorted(glob.glob(f"{lake_dir}/m/cpu/data/*/*.parquet"))


def metadata_file(lake_dir):
    return max(glob.glob(f"{lake_dir}/m/cpu/metadata/v*.metadata.json"),
               key=lambda p: int(os.path.basename(p)[1:].split(".")[0]))


def test_row_groups_are_bounded_and_files_read_alike(table, lake, lake_dir):
    files = data_files(lake_dir)
    assert len(files) == 3
    for f in files:
        md = pq.ParquetFile(f).metadata
        assert md.num_rows == len(HOSTS) * 240
        assert md.num_row_groups == math.ceil(md.num_rows / LIMIT)
        assert all(md.row_group(g).num_rows <= LIMIT for g in range(md.num_row_groups))
        for g in range(md.num_row_groups):  # a page index for every chunk of every row group
            for c in range(md.num_columns):
                col = md.row_group(g).column(c)
                assert col.has_offset_index and col.has_column_index and col.statistics.has_min_max
    want = pa.concat_tables([day(d) for d in range(3)]).sort_by([("host", "ascending"), ("time", "ascending")])
    cols = ["time", "host", "usage", "idle"]
    by_pyarrow = pa.concat_tables([pq.read_table(f, columns=cols).sort_by(
        [("host", "ascending"), ("time", "ascending")]) for f in files])
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    by_duckdb = con.sql(f"SELECT time, host, usage, idle FROM read_parquet({files!r}, hive_partitioning=false) "
                        "ORDER BY host, time").to_arrow_table()
    ours = lake.sql("SELECT time, host, usage, idle FROM m.cpu ORDER BY host, time")
    for got in (by_pyarrow.sort_by([("host", "ascending"), ("time", "ascending")]), by_duckdb, ours):
        assert got.cast(want.schema).equals(want)


def test_split_offsets_list_every_row_group(table, lake_dir):
    tasks = list(StaticTable.from_metadata(metadata_file(lake_dir)).scan().plan_files())
    assert len(tasks) == 3
    for task in tasks:
        md = pq.ParquetFile(task.file.file_path.replace("file://", "")).metadata
        starts = []
        for g in range(md.num_row_groups):
            c = md.row_group(g).column(0)
            starts.append(min(o for o in (c.dictionary_page_offset, c.data_page_offset) if o is not None and o > 0))
        assert list(task.file.split_offsets) == starts


def test_reference_reads_bounded_row_groups(table, lake_dir, reference):
    got = reference(f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        t = lake.sql("SELECT host, count(*) AS n, sum(usage) AS s FROM m.cpu "
                     "WHERE time >= '2024-05-02 00:00:00+00' GROUP BY 1 ORDER BY 1")
        print(json.dumps(t.to_pylist()))
    """)
    want = {h: (480, 0.0) for h in HOSTS}
    d12 = pa.concat_tables([day(1), day(2)])
    for r in d12.group_by("host").aggregate([("usage", "count"), ("usage", "sum")]).to_pylist():
        want[r["host"]] = (r["usage_count"], r["usage_sum"])
    assert {r["host"]: (r["n"], r["s"]) for r in got} == want


def test_row_group_limit_must_be_positive(lake):
    for bad in ("0", "-3", "many", ""):
        with pytest.raises(ValueError, match="row-group-limit"):
            lake.create_table(f"m.bad{len(bad)}", SCHEMA, properties={"write.parquet.row-group-limit": bad})


# ---- exact stats: an independent computation over the footers ----

def footer_bytes(path):
    with open(path, "rb") as f:
        f.seek(-8, os.SEEK_END)
        return struct.unpack("<I", f.read(4))[0] + 8


def expected_stats(lake_dir, lo=None, hi=None, hosts=None, columns=None):
    """What a query restricted to [lo, hi) and hosts reads: row groups whose
    statistics may hold wanted rows, and of those the footer and the chunks of
    `columns` (None: all)."""
    out = dict(files_total=0, files_read=0, row_groups_total=0, row_groups_read=0, bytes_read=0)
    for f in data_files(lake_dir):
        md = pq.ParquetFile(f).metadata
        names = [md.schema.column(c).name for c in range(md.num_columns)]
        out["files_total"] += 1
        keep = []
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            ts, hs = rg.column(names.index("time")).statistics, rg.column(names.index("host")).statistics
            ok = (lo is None or ts.max >= lo) and (hi is None or ts.min < hi)
            ok = ok and (hosts is None or any(hs.min <= h <= hs.max for h in hosts))
            if ok:
                keep.append(g)
        if not keep:
            continue
        out["files_read"] += 1
        out["row_groups_total"] += md.num_row_groups
        out["row_groups_read"] += len(keep)
        out["bytes_read"] += footer_bytes(f) + sum(
            md.row_group(g).column(c).total_compressed_size
            for g in keep for c in range(md.num_columns) if columns is None or names[c] in columns)
    return out


def ts(d, h=0):
    return T0 + dt.timedelta(days=d, hours=h)


CASES = [
    ("SELECT * FROM m.cpu", {}),
    ("SELECT * FROM m.cpu WHERE host = 'h03'", dict(hosts=["h03"])),
    ("SELECT * FROM m.cpu WHERE host IN ('h00', 'h11')", dict(hosts=["h00", "h11"])),
    ("SELECT * FROM m.cpu WHERE host = 'zz'", dict(hosts=["zz"])),
    ("SELECT * FROM m.cpu WHERE time >= '2024-05-02 06:00:00+00' AND time < '2024-05-02 12:00:00+00'",
     dict(lo=ts(1, 6), hi=ts(1, 12))),
    ("SELECT * FROM m.cpu WHERE host = 'h07' AND time >= '2024-05-03 00:00:00+00'",
     dict(hosts=["h07"], lo=ts(2))),
    # only the columns the query names (with time, the series key and the ingest time, always kept)
    ("SELECT max(usage) FROM m.cpu WHERE host = 'h05'", dict(hosts=["h05"], columns={"time", "host", "_ingest_ts", "usage"})),
    ("SELECT time, idle FROM m.cpu", dict(columns={"time", "host", "_ingest_ts", "idle"})),
]


@pytest.mark.parametrize("query,restriction", CASES, ids=[c[0][7:60] for c in CASES])
def test_stats_are_exact(table, lake, lake_dir, query, restriction):
    stats = {}
    got = lake.sql(query, stats=stats)
    want_stats = expected_stats(lake_dir, **restriction)
    assert stats == want_stats
    if "hosts" in restriction:  # sorted files: a host's rows are in few row groups
        assert want_stats["row_groups_read"] < want_stats["row_groups_total"] or want_stats["files_read"] == 0
    con = duckdb.connect()  # and the rows are all there
    con.execute("SET TimeZone='UTC'")
    files = data_files(lake_dir)
    con.execute(f"CREATE SCHEMA m; CREATE VIEW m.cpu AS SELECT * FROM read_parquet({files!r}, hive_partitioning=false)")
    want = con.sql(query).to_arrow_table()
    assert sorted(map(str, got.to_pylist())) == sorted(map(str, want.select(got.column_names).to_pylist()))


def test_cli_stats_line(table, lake_dir):
    cli = os.path.join(os.environ.get("TL_BUILD", "build"), "timelake")
    if not os.path.exists(cli):
        pytest.skip("no timelake CLI in TL_BUILD")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    proc = subprocess.run([cli, "sql", "SELECT max(idle) FROM m.cpu WHERE host = 'h03'", "--lake", str(lake_dir),
                           "--stats"], capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    e = expected_stats(lake_dir, hosts=["h03"], columns={"time", "host", "_ingest_ts", "idle"})
    assert (f"files: {e['files_total']} considered, {e['files_read']} read; row groups: "
            f"{e['row_groups_total']} considered, {e['row_groups_read']} read; bytes read: {e['bytes_read']}"
            ) in proc.stderr
