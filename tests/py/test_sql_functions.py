"""Timelake's SQL functions side by side with the reference (timelake==0.7.0):
the reference writes each table and runs the queries, our package then runs
them over the same warehouse, and the results must agree (sql_compare.py):
date_bin and time_bucket, m4, time_weighted_mean and its mergeable state,
first_value and last_value as aggregates. Gap filling, which the reference
lacks, is tested against plain SQL that computes the same rows."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import sql_compare
from conftest import REF_PYTHON, ROOT

PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")

US = 1_000_000
T0 = 1_767_225_600 * US  # 2026-01-01


def reference_run(work, tables, queries, namespace="default"):
    if not REF_PYTHON.exists():
        pytest.skip("the reference virtualenv .venv-ref is missing (scripts/setup.sh --test)")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "PYTHONPATH")}
    job = {"dir": str(work), "tables": tables, "queries": queries, "namespace": namespace}
    proc = subprocess.run([str(REF_PYTHON), sql_compare.__file__], input=json.dumps(job), capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def side_by_side(work, tables, queries, rel=1e-12, ours_sql=lambda q: q):
    """Runs queries on both (ours as ours_sql makes them); returns our
    results (for checks beyond agreement)."""
    theirs = reference_run(work, tables, queries)
    lake = timelake.Lake(str(work))
    ours = [sql_compare.result(lake.sql, ours_sql(q)) for q in queries]
    bad = [sql_compare.describe(q, o, t, rel) for q, o, t in zip(queries, ours, theirs)
           if not sql_compare.same(o, t, rel)]
    assert not bad, "\n\n".join(bad)
    return ours


def table(name, columns, values, **options):
    return {"name": name, "columns": columns, "values": values, "options": options}


# ---- date_bin and time_bucket ----


def test_date_bin_and_time_bucket_match_the_reference(tmp_path):
    rng = random.Random(7)
    stamps = [rng.randrange(-70 * 365 * 86400, 80 * 365 * 86400) * US + rng.randrange(US) for _ in range(300)]
    stamps += [0, -1, 1, -420 * US, -419 * US, -421 * US, None]
    # The reference's months go wrong before 1970 with a fraction of a second
    # (null, or an error): those compare on whole seconds (below, ours alone).
    seconds = [s - s % US if s is not None else None for s in stamps]
    tables = [table("stamps", [("id", "i64"), ("ts", "ts"), ("local", "local"), ("sec", "ts")],
                    {"id": list(range(len(stamps))), "ts": stamps, "local": stamps, "sec": seconds})]
    widths = ["7 minutes", "-7 minutes", "90 seconds", "1 day 2 hours", "1 week", "3 hours", "1 microsecond"]
    months = ["1 month", "7 months", "-5 months", "1 year"]
    origins = ["2000-01-01 00:07:00", "2026-01-31 12:00:00", "1969-12-31 23:59:59.5", "1900-03-31 23:00:00"]
    queries = []
    for w in widths + months:
        fn = "time_bucket" if len(queries) % 2 else "date_bin"
        col = "sec" if w in months else "ts"
        cols = [f"{fn}(INTERVAL '{w}', {col})", f"{fn}(INTERVAL '{w}', local)" if w not in months else "0"]
        cols += [f"date_bin(INTERVAL '{w}', {col}, TIMESTAMP '{o}')" for o in origins if w not in months or "." not in o]
        queries.append(f"SELECT id, {', '.join(cols)} FROM stamps ORDER BY id")
    queries += [
        "SELECT date_bin(INTERVAL '0 minutes', ts) FROM stamps",  # an error on both
        "SELECT date_bin(INTERVAL '1 month 1 day', ts) FROM stamps",
        "SELECT date_bin(NULL, ts), date_bin('1 hour', ts), date_bin(INTERVAL '1 hour', ts, '2026-01-01 00:30:00') "
        "FROM stamps ORDER BY id",
        "SELECT date_bin(INTERVAL '1 hour', CAST(ts AS DATE)) FROM stamps ORDER BY id",
    ]
    side_by_side(tmp_path, tables, queries)


def test_date_bin_months_before_1970_with_fractions(tmp_path):
    """Where the reference's month bins give null (a fraction of a second
    before 1970): the bin is the month's start, as after 1970."""
    import datetime as dt

    r = timelake.Lake(str(tmp_path)).sql(
        "SELECT date_bin(INTERVAL '1 month', TIMESTAMP '1969-12-31 23:59:59.999999') AS a, "
        "date_bin(INTERVAL '1 month', TIMESTAMP '1950-01-01 00:00:00', TIMESTAMP '1969-12-31 23:59:59.5') AS b, "
        "time_bucket(INTERVAL '3 months', TIMESTAMP '1950-02-01 00:00:00.25') AS c").to_pylist()[0]
    assert r == {"a": dt.datetime(1969, 12, 1), "b": dt.datetime(1949, 12, 31, 23, 59, 59, 500000),
                 "c": dt.datetime(1950, 1, 1)}


