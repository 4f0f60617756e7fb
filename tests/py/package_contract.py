"""The part of the Python API that our `timelake` package and the reference
(timelake==0.7.0) share, as plain checks that need only pyarrow.

test_package.py runs each check against our package in-process;
test_package_reference.py runs this file under the reference's virtualenv:
    python package_contract.py <workdir>   -> one JSON line {check: "ok" | "skip: .." | error}
A check takes (timelake, workdir) and raises on failure.
"""

import datetime as dt
import json
import os
import sys
import traceback
from pathlib import Path

import pyarrow as pa

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
APPEND_KEYS = {"rows", "files", "bytes", "version", "commit_ms", "attempts", "duplicate"}
MAINTAIN_KEYS = {"partitions_compacted", "files_rewritten", "files_written", "rows_rewritten", "duplicates_removed",
                 "partitions_dropped", "snapshots_expired", "objects_deleted", "rollups_refreshed", "rollup_rows",
                 "seconds"}
UPGRADE_KEYS = {"steps", "version_before", "snapshot_before", "keep_snapshots_until_ms"}
# The reference writes its head object (metadata/timelake-head) on local disk too; ours only on object stores.
HEAD_STEP = "write the head object"
INFO_KEYS = {"name", "version", "location", "time_column", "series_key", "chunk", "dedup", "ingest_time_column",
             "rows", "files", "bytes", "snapshots", "manifests", "last_value_index"}


