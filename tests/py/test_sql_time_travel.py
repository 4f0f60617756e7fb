"""Time travel in SQL: FROM t AT (VERSION => snapshot id) and AT (TIMESTAMP
=> time) read the table as of that snapshot, through every read path (dedup
on read, time-partition pruning, the last-value index of that snapshot,
EXPLAIN), against pyiceberg's scan at the same snapshot and DuckDB's
iceberg_scan; several versions of one table in one query; clear errors for
an unknown, expired or too early snapshot."""

import datetime as dt
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

import tlc
from test_interop import metadata_file
from store_servers import server_fixture
from test_version_hint import ICEBERG_PY

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
NO_DEDUP = {"read-dedup": "false"}


def hour(h, devices=("a", "b"), temp=0.0):
    times = [T0 + dt.timedelta(hours=h, minutes=m) for m in range(0, 60, 10)]
    return pa.table({"time": [t for t in times for _ in devices], "device_id": [d for _ in times for d in devices],
                     "temp": [temp + i for i in range(len(times) * len(devices))]}, schema=SCHEMA)


def iceberg(lake_dir, table="iot/readings"):
    return StaticTable.from_metadata(metadata_file(Path(lake_dir), table))


def rows(table):
    return sorted(table.to_pylist(), key=lambda r: json.dumps(r, default=str, sort_keys=True))


def newest_per_key(table):
    """Dedup as Timelake defines it: per (device_id, time), the higher _ingest_ts wins."""
    best = {}
    for r in table.to_pylist():
        k = (r["device_id"], r["time"])
        if k not in best or r["_ingest_ts"] > best[k]["_ingest_ts"]:
            best[k] = r
    return pa.Table.from_pylist(list(best.values()), schema=table.schema)


@pytest.fixture
def history(lake, lake_dir):
    """Snapshots s1..s4 of iot.readings: hour 0, hour 1, hour 0 again with new
    values (duplicates pending until maintenance), hour 2."""
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"], chunk="hour")
    ids = []
    for data in (hour(0), hour(1), hour(0, temp=100.0), hour(2)):
        t.append(data, maintain=False)
        ids.append(t.info()["snapshot_id"])
    return t, ids


def at(sql, snapshot):
    return sql.replace("iot.readings", f"iot.readings AT (VERSION => {snapshot})")


def test_every_snapshot_reads_as_pyiceberg_reads_it(lake, lake_dir, history):
    _, ids = history
    ice = iceberg(lake_dir)
    assert [s.snapshot_id for s in ice.snapshots()] == ids
    for sid in ids:
        want = ice.scan(snapshot_id=sid).to_arrow()
        raw = lake.query(f"SELECT * FROM iot.readings AT (VERSION => {sid})", settings=NO_DEDUP)
        assert rows(raw) == rows(want), sid
        deduped = lake.sql(f"SELECT * FROM iot.readings AT (VERSION => {sid})")
        assert rows(deduped) == rows(newest_per_key(want)), sid
    # Snapshot 3 holds hour 0 twice: read as of it, the later values win.
    assert lake.sql(at("SELECT max(temp) AS m FROM iot.readings WHERE time < '2026-01-01 01:00'", ids[2])
                    ).column("m").to_pylist() == [111.0]
    assert lake.sql(at("SELECT max(temp) AS m FROM iot.readings WHERE time < '2026-01-01 01:00'", ids[1])
                    ).column("m").to_pylist() == [11.0]


