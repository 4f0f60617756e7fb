"""The lake keeps parsed table metadata between queries (table/metadata_cache.h):
a query on an unchanged table does not parse it again, and anything another
handle or process commits -- a new version, or a table dropped and created
again under the same name -- is seen by the very next query."""
import datetime as dt
import subprocess
import sys
import textwrap

import pyarrow as pa

import tlc

SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.string()), ("v", pa.float64())])
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def rows(n, v=1.0, dev="a"):
    return pa.table({"time": [T0 + dt.timedelta(seconds=i) for i in range(n)], "dev": [dev] * n,
                     "v": [v] * n}, schema=SCHEMA)


def count_sum(lake):
    r = lake.sql("SELECT count(*) AS n, sum(v) AS s FROM t").to_pylist()[0]
    return r["n"], r["s"]


def test_commits_of_another_handle_are_seen(lake, lake_dir):
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    t.append(rows(10))
    reader = tlc.Lake(str(lake_dir))
    assert count_sum(reader) == (10, 10.0)
    assert count_sum(reader) == (10, 10.0)  # from the cache: the same answer
    t.append(rows(5, 2.0, dev="b"))
    assert count_sum(reader) == (15, 20.0)
    assert count_sum(reader) == (15, 20.0)


def test_commits_of_another_process_are_seen(lake, lake_dir):
    # Checked on every query: by default a query may use for 1 s the version
    # it checked last (version-check-interval, test_version_check.py).
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"],
                          properties={"timelake.version-check-interval": "0s"})
    t.append(rows(3))
    assert count_sum(lake) == (3, 3.0)
    code = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(tlc.__file__.rsplit('/', 1)[0])!r})
        import datetime as dt, pyarrow as pa, tlc
        s = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.string()), ("v", pa.float64())])
        t = tlc.Lake({str(lake_dir)!r}).table("t")
        t.append(pa.table({{"time": [dt.datetime(2024, 2, 1, tzinfo=dt.timezone.utc)], "dev": ["c"],
                            "v": [40.0]}}, schema=s))
    """)
    subprocess.run([sys.executable, "-c", code], check=True)
    assert count_sum(lake) == (4, 43.0)


def test_table_made_again_under_the_same_name_is_seen(lake, lake_dir):
    """v1 of the new table has the same name, version and length as the old one's."""
    other = tlc.Lake(str(lake_dir))
    lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    assert count_sum(other) == (0, None)
    lake.drop_table("t")
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    t.append(rows(2, 7.0))
    lake.drop_table("t")
    lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    lake.table("t").append(rows(1, 5.0))
    assert count_sum(other) == (1, 5.0)
    lake.drop_table("t")
    lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    assert count_sum(other) == (0, None)


def test_many_tables_and_a_self_join(lake):
    """More tables than the cache keeps, and one table loaded twice by a query."""
    for i in range(20):
        lake.create_table(f"t{i}", SCHEMA, time_column="time", series_key=["dev"]).append(rows(i + 1))
    for _ in range(2):
        for i in range(20):
            assert lake.sql(f"SELECT count(*) AS n FROM t{i}").to_pylist() == [{"n": i + 1}]
    q = "SELECT count(*) AS n FROM t3 a JOIN t3 b USING (time, dev)"
    assert lake.sql(q).to_pylist() == [{"n": 4}]
    assert lake.sql(q).to_pylist() == [{"n": 4}]


def test_a_table_may_be_closed_after_its_lake(lake, lake_dir):
    lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"]).append(rows(2))
    other = tlc.Lake(str(lake_dir))
    first, second = other.table("t"), other.table("t")  # the second from the cache
    first.close()
    third = other.table("t")  # first's metadata, back in the cache
    other.close()
    second.close()
    third.close()
    assert count_sum(lake) == (2, 2.0)
