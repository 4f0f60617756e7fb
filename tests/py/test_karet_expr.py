"""Karet's expression compiler against an independent evaluator.

Every expression kind and dimension mode, hand-picked and randomly generated,
is compiled by `karet explain` and run by the library's embedded DuckDB over
rows full of edge cases (nulls, bad dates, division by zero, overflow,
unicode, very long strings); karet_oracle evaluates the same trees in plain
Python over the same rows, and the two must agree value for value.
"""

import json
import math
import os
import random
import subprocess
from datetime import date
from pathlib import Path

import pytest

import karet_exprgen as gen
import karet_oracle as oracle

BUILD = Path(os.environ.get("TL_BUILD", Path(__file__).resolve().parents[2] / "build-asan"))
KARET = BUILD / "karet"

DIMENSIONS = [
    {"id": "d_exact", "match": "exact", "rows": {"values": ["v"], "rows": [
        {"patterns": ["a"], "values": ["A1"]}, {"patterns": ["b", "Ünï"], "values": ["U"], "priority": 5},
        {"patterns": [""], "values": ["EMPTY"]}, {"patterns": ["x" * 5000 + "é"], "values": ["LONG"]},
        {"patterns": ["it's"], "values": [""]}]}},
    {"id": "d_exact_ci", "match": "exact", "case_insensitive": True, "on_miss": "passthrough",
     "rows": {"values": ["value"], "rows": [
         {"patterns": ["STARBUCKS #12"], "values": ["coffee"]}, {"patterns": ["café ñandú"], "values": ["café"]},
         {"patterns": ["true"], "values": ["1"]}]}},
    {"id": "d_kw", "match": "keyword_substring", "case_insensitive": True, "on_miss": {"literal": "OTHER"},
     "rows": {"values": ["cat", "sub"], "rows": [
         {"patterns": ["amazon"], "values": ["SHOPPING", "online"]},
         {"patterns": ["payroll", "deposit"], "values": ["INCOME", "salary"], "priority": 10},
         {"patterns": ["a"], "values": ["LETTER-A", ""], "priority": -1},
         {"patterns": ["é"], "values": ["ACCENT", "x"], "priority": 2},
         {"patterns": ["%", "_"], "values": ["SYMBOL", "y"]}]}},
    {"id": "d_kw_cs", "match": "keyword_substring", "on_miss": {"literal": "0"},
     "rows": {"values": ["value"], "rows": [
         {"patterns": ["A"], "values": ["upper-a"]}, {"patterns": ["x"], "values": ["ex"]},
         {"patterns": ["'"], "values": ["quote"]}, {"patterns": [""], "values": ["anything"], "priority": -5}]}},
    {"id": "d_empty", "on_miss": "passthrough", "rows": {"values": ["value"], "rows": []}},
]
DIM_VALUES = [(d["id"], d["rows"]["values"]) for d in DIMENSIONS]

S, I, F, B = "string", "int64", "float64", "bool"


def col(n):
    return {"kind": "col", "name": n}


def num(v):
    return {"kind": "num", "value": v}


def text(v):
    return {"kind": "str", "value": v}


