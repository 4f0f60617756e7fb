"""m4 and time_weighted_mean rollups (src/query/rollup_*.c, sql_route.c): stored
as the reference stores them (m4 -> list<struct<time, value>>, the
time-weighted mean -> its mergeable state), computed on CREATE, REFRESH,
maintenance (a coarser rollup from a finer one) and the inline refresh, each
implementation refreshing the other's, and routed.

The oracle is plain Python over the raw rows (read back after dedup): the M4
points (first and last by time then value, the smallest and the largest
value at their earliest time) and the time-weighted state (readings at one
time are one, the largest value; forward fill or linear between readings).
M4 points compare exactly. The state's area and the mean compare within a
relative 1e-9: a stored state is summed reading by reading, but a coarser
bucket merges finer states (area_a + gap + area_b) and a tie on time
corrects an interval already added, so the same sum is formed in another
order."""

import datetime as dt
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from conftest import ROOT, table_files

PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("site", pa.string()),
                    ("temp", pa.float64()), ("k", pa.int64())])
# The reference stores m4 and the means of double columns only.
AGGS = ("m4(time, temp) AS m, time_weighted_mean(time, temp) AS tw, "
        "time_weighted_mean(time, temp, 'linear') AS tl, count(*) AS n")

# Random rows, shared with the reference's scripts: times on a one-minute
# grid (ties on time between the sites of a device), NULL temps, NULL
# devices, three days (three partitions of a chunk = day table).
GEN = """
def gen(seed, n, start_min=0, minutes=3 * 24 * 60):
    import random, datetime as dt, pyarrow as pa
    rnd = random.Random(seed)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    return {"time": [t0 + dt.timedelta(minutes=start_min + rnd.randrange(minutes)) for _ in range(n)],
            "device": [rnd.choice(["a", "b", None]) for _ in range(n)],
            "site": [rnd.choice(["x", "y", "z"]) for _ in range(n)],
            "temp": [None if rnd.random() < 0.15 else round(rnd.uniform(-20, 40), 2) for _ in range(n)],
            "k": [None if rnd.random() < 0.1 else rnd.randrange(-50, 50) for _ in range(n)]}
"""
exec(GEN)


def batch(seed, n, **kw):
    return pa.table(gen(seed, n, **kw), schema=SCHEMA)  # noqa: F821 (defined by GEN)


def us(t):
    return (t - EPOCH) // dt.timedelta(microseconds=1)


def m4_points(pts):
    if not pts:
        return []
    chosen = {min(pts), max(pts), min(pts, key=lambda p: (p[1], p[0])), min(pts, key=lambda p: (-p[1], p[0]))}
    return sorted(chosen)


def twm_state(pts, linear):
    """(first_time, first_value, first_span, last_time, last_value, last_span, area) or None."""
    readings = {}
    for t, v in pts:
        readings[t] = max(v, readings.get(t, v))
    ts = sorted(readings)
    if not ts:
        return None
    area = 0.0
    for a, b in zip(ts, ts[1:]):
        va, vb = readings[a], readings[b]
        area += (va + vb) / 2 * (b - a) if linear else va * (b - a)
    first_span = ts[1] - ts[0] if len(ts) > 1 else 0
    last_span = ts[-1] - ts[-2] if len(ts) > 1 else 0
    return (ts[0], readings[ts[0]], first_span, ts[-1], readings[ts[-1]], last_span, area)


def mean_of(state):
    if state is None:
        return None
    return state[1] if state[0] == state[3] else state[6] / (state[3] - state[0])


def oracle(rows, keys, width_s, col="temp"):
    """{(keys..., bucket µs): {"m", "tw", "tl", "n"}} from the raw rows."""
    w = width_s * 1_000_000
    groups = {}
    for r in rows:
        t = us(r["time"])
        g = groups.setdefault(tuple(r[k] for k in keys) + (t - t % w,), [])
        g.append((t, r[col]))
    out = {}
    for key, g in groups.items():
        pts = [(t, float(v)) for t, v in g if v is not None]
        out[key] = {"m": m4_points(pts), "tw": twm_state(pts, False), "tl": twm_state(pts, True), "n": len(g)}
    return out


