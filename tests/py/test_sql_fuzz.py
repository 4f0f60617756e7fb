"""Grammar-based fuzzing of lake.sql(): seeded generated queries, valid and
broken, over a dedup table with duplicates and out-of-order times (test_sql's
`filled`). Checks: the process never crashes; a broken query fails with the
documented class (syntax error or unknown column -> RuntimeError, unknown
table -> KeyError) and a message naming the problem; every query that
succeeds returns DuckDB's rows over the table's deduplicated Parquet files
(test_sql's oracle).

A longer run: TL_SQL_FUZZ_SEEDS=200 TL_SQL_FUZZ_QUERIES=200 (from seed
TL_SQL_FUZZ_SEED_BASE)."""
import datetime as dt
import os
import random
import re

import duckdb
import pytest

from test_sql import T0, filled, oracle, rows  # noqa: F401 (filled is a fixture)

_BASE = int(os.environ.get("TL_SQL_FUZZ_SEED_BASE", "0"))
SEEDS = range(_BASE, _BASE + int(os.environ.get("TL_SQL_FUZZ_SEEDS", "2")))
QUERIES = int(os.environ.get("TL_SQL_FUZZ_QUERIES", "40"))

T = "iot.readings"


# ---- Literals ----

def time_value(rng):
    """A time near or inside the data's range, often on a data minute."""
    minutes = rng.randrange(-120, 3 * 24 * 60 + 120)
    t = T0 + dt.timedelta(minutes=minutes)
    if rng.random() < 0.2:
        t += dt.timedelta(microseconds=rng.choice([1, 999999, 123456, 500000]))
    if rng.random() < 0.1:
        t -= dt.timedelta(microseconds=1)
    return t


