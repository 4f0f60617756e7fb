"""The version-check-interval setting (src/table/version_cache.h): a query
uses a table version this process loaded or checked within the interval
without asking the store, so it may miss other processes' commits for that
long; this process's own commits are seen at once, and 0s checks every time.
The reference (another process) commits; intervals of an hour keep the tests
free of timing."""

import datetime as dt

import pyarrow as pa
import pytest

import tlc
from fault_proxy import FaultProxy
from store_servers import server_fixture

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("temp", pa.float64())])
HOUR = {"timelake.version-check-interval": "1 hour"}

s3 = pytest.fixture(scope="module")(server_fixture("s3"))


def readings(n, start=T0):
    return pa.table({"time": [start + dt.timedelta(seconds=i) for i in range(n)], "device": ["a"] * n,
                     "temp": [float(i) for i in range(n)]}, schema=SCHEMA)


def count(lake, settings=None):
    return lake.query("SELECT count(*) AS n FROM iot.t", settings=settings).column("n")[0].as_py()


def append_elsewhere(reference, location, n, storage_options=None):
    """n new rows appended by another process (the reference)."""
    reference(f"""
        import datetime as dt, json, pyarrow as pa, timelake
        t = timelake.Lake({str(location)!r}, storage_options={storage_options!r}).table("iot.t")
        start = dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc) + dt.timedelta(days=t.version)
        t.append(pa.table({{"time": [start + dt.timedelta(seconds=i) for i in range({n})],
                            "device": ["b"] * {n}, "temp": [1.0] * {n}}}))
        print(json.dumps(t.version))
        """)


def test_other_processes_commits_wait_for_the_interval(lake, lake_dir, reference):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"], properties=HOUR)
    t.append(readings(10))
    assert count(lake) == 10
    append_elsewhere(reference, lake_dir, 5)
    assert count(lake) == 10  # the version checked a moment ago is used: no request
    assert count(lake, {"version_check_interval": "0s"}) == 15  # a session that checks every time
    assert count(lake) == 15  # that check is noted too
    assert count(tlc.Lake(lake_dir)) == 15  # another process would have asked as well


def test_this_process_s_commits_are_seen_at_once(lake, lake_dir):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"], properties=HOUR)
    assert count(lake) == 0
    other_lake = tlc.Lake(lake_dir)  # another handle of the same lake in this process
    other_lake.table("iot.t").append(readings(7))
    assert count(lake) == 7
    t.set_properties({"owner.team": "a"})  # a metadata commit too
    t.append(readings(3, start=T0 + dt.timedelta(days=1)))
    assert count(lake) == 10


def test_zero_checks_every_query(lake, lake_dir, reference):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"],
                          properties={"timelake.version_check_interval": "0s"})
    t.append(readings(4))
    assert count(lake) == 4
    append_elsewhere(reference, lake_dir, 6)
    assert count(lake) == 10
    # The session's interval wins over the table's.
    append_elsewhere(reference, lake_dir, 1)
    assert count(lake, {"version-check-interval": "1h"}) == 10
    assert count(lake) == 11


def test_a_dropped_table_is_forgotten(lake):
    t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"], properties=HOUR)
    t.append(readings(4))
    assert count(lake) == 4
    t.close()
    lake.drop_table("iot.t")
    with pytest.raises(KeyError):
        count(lake)
    lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"], properties=HOUR)
    assert count(lake) == 0


def metadata_requests(proxy, since):
    return [r for r in proxy.log[since:] if "/metadata/" in r[3] or "list-type" in r[3]]


def test_no_request_within_the_interval_on_s3(s3, reference):
    url = s3.url()
    with FaultProxy(s3.endpoint) as proxy:
        lake = tlc.Lake(url, s3.through(proxy))
        t = lake.create_table("iot.t", SCHEMA, time_column="time", series_key=["device"], properties=HOUR)
        t.append(readings(20))
        assert count(lake) == 20
        mark = len(proxy.log)
        assert count(lake) == 20
        assert metadata_requests(proxy, mark) == []
        append_elsewhere(reference, url, 5, s3.options)
        mark = len(proxy.log)
        assert count(lake) == 20 and metadata_requests(proxy, mark) == []
        assert count(lake, {"version_check_interval": "0s"}) == 25
        assert metadata_requests(proxy, mark) != []