# One or more hand-picked trees of every kind, with the type each gives.
HAND = [
    (col("s1"), S), (col('Wéird "col"; DROP'), S), (col("select"), I), (text("it's \"q\""), S),
    (num(3), I), (num(-0.5), F), ({"kind": "bool", "value": True}, B), ({"kind": "null"}, "null"),
    ({"kind": "add", "left": col("i1"), "right": col("i2")}, I),
    ({"kind": "add", "left": col("i1"), "right": num(2**62)}, I),
    ({"kind": "sub", "left": col("f1"), "right": col("i1")}, F),
    ({"kind": "mul", "left": col("i1"), "right": col("i1")}, I),
    ({"kind": "mul", "left": col("f1"), "right": num(1e300)}, F),
    ({"kind": "div", "left": col("i1"), "right": col("i2")}, F),
    ({"kind": "div", "left": col("f1"), "right": num(0)}, F),
    ({"kind": "div", "left": num(1), "right": {"kind": "null"}}, F),
    ({"kind": "concat", "sep": "-", "args": [col("s1"), col("i1"), col("f1"), col("b1"), col("d1")]}, S),
    ({"kind": "concat", "sep": ",", "args": [{"kind": "null"}, {"kind": "null"}]}, S),
    ({"kind": "concat", "sep": "x", "args": []}, S),
    ({"kind": "upper", "input": col("s1")}, S), ({"kind": "lower", "input": col("s2")}, S),
    ({"kind": "trim", "input": col("s1")}, S), ({"kind": "upper", "input": col("f1")}, S),
    ({"kind": "substring", "input": col("s1"), "start": 0, "length": 3}, S),
    ({"kind": "substring", "input": col("s1"), "start": 2}, S),
    ({"kind": "substring", "input": col("s1"), "start": -3}, S),
    ({"kind": "substring", "input": col("s1"), "start": -30, "length": 28}, S),
    ({"kind": "substring", "input": col("s1"), "start": 40, "length": 2}, S),
    ({"kind": "substring", "input": col("s1"), "start": 1, "length": 0}, S),
    ({"kind": "eq", "left": col("s1"), "right": col("s2")}, B),
    ({"kind": "ne", "left": col("i1"), "right": col("f1")}, B),
    ({"kind": "gt", "left": col("d1"), "right": text("2000-01-01")}, B),
    ({"kind": "lt", "left": text("2000-01-01"), "right": col("d1")}, B),
    ({"kind": "ge", "left": col("b1"), "right": {"kind": "bool", "value": False}}, B),
    ({"kind": "le", "left": col("i1"), "right": {"kind": "null"}}, B),
    ({"kind": "contains", "input": col("s1"), "pattern": text("a")}, B),
    ({"kind": "contains", "input": col("s1"), "pattern": text("")}, B),
    ({"kind": "contains", "input": col("i1"), "pattern": text("1")}, B),
    ({"kind": "and", "left": col("b1"), "right": {"kind": "null"}}, B),
    ({"kind": "or", "left": col("b1"), "right": {"kind": "null"}}, B),
    ({"kind": "not", "input": col("b1")}, B),
    ({"kind": "if", "cond": col("b1"), "then": col("i1"), "else": col("f1")}, F),
    ({"kind": "if", "cond": {"kind": "null"}, "then": text("t"), "else": text("e")}, S),
    ({"kind": "coalesce", "args": [col("s1"), col("s2"), text("none")]}, S),
    ({"kind": "coalesce", "args": []}, "null"),
    ({"kind": "parse_date", "input": col("n1"), "format": "%Y-%m-%d"}, "date"),
    ({"kind": "parse_date", "input": col("n1"), "format": "%d/%m/%Y"}, "date"),
    ({"kind": "parse_date", "input": col("s1"), "format": "%Y-%m-%d"}, "date"),
    ({"kind": "parse_date", "input": col("d1"), "format": "%Y"}, "date"),
    ({"kind": "from_unix", "input": col("i1")}, "date"),
    ({"kind": "from_unix", "input": col("i1"), "unit": "ms"}, "date"),
    ({"kind": "from_unix", "input": col("f1"), "unit": "s"}, "date"),
    ({"kind": "from_unix", "input": col("f1"), "unit": "ms"}, "date"),
    ({"kind": "year", "input": col("d1")}, I), ({"kind": "month", "input": col("d1")}, I),
    ({"kind": "day", "input": {"kind": "from_unix", "input": col("i1")}}, I),
    ({"kind": "cast", "input": col("n1"), "to": "int64"}, I),
    ({"kind": "cast", "input": col("n1"), "to": "float64"}, F),
    ({"kind": "cast", "input": col("n1"), "to": "bool"}, B),
    ({"kind": "cast", "input": col("n1"), "to": "date"}, "date"),
    ({"kind": "cast", "input": col("s1"), "to": "number"}, F),
    ({"kind": "cast", "input": col("f1"), "to": "int64"}, I),
    ({"kind": "cast", "input": col("f1"), "to": "string"}, S),
    ({"kind": "cast", "input": col("f1"), "to": "bool"}, B),
    ({"kind": "cast", "input": col("b1"), "to": "float64"}, F),
    ({"kind": "cast", "input": col("d1"), "to": "string"}, S),
    ({"kind": "cast", "input": {"kind": "from_unix", "input": col("f1")}, "to": "string"}, S),
    ({"kind": "div", "left": col("f1"), "right": col("f2")}, F),
    ({"kind": "div", "left": num(0), "right": num(0)}, F),
    ({"kind": "cast", "input": {"kind": "div", "left": col("i1"), "right": num(0)}, "to": "string"}, S),
    ({"kind": "gt", "left": {"kind": "div", "left": col("f1"), "right": num(0)}, "right": col("f2")}, B),
] + [
    ({"kind": "dim_ref", "dim_id": d["id"], "input": col(c), **({"value": v} if v else {})}, S)
    for d in DIMENSIONS for c in ("s1", "s2", "n1", "i1") for v in [None] + d["rows"]["values"][1:]
]