# ---- m4, time_weighted_mean and its state, first_value / last_value ----


def readings(seed, series=4, per_series=150, appends=3, dup_times=False, nulls=True):
    """Rows of a few series over a day, appended in time order (the reference
    reads a series' runs in order only when files do not overlap in time)."""
    rng = random.Random(seed)
    rows = []
    for s in range(series):
        t = T0 + rng.randrange(3600) * US
        for _ in range(per_series):
            t += rng.choice([1, 7, 60, 61, 600, 3599]) * US + (rng.randrange(US) if rng.random() < 0.3 else 0)
            v = None if nulls and rng.random() < 0.08 else round(rng.uniform(-50, 50), rng.choice([0, 3, 9]))
            rows.append((t, f"s{s}", v))
            if dup_times and rng.random() < 0.15:  # a second reading at the same time
                rows.append((t, f"s{s}", None if rng.random() < 0.2 else float(rng.randrange(-60, 60))))
    rows.sort(key=lambda r: (r[0], r[1]))
    cut = [len(rows) * k // appends for k in range(appends + 1)]
    values = {"time": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]}
    t = table("m.readings", [("time", "ts"), ("id", "str"), ("v", "f64")], values, time_column="time",
              series_key=["id"], dedup=not dup_times)
    t["appends"] = [[cut[k], cut[k + 1]] for k in range(appends)]
    return t


TW_QUERIES = [
    "SELECT id, time_weighted_mean(time, v), time_weighted_mean(time, v, 'linear'), "
    "time_weighted_mean(time, v, 'FFILL') FROM m.readings GROUP BY id ORDER BY id",
    "SELECT id, time_bucket(INTERVAL '1 hour', time) AS b, time_weighted_mean(time, v), "
    "time_weighted_mean(time, v, 'linear'), time_weighted_state(time, v), time_weighted_state(time, v, 'linear') "
    "FROM m.readings GROUP BY 1, 2 ORDER BY 1, 2",
    # states per bucket, merged per series, by either method
    "WITH s AS (SELECT id, date_bin(INTERVAL '20 minutes', time) AS b, time_weighted_state(time, v) AS s, "
    "time_weighted_state(time, v, 'linear') AS l FROM m.readings GROUP BY 1, 2) "
    "SELECT id, time_weighted_mean(s), time_weighted_mean(s, 'linear'), time_weighted_mean(l), "
    "time_weighted_mean(l, 'linear'), time_weighted_state(s), time_weighted_state(l, 'linear') "
    "FROM s GROUP BY id ORDER BY id",
    # coarser states from finer ones
    "WITH f AS (SELECT id, time_bucket(INTERVAL '10 minutes', time) AS b, time_weighted_state(time, v) AS s "
    "FROM m.readings GROUP BY 1, 2), c AS (SELECT id, time_bucket(INTERVAL '2 hours', b) AS b2, "
    "time_weighted_state(s) AS s FROM f GROUP BY 1, 2) SELECT id, b2, time_weighted_mean(s) FROM c ORDER BY 1, 2",
    "SELECT id, time_weighted_mean(time, v) FROM m.readings WHERE v IS NULL GROUP BY id ORDER BY id",
    "SELECT time_weighted_mean(time, v), time_weighted_state(time, v) FROM m.readings WHERE false",
    "SELECT id, time_weighted_mean(time, CAST(round(v) AS INTEGER)) FROM m.readings GROUP BY id ORDER BY id",
]

M4_QUERIES = [
    "SELECT id, m4(time, v) FROM m.readings GROUP BY id ORDER BY id",
    "SELECT id, time_bucket(INTERVAL '30 minutes', time) AS b, m4(time, v) FROM m.readings GROUP BY 1, 2 ORDER BY 1, 2",
    "WITH p AS (SELECT id, time_bucket(INTERVAL '5 minutes', time) AS b, m4(time, v) AS p FROM m.readings "
    "GROUP BY 1, 2) SELECT id, time_bucket(INTERVAL '1 hour', b) AS h, m4(p) FROM p GROUP BY 1, 2 ORDER BY 1, 2",
    "SELECT m4(time, v) FROM m.readings",
    "SELECT m4(time, v) FROM m.readings WHERE false",
    "SELECT id, m4(time, v) FROM m.readings WHERE v IS NULL GROUP BY id ORDER BY id",
]