def test_several_versions_in_one_query(lake, history):
    _, (s1, s2, s3, s4) = history
    diff = lake.sql(f"""
        SELECT 'added' AS change, device_id, time, temp FROM (
          SELECT device_id, time, temp FROM iot.readings AT (VERSION => {s3})
          EXCEPT SELECT device_id, time, temp FROM iot.readings AT (VERSION => {s1}))
        UNION ALL
        SELECT 'removed', device_id, time, temp FROM (
          SELECT device_id, time, temp FROM iot.readings AT (VERSION => {s1})
          EXCEPT SELECT device_id, time, temp FROM iot.readings AT (VERSION => {s3}))
        ORDER BY 1, 3, 2""").to_pylist()
    added = [r for r in diff if r["change"] == "added"]
    removed = [r for r in diff if r["change"] == "removed"]
    assert len(added) == 24 and len(removed) == 12  # hour 1 new, hour 0 rewritten
    assert {r["temp"] for r in removed} == {float(i) for i in range(12)}
    counts = lake.sql(f"""SELECT (SELECT count(*) FROM iot.readings AT (VERSION => {s1})) AS a,
                                 (SELECT count(*) FROM iot.readings AT (VERSION => {s2})) AS b,
                                 (SELECT count(*) FROM iot.readings) AS now,
                                 (SELECT count(*) FROM readings AS r AT (VERSION => {s2})) AS b2""",
                      namespace="iot").to_pylist()
    assert counts == [{"a": 12, "b": 24, "now": 36, "b2": 24}]
    # A join of two versions with aliases, columns named through them.
    changed = lake.sql(f"""SELECT o.device_id, o.time, o.temp AS before, n.temp AS after
                           FROM iot.readings o AT (VERSION => {s2})
                           JOIN iot.readings n AT (VERSION => {s4}) USING (device_id, time)
                           WHERE o.temp <> n.temp""").num_rows
    assert changed == 12


def scan_rows(result):
    return [r["plan"] for r in result.to_pylist() if r["plan_type"] == "timelake_scan"]


def test_time_pruning_and_explain_of_an_earlier_snapshot(lake, lake_dir, history):
    _, (s1, s2, s3, s4) = history
    q = "SELECT count(*) AS n FROM iot.readings WHERE time >= '2026-01-01 01:00' AND time < '2026-01-01 02:00'"
    assert lake.sql(at(q, s1)).column("n").to_pylist() == [0]
    assert lake.sql(at(q, s2)).column("n").to_pylist() == [12]
    scans = scan_rows(lake.sql("EXPLAIN " + at(q, s2)))
    assert len(scans) == 1, scans  # the current table is not read
    assert f"as of snapshot {s2}" in scans[0] and "1 of 2 files" in scans[0]
    assert "time_hour=2026-01-01-01" in scans[0]
    stats = {}
    lake.sql(at(q, s4), stats=stats)
    assert stats["files_total"] == 4 and stats["files_read"] == 1


def test_the_index_answers_only_for_its_own_snapshot(lake, lake_dir, history):
    _, ids = history
    newest = "SELECT DISTINCT ON (device_id) device_id, time, temp FROM iot.readings ORDER BY device_id, time DESC"
    ice = iceberg(lake_dir)
    for sid in ids:
        scans = scan_rows(lake.sql("EXPLAIN " + at(newest, sid)))
        assert len(scans) == 1 and "answered from the last-value index" in scans[0]
        assert f"/metadata/lvi-{sid}-" in scans[0], scans[0]  # that snapshot's own index
        data = newest_per_key(ice.scan(snapshot_id=sid).to_arrow()).to_pylist()
        want = {}
        for r in data:
            if r["device_id"] not in want or r["time"] > want[r["device_id"]]["time"]:
                want[r["device_id"]] = {k: r[k] for k in ("device_id", "time", "temp")}
        assert lake.sql(at(newest, sid)).to_pylist() == [want[k] for k in sorted(want)]
    # An earlier snapshot whose index file is lost: its data answers instead.
    lvi = next(Path(lake_dir).glob(f"iot/readings/metadata/lvi-{ids[1]}-*.parquet"))
    lvi.unlink()
    scans = scan_rows(lake.sql("EXPLAIN " + at(newest, ids[1])))
    assert "last-value index" not in scans[0]
    assert [r["time"].hour for r in lake.sql(at(newest, ids[1])).to_pylist()] == [1, 1]