def sql_literal(v, t):
    sql_type = {"string": "VARCHAR", "int64": "BIGINT", "float64": "DOUBLE", "bool": "BOOLEAN", "date": "DATE"}[t]
    if v is None:
        return f"CAST(NULL AS {sql_type})"
    if t == "string":
        return "CAST('" + v.replace("'", "''") + "' AS VARCHAR)"
    if t == "int64":
        return f"CAST({v} AS BIGINT)"
    if t == "float64":
        return f"CAST('{v!r}' AS DOUBLE)"
    if t == "bool":
        return "true" if v else "false"
    return f"CAST('{oracle.date_text(v)}' AS DATE)"


def with_source(sql, rows):
    names = ", ".join('"' + n.replace('"', '""') + '"' for n, _ in gen.SOURCE)
    values = ", ".join(
        "(" + ", ".join([f"CAST({i} AS BIGINT)"] + [sql_literal(r[n], t) for n, t in gen.SOURCE]) + ")"
        for i, r in enumerate(rows))
    cte = f'"__karet_src" AS (SELECT * FROM (VALUES {values}) t("__karet_row", {names}))'
    if sql.startswith("WITH "):
        return "WITH " + cte + ", " + sql[len("WITH "):]
    return "WITH " + cte + " " + sql


def source(sid, record_filter=None):
    s = {"id": sid, "name": sid, "path_prefix": f"p/{sid}/", "format": "ndjson",
         "schema": [{"name": n, "type": t} for n, t in gen.SOURCE]}
    if record_filter:
        s["record_filter"] = record_filter
    return s


def build_config(exprs, where=None, record_filter=None, names=None):
    """One table per chunk of 40 expressions, each fed by one mapping; the
    table's columns are c0, c1... or `names`."""
    tables, mappings = [], []
    for b in range(0, len(exprs), 40):
        chunk = exprs[b:b + 40]
        tid = f"t{b // 40}"
        cols = [names[b + j] if names else f"c{j}" for j in range(len(chunk))]
        tables.append({"id": tid, "name": tid, "schema": [{"name": n, "type": gen.TABLE_TYPE[t]}
                                             for n, (_, t) in zip(cols, chunk)]})
        m = {"id": f"m{b // 40}", "source_container_id": "src" if record_filter is None else "src_f",
             "analytic_table_id": tid, "columns": [{"name": n, "expr": e} for n, (e, _) in zip(cols, chunk)]}
        if where is not None:
            m["where"] = where
        mappings.append(m)
    sources = [source("src")] + ([source("src_f", record_filter)] if record_filter else [])
    return {"version": 1, "source_containers": sources, "dimensions": DIMENSIONS,
            "mappings": mappings, "analytic_tables": tables}