def time_literal(rng):
    """The same instant written the ways DuckDB reads a time: ISO forms with
    and without zone, 'T', fraction; DATE, TIMESTAMP and TIMESTAMPTZ casts."""
    t = time_value(rng)
    form = rng.randrange(9)
    frac = f".{t.microsecond:06d}" if t.microsecond else ""
    if form == 0:
        return f"'{t:%Y-%m-%d %H:%M:%S}{frac}+00'"
    if form == 1:
        return f"TIMESTAMPTZ '{t:%Y-%m-%dT%H:%M:%S}{frac}Z'"
    if form == 2:  # another zone, the same instant
        off = dt.timedelta(hours=rng.choice([-8, 5, 14]), minutes=rng.choice([0, 30]))
        local = (t + off).replace(tzinfo=None)
        sign, a = ("+", off) if off >= dt.timedelta(0) else ("-", -off)
        hh, mm = divmod(int(a.total_seconds()) // 60, 60)
        return f"'{local:%Y-%m-%d %H:%M:%S}{frac}{sign}{hh:02d}:{mm:02d}'"
    if form == 3:
        return f"DATE '{t:%Y-%m-%d}'"
    if form == 4:
        return f"TIMESTAMP '{t:%Y-%m-%d %H:%M}'"
    if form == 5:
        return f"'{t:%Y-%m-%d}'"
    if form == 6:
        return f"CAST('{t:%Y-%m-%d %H:%M:%S}' AS TIMESTAMPTZ) + INTERVAL '{rng.randrange(-3, 4)} hours'"
    if form == 7:
        return f"'{t:%Y-%m-%dT%H:%M:%S}+0000'"  # (DuckDB 1.4 needs the seconds with +HHMM)
    return f"TIMESTAMPTZ '{t:%Y-%m-%d %H:%M:%S}' - INTERVAL '{rng.randrange(90)} minutes'"


def device_literal(rng):
    n = rng.randrange(9)  # dev-7 and dev-8 do not exist
    return rng.choice([f"'dev-{n}'", f"'dev-' || '{n}'", f"'DEV-{n}'", f"concat('dev', '-', {n})"])


# ---- Predicates ----

def time_pred(rng, col):
    op = rng.choice([">", ">=", "<", "<=", "=", "BETWEEN", "flip"])
    if op == "BETWEEN":
        a, b = sorted([time_literal(rng), time_literal(rng)])
        return f"{col} BETWEEN {a} AND {b}"
    if op == "flip":
        return f"{time_literal(rng)} {rng.choice(['<', '<=', '>', '>='])} {col}"
    return f"{col} {op} {time_literal(rng)}"


def key_pred(rng, col):
    k = rng.randrange(6)
    if k == 0:
        return f"{col} = {device_literal(rng)}"
    if k == 1:
        vals = ", ".join(device_literal(rng) for _ in range(rng.randrange(1, 4)))
        return f"{col} IN ({vals})"
    if k == 2:
        return f"{device_literal(rng)} = {col}"
    if k == 3:
        return f"{col} <> {device_literal(rng)}"
    if k == 4:
        return f"lower({col}) = {device_literal(rng)}"
    return f"{col} IN (SELECT device_id FROM {T} WHERE temp > {rng.randrange(-10, 40)})"


def pred(rng, a="", depth=0):
    """A WHERE clause over the table (columns qualified by `a` when given)."""
    c = (a + ".") if a else ""
    k = rng.randrange(8 if depth < 2 else 5)
    if k <= 1:
        return time_pred(rng, c + "time")
    if k == 2:
        return key_pred(rng, c + "device_id")
    if k == 3:
        return rng.choice([f"{c}site = {rng.randrange(4)}", f"{c}temp > {rng.randrange(-10, 40)}",
                           f"{c}site IS NULL", f"{c}temp IS NOT NULL",
                           f"{c}site < 18446744073709551615",  # beyond int64
                           f"{c}site <> -170141183460469231731687303715884105727"])
    if k == 4:
        return f"{time_pred(rng, c + 'time')} AND {key_pred(rng, c + 'device_id')}"
    if k == 5:
        return f"({pred(rng, a, depth + 1)}) AND ({pred(rng, a, depth + 1)})"
    if k == 6:
        return f"({pred(rng, a, depth + 1)}) OR ({pred(rng, a, depth + 1)})"
    return f"NOT ({pred(rng, a, depth + 1)})"


def where(rng, a=""):
    return f" WHERE {pred(rng, a)}" if rng.random() < 0.75 else ""


# ---- Queries (results independent of row order and of ties) ----

def q_project(rng):
    cols = rng.choice(["*", "time, device_id, temp", "device_id, site", "temp * 2 AS t2, time"])
    return f"SELECT {cols} FROM {T}{where(rng)}"


def q_aggregate(rng):
    g = rng.choice(["device_id", "site", "time_bucket(INTERVAL '1 hour', time)",
                    "time_bucket(INTERVAL '1 day', time, TIMESTAMPTZ '2024-03-01 06:00:00+00')",
                    "time_bucket(INTERVAL '15 minutes', time)", "date_trunc('day', time)"])
    aggs = rng.choice(["count(*) AS n", "count(*) AS n, round(avg(temp), 6) AS t",
                       "min(time) AS a, max(time) AS b", "max(temp) AS m, count(DISTINCT site) AS s"])
    having = f" HAVING count(*) > {rng.randrange(3)}" if rng.random() < 0.3 else ""
    return f"SELECT {g} AS g, {aggs} FROM {T}{where(rng)} GROUP BY 1{having}"


def q_newest(rng):
    """The newest-row shapes the index answers, and near misses."""
    order = rng.choice(["time DESC", "time DESC", "time", "temp DESC, time"])  # no ties
    part = rng.choice(["device_id", "device_id", "site"])
    fn = rng.choice(["row_number()", "row_number()", "rank()"])
    keep = rng.choice(["= 1", "= 1", "= 2", "<= 2"])
    w = where(rng)
    k = rng.randrange(6)
    if k == 0:
        return f"SELECT * FROM {T}{w} QUALIFY {fn} OVER (PARTITION BY {part} ORDER BY {order}) {keep}"
    if k == 1:
        return (f"SELECT * FROM (SELECT *, {fn} OVER (PARTITION BY {part} ORDER BY {order}) AS rn "
                f"FROM {T}{w}) s WHERE rn {keep}")
    if k == 2:
        return (f"WITH r AS (SELECT device_id, time, temp, {fn} OVER (PARTITION BY {part} ORDER BY "
                f"{order}) AS rn FROM {T}{w}) SELECT device_id, time, temp FROM r WHERE rn {keep}")
    if k == 3:  # DISTINCT ON with a total order inside each key
        return f"SELECT DISTINCT ON (device_id) * FROM {T}{w} ORDER BY device_id, {order}, time"
    if k == 4:
        m = rng.choice(["max(time)", "min(time)", "count(*)"])
        f = rng.choice(["arg_max", "max_by", "arg_min"])
        return f"SELECT device_id, {f}(temp, time) AS t, {m} AS m FROM {T}{w} GROUP BY device_id"
    return (f"SELECT * FROM {T} WHERE device_id = {device_literal(rng)}"
            f"{(' AND ' + time_pred(rng, 'time')) if rng.random() < 0.4 else ''} "
            f"ORDER BY time DESC LIMIT {rng.choice([1, 1, 2])}")


def q_topk(rng):
    """Newest (or oldest) k by time or by bucket, which a window at one end of
    the time range answers (sql_plan_topk.h); written with a total order."""
    d = rng.choice(["DESC", "DESC", "ASC", ""])
    k = rng.choice([1, 3, 5, 40])
    off = f" OFFSET {rng.randrange(1, 4)}" if rng.random() < 0.2 else ""
    if rng.random() < 0.4:
        return f"SELECT * FROM {T}{where(rng)} ORDER BY time {d}, device_id LIMIT {k}{off}"
    b = rng.choice(["time_bucket(INTERVAL '1 minute', time)", "time_bucket(INTERVAL '1 hour', time)",
                    "time_bucket(INTERVAL '7 minutes', time, TIMESTAMPTZ '2024-03-01 00:03:00+00')",
                    "time_bucket(INTERVAL '1 day', time)"])
    having = f" HAVING count(*) > {rng.randrange(3)}" if rng.random() < 0.3 else ""
    if rng.random() < 0.3:
        return (f"SELECT {b} AS b, device_id, count(*) AS n FROM {T}{where(rng)} GROUP BY 1, 2{having} "
                f"ORDER BY 1 {d}, device_id LIMIT {k}{off}")
    order = rng.choice(["1", "b", b])
    return (f"SELECT {b} AS b, count(*) AS n, max(temp) AS m FROM {T}{where(rng)} GROUP BY 1{having} "
            f"ORDER BY {order} {d} LIMIT {k}{off}")


def q_window(rng):
    f = rng.choice(["lag(temp)", "lead(time)", "sum(temp) OVER w2", "count(*)"])
    if "OVER w2" in f:
        return (f"SELECT device_id, time, round({f}, 6) AS s FROM {T}{where(rng)} "
                "WINDOW w2 AS (PARTITION BY device_id ORDER BY time ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)")
    return (f"SELECT device_id, time, {f} OVER (PARTITION BY device_id ORDER BY time) AS x "
            f"FROM {T}{where(rng)}")


def q_cte_join(rng):
    k = rng.randrange(4)
    if k == 3:  # CTE names match without regard to case
        return f"WITH Recent AS (SELECT * FROM {T}{where(rng)}) SELECT count(*) AS n FROM recent"
    if k == 0:
        return (f"WITH m AS (SELECT device_id, max(time) AS mt FROM {T}{where(rng)} GROUP BY 1) "
                f"SELECT r.* FROM {T} r JOIN m ON r.device_id = m.device_id AND r.time = m.mt")
    if k == 1:
        return (f"SELECT a.device_id, count(*) AS n FROM {T} a JOIN {T} b ON a.device_id = b.device_id "
                f"AND a.time = b.time{where(rng, 'a')} GROUP BY 1")
    return (f"SELECT count(*) AS n FROM (SELECT * FROM {T}{where(rng)}) x "
            f"WHERE x.time IN (SELECT time FROM {T}{where(rng)})")


SHAPES = [q_project, q_aggregate, q_newest, q_newest, q_topk, q_window, q_cte_join]


def valid_query(rng):
    return rng.choice(SHAPES)(rng)


# ---- Broken queries and what they must raise ----

def with_column(q, col):
    """q with `col` first in its (first) select list."""
    if q.startswith("SELECT DISTINCT ON (device_id) "):
        return q.replace("(device_id) ", f"(device_id) {col}, ", 1)
    return q.replace("SELECT ", f"SELECT {col}, ", 1)


def broken_query(rng):
    """(query, exception class, regex the message must match)."""
    q = valid_query(rng)
    k = rng.randrange(4)
    if k == 0:
        name = f"iot.nope_{rng.randrange(1000)}"
        return q.replace(T, name, 1), KeyError, re.escape(name)
    if k == 1:
        col = f"no_such_col_{rng.randrange(1000)}"
        return with_column(q, col), RuntimeError, col
    if k == 2:
        typo = rng.choice(["SELEC", "FROMM", "WHER", "GROUPBY"])
        word = {"SELEC": "SELECT", "FROMM": "FROM", "WHER": "WHERE", "GROUPBY": "GROUP BY"}[typo]
        if word not in q:
            typo, word = "SELEC", "SELECT"
        return q.replace(word, typo, 1), RuntimeError, "(?i)syntax|parser"
    col = f"no_such_col_{rng.randrange(1000)}"  # in the WHERE clause
    if " WHERE " in q:
        return q.replace(" WHERE ", f" WHERE {col} > 0 AND ", 1), RuntimeError, col
    return q.replace(T, f"{T} WHERE {col} IS NULL", 1) if q.endswith(T) else \
        with_column(q, col), RuntimeError, col


TOKENS = ["SELECT", "*", "FROM", "WHERE", "time", "device_id", "temp", ">", "=", ",", "(", ")",
          "'2024-03-02'", "'dev-1'", "GROUP BY", "ORDER BY", "1", "AND", "OR", "NOT", "NULL", "count(*)",
          "OVER", "PARTITION BY", "DESC", "QUALIFY", "row_number()", "LIMIT", "AS", "x", "IN", "JOIN",
          "ON", "WITH", "DISTINCT ON", "'", '"', "--", "/*", "INTERVAL", "TIMESTAMPTZ", "::", "'é∂'"]


def mutated_query(rng):
    """A valid query with tokens dropped, repeated or inserted, or cut short
    and closed again: may or may not parse."""
    q = valid_query(rng)
    if rng.random() < 0.2:
        return q[:rng.randrange(1, len(q))] + rng.choice(["(", "'", '"', " AND", " ,", " )", ""])
    words = q.split(" ")
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(words))
        op = rng.randrange(3)
        if op == 0 and len(words) > 1:
            del words[i]
        elif op == 1 and words[i] != T:  # (the oracle renames the table: one of it only)
            words.insert(i, words[i])
        else:
            words.insert(i, rng.choice(TOKENS))
    return " ".join(words)


