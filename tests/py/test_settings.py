"""Timelake's settings (src/table/settings.c) against the reference's: the
registry and where each setting may be set, changing a table's properties
(tl_table_set_properties, the reference's Table.set_properties), session
settings for one query (tl_sql_options.settings, the reference's
Lake(settings=...)), and what the read settings do: read-dedup,
read-dedup-strategy. The checks shared with the reference package are in
package_contract.py."""

import datetime as dt
import json
import random

import duckdb
import pyarrow as pa
import pytest

import tlc
from conftest import table_files

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("temp", pa.float64())])

# A valid value of each setting, to ask where it may be set.
SAMPLE = {"time-column": "time", "series-key": "device", "chunk-interval": "day", "dedup": "true",
          "ingest-time-column": "_ingest_ts", "retention": "1d", "auto-maintain": "true", "compact-min-files": "3",
          "compact-cold-after": "1h", "target-file-size-bytes": "1000", "row-group-rows": "100",
          "data-page-rows": "100", "snapshot-retention": "1d", "min-snapshots": "1", "max-snapshots": "5",
          "keep-snapshots-until": "1", "head-format": "arrow", "head-inline-bytes": "100", "read-dedup": "true",
          "read-dedup-strategy": "merge", "filter-pushdown": "auto", "in-list-pruning": "true",
          "newest-first": "true", "time-weighted-mean": "auto", "version-check-interval": "1s",
          "format-version": "0.3.0", "rollups": "a", "rollup-source": "iot.raw", "rollup-bucket": "1h",
          "rollup-aggregates": "[]", "rollup-refresh-interval": "10m", "rollup-routing": "false"}
OURS_ONLY = {"compression-min-saving", "batch-id-retention", "batch-ledger"}