def karet(*args, input=None):
    return subprocess.run([str(KARET), *args], capture_output=True, text=True, input=input)


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b) and not (a is None or b is None):
        return False
    return a == b


def has_checks(config):
    columns = [c for t in config["analytic_tables"] for c in t["schema"]]
    columns += [c for s in config["source_containers"] for c in s["schema"]]
    return any(c.get("assertions") or c.get("nullable") is False for c in columns)


def check(config, rows, lake, tmp_path):
    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps(config))
    v = karet("validate", "--json", str(path))
    assert v.returncode == 0, v.stdout + v.stderr
    e = karet("explain", "--json", str(path))
    assert e.returncode == 0, e.stderr
    explained = json.loads(e.stdout)
    dims = {d["id"]: oracle.Dimension(d) for d in config["dimensions"]}
    for m in config["mappings"]:
        tid = m["analytic_table_id"]
        (query,) = explained["tables"][tid]["queries"]
        if not has_checks(config):  # no string built per row for nothing
            assert 'CAST(NULL AS VARCHAR) AS "__karet_viol"' in query["sql"]
        got = lake.sql(with_source(query["sql"], rows)).to_pylist()
        want = oracle.map_rows(config, m, rows, dims)
        assert [g["__karet_row"] for g in got] == [w[0] for w in want], f"{tid}: rows kept differ"
        for g, (i, o, bad) in zip(got, want):
            for c, mc in zip(o, m["columns"]):
                if not same(g[c], o[c]):
                    raise AssertionError(
                        f"{tid}.{c} row {i}: karet {g[c]!r} != oracle {o[c]!r}\n"
                        f"expr {json.dumps(mc['expr'])}\nrow {rows[i]!r}"[:3000])
            assert (g["__karet_viol"] is not None) == bad


def test_every_kind_by_hand(lake, tmp_path):
    rows = gen.rand_rows(random.Random(1), 300)
    check(build_config(HAND), rows, lake, tmp_path)


@pytest.mark.parametrize("seed", range(6))
def test_random_expressions(lake, tmp_path, seed):
    rng = random.Random(1000 + seed)
    g = gen.Gen(rng, DIM_VALUES)
    exprs = []
    for _ in range(120):
        t = rng.choice(["string", "int64", "float64", "bool", "date"])
        exprs.append((g.gen(t), t))
    rows = gen.rand_rows(rng, 120)
    check(build_config(exprs), rows, lake, tmp_path)


@pytest.mark.parametrize("seed", range(4))
def test_where_and_record_filter(lake, tmp_path, seed):
    rng = random.Random(2000 + seed)
    g = gen.Gen(rng, DIM_VALUES)
    exprs = [(col(n), t) for n, t in gen.SOURCE]
    # The table's columns carry the source's names and types, so one
    # generator serves the record filter (source) and where (table).
    config = build_config(exprs, where={"kind": "or", "left": g.gen("bool"),
                                        "right": {"kind": "gt", "left": col("i1"), "right": num(0)}},
                          record_filter=g.gen("bool"), names=[n for n, _ in gen.SOURCE])
    check(config, gen.rand_rows(rng, 200), lake, tmp_path)


def test_assertions(lake, tmp_path):
    config = build_config([(col("i1"), I), (col("s1"), S)])
    config["analytic_tables"][0]["schema"][0]["assertions"] = {"min": -100, "max": 100}
    config["analytic_tables"][0]["schema"][1]["nullable"] = False
    config["source_containers"][0]["schema"][5]["assertions"] = {"not_null": True}  # f1
    check(config, gen.rand_rows(random.Random(5), 200), lake, tmp_path)