# ---- The checks ----

# Queries whose result depends on how ties are broken (after a mutation):
# only their shape is compared.
ORDER_SENSITIVE = re.compile(r"(?i)limit|row_number|rank|distinct on|arg_|max_by|lag|lead|rows between")


PARSER = re.compile(r"(?i)syntax error|expected one SELECT statement"
                    # DuckDB 1.4 reads INTERVAL '64' (no unit) as an error, 2.0 as seconds
                    r"|could not convert string '[^']*' to INTERVAL")


def outcome(fn):
    try:
        return fn(), None
    except (KeyError, ValueError, RuntimeError, duckdb.Error) as e:
        return None, e


def check_same_rows(lake, lake_dir, q, strict=True):
    got, err = outcome(lambda: lake.sql(q))
    want, oerr = outcome(lambda: oracle(lake_dir, q))
    if err is not None:
        assert isinstance(err, (KeyError, ValueError, RuntimeError)), (q, err)
        assert str(err).strip("'\" "), q  # a message
        # A query DuckDB runs over the files must run over the lake too; but a
        # mutated query may be a statement DuckDB (Python, a newer version)
        # accepts and DuckDB 1.4's parser (or binder, as PARSER lists) or our
        # one-SELECT rule rejects.
        assert oerr is not None or (not strict and PARSER.search(str(err))), \
            f"{q}: ours failed ({err}) but DuckDB over the files did not"
        return False
    assert oerr is None, f"{q}: ours succeeded but DuckDB over the files failed: {oerr}"
    if strict or not ORDER_SENSITIVE.search(q):
        assert rows(got) == rows(want), q
    else:
        assert (got.num_rows, got.num_columns) == (want.num_rows, want.num_columns), q
    return True


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_queries(lake, lake_dir, filled, seed):  # noqa: F811
    rng = random.Random(seed)
    ok = failed = 0
    for _ in range(QUERIES):
        k = rng.random()
        if k < 0.55:
            q = valid_query(rng)
            assert check_same_rows(lake, lake_dir, q), f"valid query failed: {q}"
            ok += 1
        elif k < 0.8:
            q, exc, msg = broken_query(rng)
            with pytest.raises(exc, match=msg):  # (KeyError is no RuntimeError)
                lake.sql(q)
            with pytest.raises(duckdb.Error):
                oracle(lake_dir, q)
            failed += 1
        else:
            check_same_rows(lake, lake_dir, mutated_query(rng), strict=False)
    assert ok and failed


