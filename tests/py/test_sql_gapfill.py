"""Gap filling (time_bucket_gapfill, locf, interpolate: TimescaleDB's, which
the reference lacks) against a model in Python computed from the table's
rows: every bucket from start to finish for every series with rows, NULL
aggregates in the filled ones, locf carrying the last row's value (a NULL
too, unless treat_null_as_missing), interpolate drawing the straight line
between the nearest rows with a value."""

import datetime as dt
import math
import random

import pyarrow as pa
import pytest

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()),
                    ("temp", pa.float64())])
HOUR = dt.timedelta(hours=1)


@pytest.fixture
def gappy(lake):
    """Three devices over two days with hours missing, and NULL readings."""
    rng = random.Random(11)
    rows = []
    for d in ("a", "b", "c"):
        for h in range(48):
            if rng.random() < 0.45:  # a gap
                continue
            for _ in range(rng.randrange(1, 4)):
                t = T0 + h * HOUR + dt.timedelta(seconds=rng.randrange(3600))
                rows.append((t, d, None if rng.random() < 0.1 else round(rng.uniform(0, 30), 2)))
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"], chunk="hour")
    for part in (rows[: len(rows) // 2], rows[len(rows) // 2:]):
        t.append(pa.table({"time": [r[0] for r in part], "device_id": [r[1] for r in part],
                           "temp": [r[2] for r in part]}, schema=SCHEMA))
    return rows


def floor(t, width):
    return T0 + ((t - T0) // width) * width


def model(rows, width, start, finish, devices=None, skip_nulls=False, prev=None):
    """{(bucket, device): (avg, count, locf, interpolate)} over rows in [start, finish)."""
    groups = {}
    for t, d, v in rows:
        if start <= t < finish and (devices is None or d in devices):
            groups.setdefault((floor(t, width), d), []).append(v)
    out = {}
    buckets = []
    b = floor(start, width)
    while b < finish:
        buckets.append(b)
        b += width
    for d in sorted({d for _, d in groups}):
        real = {}
        for b in buckets:
            vals = groups.get((b, d))
            if vals is not None:
                known = [v for v in vals if v is not None]
                real[b] = (sum(known) / len(known) if known else None, len(vals))
        last = prev
        for i, b in enumerate(buckets):
            avg, n = real.get(b, (None, None))
            if b in real:
                if avg is not None or not skip_nulls:
                    last = avg
                locf = avg if avg is not None or not skip_nulls else last
            else:
                locf = last
            if b in real:
                interp = avg
            else:
                before = [(x, real[x][0]) for x in buckets[:i] if x in real and real[x][0] is not None]
                after = [(x, real[x][0]) for x in buckets[i + 1:] if x in real and real[x][0] is not None]
                p = before[-1] if before else None
                q = after[0] if after else None
                interp = None
                if p and q:
                    interp = p[1] + (q[1] - p[1]) * (b - p[0]) / (q[0] - p[0])
            out[(b, d)] = (avg, n, locf, interp)
    return out


def close(a, b):
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def check(got, want):
    assert len(got) == len(want), (len(got), len(want))
    for row in got:
        key = (row["b"], row["device_id"])
        assert key in want, key
        w = want[key]
        assert close(row["a"], w[0]) and row["n"] == w[1], (key, row, w)
        assert close(row["l"], w[2]), (key, row, w)
        assert close(row["i"], w[3]), (key, row, w)


QUERY = ("SELECT time_bucket_gapfill(INTERVAL '{w}', time) AS b, device_id, avg(temp) AS a, count(*) AS n, "
         "locf(avg(temp){locf_args}) AS l, interpolate(avg(temp)) AS i FROM iot.readings "
         "WHERE {where} GROUP BY b, device_id ORDER BY device_id, b")


@pytest.mark.parametrize("width", [HOUR, 3 * HOUR, dt.timedelta(minutes=40)])
def test_buckets_locf_and_interpolate_match_the_model(lake, gappy, width):
    start, finish = T0 + 2 * HOUR, T0 + 40 * HOUR
    w = f"{int(width.total_seconds())} seconds"
    where = f"time >= '{start.isoformat()}' AND time < '{finish.isoformat()}'"
    got = lake.sql(QUERY.format(w=w, locf_args="", where=where)).to_pylist()
    check(got, model(gappy, width, start, finish))
    # ordered as asked
    assert [(r["device_id"], r["b"]) for r in got] == sorted((r["device_id"], r["b"]) for r in got)


def test_a_width_written_as_a_string_is_an_interval(lake, gappy):
    """time_bucket_gapfill('1 hour', time), as time_bucket and TimescaleDB take it."""
    where = f"time >= '{(T0 + 2 * HOUR).isoformat()}' AND time < '{(T0 + 20 * HOUR).isoformat()}'"
    as_interval = lake.sql(QUERY.format(w="1 hour", locf_args="", where=where)).to_pylist()
    as_string = lake.sql(QUERY.format(w="1 hour", locf_args="", where=where)
                         .replace("INTERVAL '1 hour'", "'1 hour'")).to_pylist()
    assert len(as_interval) == 3 * 18
    assert as_string == as_interval


def test_treat_null_as_missing_and_a_key_restriction(lake, gappy):
    start, finish = T0 + 5 * HOUR, T0 + 30 * HOUR
    where = f"time BETWEEN '{start.isoformat()}' AND '{(finish - dt.timedelta(microseconds=1)).isoformat()}' " \
            "AND device_id IN ('a', 'c')"
    got = lake.sql(QUERY.format(w="1 hour", locf_args=", NULL, true", where=where)).to_pylist()
    check(got, model(gappy, HOUR, start, finish, devices={"a", "c"}, skip_nulls=True))


def test_explicit_range_prev_and_next(lake, gappy):
    """start and finish given: buckets outside the data's range; locf's prev
    and interpolate's prev and next stand in beyond it."""
    q = ("SELECT time_bucket_gapfill(INTERVAL '6 hours', time, '2025-12-31 00:00:00', '2026-01-03 12:00:00') AS b, "
         "locf(max(temp), -1.0) AS l, interpolate(max(temp), (TIMESTAMPTZ '2025-12-30 00:00:00+00', 0.0), "
         "(TIMESTAMPTZ '2026-01-04 00:00:00+00', 100.0)) AS i, count(*) AS n FROM iot.readings "
         "WHERE device_id = 'b' GROUP BY 1 ORDER BY 1")
    got = lake.sql(q).to_pylist()
    buckets = [r["b"] for r in got]
    assert buckets == [dt.datetime(2025, 12, 31, tzinfo=UTC) + k * 6 * HOUR for k in range(14)]
    first = got[0]
    assert first["n"] is None and first["l"] == -1.0  # no data before: prev
    # between (2025-12-30, 0) and the first bucket with data, on a straight line
    data = [r for r in got if r["n"] is not None]
    p, q0 = (dt.datetime(2025, 12, 30, tzinfo=UTC), 0.0), (data[0]["b"], data[0]["i"])
    assert math.isclose(first["i"], p[1] + (q0[1] - p[1]) * ((first["b"] - p[0]) / (q0[0] - p[0])))
    last = got[-1]
    assert last["n"] is None and last["l"] == data[-1]["l"]
    d, n = (data[-1]["b"], data[-1]["i"]), (dt.datetime(2026, 1, 4, tzinfo=UTC), 100.0)
    assert math.isclose(last["i"], d[1] + (n[1] - d[1]) * ((last["b"] - d[0]) / (n[0] - d[0])))


def test_rows_outside_the_range_stay_and_the_where_prunes(lake, gappy):
    stats = {}
    q = ("SELECT time_bucket_gapfill(INTERVAL '1 hour', time, start => '2026-01-01 10:00:00', "
         "finish => '2026-01-01 12:00:00') AS b, count(*) AS n FROM iot.readings "
         "WHERE time >= '2026-01-01 08:00:00' AND time < '2026-01-01 14:00:00' GROUP BY b ORDER BY b")
    got = lake.sql(q, stats=stats).to_pylist()
    have = {floor(t, HOUR) for t, _, _ in gappy if T0 + 8 * HOUR <= t < T0 + 14 * HOUR}
    assert [r["b"] for r in got] == sorted(have | {T0 + 10 * HOUR, T0 + 11 * HOUR})
    assert stats["files_read"] < stats["files_total"]  # hourly files outside the WHERE are never read


def test_in_a_subquery_and_a_cte(lake, gappy):
    inner = ("SELECT time_bucket_gapfill(INTERVAL '1 hour', time) AS b, device_id, locf(avg(temp)) AS l "
             "FROM iot.readings WHERE time >= '2026-01-01' AND time < '2026-01-02' GROUP BY 1, 2")
    a = lake.sql(f"SELECT device_id, count(*) AS n FROM ({inner}) GROUP BY 1 ORDER BY 1").to_pylist()
    b = lake.sql(f"WITH g AS ({inner}) SELECT device_id, count(*) AS n FROM g GROUP BY 1 ORDER BY 1").to_pylist()
    assert a == b == [{"device_id": d, "n": 24} for d in ("a", "b", "c")]


@pytest.mark.parametrize("query,message", [
    ("SELECT locf(avg(temp)) FROM iot.readings", r"locf\(\) works only in a SELECT grouped by time_bucket_gapfill"),
    ("SELECT time_bucket_gapfill(INTERVAL '1 hour', time) AS b, count(*) FROM iot.readings GROUP BY b",
     "needs the range to fill"),
    ("SELECT time_bucket_gapfill(INTERVAL '1 hour', time) AS b, locf(avg(temp)) + 1 FROM iot.readings "
     "WHERE time >= '2026-01-01' AND time < '2026-01-02' GROUP BY b", "outermost call"),
    ("SELECT time_bucket_gapfill(INTERVAL '1 hour', time) AS b, count(*) FROM iot.readings "
     "WHERE time >= '2026-01-01' AND time < '2026-01-02' GROUP BY ALL", "plain GROUP BY"),
    ("SELECT time_bucket_gapfill(INTERVAL '1 hour', time) AS b, count(*) FROM iot.readings "
     "WHERE time >= '2026-01-01' AND time < '2026-01-02'", "must GROUP BY it"),
])
def test_misuse_is_named(lake, gappy, query, message):
    with pytest.raises(RuntimeError, match=message):
        lake.sql(query)
