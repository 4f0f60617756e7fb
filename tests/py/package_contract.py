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
                 "partitions_dropped", "snapshots_expired", "objects_deleted", "seconds"}
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


def check_maintain(tl, work):
    t = iot(tl.Lake(str(work)))
    for i in range(3):
        t.append(readings(4, start=T0 + dt.timedelta(minutes=10 * i)), maintain=False)
    report = t.maintain()
    assert MAINTAIN_KEYS <= set(report), report
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