# Found by the fuzzers: valid queries that once failed over the lake.
REGRESSIONS = [
    # Integers beyond int64 made DuckDB's syntax tree unreadable to jansson.
    ("SELECT count(*) AS n FROM iot.readings WHERE site < 18446744073709551615", "default"),
    ("SELECT count(*) AS n FROM iot.readings WHERE site > -9223372036854775809", "default"),
    ("SELECT count(*) AS n FROM iot.readings WHERE site < 170141183460469231731687303715884105727", "default"),
    ("SELECT device_id FROM iot.readings WHERE site IN (1, 99999999999999999999) AND device_id = 'dev-1'", "default"),
    # A CTE hid a table of the same name outside its scope ...
    ("SELECT count(*) AS n FROM (WITH readings AS (SELECT 1 AS x) SELECT * FROM readings) a, readings b", "iot"),
    # ... and inside its own body, and in the CTEs before it.
    ("WITH readings AS (SELECT * FROM readings WHERE site = 1) SELECT count(*) AS n FROM readings", "iot"),
    ("WITH a AS (SELECT * FROM readings), readings AS (SELECT 5 AS x) SELECT count(*) AS n FROM a", "iot"),
    # CTE names are matched without regard to case, as DuckDB does.
    ("WITH M AS (SELECT device_id FROM iot.readings) SELECT count(*) AS n FROM m", "default"),
    ('WITH "m" AS (SELECT 1 AS x) SELECT * FROM M', "default"),
]