def test_as_of_a_time_follows_the_snapshot_log(lake, lake_dir, history):
    t, (s1, s2, s3, s4) = history
    ice = iceberg(lake_dir)
    stamps = {s.snapshot_id: s.timestamp_ms for s in ice.snapshots()}

    def as_of(ms):
        ts = dt.datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()
        return lake.sql(f"SELECT count(*) AS n FROM iot.readings AT (TIMESTAMP => TIMESTAMPTZ '{ts}')"
                        ).column("n").to_pylist()[0]

    counts = {s1: 12, s2: 24, s3: 24, s4: 36}
    for sid, ms in stamps.items():
        assert ice.snapshot_as_of_timestamp(ms).snapshot_id == sid
        assert as_of(ms) == counts[sid]
    assert as_of(stamps[s4] + 3_600_000) == 36  # later than any: the current
    # A rollback is in the log: as of now the table is the rolled-back one, as pyiceberg says.
    t.rollback(s2)
    now_ms = iceberg(lake_dir).metadata.last_updated_ms
    assert iceberg(lake_dir).snapshot_as_of_timestamp(now_ms).snapshot_id == s2
    assert lake.sql("SELECT count(*) AS n FROM iot.readings AT (TIMESTAMP => now())").column("n").to_pylist() == [24]
    assert as_of(stamps[s4]) == 36  # s4 is still the table as of its own time
    with pytest.raises(KeyError, match=r"iot\.readings as of 2020-01-01 00:00:00\.000 UTC: that is before its "
                                       r"first snapshot \(\d+, of 20\d\d-"):
        lake.sql("SELECT * FROM iot.readings AT (TIMESTAMP => '2020-01-01')")


def test_unknown_and_expired_snapshots_say_so(lake, lake_dir, history):
    t, (s1, s2, s3, s4) = history
    with pytest.raises(KeyError, match=rf"iot\.readings has no snapshot 12345 .*keeps 4 snapshots, the "
                                       rf"earliest {s1} of .* the current {s4}"):
        lake.sql("SELECT * FROM iot.readings AT (VERSION => 12345)")
    with pytest.raises(KeyError, match=r"no snapshot \"nope\": give a snapshot id"):
        lake.sql("SELECT * FROM iot.readings AT (VERSION => 'nope')")
    t.set_properties({"timelake.max-snapshots": "2", "timelake.min-snapshots": "1"})
    assert t.maintain(compact=False, retention=False)["snapshots_expired"] == 2
    with pytest.raises(KeyError, match=rf"snapshot {s2} of iot\.readings was expired .* the earliest kept is "
                                       rf"snapshot {s3} of "):
        lake.sql(f"SELECT * FROM iot.readings AT (VERSION => {s2})")
    stamp = dt.datetime.fromtimestamp(iceberg(lake_dir).snapshot_by_id(s3).timestamp_ms / 1000 - 0.001, tz=UTC)
    with pytest.raises(KeyError, match=rf"the snapshots of that time were expired; the earliest kept is "
                                       rf"snapshot {s3}"):
        lake.sql(f"SELECT * FROM iot.readings AT (TIMESTAMP => TIMESTAMPTZ '{stamp.isoformat()}')")
    assert lake.sql(at("SELECT count(*) AS n FROM iot.readings", s3)).column("n").to_pylist() == [24]


def test_bad_at_clauses(lake, history):
    for q, msg in [("SELECT * FROM iot.readings AT (VERSION => random())", "must be a constant"),
                   ("SELECT * FROM iot.readings AT (TIMESTAMP => 'soon')", "is not a time"),
                   ("SELECT * FROM nope AT (VERSION => 1)", "does not exist"),
                   ("SELECT * FROM x AT (VERSION => 1)", "only the lake's tables")]:
        with pytest.raises((tlc.TimelakeError, KeyError), match=msg):
            lake.query(q, namespace="iot", inputs={"x": pa.table({"a": [1]})})