FIRST_LAST_QUERIES = [
    "SELECT id, first_value(v ORDER BY time), last_value(v ORDER BY time), first_value(time ORDER BY v DESC NULLS LAST), "
    "last_value(id ORDER BY time) FROM m.readings GROUP BY id ORDER BY id",
    "SELECT id, time_bucket(INTERVAL '1 hour', time) AS b, first_value(v ORDER BY time) AS o, "
    "last_value(v ORDER BY time) AS c, min(v), max(v) FROM m.readings GROUP BY 1, 2 ORDER BY 1, 2",
    "SELECT first_value(v ORDER BY time) FROM m.readings WHERE false",
]


@pytest.mark.parametrize("seed", [1, 2])
def test_time_series_aggregates_match_the_reference(tmp_path, seed):
    side_by_side(tmp_path, [readings(seed)], TW_QUERIES + M4_QUERIES + FIRST_LAST_QUERIES)


def test_time_weighted_mean_and_m4_with_ties_match_the_reference(tmp_path):
    """Readings at one time (a table without dedup): one reading, the
    largest value, for the mean; m4 keeps the smallest first, the largest
    last."""
    side_by_side(tmp_path, [readings(3, dup_times=True, appends=1)], TW_QUERIES[:3] + M4_QUERIES[:3])


def test_unsorted_input_gives_what_sorted_input_gives_the_reference(tmp_path):
    """Rows appended out of order, in files that overlap in time: ours reads
    rows in any order (the reference fails on rows it is handed out of
    order, as from a subquery), and equals the reference's over the same
    rows appended in order."""
    ordered = readings(4, appends=1)
    shuffled = readings(4, appends=1)
    shuffled["name"] = "m.shuffled"
    n = len(shuffled["values"]["time"])
    order = list(range(n))
    random.Random(4).shuffle(order)
    shuffled["values"] = {k: [v[i] for i in order] for k, v in shuffled["values"].items()}
    shuffled["appends"] = [[k * n // 5, (k + 1) * n // 5] for k in range(5)]
    queries = TW_QUERIES[:3] + M4_QUERIES[:2] + FIRST_LAST_QUERIES[:2]
    side_by_side(tmp_path, [ordered, shuffled], queries, ours_sql=lambda q: q.replace("m.readings", "m.shuffled"))
    lake = timelake.Lake(str(tmp_path))
    scrambled = "(SELECT * FROM m.readings ORDER BY hash(time, v)) r"
    for q in TW_QUERIES[:2]:
        assert lake.sql(q.replace("m.readings", scrambled)) == lake.sql(q)


def test_time_weighted_errors(tmp_path):
    """States that overlap in time cannot merge; methods are checked when
    the query is planned, as the reference does."""
    lake = timelake.Lake(str(tmp_path))
    rows = "(VALUES (1, TIMESTAMP '2026-01-01 00:00:00', 1.0), (1, TIMESTAMP '2026-01-01 00:00:20', 2.0), " \
           "(2, TIMESTAMP '2026-01-01 00:00:10', 5.0)) x(g, t, v)"
    with pytest.raises(RuntimeError, match="overlap in time"):
        lake.sql(f"SELECT time_weighted_mean(s) FROM (SELECT g, time_weighted_state(t, v) s FROM {rows} GROUP BY g)")
    for bad, msg in [("'forward-fill'", "method must be 'forward_fill'"), ("g::VARCHAR", "string literal")]:
        with pytest.raises(RuntimeError, match=msg):
            lake.sql(f"SELECT time_weighted_mean(t, v, {bad}) FROM {rows} WHERE false")
    with pytest.raises(RuntimeError, match="needs a numeric value"):
        lake.sql(f"SELECT m4(t, NULL) FROM {rows}")
    r = lake.sql(f"SELECT time_weighted_mean(t, v, 'Linear') AS a, time_weighted_mean(t, v) AS b FROM {rows}")
    assert r.to_pylist() == [{"a": ((1 + 5) / 2 * 10 + (5 + 2) / 2 * 10) / 20, "b": (1.0 * 10 + 5.0 * 10) / 20}]