def test_fuzz_regressions(lake, lake_dir, filled):  # noqa: F811
    wrong = []
    for query, namespace in REGRESSIONS:
        try:
            if rows(lake.sql(query, namespace=namespace)) != rows(oracle(lake_dir, query)):
                wrong.append((query, "different rows"))
        except (KeyError, RuntimeError) as e:
            wrong.append((query, str(e)))
    assert not wrong


def test_no_stale_view_through_other_names(lake, lake_dir):
    """Found by fuzzing: references the walk did not resolve read the view an
    earlier query left, blind to commits since. memory.ns.table is the lake
    table; query() and query_table() hide their tables in text: refused."""
    import pyarrow as pa

    from test_sql import SCHEMA, batch

    rng = random.Random(5)
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"])
    t.append(batch(rng, 100))
    lake.sql("SELECT count(*) FROM iot.readings")  # registers the view
    t.append(batch(rng, 100, days=30))  # new rows after it
    q = "SELECT count(*) AS n FROM memory.iot.readings"
    assert rows(lake.sql(q)) == rows(oracle(lake_dir, "SELECT count(*) AS n FROM iot.readings"))
    for fn in ["query('SELECT count(*) FROM iot.readings')", "query_table('iot.readings')"]:
        with pytest.raises(RuntimeError, match=fn.split("(")[0] + r"\(\) cannot read lake tables"):
            lake.sql(f"SELECT * FROM {fn}")
    assert isinstance(lake.sql("SELECT * FROM range(3)"), pa.Table)  # other table functions run
    t.close()


