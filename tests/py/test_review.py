"""Review findings: queries and inputs that once gave wrong answers or
crashed, each checked against an independent oracle (DuckDB over the table's
own Parquet files, deduplicated by the latest write)."""
import datetime as dt
import random

import pyarrow as pa
import pytest

from test_sql import SCHEMA, T0, batch, oracle  # the same readings and oracle


@pytest.fixture
def filled(lake):
    rng = random.Random(11)
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"])
    t.append(batch(rng, 300))
    t.append(batch(rng, 200))
    yield t
    t.close()


def rows(table):
    return sorted(tuple(str(v) for v in r.values()) for r in table.to_pylist())


# The reader's `rn = 1` names another column than the window once the
# subquery or CTE renames its columns: the filter keeps older rows too, so
# the newest-row index must not answer.
RENAMED = [
    "SELECT count(*) FROM (SELECT 1 AS c, row_number() OVER (PARTITION BY device_id ORDER BY time DESC) AS rn "
    "FROM iot.readings) s(rn, x) WHERE rn = 1",
    "WITH r(rn, x) AS (SELECT 1 AS c, row_number() OVER (PARTITION BY device_id ORDER BY time DESC) AS rn "
    "FROM iot.readings) SELECT count(*) FROM r WHERE rn = 1",
    "SELECT count(*) FROM (SELECT site, row_number() OVER (PARTITION BY device_id ORDER BY time DESC) AS rn "
    "FROM iot.readings) s(rn) WHERE rn = 1",
]


@pytest.mark.parametrize("query", RENAMED)
def test_renamed_window_column_is_not_answered_from_the_index(lake, lake_dir, filled, query):
    got = lake.sql(query)
    assert rows(got) == rows(oracle(lake_dir, query)), query


# Column aliases on the lake table itself swap what the names mean: neither
# the pruning filters nor the newest-row shapes may read them as the table's.
ALIASED = [
    "SELECT count(*) FROM iot.readings x(device_id, time) WHERE device_id = TIMESTAMPTZ '2024-03-02 00:00:00+00' "
    "OR device_id > TIMESTAMPTZ '2024-03-01 00:00:00+00'",
    "SELECT count(*) FROM iot.readings x(device_id, time) WHERE time = 'dev-3'",
    "SELECT count(*) FROM iot.readings x(device_id, time) WHERE device_id >= TIMESTAMPTZ '2024-03-02 00:00:00+00'",
    "SELECT count(*) FROM iot.readings x(site, device_id) WHERE device_id = 'dev-3'",
    "SELECT count(*) FROM (SELECT DISTINCT ON (device_id) * FROM iot.readings x(device_id, time) "
    "ORDER BY device_id, time DESC)",
    "SELECT count(*) FROM (SELECT * FROM iot.readings x(device_id, time) QUALIFY row_number() OVER "
    "(PARTITION BY device_id ORDER BY time DESC) = 1)",
]


@pytest.mark.parametrize("query", ALIASED)
def test_column_aliases_on_the_table_are_not_its_columns(lake, lake_dir, filled, query):
    got = lake.sql(query)
    assert rows(got) == rows(oracle(lake_dir, query)), query


# A window in the ORDER BY runs before QUALIFY, over every row: over the
# index alone it would see one row per series and order (and LIMIT) otherwise.
WINDOW_ORDER = [
    "SELECT device_id, time FROM iot.readings QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY time DESC) = 1 "
    "ORDER BY count(*) OVER (PARTITION BY device_id) DESC, device_id LIMIT 2",
    "SELECT device_id, time FROM iot.readings QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY time DESC) = 1 "
    "ORDER BY lag(temp) OVER (PARTITION BY device_id ORDER BY time) NULLS FIRST, device_id LIMIT 3",
]


@pytest.mark.parametrize("query", WINDOW_ORDER)
def test_window_in_order_by_is_not_answered_from_the_index(lake, lake_dir, filled, query):
    got = lake.sql(query)
    assert rows(got) == rows(oracle(lake_dir, query)), query


# DuckDB compares a string key with a number by casting the key: '01' = 1.
# The key's text order ("1" > "01") must not prune files or row groups then.
@pytest.mark.parametrize("cond", ["device_id = 1", "device_id IN (1, 7)", "1 = device_id",
                                  "device_id = 1 + 0"])
def test_string_key_compared_with_a_number_prunes_nothing(lake, lake_dir, cond):
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"])
    for dev in ["01", "5", "07"]:
        t.append(pa.table({"time": [T0, T0 + dt.timedelta(hours=1)], "device_id": [dev, dev],
                           "temp": [1.0, 2.0], "site": [1, 1]}, schema=SCHEMA))
    t.close()
    query = f"SELECT device_id, count(*) AS n FROM iot.readings WHERE {cond} GROUP BY 1"
    got = lake.sql(query)
    want = oracle(lake_dir, query)
    assert want.num_rows > 0
    assert rows(got) == rows(want), query


# Two select-list items named alike: DuckDB renames the second (rn_1), so the
# reader's `rn` is the first one, not the window.
DUPLICATE_NAME = [
    "SELECT count(*) FROM (SELECT site AS rn, row_number() OVER (PARTITION BY device_id ORDER BY time DESC) AS rn "
    "FROM iot.readings) WHERE rn = 1",
    "WITH r AS (SELECT site AS RN, row_number() OVER (PARTITION BY device_id ORDER BY time DESC) AS rn "
    "FROM iot.readings) SELECT count(*) FROM r WHERE rn = 1",
]


@pytest.mark.parametrize("query", DUPLICATE_NAME)
def test_window_alias_shadowed_by_an_earlier_item(lake, lake_dir, filled, query):
    got = lake.sql(query)
    assert rows(got) == rows(oracle(lake_dir, query)), query


@pytest.mark.parametrize("query", [
    "SELECT count(*) FROM (SELECT row_number() OVER (PARTITION BY device_id ORDER BY time DESC) AS rn, site AS rn "
    "FROM iot.readings QUALIFY rn = 1)",
    "SELECT count(*) FROM (SELECT row_number() OVER (PARTITION BY device_id ORDER BY time DESC) AS rn, site AS rn "
    "FROM iot.readings) WHERE rn = 1",
])
def test_window_alias_not_unique(lake, lake_dir, filled, query):
    got = lake.sql(query)
    assert rows(got) == rows(oracle(lake_dir, query)), query


# A sample is drawn from every row: the newest row among sampled rows is most
# often an older row of its series, never what the index holds.
@pytest.mark.parametrize("query", [
    "SELECT DISTINCT ON (device_id) device_id, time FROM iot.readings USING SAMPLE 50 ROWS ORDER BY device_id, time DESC",
    "SELECT device_id, max(time) AS time FROM iot.readings TABLESAMPLE 50 ROWS GROUP BY device_id",
    "SELECT device_id, time FROM iot.readings TABLESAMPLE 50 ROWS "
    "QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY time DESC) = 1",
])
def test_sampled_rows_are_not_the_index(lake, lake_dir, filled, query):
    newest = {(r["device_id"], r["time"]) for r in lake.sql(
        "SELECT device_id, max(time) AS time FROM iot.readings GROUP BY 1").to_pylist()}
    got = {(r["device_id"], r["time"]) for r in lake.sql(query).to_pylist()}
    assert got and not got <= newest, query  # all 7 newest rows in 50 of 496: p < 1e-6