def state_of(stored):
    assert stored is not None and len(stored) <= 1, stored
    if not stored:
        return None
    s = stored[0]
    return (s["first_time"], s["first_value"], s["first_span"], s["last_time"], s["last_value"], s["last_span"],
            s["area"])


def points_of(stored):
    return [(us(p["time"]), p["value"]) for p in stored]


def stored(lake, name, keys, cols=("m", "tw", "tl", "n")):
    out = {}
    for r in lake.sql(f"SELECT * FROM {name}").to_pylist():
        v = {}
        for c in cols:
            v[c] = points_of(r[c]) if c.startswith("m") else state_of(r[c]) if c.startswith("t") else r[c]
        out[tuple(r[k] for k in keys) + (us(r["bucket"]),)] = v
    return out


def same_state(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a[:6] == b[:6] and math.isclose(a[6], b[6], rel_tol=1e-9, abs_tol=1e-6)


def assert_equal(got, want, cols=("m", "tw", "tl", "n")):
    assert sorted(got, key=str) == sorted(want, key=str)
    for key in want:
        for c in cols:
            g, w = got[key][c], want[key][c]
            ok = same_state(g, w) if c.startswith("t") else g == w
            assert ok, (key, c, g, w)


def raw_rows(lake):
    return lake.sql("SELECT time, device, site, temp, k FROM iot.raw").to_pylist()


def make_raw(path, seed=1, n=2000):
    lake = timelake.Lake(str(path))
    t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"], chunk="day")
    t.append(batch(seed, n), maintain=False)
    return lake, t


def create(lake, name="iot.h", width="1 hour", keys=("device",), aggs=AGGS, with_=""):
    k = ", ".join(keys)
    return lake.sql(f"CREATE MATERIALIZED ROLLUP {name} AS SELECT {k}, time_bucket(INTERVAL '{width}', time) "
                    f"AS bucket, {aggs} FROM iot.raw GROUP BY {k}, bucket {with_}").to_pylist()


def metadata(path):
    """The table's newest metadata (by its version file name)."""
    files = sorted(Path(path, "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    return json.loads(files[-1].read_text())


def current_fields(md):
    return next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"])["fields"]


def test_stored_as_the_reference_stores_them(tmp_path, reference):
    """Same rows, same CREATE: the rollup's Iceberg schema (names, types,
    field ids and order, required flags), its properties and its values are
    the reference's."""
    stmt = ("CREATE MATERIALIZED ROLLUP iot.h AS SELECT device, site, time_bucket(INTERVAL '1 hour', time) AS bucket, "
            "m4(time, temp), time_weighted_mean(time, temp), time_weighted_mean(time, temp, 'ffill') AS tf, "
            "time_weighted_mean(time, temp, 'linear') AS tl FROM iot.raw GROUP BY device, site, bucket")
    reference(GEN + f"""
import json, pyarrow as pa, timelake
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("site", pa.string()),
                    ("temp", pa.float64()), ("k", pa.int64())])
lake = timelake.Lake({str(tmp_path / "ref")!r})
t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"], chunk="day")
t.append(pa.table(gen(1, 1500), schema=SCHEMA), maintain=False)
print(json.dumps(lake.sql({stmt!r}).to_pylist()))
""")
    ours, _ = make_raw(tmp_path / "ours", n=1500)
    ours.sql(stmt)
    mine, theirs = metadata(tmp_path / "ours" / "iot" / "h"), metadata(tmp_path / "ref" / "iot" / "h")
    assert current_fields(mine) == current_fields(theirs)
    props = ["timelake.rollup-source", "timelake.rollup-bucket", "timelake.rollup-aggregates",
             "timelake.time-column", "timelake.series-key"]
    assert {p: mine["properties"].get(p) for p in props} == {p: theirs["properties"].get(p) for p in props}
    aggs = json.loads(mine["properties"]["timelake.rollup-aggregates"])
    assert aggs == [{"name": "m4_temp", "function": "m4", "column": "temp"},
                    {"name": "time_weighted_mean_temp", "function": "time_weighted_mean", "column": "temp"},
                    {"name": "tf", "function": "time_weighted_mean", "column": "temp"},
                    {"name": "tl", "function": "time_weighted_mean:linear", "column": "temp"}]
    cols = ("m4_temp", "time_weighted_mean_temp", "tf", "tl")
    keys = ["device", "site"]
    want = oracle(raw_rows(ours), keys, 3600)
    for c, o in zip(cols, ("m", "tw", "tw", "tl")):
        for key in want:
            want[key][c] = want[key][o]
    ref_lake = timelake.Lake(str(tmp_path / "ref"))
    assert_equal(stored(ours, "iot.h", keys, cols), want, cols)
    assert_equal(stored(ref_lake, "iot.h", keys, cols), want, cols)


def test_refresh_maintenance_and_inline_refresh(tmp_path):
    """Incremental REFRESH, maintenance computing the hourly rollup from the
    15-minute one, the inline refresh after an append; an integer column
    too (stored as doubles)."""
    lake, t = make_raw(tmp_path)
    aggs = AGGS + ", m4(time, k) AS mk, time_weighted_mean(time, k) AS tk"
    cols = ("m", "tw", "tl", "n", "mk", "tk")

    def want(keys, width_s):
        w = oracle(raw_rows(lake), keys, width_s)
        wk = oracle(raw_rows(lake), keys, width_s, col="k")
        for key in w:
            w[key]["mk"], w[key]["tk"] = wk[key]["m"], wk[key]["tw"]
        return w

    keys = ["device", "site"]
    create(lake, "iot.q", "15 minutes", keys=keys, aggs=aggs)
    create(lake, "iot.h", "1 hour", keys=keys, aggs=aggs)
    assert_equal(stored(lake, "iot.q", keys, cols), want(keys, 900), cols)
    assert_equal(stored(lake, "iot.h", keys, cols), want(keys, 3600), cols)
    # Late rows in old buckets and rows after them.
    t.append(batch(2, 300), maintain=False)
    t.append(batch(3, 200, start_min=3 * 24 * 60, minutes=600), maintain=False)
    rows = lake.sql("REFRESH MATERIALIZED ROLLUP iot.q").to_pylist()[0]["rows"]
    assert 0 < rows < len(want(keys, 900))
    assert_equal(stored(lake, "iot.q", keys, cols), want(keys, 900), cols)
    t.append(batch(4, 100, start_min=600, minutes=300), maintain=False)
    report = t.maintain(rollups=True)
    assert report["rollups_refreshed"] == 2, report
    assert_equal(stored(lake, "iot.q", keys, cols), want(keys, 900), cols)
    assert_equal(stored(lake, "iot.h", keys, cols), want(keys, 3600), cols)
    # The hourly rollup is merged from the 15-minute one (m4 points, states
    # of the same keys): a point put into the 15-minute rollup by hand shows
    # in the hourly one.
    q = lake.table("iot.q")
    late = T0 + dt.timedelta(days=4, minutes=7)
    t.append(pa.table({"time": [late], "device": ["a"], "site": ["x"], "temp": [1.0], "k": [1]}, schema=SCHEMA),
             maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.q")
    fake = lake.sql(f"SELECT device, site, bucket, n, tw, tl, tk, [{{'time': TIMESTAMPTZ '{late:%Y-%m-%d %H:%M:%S+00}', "
                    "'value': 999.0}] AS m, mk FROM iot.q WHERE device = 'a' AND site = 'x' "
                    f"AND bucket = TIMESTAMPTZ '{late:%Y-%m-%d %H:00:00+00}'")
    assert fake.num_rows == 1
    q.append(fake.cast(pa.schema([q.schema.field(c) for c in fake.column_names])), maintain=False)
    lake.sql("REFRESH MATERIALIZED ROLLUP iot.h")
    got = lake.sql(f"SELECT m FROM iot.h WHERE device = 'a' AND site = 'x' AND bucket = TIMESTAMPTZ '{late:%Y-%m-%d %H:00:00+00}'")
    assert points_of(got.to_pylist()[0]["m"]) == [(us(late), 999.0)]
    # Inline: once the interval has passed, an append refreshes it.
    create(lake, "iot.d", "1 day", keys=keys, aggs=aggs, with_="WITH (refresh_interval = '1s')")
    created = time.time()
    while time.time() < created + 1.2:  # the clock must pass the interval; nothing else to wait for
        time.sleep(0.05)
    report = t.append(batch(5, 50, start_min=5 * 24 * 60, minutes=60), maintain=True)
    assert report["maintenance"]["rollups_refreshed"] >= 1, report
    assert_equal(stored(lake, "iot.d", keys, cols), want(keys, 86400), cols)


M4_ONLY = "m4(time, temp) AS m, count(*) AS n"


def check_all(lake):
    rows = raw_rows(lake)
    for name, width_s in (("iot.q", 900), ("iot.h", 3600)):
        assert_equal(stored(lake, name, ["device", "site"]), oracle(rows, ["device", "site"], width_s))
    assert_equal(stored(lake, "iot.m", ["device"], ("m", "n")), oracle(rows, ["device"], 3600), ("m", "n"))


def test_each_implementation_refreshes_the_others(tmp_path, reference):
    """Rollups of either implementation, refreshed by the other: the
    time-weighted states per series (the reference's time_weighted_mean
    refuses readings of several series at once), m4 per device (several
    series, ties on time)."""
    setup = GEN + """
import json, pyarrow as pa, timelake
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device", pa.string()), ("site", pa.string()),
                    ("temp", pa.float64()), ("k", pa.int64())])
"""
    # The reference creates; we append and refresh (REFRESH and maintenance).
    reference(setup + f"""
lake = timelake.Lake({str(tmp_path / "ref")!r})
t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"], chunk="day")
t.append(pa.table(gen(1, 1500), schema=SCHEMA), maintain=False)
for name, width in (("iot.q", "15 minutes"), ("iot.h", "1 hour")):
    lake.sql(f"CREATE MATERIALIZED ROLLUP {{name}} AS SELECT device, site, time_bucket(INTERVAL '{{width}}', time) "
             "AS bucket, {AGGS} FROM iot.raw GROUP BY device, site, bucket")
lake.sql("CREATE MATERIALIZED ROLLUP iot.m AS SELECT device, time_bucket(INTERVAL '1 hour', time) AS bucket, "
         "{M4_ONLY} FROM iot.raw GROUP BY device, bucket")
print(1)
""")
    lake = timelake.Lake(str(tmp_path / "ref"))
    lake.table("iot.raw").append(batch(2, 200), maintain=False)
    assert lake.sql("REFRESH MATERIALIZED ROLLUP iot.q").to_pylist()[0]["rows"] > 0
    lake.table("iot.raw").append(batch(3, 100, start_min=4000, minutes=900), maintain=False)
    assert lake.table("iot.raw").maintain(rollups=True)["rollups_refreshed"] == 3
    check_all(lake)
    # We create; the reference appends and refreshes.
    ours, t = make_raw(tmp_path / "ours", n=1500)
    create(ours, "iot.q", "15 minutes", keys=("device", "site"))
    create(ours, "iot.h", "1 hour", keys=("device", "site"))
    create(ours, "iot.m", "1 hour", aggs=M4_ONLY)
    out = reference(setup + f"""
lake = timelake.Lake({str(tmp_path / "ours")!r})
lake.table("iot.raw").append(pa.table(gen(2, 200), schema=SCHEMA), maintain=False)
refreshed = [lake.sql(f"REFRESH MATERIALIZED ROLLUP {{n}}").to_pylist()[0]["rows"] for n in ("iot.q", "iot.h", "iot.m")]
read = lake.sql("SELECT device, site, CAST(bucket AS VARCHAR) AS b, tw, tl FROM iot.h").to_pylist()
print(json.dumps([refreshed, read]))
""")
    refreshed, read = out
    assert all(n > 0 for n in refreshed), out
    check_all(ours)
    # The reference reads the states in our files as we do.
    mine = stored(ours, "iot.h", ["device", "site"])
    assert len(read) == len(mine)
    by_key = {(r["device"], r["site"], us(r["bucket"])): r for r in ours.sql("SELECT * FROM iot.h").to_pylist()}
    theirs = {}
    for r in read:
        b = dt.datetime.fromisoformat(r["b"])
        b = b if b.tzinfo else b.replace(tzinfo=UTC)
        theirs[(r["device"], r["site"], us(b))] = (state_of(r["tw"]), state_of(r["tl"]))
    assert theirs == {k: (state_of(v["tw"]), state_of(v["tl"])) for k, v in by_key.items()}
    assert ours.sql("REFRESH MATERIALIZED ROLLUP iot.h").to_pylist()[0]["rows"] == 0


def test_bad_aggregates_are_refused_and_change_nothing(tmp_path):
    lake, _ = make_raw(tmp_path, n=200)
    before = table_files(tmp_path)
    props = metadata(tmp_path / "iot" / "raw")["properties"]
    for agg, match in [("m4(time, site)", "m4\\(time, site\\) needs a numeric column.*site is not one"),
                       ("time_weighted_mean(time, device, 'linear')", "needs a numeric column"),
                       ("time_weighted_mean(time, temp, 'cubic')", "isn't an aggregate a rollup stores"),
                       ("m4(k, temp)", "isn't an aggregate a rollup stores")]:
        with pytest.raises(ValueError, match=match):
            create(lake, aggs=f"{agg} AS x")
    assert "iot.h" not in lake.tables()
    assert table_files(tmp_path) == before
    assert metadata(tmp_path / "iot" / "raw")["properties"] == props


def routed(lake, q):
    return any(r["plan_type"] == "timelake_rollup" for r in lake.sql("EXPLAIN " + q).to_pylist())


def answers(lake, q, on):
    lake.sql(f"SET timelake.rollup_routing = {'true' if on else 'false'}")
    try:
        rows = lake.sql(q).to_pylist()
        return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r.values()))
    finally:
        lake.sql("SET timelake.rollup_routing = true")


def same_rows(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for c in x:
            if isinstance(x[c], float) and isinstance(y[c], float):
                assert math.isclose(x[c], y[c], rel_tol=1e-9, abs_tol=1e-9), (c, x, y)
            else:
                assert x[c] == y[c], (c, x, y)


def test_routing(tmp_path):
    """m4 routes at multiples of the width and subsets of the keys, the
    time-weighted means at multiples and the rollup's own keys (as the
    reference's EXPLAIN shows it routing both); at fewer keys the states of
    several series overlap in time and cannot merge, so that query reads raw
    rows, and its answer is still the raw one. Late rows make some buckets
    dirty: read from raw and merged with the clean buckets' states."""
    lake = timelake.Lake(str(tmp_path))
    t = lake.create_table("iot.raw", SCHEMA, time_column="time", series_key=["device", "site"], chunk="day")
    # Rows enough that reading the rollup's states costs fewer bytes than
    # the raw rows for most queries (routing's cost rule, scan_cost.h).
    for day in range(3):
        t.append(batch(10 + day, 30000, start_min=day * 1440, minutes=1440), maintain=False)
    create(lake, "iot.q", "30 minutes", keys=("device", "site"),
           aggs=AGGS + ", m4(time, k) AS mk, time_weighted_mean(time, k, 'linear') AS tk")
    t.append(batch(20, 30, start_min=2 * 1440 + 100, minutes=200), maintain=False)  # dirty buckets
    where = ["", " WHERE time >= '2026-01-01 05:07:00Z' AND time < '2026-01-02 20:00:00Z'",
             " WHERE device IS NULL", " WHERE site = 'y'"]
    routed_q = [f"SELECT {k}time_bucket(INTERVAL '{w}', time) AS b, {agg} FROM iot.raw{wh} GROUP BY {k}b"
                for w in ("30 minutes", "1 hour", "1 day")
                for k in ("device, site, ", "site, device, ")
                for agg in ("m4(time, temp)", "time_weighted_mean(time, temp) AS x, count(*)",
                            "time_weighted_mean(time, temp, 'linear'), m4(time, k) AS mk",
                            "time_weighted_mean(time, k, 'LINEAR') AS y, time_weighted_mean(time, temp, 'ffill')")
                for wh in where]
    routed_q += [f"SELECT {k}time_bucket(INTERVAL '{w}', time) AS b, m4(time, temp) AS m, count(*) FROM iot.raw "
                 f"GROUP BY {k}b" for w in ("30 minutes", "2 hours") for k in ("", "device, ", "site, ")]
    # GROUP BY ALL, as the reference routes it.
    routed_q += [f"SELECT device, site, time_bucket(INTERVAL '{w}', time) AS b, m4(time, temp), "
                 "time_weighted_mean(time, temp, 'linear') AS l FROM iot.raw GROUP BY ALL" for w in ("30 minutes", "1 day")]
    raw_only = [f"SELECT {k}time_bucket(INTERVAL '1 hour', time) AS b, time_weighted_mean(time, temp{m}) FROM iot.raw "
                f"GROUP BY {k}b" for k in ("", "device, ") for m in ("", ", 'linear'")]
    raw_only += ["SELECT device, site, time_bucket(INTERVAL '1 hour', time) AS b, time_weighted_mean(time, k) "
                 "FROM iot.raw GROUP BY device, site, b",  # the rollup keeps the linear state of k only
                 "SELECT device, site, time_bucket(INTERVAL '20 minutes', time) AS b, m4(time, temp) "
                 "FROM iot.raw GROUP BY device, site, b",
                 "SELECT upper(site) AS s, device, time_bucket(INTERVAL '1 hour', time) AS b, m4(time, temp) "
                 "FROM iot.raw GROUP BY ALL"]  # a grouping key that is no column
    # The raw answers (routing off) do not change with the refresh, which
    # writes the rollup only: each is computed once and compared with the
    # routed answer before and after it.
    raw_answer = {}

    def raw_of(q):
        if q not in raw_answer:
            raw_answer[q] = answers(lake, q, False)
        return raw_answer[q]

    for refreshed in (False, True):
        if refreshed:
            lake.sql("REFRESH MATERIALIZED ROLLUP iot.q")
        # Whether each routes is the cost rule's (scan_cost.h): here the raw
        # rows are compact and the rollup's m4 and time-weighted states are
        # not, so some read raw data; the answers match either way.
        n_routed = 0
        for q in routed_q:
            n_routed += routed(lake, q)
            same_rows(answers(lake, q, True), raw_of(q))
        print("ROUTED", n_routed, len(routed_q))
        assert n_routed >= len(routed_q) // 2, n_routed
        for q in raw_only:
            assert not routed(lake, q), q
        same_rows(answers(lake, raw_only[-1], True), raw_of(raw_only[-1]))
    # The raw answers at fewer keys, against the oracle.
    rows = raw_rows(lake)
    for q, keys in ((raw_only[0], []), (raw_only[2], ["device"])):
        want = oracle(rows, keys, 3600)
        got = {tuple(r[k] for k in keys) + (us(r["b"]),): list(r.values())[-1] for r in lake.sql(q).to_pylist()}
        assert got.keys() == want.keys()
        for key, v in want.items():
            w = mean_of(v["tw"])
            assert (got[key] is None and w is None) or math.isclose(got[key], w, rel_tol=1e-9), (key, got[key], w)
    # A time-weighted rollup of fewer keys than the series key would hold the
    # readings of several series in one state: refused, whatever the data,
    # before anything is written (the reference fails when the series overlap
    # in time, leaving the rollup's metadata behind).
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    for keys, aggs in ((("device",), "time_weighted_mean(time, temp) AS tw"),
                       (("site",), "count(*), time_weighted_mean(time, temp, 'linear') AS tl"),
                       ((), "time_weighted_mean(time, k)")):
        with pytest.raises(RuntimeError) as e:
            lake.sql(f"CREATE MATERIALIZED ROLLUP iot.dv AS SELECT {''.join(k + ', ' for k in keys)}"
                     f"time_bucket(INTERVAL '1 hour', time) AS bucket, {aggs} FROM iot.raw "
                     f"GROUP BY {''.join(k + ', ' for k in keys)}bucket")
        missing = ", ".join(k for k in ("device", "site") if k not in keys)
        assert "would mix the readings of several series" in str(e.value), e.value
        assert f"add {missing} to the SELECT and GROUP BY" in str(e.value), e.value
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == before
    # m4 keeps the points of any mix of series.
    assert create(lake, "iot.dv", "1 hour", keys=("site",), aggs="m4(time, temp) AS m")[0]["rows"] > 0