# ---- Timelake's time-series functions (issue 19) ----
#
# DuckDB over the files has none of them: the oracle fetches the rows the
# query's WHERE keeps (DuckDB over the deduplicated files) and computes the
# functions in Python, by their definitions (README, "Time-series
# functions"). test_sql_functions.py holds them to the reference's results.

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
WIDTHS = ["7 minutes", "1 hour", "90 minutes", "1 day", "5 hours"]


def us(t):
    d = t - EPOCH
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def interval_us(w):
    n, unit = w.split()
    return int(n) * {"minutes": 60, "hour": 3600, "hours": 3600, "day": 86400}[unit] * 1_000_000


def twm_model(points, linear):
    """The time-weighted mean of (µs, value) points: ties count once, the largest."""
    best = {}
    for t, v in points:
        if v is not None:
            best[t] = max(best.get(t, v), v)
    ts = sorted(best)
    if not ts:
        return None
    if len(ts) == 1:
        return best[ts[0]]
    area = sum(((best[a] + best[b]) / 2 if linear else best[a]) * (b - a) for a, b in zip(ts, ts[1:]))
    return area / (ts[-1] - ts[0])


def m4_model(points):
    pts = [(t, v) for t, v in points if v is not None]
    if not pts:
        return []
    keep = {min(pts), max(pts), min(pts, key=lambda p: (p[1], p[0])), min(pts, key=lambda p: (-p[1], p[0]))}
    return sorted(keep)


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b


def series_rows(lake_dir, w):
    """(device, µs, temp) of the rows the WHERE clause w keeps."""
    got = oracle(lake_dir, f"SELECT device_id, time, temp FROM {T}{w}").to_pylist()
    return [(r["device_id"], us(r["time"]), r["temp"]) for r in got]


def check_buckets(lake, lake_dir, rng):
    width = rng.choice(WIDTHS)
    linear = rng.random() < 0.5
    m = ", 'linear'" if linear else rng.choice(["", ", 'ffill'", ", 'FORWARD_FILL'"])
    w = where(rng)
    q = (f"SELECT device_id, date_bin(INTERVAL '{width}', time) AS b, time_weighted_mean(time, temp{m}) AS x, "
         f"m4(time, temp) AS p, first_value(temp ORDER BY time) AS f, last_value(temp ORDER BY time) AS l "
         f"FROM {T}{w} GROUP BY 1, 2")
    groups = {}
    wu = interval_us(width)
    for d, t, v in series_rows(lake_dir, w):
        groups.setdefault((d, t - t % wu), []).append((t, v))
    got = {(r["device_id"], us(r["b"])): r for r in lake.sql(q).to_pylist()}
    assert set(got) == set(groups), q
    for key, pts in groups.items():
        r = got[key]
        assert close(r["x"], twm_model(pts, linear)), (q, key)
        assert [(us(p["time"]), p["value"]) for p in r["p"]] == m4_model(pts), (q, key)
        assert (r["f"], r["l"]) == (min(pts)[1], max(pts)[1]), (q, key)


def check_merged(lake, lake_dir, rng):
    """States and point lists per bucket, merged per series."""
    width = rng.choice(WIDTHS)
    linear = rng.random() < 0.5
    m = ", 'linear'" if linear else ""
    w = where(rng)
    q = (f"WITH s AS (SELECT device_id, time_bucket(INTERVAL '{width}', time) AS b, "
         f"time_weighted_state(time, temp{m}) AS s, m4(time, temp) AS p FROM {T}{w} GROUP BY 1, 2) "
         f"SELECT device_id, time_weighted_mean(s{m}) AS x, m4(p) AS p FROM s GROUP BY 1")
    series = {}
    for d, t, v in series_rows(lake_dir, w):
        series.setdefault(d, []).append((t, v))
    got = {r["device_id"]: r for r in lake.sql(q).to_pylist()}
    assert set(got) == set(series), q
    for d, pts in series.items():
        assert close(got[d]["x"], twm_model(pts, linear)), (q, d)
        assert [(us(p["time"]), p["value"]) for p in got[d]["p"]] == m4_model(pts), (q, d)