def raises(exc, fn, *args, match=None, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        if match is not None and match not in str(e):
            raise AssertionError(f"{exc.__name__} message {str(e)!r} does not name {match!r}")
        return e
    raise AssertionError(f"expected {exc.__name__}")


def readings(n, start=T0, step=dt.timedelta(minutes=1), devices=("pump-7", "pump-8")):
    return pa.table(
        {
            "time": [start + i * step for i in range(n)],
            "device_id": [devices[i % len(devices)] for i in range(n)],
            "temp": [float(i) for i in range(n)],
        },
        schema=SCHEMA,
    )


def files_under(path):
    return sorted(str(p) for p in Path(path).rglob("*") if p.is_file())


# The reference writes these after an append has returned, in the background.
BACKGROUND_WRITES = ("timelake-head", "version-hint.text", "timelake-tables.json")


def table_files(path):
    """The files that make up the tables: data, manifests, metadata versions."""
    return [f for f in files_under(path) if not f.endswith(BACKGROUND_WRITES)]


def iot(lake, name="iot.readings", **kw):
    return lake.create_table(name, SCHEMA, time_column="time", series_key=["device_id"], **kw)


def properties(table_dir):
    """The properties of a table's newest metadata version, read from its file."""
    versions = Path(table_dir, "metadata").glob("v*.metadata.json")
    newest = max(versions, key=lambda p: int(p.name[1:].split(".")[0]))
    return json.loads(newest.read_text())["properties"]


def data_files(table_dir):
    return sorted(Path(table_dir, "data").rglob("*.parquet"))


# ---- checks ----


def check_lake_location(tl, work):
    lake = tl.Lake(str(work / "lake"))
    assert lake.location == f"file://{work}/lake", lake.location
    assert tl.Lake(f"file://{work}/lake").location == lake.location
    assert lake.tables() == []


def check_create_table_properties(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake, retention="365d")
    assert (t.name, t.version) == ("iot.readings", 1)
    assert t.location == f"file://{work}/iot/readings"
    assert isinstance(t.schema, pa.Schema)
    assert t.schema.names == ["time", "device_id", "temp", "_ingest_ts"]
    assert t.schema.field("time").type == pa.timestamp("us", tz="+00:00")
    plain = lake.create_table("dims", pa.schema([("id", pa.int32()), ("label", pa.string())]))
    assert plain.name == "default.dims" and plain.schema.names == ["id", "label"]
    assert lake.tables() == ["default.dims", "iot.readings"]
    assert lake.table("iot.readings").version == 1


def check_create_table_from_object_with_schema(tl, work):
    lake = tl.Lake(str(work))
    t = lake.create_table("from_table", readings(1), time_column="time", series_key=["device_id"])
    assert t.schema.names == ["time", "device_id", "temp", "_ingest_ts"]


def check_create_table_options(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake, chunk="hour", dedup=False, properties={"owner": "team-a"})
    info = t.info()
    assert (info["chunk"], info["dedup"]) == ("hour", False), info


def check_append_inputs(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    data = readings(30)
    results = [t.append(data.slice(0, 10)), t.append(data.slice(10, 10).to_batches()[0]),
               t.append(data.slice(20).to_reader())]
    for i, r in enumerate(results):
        assert set(r) == APPEND_KEYS, r
        assert (r["rows"], r["version"], r["duplicate"], r["attempts"]) == (10, i + 2, False, 1), r
        assert r["files"] == 1 and r["bytes"] > 0 and r["commit_ms"] >= 0
    assert t.version == 4
    assert t.info()["rows"] == 30


def check_append_batch_id_is_idempotent(tl, work):
    t = iot(tl.Lake(str(work)))
    first = t.append(readings(5), batch_id="gateway-3-000042")
    again = t.append(readings(5), batch_id="gateway-3-000042")
    assert again["duplicate"] is True and (again["rows"], again["files"], again["bytes"]) == (0, 0, 0)
    assert again["version"] == first["version"] == t.version == 2
    assert t.info()["rows"] == 5


def check_append_missing_nullable_column(tl, work):
    t = iot(tl.Lake(str(work)))
    r = t.append(readings(4).drop_columns(["temp"]))
    assert r["rows"] == 4


def check_bad_append_leaves_table_alone(tl, work):
    t = iot(tl.Lake(str(work)))
    t.append(readings(3))
    before = table_files(work)
    raises(ValueError, t.append, readings(3).append_column("extra", pa.array([1, 2, 3])), match="extra")
    raises(TypeError, t.append, "not arrow data")
    assert t.version == 2 and table_files(work) == before


def check_info(tl, work):
    t = iot(tl.Lake(str(work)))
    t.append(readings(10))
    info = t.info()
    assert set(info) == INFO_KEYS, info
    assert (info["name"], info["version"], info["time_column"], info["series_key"]) == (
        "iot.readings", 2, "time", ["device_id"])
    assert (info["chunk"], info["dedup"], info["ingest_time_column"]) == ("day", True, "_ingest_ts")
    assert (info["rows"], info["files"], info["snapshots"], info["manifests"]) == (10, 1, 1, 1)
    assert info["bytes"] > 0 and info["location"] == t.location
    plain = tl.Lake(str(work)).create_table("plain", pa.schema([("id", pa.int64())])).info()
    assert (plain["time_column"], plain["series_key"], plain["chunk"]) == (None, [], None)


def check_refresh(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    other = lake.table("iot.readings")
    t.append(readings(2))
    assert other.version == 1
    other.refresh()
    assert other.version == 2 and other.info()["rows"] == 2


def check_exceptions(tl, work):
    lake = tl.Lake(str(work))
    iot(lake)
    raises(KeyError, lake.table, "iot.missing", match="iot.missing")
    raises(FileExistsError, iot, lake, match="iot.readings")
    raises(ValueError, lake.create_table, "x", SCHEMA, time_column="time", chunk="week", match="week")
    raises(ValueError, lake.create_table, "x", SCHEMA, time_column="time", retention="abc", match="abc")
    raises(ValueError, lake.create_table, "a.b.c", SCHEMA, match="a.b.c")
    raises(ValueError, lake.create_table, "x", SCHEMA, properties={"timelake.nope": "1"}, match="timelake.nope")
    assert issubclass(tl.ConflictError, RuntimeError)
    assert lake.tables() == ["iot.readings"]


def drop_table_gone(tl, work):
    """Ours only: the reference finishes writes in the background after an
    append returns (its registry, head object and version hint), which now and
    then land after a drop and bring the table's name or files back."""
    lake = tl.Lake(str(work))
    iot(lake).append(readings(3))
    lake.drop_table("iot.readings")
    assert lake.tables() == []
    assert files_under(work / "iot" / "readings") == []
    raises(KeyError, lake.table, "iot.readings")
    lake.drop_table("iot.readings")  # a missing table is no error


def check_sql(tl, work):
    lake = tl.Lake(str(work))
    iot(lake).append(readings(6))
    out = lake.sql("SELECT device_id, count(*) AS n FROM iot.readings GROUP BY 1 ORDER BY 1")
    assert isinstance(out, pa.Table)
    assert out.to_pylist() == [{"device_id": "pump-7", "n": 3}, {"device_id": "pump-8", "n": 3}]
    same = lake.sql("SELECT count(*) AS n FROM readings", namespace="iot")
    assert same.column("n").to_pylist() == [6]
    raises(RuntimeError, lake.sql, "SELEC 1")


def check_latest(tl, work):
    lake = tl.Lake(str(work))
    iot(lake).append(readings(6))
    out = lake.latest("iot.readings")
    rows = sorted(out.select(["device_id", "temp"]).to_pylist(), key=lambda r: r["device_id"])
    assert rows == [{"device_id": "pump-7", "temp": 4.0}, {"device_id": "pump-8", "temp": 5.0}]
    raises(KeyError, lake.latest, "iot.missing")


def check_memory_lake(tl, work):
    """memory://: a whole lake in the process's memory, empty at each open."""
    lake = tl.Lake("memory:///scratch")
    assert lake.tables() == []
    t = iot(lake)
    t.append(readings(6))
    t.append(readings(6, start=T0 + dt.timedelta(hours=1)))
    assert lake.tables() == ["iot.readings"]
    assert lake.sql("SELECT count(*) AS n FROM iot.readings").to_pylist() == [{"n": 12}]
    rows = sorted(lake.latest("iot.readings").select(["device_id", "temp"]).to_pylist(), key=lambda r: r["device_id"])
    assert rows == [{"device_id": "pump-7", "temp": 4.0}, {"device_id": "pump-8", "temp": 5.0}]
    assert t.info()["rows"] == 12 and t.maintain()["files_rewritten"] == 2
    assert lake.sql("SELECT sum(temp) AS s FROM iot.readings").to_pylist() == [{"s": 30.0}]
    assert tl.Lake("memory:///scratch").tables() == []
    assert not any(Path(work).iterdir())  # nothing on disk


def check_maintain(tl, work):
    t = iot(tl.Lake(str(work)))
    for i in range(3):
        t.append(readings(4, start=T0 + dt.timedelta(minutes=10 * i)), maintain=False)
    report = t.maintain()
    assert set(report) == MAINTAIN_KEYS, report
    assert (report["rollups_refreshed"], report["rollup_rows"]) == (0, 0), report
    assert report["files_rewritten"] == 3 and report["files_written"] == 1 and report["rows_rewritten"] == 12
    info = t.info()
    assert (info["files"], info["rows"]) == (1, 12) and t.version == info["version"] > 4
    quiet = t.maintain(compact=False, retention=False, expire=False)
    assert quiet["files_rewritten"] == 0


def check_seed_example_local(tl, work):
    timelake = tl
    # The seed's example, as written, on a local warehouse instead of s3://.
    lake = timelake.Lake(str(work / "lake"))
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
    t = lake.create_table("iot.readings", schema, time_column="time", series_key=["device_id"], retention="365d")
    batch = pa.table({"time": [dt.datetime.now(dt.timezone.utc)], "device_id": ["pump-7"], "temp": [71.5]}, schema=schema)
    print(t.append(batch, batch_id="gateway-3-000042"), file=sys.stderr)
    hourly = lake.sql("""
    SELECT time_bucket(INTERVAL '1 hour', time) AS hour, avg(temp) AS temp
    FROM iot.readings WHERE device_id = 'pump-7' GROUP BY 1 ORDER BY 1
    """)
    assert hourly.num_rows == 1 and hourly.column("temp").to_pylist() == [71.5]


def check_setting_spellings(tl, work):
    lake = tl.Lake(str(work))
    iot(lake, properties={"timelake.READ_DEDUP": "FALSE", "timelake.newest_first": "false",
                          "TIMELAKE.read-dedup-strategy": "Keys_First", "owner": "team-a"})
    props = properties(work / "iot" / "readings")
    # Any spelling finds the setting; it is stored by its name, its value as given.
    assert (props["timelake.read-dedup"], props["timelake.newest-first"]) == ("FALSE", "false"), props
    assert props["timelake.read-dedup-strategy"] == "Keys_First" and props["owner"] == "team-a", props
    assert not any(k in props for k in ("timelake.READ_DEDUP", "timelake.newest_first")), props
    raises(ValueError, iot, lake, "x.a", properties={"timelake.read_dedup": "maybe"},
           match='timelake.read-dedup: must be true or false, got "maybe"')
    raises(ValueError, iot, lake, "x.b", properties={"timelake.chunk_interval": "hour"},
           match="timelake.chunk-interval is fixed when the table is created")
    raises(ValueError, iot, lake, "x.c", properties={"timelake.format_version": "1"},
           match="timelake.format-version is set by Timelake itself")
    raises(ValueError, iot, lake, "x.d", properties={"Timelake.bogus": "1"}, match='unknown setting "Timelake.bogus"')
    assert lake.tables() == ["iot.readings"]


def check_chunk_aliases_and_long_durations(tl, work):
    lake = tl.Lake(str(work))
    for i, (chunk, want) in enumerate([("1h", "hour"), ("1 hour", "hour"), (" HOUR ", "hour"), ("1d", "day"),
                                       ("1 Day", "day"), ("24h", "day"), ("1 month", "month")]):
        assert iot(lake, f"c.t{i}", chunk=chunk).info()["chunk"] == want, chunk
    for bad in ("1 hours", "2h", "1w", "daily"):
        raises(ValueError, iot, lake, "c.bad", chunk=bad, match="chunk interval must be hour, day or month")
    # The retention option is stored the reference's short way; a property as given.
    for i, (text, want) in enumerate([("90 days", "90d"), ("1 week", "7d"), ("2 Weeks", "14d"), ("1 year", "365d"),
                                      ("36 hours", "36h"), ("48 hours", "2d"), ("120 minutes", "2h"),
                                      ("45 secs", "45s"), ("0d", "0s")]):
        iot(lake, f"r.t{i}", retention=text)
        assert properties(work / "r" / f"t{i}")["timelake.retention"] == want, text
    iot(lake, "r.prop", properties={"timelake.retention": "90 days", "timelake.snapshot-retention": "2 weeks",
                                    "timelake.version-check-interval": "1 minute"})
    props = properties(work / "r" / "prop")
    assert (props["timelake.retention"], props["timelake.snapshot-retention"]) == ("90 days", "2 weeks"), props
    for bad in ("1 month", "1h30m", "1.5d", "-1d", "90 dayz"):
        raises(ValueError, iot, lake, "r.bad", retention=bad, match=bad)
    assert not any(n == "r.bad" for n in lake.tables())


def check_reference_settings_accepted(tl, work):
    lake = tl.Lake(str(work))
    accepted = [{"timelake.time-weighted-mean": "merge"}, {"timelake.time_weighted_mean": "SEGMENTS"},
                {"timelake.in-list-pruning": "false"}, {"timelake.row-group-rows": "100"},
                {"timelake.head-inline-bytes": "0"}, {"timelake.compact-cold-after": "off"},
                {"timelake.compact-cold-after": "OFF"}, {"timelake.filter-pushdown": "auto"},
                {"timelake.filter-pushdown": "false"}, {"timelake.version-check-interval": "0s"},
                {"timelake.newest-first": "false"}, {"timelake.read-dedup-strategy": "keys-first"}]
    for i, props in enumerate(accepted):
        t = iot(lake, f"s.t{i}", properties=props)
        assert t.append(readings(250), maintain=False)["rows"] == 250, props
        assert lake.sql(f"SELECT count(*) AS n FROM s.t{i}").column("n").to_pylist() == [250], props
    # row-group-rows shapes the data files.
    import pyarrow.parquet as pq
    (f,) = data_files(work / "s" / "t3")
    assert pq.ParquetFile(f).metadata.num_row_groups == 3
    refused = [("timelake.filter-pushdown", "on", "must be auto, true or false"),
               ("timelake.time-weighted-mean", "bogus", "must be auto, segments or merge"),
               ("timelake.in-list-pruning", "yes", "must be true or false"),
               ("timelake.row-group-rows", "1MiB", "must be a non-negative integer"),
               ("timelake.head-inline-bytes", "-1", "must be a non-negative integer"),
               ("timelake.version-check-interval", "off", "bad duration"),
               ("timelake.read-dedup-strategy", "fast", "must be merge or keys-first")]
    for key, value, message in refused:
        raises(ValueError, iot, lake, "s.bad", properties={key: value}, match=message)


def check_lz4_and_brotli_codecs(tl, work):
    import pyarrow.parquet as pq
    lake = tl.Lake(str(work))
    for name, codec, want in [("lz4", "lz4", "LZ4"), ("lz4up", "LZ4", "LZ4"), ("brotli", "brotli", "BROTLI")]:
        t = iot(lake, f"codec.{name}", properties={"write.parquet.compression-codec": codec})
        t.append(readings(500), maintain=False)
        (f,) = data_files(work / "codec" / name)
        meta = pq.ParquetFile(f).metadata  # pyarrow calls LZ4_RAW "LZ4"
        got = {meta.row_group(0).column(c).compression for c in range(meta.num_columns)}
        assert got <= {want, "UNCOMPRESSED"} and want in got, (codec, got)
        back = pq.read_table(f)
        assert sorted(back.column("temp").to_pylist()) == [float(i) for i in range(500)]
        out = lake.sql(f"SELECT count(*) AS n, sum(temp) AS s FROM codec.{name}").to_pylist()
        assert out == [{"n": 500, "s": float(sum(range(500)))}], out


def check_read_dedup_settings(tl, work):
    lake = tl.Lake(str(work))
    tables = {"merge": None, "off": {"timelake.read-dedup": "false"}, "off_spelled": {"timelake.READ_DEDUP": "False"},
              "keys_first": {"timelake.read-dedup-strategy": "keys-first"}}
    first, second = readings(40), readings(40).set_column(2, "temp", pa.array([100.0 + i for i in range(40)]))
    for name, props in tables.items():
        t = iot(lake, f"d.{name}", properties=props)
        t.append(first, maintain=False)
        t.append(second, maintain=False)
        t.append(readings(10, start=T0 + dt.timedelta(hours=5)), maintain=False)

    def rows(name):
        out = lake.sql(f"SELECT device_id, time, temp FROM d.{name} ORDER BY device_id, time, temp")
        return [(r["device_id"], r["time"], r["temp"]) for r in out.to_pylist()]

    latest = rows("merge")  # the second write of each (device, time) wins
    assert sorted(r[2] for r in latest) == sorted([100.0 + i for i in range(40)] + [float(i) for i in range(10)])
    assert rows("keys_first") == latest
    # read-dedup false: every stored row, the older writes too.
    for name in ("off", "off_spelled"):
        every = rows(name)
        assert len(every) == 90 and sum(r[2] for r in every) == sum(first.column("temp").to_pylist()) + sum(
            second.column("temp").to_pylist()) + sum(range(10)), name
    n = lake.sql("SELECT count(*) AS n FROM d.off WHERE device_id = 'pump-7'").column("n").to_pylist()
    assert n == [45]


def snapshot_ids(table_dir):
    versions = Path(table_dir, "metadata").glob("v*.metadata.json")
    newest = max(versions, key=lambda p: int(p.name[1:].split(".")[0]))
    md = json.loads(newest.read_text())
    snaps = sorted(md["snapshots"], key=lambda s: s["sequence-number"])  # the reference lists them in any order
    return md.get("current-snapshot-id"), [s["snapshot-id"] for s in snaps]


def check_set_properties(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(4))
    before = snapshot_ids(work / "iot" / "readings")
    # Any spelling of a setting; other keys with a dot are Iceberg properties; one metadata commit.
    assert t.set_properties({"read_dedup": "FALSE", "timelake.Newest_First": "false", "my.owner": "team-a"}) is None
    assert t.version == 3 and snapshot_ids(work / "iot" / "readings") == before
    props = properties(work / "iot" / "readings")
    assert (props["timelake.read-dedup"], props["timelake.newest-first"], props["my.owner"]) == ("FALSE", "false",
                                                                                                  "team-a"), props
    # None returns a setting to its default (removes the property).
    t.set_properties({"timelake.read-dedup": None, "my.owner": None})
    props = properties(work / "iot" / "readings")
    assert "timelake.read-dedup" not in props and "my.owner" not in props and t.version == 4, props
    for bad, message in [({"bogus": "1"}, 'unknown setting "bogus"'),
                         ({"read_dedup": "maybe"}, 'timelake.read-dedup: must be true or false, got "maybe"'),
                         ({"chunk_interval": "hour"}, "timelake.chunk-interval is fixed when the table is created"),
                         ({"timelake.rollups": "x.y"}, "timelake.rollups is set by Timelake itself")]:
        raises(ValueError, t.set_properties, bad, match=message)
    raises(TypeError, t.set_properties, {"read_dedup": 1})
    raises(TypeError, t.set_properties, [("read_dedup", "false")])
    assert t.version == 4 and lake.table("iot.readings").version == 4
    assert lake.sql("SELECT count(*) AS n FROM iot.readings").column("n").to_pylist() == [4]


def check_rollback(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(4), maintain=False)
    first = t.info()
    t.append(readings(6, start=T0 + dt.timedelta(hours=1)), maintain=False)
    current, ids = snapshot_ids(work / "iot" / "readings")
    assert t.rollback(ids[0]) is None and t.version == 4
    assert t.info()["rows"] == 4 and lake.table("iot.readings").info()["rows"] == 4
    assert lake.sql("SELECT count(*) AS n FROM iot.readings").column("n").to_pylist() == [4]
    now, later = snapshot_ids(work / "iot" / "readings")
    assert now == ids[0] and later == ids, (now, later)  # later snapshots stay in the history
    latest = sorted(lake.latest("iot.readings").column("temp").to_pylist())
    assert latest == [2.0, 3.0], latest
    e = raises(KeyError, t.rollback, 12345, match="snapshot 12345")
    assert "iot.readings" in str(e)
    raises(TypeError, t.rollback, "1")
    t.rollback(current)  # forward again
    assert t.info()["rows"] == 10 and t.version == 5
    # Like any commit, a rollback logs the version it replaces.
    md = json.loads((work / "iot" / "readings" / "metadata" / "v5.metadata.json").read_text())
    assert [e["metadata-file"].rsplit("/", 1)[-1] for e in md["metadata-log"]] == \
        [f"v{k}.metadata.json" for k in range(1, 5)]
    # Appends go on from the snapshot rolled back to.
    t.rollback(ids[0])
    t.append(readings(2, start=T0 + dt.timedelta(days=2)), maintain=False)
    assert lake.sql("SELECT count(*) AS n FROM iot.readings").column("n").to_pylist() == [6]
    assert first["rows"] == 4


def check_upgrade(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    empty = t.upgrade(dry_run=True)
    # The reference's head object of a new table may still be on its way
    # (written in the background), as below.
    assert set(empty) == UPGRADE_KEYS and set(empty["steps"]) <= {HEAD_STEP} and empty["snapshot_before"] is None, empty
    for i in range(3):
        t.append(readings(4, start=T0 + dt.timedelta(minutes=10 * i)), maintain=False)
    current, _ = snapshot_ids(work / "iot" / "readings")
    dry = t.upgrade(dry_run=True)
    want = "rewrite 3 unsorted or small files in 1 partitions"
    assert set(dry["steps"]) - {HEAD_STEP} == {want}, dry
    assert (dry["version_before"], dry["snapshot_before"], dry["keep_snapshots_until_ms"]) == (4, current, None), dry
    assert t.version == 4 and t.info()["files"] == 3
    import time
    before_ms = time.time() * 1000
    done = t.upgrade()
    assert done["steps"] == dry["steps"] and done["snapshot_before"] == current, done
    week = 7 * 86400 * 1000
    assert before_ms + week - 60000 <= done["keep_snapshots_until_ms"] <= time.time() * 1000 + week, done
    assert properties(work / "iot" / "readings")["timelake.keep-snapshots-until"] == str(
        done["keep_snapshots_until_ms"])
    assert t.info()["files"] == 1 and t.info()["rows"] == 12
    again = t.upgrade()
    assert again["steps"] == [] and again["keep_snapshots_until_ms"] is None, again
    # The snapshot before the upgrade stays: a rollback undoes it.
    t.rollback(done["snapshot_before"])
    assert t.info()["files"] == 3 and t.info()["rows"] == 12
    raises(ValueError, t.upgrade, keep_snapshots="abc", match='bad duration "abc"')
    quiet = t.upgrade(compact=False, keep_snapshots="1d")
    assert set(quiet["steps"]) <= {HEAD_STEP}, quiet


def check_lake_settings_and_cache_stats(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(10), maintain=False)
    t.append(readings(10), maintain=False)  # the same keys again: dedup on read keeps 10
    assert lake.sql("SELECT count(*) AS n FROM iot.readings").column("n").to_pylist() == [10]
    every = tl.Lake(str(work), settings={"read_dedup": "false"})
    assert every.sql("SELECT count(*) AS n FROM iot.readings").column("n").to_pylist() == [20]
    raises(ValueError, tl.Lake, str(work), settings={"bogus": "1"}, match="bogus")
    raises(ValueError, tl.Lake, str(work), settings={"read_dedup": "maybe"}, match="maybe")
    assert lake.cache_stats() is None  # local lakes have no block cache


def check_exported_types(tl, work):
    names = {"AppendResult", "ArrowArrayExportable", "ArrowSchemaExportable", "ArrowStreamExportable", "CacheStats",
             "ConflictError", "HasArrowSchema", "Lake", "MaintainReport", "Table", "TableInfo", "UpgradeReport"}
    assert names <= set(tl.__all__), names - set(tl.__all__)
    for n in names:
        assert getattr(tl, n) is not None, n
    assert set(tl.MaintainReport.__annotations__) == MAINTAIN_KEYS
    assert set(tl.UpgradeReport.__annotations__) == UPGRADE_KEYS
    assert set(tl.CacheStats.__annotations__) == {"memory_hits", "disk_hits", "misses", "bytes_fetched"}
    assert set(tl.TableInfo.__annotations__) == INFO_KEYS
    assert tl.AppendResult.__required_keys__ == APPEND_KEYS
    assert {"maintenance", "maintenance_error"} <= tl.AppendResult.__optional_keys__
    for proto, member in [("ArrowArrayExportable", "__arrow_c_array__"), ("ArrowStreamExportable", "__arrow_c_stream__"),
                          ("ArrowSchemaExportable", "__arrow_c_schema__"), ("HasArrowSchema", "schema")]:
        assert member in vars(getattr(tl, proto)), (proto, member)


def check_bool_arguments(tl, work):
    """A flag takes True or False (or None where it means the table's own
    setting); anything else is a TypeError naming it, never read for its
    truthiness: "false" would run a real upgrade for a dry run."""
    lake = tl.Lake(str(work))
    t = iot(lake)
    for i in range(3):
        t.append(readings(4, start=T0 + dt.timedelta(minutes=10 * i)), maintain=False)
    before = table_files(work)
    for bad in ("false", 0, 1):
        raises(TypeError, t.append, readings(1), maintain=bad, match="maintain")
        raises(TypeError, t.upgrade, dry_run=bad, match="dry_run")
        raises(TypeError, t.upgrade, compact=bad, match="compact")
        for flag in ("compact", "retention", "expire", "rollups"):
            raises(TypeError, t.maintain, **{flag: bad}, match=flag)
        raises(TypeError, iot, lake, "b.d", dedup=bad, match="dedup")
        raises(TypeError, iot, lake, "b.i", ingest_time=bad, match="ingest_time")
    raises(TypeError, t.maintain, rollups=None, match="rollups")
    raises(TypeError, t.upgrade, dry_run=None, match="dry_run")
    assert t.version == 4 and t.info()["files"] == 3 and table_files(work) == before
    assert lake.tables() == ["iot.readings"]
    # None: the table's own setting (auto-maintain, dedup and ingest time on).
    assert t.append(readings(1, start=T0 + dt.timedelta(days=1)), maintain=None)["rows"] == 1
    assert t.upgrade(dry_run=True, compact=False)["version_before"] == 5
    # (Positional order differs on purpose: ours is the seed's, properties 8th.)
    p = lake.create_table("b.p", SCHEMA, time_column="time", series_key=["device_id"], chunk="hour", dedup=False,
                          ingest_time=False, properties={"owner": "team-a"})
    info = p.info()
    assert (info["chunk"], info["dedup"], info["ingest_time_column"]) == ("hour", False, None), info
    assert p.schema.names == ["time", "device_id", "temp"]
    assert properties(work / "b" / "p")["owner"] == "team-a"


def check_sql_set_and_show(tl, work):
    """SET timelake.<setting> lasts for the later queries of the lake and
    namespace it was run in; SHOW tells its value; a new Lake starts afresh."""
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(10), maintain=False)
    t.append(readings(10), maintain=False)  # the same (device, time) rows again

    def count(ns="default"):
        return lake.sql("SELECT count(*) AS n FROM iot.readings", ns).column("n").to_pylist()[0]

    assert count() == 10
    assert lake.sql("SET timelake.read_dedup = false").num_rows == 0
    assert (count(), count("iot")) == (20, 10)
    assert lake.sql("SHOW timelake.read_dedup").to_pylist() == [{"name": "timelake.read_dedup", "value": "false"}]
    assert lake.sql("SHOW timelake.read_dedup", "iot").column("value").to_pylist() == [None]
    lake.sql("SET timelake.read_dedup TO true")
    assert count() == 10
    lake.sql("SET timelake.version_check_interval = '5s'")
    assert lake.sql("SHOW timelake.version_check_interval").column("value").to_pylist() == ["5s"]
    assert tl.Lake(str(work)).sql("SHOW timelake.read_dedup").column("value").to_pylist() == [None]
    names = set(lake.sql("SHOW ALL").column("name").to_pylist())
    assert {"timelake.read_dedup", "timelake.version_check_interval", "timelake.newest_first"} <= names
    lake.sql("SET timelake.READ_DEDUP = 'False'")  # any spelling; SHOW gives the value as a boolean
    assert lake.sql("SHOW timelake.read_dedup").column("value").to_pylist() == ["false"]
    for bad, msg in [("SET timelake.nope = 1", 'unknown setting "timelake.nope" (`timelake settings` lists them)'),
                     ("SET timelake.read_dedup = maybe", 'timelake.read-dedup: must be true or false, got "maybe"'),
                     ("SET timelake.chunk_interval = 'hour'", "timelake.chunk-interval is fixed when the table is "
                                                              "created"),
                     ("SHOW read_dedup", "'read_dedup' is not a variable which can be viewed with 'SHOW'"),
                     ("SHOW timelake.chunk_interval", "'timelake.chunk_interval' is not a variable")]:
        raises(RuntimeError, lake.sql, bad, match=msg)
    assert count() == 20  # a refused SET changed nothing


def check_information_schema(tl, work):
    lake = tl.Lake(str(work))
    iot(lake).append(readings(4))
    lake.create_table("dims", pa.schema([("id", pa.int32()), ("label", pa.string())]))
    tables = lake.sql("SELECT table_catalog, table_schema, table_name, table_type FROM information_schema.tables "
                      "WHERE table_schema <> 'information_schema' ORDER BY table_schema, table_name").to_pylist()
    assert tables == [{"table_catalog": "timelake", "table_schema": s, "table_name": n, "table_type": "BASE TABLE"}
                      for s, n in [("default", "dims"), ("iot", "readings")]], tables
    assert {"tables", "views", "columns", "df_settings", "schemata"} <= set(lake.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'information_schema'"
    ).column("table_name").to_pylist())
    cols = lake.sql("SELECT column_name, ordinal_position, is_nullable FROM information_schema.columns "
                    "WHERE table_schema = 'iot' AND table_name = 'readings' ORDER BY ordinal_position").to_pylist()
    assert [(c["column_name"], c["ordinal_position"], c["is_nullable"]) for c in cols] == [
        ("time", 0, "NO"), ("device_id", 1, "YES"), ("temp", 2, "YES"), ("_ingest_ts", 3, "NO")], cols
    shown = lake.sql("SHOW COLUMNS FROM iot.readings")
    assert shown.schema.names == ["table_catalog", "table_schema", "table_name", "column_name", "data_type",
                                  "is_nullable"]
    assert shown.column("column_name").to_pylist() == ["time", "device_id", "temp", "_ingest_ts"]
    described = lake.sql("DESCRIBE readings", "iot")
    assert described.schema.names == ["column_name", "data_type", "is_nullable"]
    assert described.drop_columns(["data_type"]).to_pylist() == [
        {"column_name": c, "is_nullable": n} for c, n in [("time", "NO"), ("device_id", "YES"), ("temp", "YES"),
                                                          ("_ingest_ts", "NO")]]
    assert {"default", "iot"} <= set(lake.sql("SELECT schema_name FROM information_schema.schemata").column(
        "schema_name").to_pylist())
    setting = lake.sql("SELECT name, value, description FROM information_schema.df_settings "
                       "WHERE name = 'timelake.read_dedup'").to_pylist()
    assert len(setting) == 1 and setting[0]["value"] is None and "dedup" in setting[0]["description"]
    listed = lake.sql("SHOW TABLES").to_pylist()
    assert listed[:2] == [{"table_catalog": "timelake", "table_schema": s, "table_name": n, "table_type": "BASE TABLE"}
                          for s, n in [("default", "dims"), ("iot", "readings")]], listed  # the lake's first
    assert {r["table_type"] for r in listed[2:]} == {"VIEW"}


def check_explain(tl, work):
    lake = tl.Lake(str(work))
    iot(lake).append(readings(4))
    out = lake.sql("EXPLAIN SELECT count(*) FROM iot.readings WHERE device_id = 'pump-7'")
    assert out.schema.names == ["plan_type", "plan"]
    kinds = out.column("plan_type").to_pylist()
    assert "physical_plan" in kinds and all(isinstance(p, str) and p for p in out.column("plan").to_pylist())
    analyzed = lake.sql("EXPLAIN ANALYZE SELECT avg(temp) FROM iot.readings").column("plan_type").to_pylist()
    assert "Plan with Metrics" in analyzed and "physical_plan" not in analyzed
    for bad in ("EXPLAIN SELECT * FROM iot.nope", "EXPLAIN SELECT nope FROM iot.readings"):
        raises((RuntimeError, KeyError), lake.sql, bad, match="nope")


def time_travel_in_sql(tl):
    """A documented difference: ours reads a table AT (VERSION => id) or AT
    (TIMESTAMP => ts) in SQL; the reference 0.7.0 refuses both (its parser
    has no time travel). Ours is the package exposing LIBRARY_VERSION."""
    return hasattr(tl, "LIBRARY_VERSION")


def check_sql_time_travel(tl, work):
    """An earlier snapshot in SQL: ours reads it, the reference refuses it
    (time_travel_in_sql); neither ever answers with the current rows. Other
    engines' spellings (FOR SYSTEM_TIME AS OF, VERSION AS OF) are errors in both."""
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(4))
    t.refresh()
    md = json.loads(Path(work, "iot", "readings", "metadata", f"v{t.version}.metadata.json").read_text())
    first = md["current-snapshot-id"]
    t.append(readings(6, start=T0 + dt.timedelta(hours=1)))
    for q in (f"SELECT count(*) AS n FROM iot.readings AT (VERSION => {first})",
              "SELECT count(*) AS n FROM iot.readings AT (TIMESTAMP => now())"):
        if not time_travel_in_sql(tl):
            raises(RuntimeError, lake.sql, q)
    if time_travel_in_sql(tl):
        assert lake.sql(f"SELECT count(*) AS n FROM iot.readings AT (VERSION => {first})").to_pylist() == [{"n": 4}]
        assert lake.sql("SELECT count(*) AS n FROM iot.readings AT (TIMESTAMP => now())").to_pylist() == [{"n": 10}]
        raises(KeyError, lake.sql, "SELECT count(*) FROM iot.readings AT (VERSION => 1)", match="iot.readings")
    for q in ("SELECT count(*) FROM iot.readings FOR SYSTEM_TIME AS OF '2026-01-01'",
              "SELECT count(*) FROM iot.readings VERSION AS OF 1"):
        raises(RuntimeError, lake.sql, q)


# ---- Materialized rollups ----

ROLLUP_AGGS = ("count(*) AS n, count(temp) AS nt, sum(temp) AS s, min(temp) AS mn, max(temp) AS mx, avg(temp) AS av, "
               "first_value(temp ORDER BY time) AS fv, last_value(temp ORDER BY time) AS lv")
ROLLUP_COLS = "device_id, bucket, n, nt, s, mn, mx, av, fv, lv"


def create_rollup(lake, name="iot.hourly", width="1 hour", with_=""):
    return lake.sql(f"CREATE MATERIALIZED ROLLUP {name} AS SELECT device_id, time_bucket(INTERVAL '{width}', time) "
                    f"AS bucket, {ROLLUP_AGGS} FROM iot.readings GROUP BY device_id, bucket {with_}").to_pylist()


def rollup_matches_raw(lake, name="iot.hourly", width="1 hour"):
    """The rollup's rows equal the raw table's GROUP BY (as the same package computes it)."""
    got = lake.sql(f"SELECT {ROLLUP_COLS} FROM {name} ORDER BY device_id, bucket").to_pylist()
    want = lake.sql(f"SELECT device_id, time_bucket(INTERVAL '{width}', time) AS bucket, {ROLLUP_AGGS} "
                    "FROM iot.readings GROUP BY 1, 2 ORDER BY 1, 2").to_pylist()
    for row in got + want:
        row["av"] = round(row["av"], 9)
    assert got == want, (got[:3], want[:3])
    return len(got)


def source_snapshot(table_dir):
    versions = Path(table_dir, "metadata").glob("v*.metadata.json")
    md = json.loads(max(versions, key=lambda p: int(p.name[1:].split(".")[0])).read_text())
    current = [s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"]][0]
    return current["summary"].get("timelake.rollup-source-snapshot")


def check_rollup_statements(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(300, step=dt.timedelta(minutes=2)))
    out = lake.sql("CREATE MATERIALIZED ROLLUP iot.hourly AS SELECT device_id, time_bucket(INTERVAL '1 hour', time) "
                   f"AS bucket, {ROLLUP_AGGS} FROM iot.readings GROUP BY device_id, bucket "
                   "WITH (refresh_interval = '10m', retention = '365d')")
    assert out.schema.names == ["rollup", "rows"] and pa.types.is_uint64(out.schema.field("rows").type), out.schema
    assert out.to_pylist() == [{"rollup": "iot.hourly", "rows": 20}], out.to_pylist()
    assert rollup_matches_raw(lake) == 20
    props = properties(work / "iot" / "hourly")
    aggs = json.loads(props["timelake.rollup-aggregates"])
    assert aggs[0] == {"name": "n", "function": "count"} and aggs[1] == {"name": "nt", "function": "count",
                                                                         "column": "temp"}, aggs
    assert [a["function"] for a in aggs] == ["count", "count", "sum", "min", "max", "avg", "first_value",
                                             "last_value"], aggs
    assert (props["timelake.rollup-source"], props["timelake.rollup-bucket"], props["timelake.time-column"],
            props["timelake.series-key"], props["timelake.chunk-interval"], props["timelake.dedup"],
            props["timelake.rollup-refresh-interval"], props["timelake.retention"]) == (
        "iot.readings", "1h", "bucket", "device_id", "month", "true", "10m", "365d"), props
    assert "timelake.ingest-time-column" not in props
    assert properties(work / "iot" / "readings")["timelake.rollups"] == "iot.hourly"
    raw_snapshot = str(json.loads(max(Path(work, "iot", "readings", "metadata").glob("v*.metadata.json"),
                                      key=lambda p: int(p.name[1:].split(".")[0])).read_text())["current-snapshot-id"])
    assert source_snapshot(work / "iot" / "hourly") == raw_snapshot
    # A narrow bucket gets day partitions; a rollup is listed after the others.
    assert create_rollup(lake, "iot.fine", "5 minutes") == [{"rollup": "iot.fine", "rows": 240}]
    assert properties(work / "iot" / "fine")["timelake.chunk-interval"] == "day"
    assert properties(work / "iot" / "fine")["timelake.rollup-bucket"] == "5m"
    assert properties(work / "iot" / "readings")["timelake.rollups"] == "iot.hourly,iot.fine"
    # Statements and their errors.
    raises(FileExistsError, create_rollup, lake)
    assert create_rollup(lake, "IF NOT EXISTS iot.hourly") == [{"rollup": "iot.hourly", "rows": 0}]
    assert lake.sql("REFRESH MATERIALIZED ROLLUP iot.hourly").to_pylist() == [{"rollup": "iot.hourly", "rows": 0}]
    bad = "CREATE MATERIALIZED ROLLUP iot.bad AS SELECT "
    raises(ValueError, lake.sql, bad + "device_id, time_bucket(INTERVAL '1 hour', time) AS bucket, median(temp) AS m "
           "FROM iot.readings GROUP BY device_id, bucket", match="isn't an aggregate a rollup stores")
    raises(ValueError, lake.sql, bad + "device_id, time_bucket(INTERVAL '1 hour', time) AS bucket, "
           "first_value(temp) AS m FROM iot.readings GROUP BY device_id, bucket",
           match="isn't an aggregate a rollup stores")
    raises(ValueError, lake.sql, bad + "device_id, count(*) AS n FROM iot.readings GROUP BY device_id",
           match="group by time_bucket(<")
    raises(ValueError, lake.sql, bad + "device_id, time_bucket(INTERVAL '1 hour', time) AS bucket, count(*) AS n "
           "FROM iot.readings WHERE temp > 1 GROUP BY device_id, bucket", match="WHERE isn't supported")
    raises(ValueError, lake.sql, bad + "temp, time_bucket(INTERVAL '1 hour', time) AS bucket, count(*) AS n "
           "FROM iot.readings GROUP BY temp, bucket", match="series-key columns (device_id)")
    raises(ValueError, lake.sql, bad + "device_id, time_bucket(INTERVAL '1 month', time) AS bucket, count(*) AS n "
           "FROM iot.readings GROUP BY device_id, bucket", match="fixed width")
    raises(ValueError, lake.sql, bad + "device_id, time_bucket(INTERVAL '1 hour', time) AS bucket, count(*) AS n "
           "FROM iot.readings GROUP BY device_id, bucket WITH (bogus = 1)", match='unknown setting "bogus"')
    raises(ValueError, lake.sql, bad + "device_id, time_bucket(INTERVAL '1 hour', time) AS bucket, count(*) AS n "
           "FROM iot.readings GROUP BY device_id, bucket WITH (refresh_interval = 'xx')",
           match="timelake.rollup-refresh-interval")
    raises(RuntimeError, lake.sql, bad + "device_id, time_bucket(INTERVAL '1 hour', time) AS bucket, count(*) AS n "
           "FROM iot.nope GROUP BY device_id, bucket", match="not found")
    assert not (work / "iot" / "bad").exists()
    raises(ValueError, lake.sql, "REFRESH MATERIALIZED ROLLUP iot.readings", match="iot.readings is not a rollup")
    raises(ValueError, lake.sql, "DROP MATERIALIZED ROLLUP iot.readings", match="iot.readings is not a rollup")
    raises(KeyError, lake.sql, "REFRESH MATERIALIZED ROLLUP iot.nope")
    raises(KeyError, lake.sql, "DROP MATERIALIZED ROLLUP iot.nope")
    assert lake.sql("DROP MATERIALIZED ROLLUP IF EXISTS iot.nope").to_pylist() == [{"rollup": "iot.nope", "rows": 0}]
    # Unqualified names resolve in the namespace given.
    assert lake.sql("DROP MATERIALIZED ROLLUP fine", namespace="iot").to_pylist() == [{"rollup": "iot.fine",
                                                                                         "rows": 0}]
    assert sorted(lake.tables()) == ["iot.hourly", "iot.readings"]
    assert properties(work / "iot" / "readings")["timelake.rollups"] == "iot.hourly"
    assert lake.table("iot.readings").info()["rows"] == 300


def check_rollup_refresh(tl, work):
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(120, step=dt.timedelta(minutes=3)), maintain=False)
    create_rollup(lake)
    first = snapshot_ids(work / "iot" / "readings")[0]
    # New rows in an old bucket (late data, one replacing a stored row) and in new ones.
    late = pa.table({"time": [T0 + dt.timedelta(minutes=1), T0 + dt.timedelta(minutes=3), T0 + dt.timedelta(hours=9)],
                     "device_id": ["pump-7", "pump-8", "pump-7"], "temp": [-5.0, 99.0, 7.0]}, schema=SCHEMA)
    t.append(late, maintain=False)
    out = lake.sql("REFRESH MATERIALIZED ROLLUP iot.hourly").to_pylist()
    assert out[0]["rows"] > 0, out
    assert rollup_matches_raw(lake) == 13
    assert lake.sql("REFRESH MATERIALIZED ROLLUP iot.hourly").to_pylist()[0]["rows"] == 0
    # Maintenance refreshes the table's rollups, unless told not to.
    t.append(readings(4, start=T0 + dt.timedelta(hours=12)), maintain=False)
    report = t.maintain(rollups=False, expire=False)
    assert (report["rollups_refreshed"], report["rollup_rows"]) == (0, 0), report
    report = t.maintain(expire=False)
    assert report["rollups_refreshed"] == 1 and report["rollup_rows"] >= 2, report
    assert rollup_matches_raw(lake) == 15
    # A rollback past the rollup's snapshot: the next refresh starts over.
    t.rollback(first)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.hourly")
    assert rollup_matches_raw(lake) == 12
    assert lake.sql("SELECT sum(n) AS n FROM iot.hourly").column("n").to_pylist() == [120]


def check_rollup_coarser_from_finer(tl, work):
    """Maintenance refreshes narrowest first and computes a coarser rollup from a finer one's
    rows: a row put into the hourly rollup by hand shows in the daily one."""
    lake = tl.Lake(str(work))
    t = iot(lake)
    t.append(readings(12, step=dt.timedelta(minutes=10), devices=("pump-7",)), maintain=False)
    for name, width in (("daily", "1 day"), ("hourly", "1 hour")):
        lake.sql(f"CREATE MATERIALIZED ROLLUP iot.{name} AS SELECT device_id, time_bucket(INTERVAL '{width}', time) "
                 "AS bucket, count(*) AS n, sum(temp) AS s, max(temp) AS hi FROM iot.readings GROUP BY device_id, bucket")
    hourly = lake.table("iot.hourly")
    fake = pa.table({"device_id": ["pump-7"], "bucket": [T0 + dt.timedelta(hours=5)], "n": [1000], "s": [1000.0],
                     "hi": [1000.0]})
    hourly.append(fake.cast(pa.schema([hourly.schema.field(c) for c in fake.column_names])))
    t.append(readings(1, start=T0 + dt.timedelta(hours=3), devices=("pump-7",)), maintain=False)
    report = t.maintain()
    assert report["rollups_refreshed"] == 2, report
    # The hand-made hourly row outside the new data's buckets stays (no full recompute) ...
    assert lake.sql("SELECT n FROM iot.hourly ORDER BY bucket").column("n").to_pylist() == [6, 6, 1, 1000]
    # ... and the daily rollup took it from the hourly one.
    daily = lake.sql("SELECT n, s, hi FROM iot.daily").to_pylist()
    assert daily == [{"n": 1013, "s": 1066.0, "hi": 1000.0}], daily


def check_rollup_time_weighted_mean_by_series(tl, work):
    """A time-weighted mean holds each reading until the next: grouped by fewer keys than the
    series key, the readings of several series interleave and the rollup is refused (the
    reference when their runs overlap in time, as here; ours from the statement alone). m4
    keeps points of any mix of series."""
    lake = tl.Lake(str(work))
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("site", pa.string()), ("device_id", pa.string()),
                        ("temp", pa.float64())])
    t = lake.create_table("iot.readings", schema, time_column="time", series_key=["site", "device_id"])
    n = 40
    t.append(pa.table({"time": [T0 + dt.timedelta(minutes=i) for i in range(n)],
                       "site": [f"s{i % 2}" for i in range(n)], "device_id": [f"d{i % 4}" for i in range(n)],
                       "temp": [float(i) for i in range(n)]}, schema=schema))

    def create(name, keys, agg):
        return lake.sql(f"CREATE MATERIALIZED ROLLUP iot.{name} AS SELECT {keys}time_bucket(INTERVAL '1 hour', time) "
                        f"AS bucket, {agg} AS a FROM iot.readings GROUP BY {keys}bucket").to_pylist()

    # (The reference leaves the failed rollup's table metadata behind: a name per attempt.)
    for name, keys, agg in (("a", "", "time_weighted_mean(time, temp)"),
                            ("b", "site, ", "time_weighted_mean(time, temp)"),
                            ("c", "site, ", "time_weighted_mean(time, temp, 'linear')")):
        raises(RuntimeError, create, name, keys, agg, match="Group by the series key (each series is one signal)")
        assert "timelake.rollups" not in properties(work / "iot" / "readings"), keys
        assert not list(Path(work, "iot", name).rglob("*.parquet")), keys
    assert create("m4", "site, ", "m4(time, temp)") == [{"rollup": "iot.m4", "rows": 2}]
    assert create("tw", "device_id, site, ", "time_weighted_mean(time, temp)") == [{"rollup": "iot.tw", "rows": 4}]
    means = lake.sql("SELECT device_id, round(time_weighted_mean(a), 9) AS m FROM iot.tw GROUP BY 1 "
                     "ORDER BY 1").to_pylist()
    raw = lake.sql("SELECT device_id, round(time_weighted_mean(time, temp), 9) AS m FROM iot.readings GROUP BY 1 "
                   "ORDER BY 1").to_pylist()
    assert means == raw and len(raw) == 4, (means, raw)


CHECKS = {name: fn for name, fn in sorted(globals().items()) if name.startswith("check_")}


def main():
    import tempfile

    import timelake

    results = {}
    for name, fn in CHECKS.items():
        work = Path(tempfile.mkdtemp(prefix=name + "-", dir=sys.argv[1]))
        try:
            fn(timelake, work)
            results[name] = "ok"
        except BaseException:  # noqa: BLE001 -- every failure is reported by name
            results[name] = traceback.format_exc()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