def readings(n, start=T0, temp0=0.0):
    return pa.table({"time": [start + dt.timedelta(minutes=i // 2) for i in range(n)],
                     "device": [f"d{i % 2}" for i in range(n)],
                     "temp": [temp0 + i for i in range(n)]}, schema=SCHEMA)


def message(e):
    return str(e).removeprefix("Invalid or Unsupported Configuration: ")


def test_the_registry_lists_every_setting_once():
    names = [s["name"] for s in tlc.settings()]
    assert len(names) == len(set(names))
    assert set(names) == set(SAMPLE) | OURS_ONLY
    for s in tlc.settings():
        assert s["description"] and s["values"], s
        assert set(filter(None, s["levels"].split(","))) <= {"create", "table", "session", "call"}, s


def test_where_each_setting_may_be_set_is_the_reference_s(lake, lake_dir, reference):
    """Each setting as a session setting: accepted, or refused with the
    reference's message (fixed at creation, set by Timelake, or the levels it
    may be set at)."""
    iot = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"])
    iot.append(readings(4))
    theirs = reference(f"""
        import json, timelake
        out = {{}}
        for name, value in {SAMPLE!r}.items():
            try:
                timelake.Lake({str(lake_dir)!r}, settings={{name: value}})
                out[name] = "ok"
            except ValueError as e:
                out[name] = str(e)
        print(json.dumps(out))
        """)
    for name, value in SAMPLE.items():
        try:
            lake.query("SELECT count(*) FROM iot.t", settings={name: value})
            ours = "ok"
        except ValueError as e:
            ours = str(e)
        assert ours == message(theirs[name]), name


@pytest.mark.parametrize("settings, match", [
    ({"read_dedup": "maybe"}, 'timelake.read-dedup: must be true or false, got "maybe"'),
    ({"bogus": "1"}, 'unknown setting "timelake.bogus"'),
    ({"read-dedup-strategy": "fast"}, "must be merge or keys-first"),
    ({"version_check_interval": "soon"}, 'timelake.version-check-interval: bad duration "soon"'),
    ({"datafusion.execution.batch_size": "8"}, "session settings are Timelake's"),
])
def test_bad_session_settings_are_refused(lake, settings, match):
    lake.create_table("t", SCHEMA, time_column="time").append(readings(2))
    with pytest.raises(ValueError, match=match):
        lake.query("SELECT count(*) FROM t", settings=settings)


def test_read_dedup_false_in_a_session_returns_every_row(lake):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"])
    t.append(readings(20), maintain=False)
    t.append(readings(20, temp0=100), maintain=False)
    q = "SELECT count(*) AS n, sum(temp) AS s FROM iot.t"
    assert lake.query(q).to_pylist() == [{"n": 20, "s": float(sum(range(100, 120)))}]
    every = [{"n": 40, "s": float(sum(range(20)) + sum(range(100, 120)))}]
    for spelling in ("read_dedup", "read-dedup", "timelake.read_dedup", "TIMELAKE.READ-DEDUP"):
        assert lake.query(q, settings={spelling: "false"}).to_pylist() == every, spelling
    # The session wins over the table's own setting, both ways.
    t.set_properties({"read_dedup": "false"})
    assert lake.query(q).to_pylist() == every
    assert lake.query(q, settings={"read_dedup": "true"}).to_pylist()[0]["n"] == 20


def latest_by_duckdb(lake_dir, table):
    """The reference's rule with DuckDB over the table's files: per (device,
    time) the row of the highest ingest time, then the later commit."""
    files = sorted(str(p) for p in (lake_dir / table).rglob("*.parquet") if "/data/" in str(p))
    return duckdb.sql(f"""
        SELECT device, time, temp FROM read_parquet({files!r}, hive_partitioning = false)
        QUALIFY row_number() OVER (PARTITION BY device, time ORDER BY _ingest_ts DESC) = 1
        ORDER BY device, time""").fetchall()


@pytest.mark.parametrize("strategy", ["merge", "keys-first", "keys_first"])
def test_dedup_strategies_return_the_latest_writes(lake, lake_dir, strategy):
    rnd = random.Random(7)
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"],
                          properties={"timelake.read-dedup-strategy": strategy})
    for k in range(6):  # overlapping appends, some rows written again and again
        n = rnd.randrange(50, 200)
        times = [T0 + dt.timedelta(minutes=rnd.randrange(0, 300)) for _ in range(n)]
        t.append(pa.table({"time": times, "device": [f"d{rnd.randrange(4)}" for _ in range(n)],
                           "temp": [k * 1000.0 + i for i in range(n)]}, schema=SCHEMA), maintain=False)
    want = latest_by_duckdb(lake_dir, "iot/t")
    got = lake.query("SELECT device, time, temp FROM iot.t ORDER BY device, time")
    assert [(r["device"], r["time"], r["temp"]) for r in got.to_pylist()] == want
    sums = lake.query("SELECT device, count(*) AS n, sum(temp) AS s FROM iot.t WHERE device IN ('d1', 'd2') "
                      "GROUP BY 1 ORDER BY 1").to_pylist()
    assert sums == [{"device": d, "n": sum(1 for r in want if r[0] == d), "s": sum(r[2] for r in want if r[0] == d)}
                    for d in ("d1", "d2")]


# ---- tl_table_set_properties against the reference's Table.set_properties ----

CHANGES = [
    {"read_dedup": "false"},
    {"timelake.retention": "90 days"},
    {"retention": None},
    {"Newest_First": "FALSE", "owner.name": "team-a"},
    {"write.parquet.compression-codec": "lz4"},
    {"compact-cold-after": "off", "timelake.row-group-rows": "500"},
    {"bogus": "1"},
    {"owner": "x"},
    {"time_column": "x"},
    {"format-version": "1"},
    {"timelake.dedup": None},
    {"read-dedup": "maybe"},
    {"filter_pushdown": "on"},
    {"read_dedup": None, "newest-first": None},
    {"write.parquet.compression-codec": None},
]


def outcome(props, error):
    shown = {k: v for k, v in props.items() if not k.startswith("write.metadata.")}
    return {"properties": shown, "error": error}


def test_set_properties_as_the_reference_does(lake, lake_dir, reference):
    t = lake.create_table("x", SCHEMA, time_column="time", series_key=["device"])
    ours = []
    for change in CHANGES:
        version, before = t.version, table_files(lake_dir)
        try:
            t.set_properties(change)
            error = None
            assert t.version == version + 1
        except ValueError as e:
            error = str(e)
            assert t.version == version and table_files(lake_dir) == before  # nothing written
        ours.append(outcome(t.properties(), error))
    theirs = reference(f"""
        import json, os, pyarrow as pa, timelake
        d = {str(lake_dir.parent / "ref")!r}
        t = timelake.Lake(d).create_table("x", pa.schema([("time", pa.timestamp("us", tz="UTC")),
            ("device", pa.string()), ("temp", pa.float64())]), time_column="time", series_key=["device"])
        out = []
        for change in {CHANGES!r}:
            try:
                t.set_properties(change)
                error = None
            except ValueError as e:
                error = str(e)
            meta = os.path.join(d, "default", "x", "metadata", f"v{{t.version}}.metadata.json")
            out.append({{"properties": json.load(open(meta))["properties"], "error": error}})
        print(json.dumps(out))
        """)
    for change, a, b in zip(CHANGES, ours, theirs):
        assert a == outcome(b["properties"], b["error"]), change


def test_set_properties_keeps_the_snapshot_and_the_reference_honours_it(lake, lake_dir, reference):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"])
    t.append(readings(10), maintain=False)
    t.append(readings(10, temp0=50), maintain=False)
    snapshot = json.loads((lake_dir / "iot/t/metadata/v3.metadata.json").read_text())["current-snapshot-id"]
    t.set_properties({"read_dedup": "false"})
    meta = json.loads((lake_dir / "iot/t/metadata/v4.metadata.json").read_text())
    assert meta["current-snapshot-id"] == snapshot and len(meta["snapshots"]) == 2
    assert lake.query("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 20}]
    theirs = reference(f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        n = lake.sql("SELECT count(*) AS n FROM iot.t").to_pylist()[0]["n"]
        t = lake.table("iot.t")
        t.set_properties({{"read_dedup": None}})
        print(json.dumps({{"n": n, "version": t.version}}))
        """)
    assert theirs == {"n": 20, "version": 5}
    t.refresh()
    assert t.version == 5 and "timelake.read-dedup" not in t.properties()
    assert lake.query("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 10}]
    t.append(readings(4, start=T0 + dt.timedelta(days=1)))  # and appends go on from there
    assert lake.query("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 14}]


def test_set_properties_on_a_lost_race_applies_to_the_winner(lake):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"])
    other = lake.table("iot.t")
    other.append(readings(6))  # t is now one version behind
    t.set_properties({"newest_first": "false"})
    assert t.version == 3
    props = t.properties()
    assert props["timelake.newest-first"] == "false"
    assert lake.query("SELECT count(*) AS n FROM iot.t").to_pylist() == [{"n": 6}]


# ---- What the other read settings do, measured by the query's stats ----


def query_stats(lake, query, settings=None):
    stats = {}
    out = lake.query(query, settings=settings, stats=stats)
    return out.to_pylist(), stats


@pytest.fixture
def hourly(lake):
    """Twelve hourly partitions of four devices, one file each."""
    t = lake.create_table("iot.h", SCHEMA, time_column="time", series_key=["device"], chunk="hour",
                          properties={"timelake.data-page-rows": "25"})
    for h in range(12):
        start = T0 + dt.timedelta(hours=h)
        t.append(pa.table({"time": [start + dt.timedelta(seconds=30 * (i // 4)) for i in range(400)],
                           "device": [f"d{i % 4}" for i in range(400)],
                           "temp": [h * 1000.0 + i for i in range(400)]}, schema=SCHEMA), maintain=False)
    return t


def test_newest_first(lake, hourly):
    q = "SELECT time, device, temp FROM iot.h ORDER BY time DESC, device LIMIT 6"
    on, on_stats = query_stats(lake, q)
    off, off_stats = query_stats(lake, q, {"newest_first": "false"})
    assert on == off and [r["temp"] for r in on] == [11396.0, 11397.0, 11398.0, 11399.0, 11392.0, 11393.0]
    assert on_stats["files_read"] == 1 and off_stats["files_read"] == 12
    hourly.set_properties({"newest-first": "false"})
    assert query_stats(lake, q)[1]["files_read"] == 12
    assert query_stats(lake, q, {"newest_first": "true"})[1]["files_read"] == 1


def test_in_list_pruning(lake):
    t = lake.create_table("iot.k", SCHEMA, time_column="time", series_key=["device"])
    for d in range(30):  # one file per device, all in one partition
        t.append(pa.table({"time": [T0 + dt.timedelta(minutes=i) for i in range(10)], "device": [f"d{d:02d}"] * 10,
                           "temp": [float(d)] * 10}, schema=SCHEMA), maintain=False)
    many = ", ".join(f"'d{d:02d}'" for d in range(0, 21))  # 21 values: past the reference's 20
    few = ", ".join(f"'d{d:02d}'" for d in range(0, 20))
    q = "SELECT count(*) AS n, sum(temp) AS s FROM iot.k WHERE device IN ({})"
    on, on_stats = query_stats(lake, q.format(many))
    off, off_stats = query_stats(lake, q.format(many), {"in_list_pruning": "false"})
    assert on == off == [{"n": 210, "s": 10.0 * sum(range(21))}]
    assert (on_stats["files_read"], off_stats["files_read"]) == (21, 30)
    # Lists of up to 20 values prune either way, as the reference's engine does by itself.
    assert query_stats(lake, q.format(few), {"in_list_pruning": "false"})[1]["files_read"] == 20


def test_filter_pushdown(lake, hourly, monkeypatch):
    monkeypatch.delenv("TL_SELECTIVE_SCAN", raising=False)
    q = "SELECT time, temp FROM iot.h WHERE device = 'd2' AND time >= '2026-01-01 03:00:00+00' ORDER BY time"
    auto, auto_stats = query_stats(lake, q)
    off, off_stats = query_stats(lake, q, {"filter_pushdown": "false"})
    on, on_stats = query_stats(lake, q, {"filter-pushdown": "TRUE"})
    assert auto == off == on and len(on) == 900
    assert on_stats["files_read"] == off_stats["files_read"] == 9
    # Pushed down, only the pages of d2 are decoded; without, the files' whole column chunks.
    assert on_stats["bytes_read"] < off_stats["bytes_read"] / 2
    assert auto_stats == on_stats  # a quarter of the rows: the rule pushes them down too
    monkeypatch.setenv("TL_SELECTIVE_SCAN", "off")
    assert query_stats(lake, q)[1] == off_stats