def check_gapfill(lake, lake_dir, rng):
    from test_sql_gapfill import model

    start = T0 + dt.timedelta(minutes=rng.randrange(-300, 3 * 24 * 60))
    finish = start + dt.timedelta(minutes=rng.randrange(1, 2 * 24 * 60))
    width = dt.timedelta(minutes=rng.choice([30, 60, 180, 7]))
    extra = f" AND ({pred(rng)})" if rng.random() < 0.6 else ""
    w = f" WHERE time >= '{start.isoformat()}' AND time < '{finish.isoformat()}'{extra}"
    skip = rng.random() < 0.3
    # start and finish given: the WHERE's other bounds on time would narrow the range
    q = (f"SELECT time_bucket_gapfill(INTERVAL '{int(width.total_seconds())} seconds', time, "
         f"'{start.isoformat()}', '{finish.isoformat()}') AS b, device_id, "
         f"avg(temp) AS a, count(*) AS n, locf(avg(temp){', NULL, true' if skip else ''}) AS l, "
         f"interpolate(avg(temp)) AS i FROM {T}{w} GROUP BY b, device_id")
    rows = [(EPOCH + dt.timedelta(microseconds=t), d, v) for d, t, v in series_rows(lake_dir, w)]
    # the model floors from T0, which the widths divide as they divide the epoch
    want = model(rows, width, start, finish, skip_nulls=skip)
    got = lake.sql(q).to_pylist()
    assert len(got) == len(want), q
    for r in got:
        a, n, locf, interp = want[(r["b"], r["device_id"])]
        assert close(r["a"], a) and r["n"] == n and close(r["l"], locf) and close(r["i"], interp), (q, r)


BROKEN_TS = [
    (f"SELECT time_weighted_mean(time, temp, 'forward-fill') FROM {T}", "method must be"),
    (f"SELECT time_weighted_mean(time, temp, device_id) FROM {T}", "string literal"),
    (f"SELECT m4(time, device_id) FROM {T}", "m4"),
    (f"SELECT device_id, locf(avg(temp)) FROM {T} GROUP BY 1", "time_bucket_gapfill"),
    (f"SELECT time_bucket_gapfill(INTERVAL '1 hour', time) AS b, count(*) FROM {T} GROUP BY b", "range to fill"),
    (f"SELECT date_bin(INTERVAL '0 minutes', time) FROM {T}", "zero"),
]


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_time_series_queries(lake, lake_dir, filled, seed):  # noqa: F811
    rng = random.Random(1000 + seed)
    for _ in range(max(3, QUERIES // 8)):
        rng.choice([check_buckets, check_merged, check_gapfill])(lake, lake_dir, rng)
    for q, msg in BROKEN_TS:
        with pytest.raises(RuntimeError, match=msg):
            lake.sql(q)


def test_rewritten_queries_keep_big_integers(lake, lake_dir, filled):  # noqa: F811
    """Found by the grammar above: integers beyond int64 in a query that is
    rewritten (first_value, gap filling) were lost writing it back as SQL."""
    for ours, theirs in [
        (f"SELECT device_id, first_value(temp ORDER BY time) AS f FROM {T} WHERE site < 18446744073709551615 "
         "AND site > -170141183460469231731687303715884105727 GROUP BY 1",
         f"SELECT device_id, first(temp ORDER BY time) AS f FROM {T} WHERE site < 18446744073709551615 "
         "AND site > -170141183460469231731687303715884105727 GROUP BY 1"),
        (f"SELECT time_bucket_gapfill(INTERVAL '1 day', time) AS b, count(*) AS n FROM {T} "
         "WHERE time >= '2024-03-01' AND time < '2024-03-04' AND site < 18446744073709551615 GROUP BY b",
         f"SELECT time_bucket(INTERVAL '1 day', time) AS b, count(*) AS n FROM {T} "
         "WHERE time >= '2024-03-01' AND time < '2024-03-04' AND site < 18446744073709551615 GROUP BY b"),
    ]:
        assert rows(lake.sql(ours)) == rows(oracle(lake_dir, theirs)), ours
