"""`latest` follows retention: once retention drops the partitions holding a
series' rows (inline after an append, or by `maintain`), the last-value index
forgets the series, through the CLI, the Python package and the reference
reading our table, as SQL does. Compaction keeps every series' newest row."""

import datetime as dt
import json

import pyarrow as pa
import pytest

from test_cli import run
from test_package import timelake

NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])


def rows(device, days_ago, n=3):
    start = NOW - dt.timedelta(days=days_ago)
    return pa.table({"time": [start + dt.timedelta(minutes=i) for i in range(n)], "device_id": [device] * n,
                     "temp": [float(i) for i in range(n)]}, schema=SCHEMA)


def latest_everywhere(root, reference):
    """The series `latest` returns through the package, the CLI and the reference, and those SQL sees."""
    lake = timelake.Lake(str(root))
    package = sorted(lake.latest("t").column("device_id").to_pylist())
    p = run("latest", "t", "--lake", root, "--json")
    assert p.returncode == 0, p.stderr
    cli = sorted(json.loads(line)["device_id"] for line in p.stdout.decode().splitlines())
    ref = reference(f"""
        import json, timelake
        print(json.dumps(sorted(timelake.Lake({str(root)!r}).latest("t").column("device_id").to_pylist())))
    """)
    sql = sorted(lake.sql("SELECT DISTINCT device_id FROM t").column("device_id").to_pylist())
    return package, cli, ref, sql


@pytest.mark.parametrize("inline", [True, False])
def test_latest_forgets_series_that_retention_dropped(tmp_path, reference, inline):
    root = tmp_path / "lake"
    lake = timelake.Lake(str(root))
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["device_id"], retention="5d")
    t.append(rows("fresh", 0), maintain=False)
    t.append(rows("mixed", 20), maintain=False)  # its newest row is recent: it stays
    t.append(rows("mixed", 1), maintain=False)
    t.append(rows("old", 30), maintain=inline)
    if not inline:
        assert latest_everywhere(root, reference)[0] == ["fresh", "mixed", "old"]
        assert t.maintain()["partitions_dropped"] >= 2
    for seen in latest_everywhere(root, reference):
        assert seen == ["fresh", "mixed"]
    # The series kept their newest rows.
    newest = {r["device_id"]: r["time"] for r in lake.latest("t").to_pylist()}
    assert newest["mixed"] == NOW - dt.timedelta(days=1) + dt.timedelta(minutes=2)
    # Later appends merge with the smaller index; compaction keeps it whole.
    t.append(rows("late", 0), maintain=False)
    t.maintain(retention=False, expire=False)
    for seen in latest_everywhere(root, reference):
        assert seen == ["fresh", "late", "mixed"]