def test_a_schema_change_reads_each_snapshot_under_its_own_columns(lake, lake_dir):
    old = pa.schema([("region", pa.string()), ("n", pa.int64())])
    new = pa.schema([("n", pa.int64()), ("city", pa.string())])
    t = lake.create_table("k.s", old, partition_by=["region"])
    t.append(pa.table({"region": ["eu", "us", "eu"], "n": [1, 2, 3]}, schema=old), maintain=False)
    before = t.info()["snapshot_id"]
    t.replace(pa.table({"n": [10, 11], "city": ["Oslo", "Lima"]}, schema=new), schema=new, partition_by=["city"])
    got = lake.sql(f"SELECT * FROM k.s AT (VERSION => {before}) WHERE region = 'eu' ORDER BY n")
    assert got.column_names == ["region", "n"] and got.to_pylist() == [{"region": "eu", "n": 1}, {"region": "eu", "n": 3}]
    want = iceberg(lake_dir, "k/s").scan(snapshot_id=before).to_arrow()
    assert rows(lake.sql(f"SELECT * FROM k.s AT (VERSION => {before})")) == rows(want)
    assert lake.sql("SELECT * FROM k.s WHERE city = 'Oslo'").to_pylist() == [{"n": 10, "city": "Oslo"}]


def test_duckdb_iceberg_scan_agrees(lake, lake_dir, history):
    if not ICEBERG_PY.exists():
        pytest.skip(".venv-iceberg is missing (scripts/setup.sh --test)")
    _, ids = history
    location = str(Path(lake_dir) / "iot" / "readings")
    script = textwrap.dedent(f"""
        import json, pathlib, duckdb, duckdb_ext
        ext = pathlib.Path(list(duckdb_ext.__path__)[0]) / "extensions" / "v1.4.4" / "linux_amd64"
        con = duckdb.connect()
        for name in ("avro", "iceberg"):
            con.execute(f"LOAD '{{ext / (name + '.duckdb_extension')}}'")
        print(json.dumps([con.execute(f"SELECT count(*) FROM iceberg_scan('{location}', snapshot_from_id => {{s}})")
                          .fetchone()[0] for s in {ids!r}]))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    p = subprocess.run([str(ICEBERG_PY), "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    raw = json.loads(p.stdout.splitlines()[-1])
    ours = [lake.query(at("SELECT count(*) AS n FROM iot.readings", s), settings=NO_DEDUP).column("n")[0].as_py()
            for s in ids]
    assert raw == ours == [12, 24, 36, 48]


def test_cli_sql(lake, lake_dir, history):
    _, ids = history
    cli = Path(os.environ.get("TL_BUILD", Path(__file__).parents[2] / "build-asan")) / "timelake"
    out = subprocess.run([str(cli), "sql", at("SELECT count(*) AS n FROM iot.readings", ids[0]), "--lake",
                          str(lake_dir), "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"n": 12}
    bad = subprocess.run([str(cli), "sql", "SELECT * FROM iot.readings AT (VERSION => 1)", "--lake", str(lake_dir)],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "iot.readings has no snapshot 1" in bad.stderr


s3 = pytest.fixture(scope="module")(server_fixture("s3"))


def test_on_s3_with_a_fresh_lake_each_time(s3):
    """An object store: the head and the read cache serve the current
    snapshot; an earlier one is read from its own files and index."""
    url = s3.url()
    writer = tlc.Lake(url, s3.options)
    t = writer.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"], chunk="hour")
    ids = []
    for data in (hour(0), hour(1), hour(0, temp=100.0)):
        t.append(data, maintain=False)
        ids.append(t.info()["snapshot_id"])
    newest = "SELECT DISTINCT ON (device_id) device_id, temp FROM iot.readings ORDER BY device_id, time DESC"
    for sid, n, temps in zip(ids, (12, 24, 24), ([11.0, 10.0], [11.0, 10.0], [11.0, 10.0])):
        reader = tlc.Lake(url, s3.options)  # cold: no cache, no engine yet
        got = reader.sql(f"SELECT count(*) AS n, max(temp) AS m FROM iot.readings AT (VERSION => {sid}) "
                         "WHERE time < '2026-01-01 01:00'").to_pylist()[0]
        assert got == {"n": 12, "m": 111.0 if sid == ids[2] else 11.0}
        assert reader.sql(at("SELECT count(*) AS n FROM iot.readings", sid)).column("n").to_pylist() == [n]
        assert reader.sql(at(newest, sid)).to_pylist() == [{"device_id": "a", "temp": temps[1]},
                                                             {"device_id": "b", "temp": temps[0]}]
