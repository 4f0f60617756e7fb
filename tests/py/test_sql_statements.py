"""The statements besides SELECT (package_contract.py holds what the
reference shares): SET and RESET per lake and namespace, over the settings
a call passes; SHOW and DESCRIBE; EXPLAIN naming the files, row groups and
index a query reads, against the files on disk."""

import datetime as dt
import glob
import os

import pyarrow as pa
import pytest

import tlc

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])


def hour(h, devices=("a", "b"), temp=0.0):
    times = [T0 + dt.timedelta(hours=h, minutes=m) for m in range(0, 60, 10)]
    return pa.table({"time": [t for t in times for _ in devices], "device_id": [d for _ in times for d in devices],
                     "temp": [temp + i for i in range(len(times) * len(devices))]}, schema=SCHEMA)


@pytest.fixture
def hourly(lake):
    """Four hourly partitions, the first hour written twice (duplicates)."""
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"], chunk="hour")
    for h in range(4):
        t.append(hour(h), maintain=False)
    t.append(hour(0, temp=100.0), maintain=False)
    return t


def count(lake, ns="default", **kw):
    return lake.query("SELECT count(*) AS n FROM iot.readings", namespace=ns, **kw).column("n").to_pylist()[0]


def test_set_overrides_the_call_and_resets(lake, hourly):
    assert count(lake) == 48
    assert count(lake, settings={"read_dedup": "false"}) == 60  # the call's setting
    lake.sql("SET timelake.read_dedup = true")
    assert count(lake, settings={"read_dedup": "false"}) == 48  # SET wins over the call's
    lake.sql("RESET timelake.read_dedup")
    assert count(lake, settings={"read_dedup": "false"}) == 60
    lake.sql("SET SESSION timelake.READ_DEDUP = 'False'; ")  # any spelling, a string, a trailing ;
    lake.sql("SET timelake.newest_first = false", namespace="iot")
    assert lake.sql("SHOW timelake.newest_first", namespace="iot").column("value").to_pylist() == ["false"]
    assert count(lake) == 60 and count(lake, ns="iot") == 48
    lake.sql("SET timelake.read_dedup = DEFAULT")
    assert count(lake) == 48
    lake.sql("RESET ALL", namespace="iot")
    assert lake.sql("SHOW timelake.newest_first", namespace="iot").column("value").to_pylist() == [None]


def test_a_refused_set_changes_nothing(lake, hourly):
    lake.sql("SET timelake.read_dedup = false")
    for bad, msg in [("SET timelake.read_dedup = maybe", "must be true or false"),
                     ("SET timelake.chunk_interval = 'hour'", "fixed when the table is created"),
                     ("SET timelake.read_dedup", "needs = or TO"),
                     ("SET timelake.read_dedup = false, true", "one setting and one value"),
                     ("SET threads = 1", "SET statements are refused but for Timelake's own settings"),
                     # the properties' spelling: SQL reads '-' as a minus
                     ("SET timelake.read-dedup = true", "write timelake.read_dedup "),
                     ("SHOW timelake.read-dedup-strategy", "write timelake.read_dedup_strategy "),
                     ("RESET timelake.newest-first", "write timelake.newest_first "),
                     ("SET timelake.no-such = 1", "needs = or TO")]:
        with pytest.raises(tlc.TimelakeError, match=msg):
            lake.sql(bad)
    assert count(lake) == 60
    assert lake.sql("SELECT current_setting('threads') > 0 AS t").to_pylist() == [{"t": True}]


def test_show_and_describe(lake, hourly):
    cols = lake.sql("DESCRIBE readings", namespace="iot").to_pylist()
    assert [(c["column_name"], c["data_type"], c["is_nullable"]) for c in cols] == [
        ("time", "TIMESTAMPTZ", "NO"), ("device_id", "VARCHAR", "YES"), ("temp", "DOUBLE", "YES"),
        ("_ingest_ts", "TIMESTAMPTZ", "NO")]
    assert lake.sql("SHOW COLUMNS IN iot.READINGS").num_rows == 4  # names fold case
    with pytest.raises(tlc.TimelakeError, match="SHOW ALL, SHOW TABLES"):
        lake.sql("SHOW TABLES LIKE 'x'")


