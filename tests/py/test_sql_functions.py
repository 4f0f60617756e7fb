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


def side_by_side(work, tables, queries, rel=1e-12):
    """Runs queries on both; returns our results (for checks beyond agreement)."""
    theirs = reference_run(work, tables, queries)
    lake = timelake.Lake(str(work))
    ours = [sql_compare.result(lake.sql, q) for q in queries]
    bad = [sql_compare.describe(q, o, t) for q, o, t in zip(queries, ours, theirs) if not sql_compare.same(o, t, rel)]
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