def partition_files(lake_dir, h):
    return sorted(glob.glob(f"{lake_dir}/iot/readings/data/time_hour=2026-01-01-{h:02d}/*.parquet"))


def scan_row(out):
    rows = {r["plan_type"]: r["plan"] for r in out.to_pylist()}
    return rows["timelake_scan"], rows


def test_explain_names_the_files_pruning_leaves(lake, lake_dir, hourly):
    out = lake.sql("EXPLAIN SELECT avg(temp) FROM iot.readings WHERE time >= '2026-01-01 02:00:00' "
                   "AND time < '2026-01-01 03:00:00'")
    scan, rows = scan_row(out)
    assert "physical_plan" in rows
    listed = sorted(line.strip().split(" ")[0].removeprefix("file://") for line in scan.splitlines()[1:])
    assert listed == partition_files(lake_dir, 2)
    assert "1 of 5 files" in scan and " row groups" in scan
    # a key filter, and two partitions
    scan, _ = scan_row(lake.sql("EXPLAIN SELECT * FROM iot.readings WHERE time < '2026-01-01 01:00:00' "
                                "AND device_id = 'a'"))
    listed = sorted(line.strip().split(" ")[0].removeprefix("file://") for line in scan.splitlines()[1:])
    assert listed == partition_files(lake_dir, 0)  # the first hour's two files
    assert "2 of 5 files" in scan


def test_explain_names_the_index_and_the_window(lake, hourly):
    scan, _ = scan_row(lake.sql("EXPLAIN SELECT DISTINCT ON (device_id) * FROM iot.readings "
                                "ORDER BY device_id, time DESC"))
    assert "answered from the last-value index" in scan and "/metadata/lvi-" in scan
    # Aggregated in the scan (hours 1-3; hour 0's files, duplicates pending, as rows): no scan row.
    out = lake.sql("EXPLAIN SELECT time_bucket(INTERVAL '10 minutes', time) AS b, max(temp) "
                   "FROM iot.readings GROUP BY 1 ORDER BY 1 DESC LIMIT 3")
    rows = {r["plan_type"]: r["plan"] for r in out.to_pylist()}
    assert "newest 3 rows (or groups) by bucket" in rows["timelake_topk"]
    assert "600000000 microseconds" in rows["timelake_topk"]


def test_explain_analyze_and_rewritten_queries(lake, hourly):
    _, rows = scan_row(lake.sql("EXPLAIN ANALYZE SELECT device_id, first_value(temp ORDER BY time) "
                                "FROM iot.readings GROUP BY 1"))
    assert "Plan with Metrics" in rows and "physical_plan" not in rows
    assert '"first"("temp" ORDER BY "time", "temp" ASC NULLS LAST)' in rows["rewritten_query"]  # ties by value
    with pytest.raises(KeyError, match="iot.nope does not exist"):
        lake.sql("EXPLAIN SELECT * FROM iot.nope")
    before = sorted(os.listdir(lake.location.removeprefix("file://") + "/iot/readings/metadata"))
    lake.sql("EXPLAIN ANALYZE SELECT count(*) FROM iot.readings")
    assert sorted(os.listdir(lake.location.removeprefix("file://") + "/iot/readings/metadata")) == before


def test_explain_of_statements_and_bad_queries(lake, hourly):
    rows = {r["plan_type"]: r["plan"] for r in lake.sql("EXPLAIN DESCRIBE iot.readings").to_pylist()}
    assert "physical_plan" in rows and "information_schema" not in rows["rewritten_query"]
    for bad, msg in [("EXPLAIN SET timelake.read_dedup = false", "EXPLAIN takes a query .*, not SET"),
                     ("EXPLAIN RESET ALL", "not RESET"), ("EXPLAIN EXPLAIN SELECT 1", "not EXPLAIN"),
                     ("EXPLAIN ANALYZE ;", "EXPLAIN needs a query"), ("EXPLAIN SELEC 1", "SELEC"),
                     ("EXPLAIN SELECT nope FROM iot.readings", "nope")]:
        with pytest.raises(tlc.TimelakeError, match=msg):
            lake.sql(bad)
    assert lake.sql("SHOW timelake.read_dedup").column("value").to_pylist() == [None]  # nothing was set

