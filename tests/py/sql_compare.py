"""Running the same SQL on our lake and on the reference's (timelake==0.7.0),
over the same tables, and comparing what comes back.

The reference writes the tables (each from rows given as JSON) and runs the
queries in its own virtualenv; we then open the same warehouse and run them
too. Results are compared as values, row by row: column names and Arrow
types differ between DuckDB and DataFusion (a timestamp's unit, "+00:00" for
"UTC"), so timestamps compare as microseconds since the epoch and floats
within a few units in the last place. A failing query compares by the
Python exception's class only.

This file is imported by the tests and, as a script, by the reference:
    python sql_compare.py  < {"dir": ..., "tables": [...], "queries": [...]}
it needs only pyarrow.
"""

import datetime as dt
import json
import math
import sys

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def plain(v):
    """A JSON-able form of a value pyarrow's to_pylist gives."""
    if isinstance(v, dt.datetime):
        aware = v if v.tzinfo else v.replace(tzinfo=UTC)
        d = aware - EPOCH
        return {"us": (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds}
    if isinstance(v, dt.date):
        return {"date": v.isoformat()}
    if isinstance(v, float):
        return {"float": repr(v)} if not math.isfinite(v) else v
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (bytes, bytearray)):
        return {"hex": bytes(v).hex()}
    if hasattr(v, "as_tuple"):  # Decimal
        return {"decimal": str(v)}
    return v


def result(run, query):
    try:
        table = run(query)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return {"error": type(e).__name__, "message": str(e).splitlines()[0][:300]}
    return {"rows": [[plain(v) for v in row.values()] for row in table.to_pylist()]}


def same(a, b, rel=1e-12):
    """Whether two results agree (see the module's doc)."""
    if "error" in a or "error" in b:
        return a.get("error") == b.get("error")
    return _same(a["rows"], b["rows"], rel)


def describe(query, ours, theirs, rel=1e-12):
    """A difference, told briefly: the first row that differs."""
    head = query if len(query) < 300 else query[:300] + "..."
    if "rows" in ours and "rows" in theirs:
        a, b = ours["rows"], theirs["rows"]
        i = next((i for i, (x, y) in enumerate(zip(a, b)) if not _same(x, y, rel)), min(len(a), len(b)))
        return (f"{head}\n  {len(a)} rows against {len(b)}; row {i}:\n"
                f"  ours:   {a[i] if i < len(a) else '-'}\n  theirs: {b[i] if i < len(b) else '-'}")
    return f"{head}\n  ours:   {str(ours)[:500]}\n  theirs: {str(theirs)[:500]}"


def _same(a, b, rel):
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and math.isclose(a, b, rel_tol=rel, abs_tol=1e-300))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], rel) for k in a)
    return a == b


def make_tables(timelake, pa, lake, tables):
    for t in tables:
        schema = pa.schema([(name, _type(pa, kind)) for name, kind in t["columns"]])
        columns = {name: [_value(kind, v) for v in t["values"][name]] for name, kind in t["columns"]}
        table = lake.create_table(t["name"], schema, **t.get("options", {}))
        for part in t.get("appends", [None]):
            rows = range(len(next(iter(columns.values())))) if part is None else range(*part)
            table.append(pa.table({k: [v[i] for i in rows] for k, v in columns.items()}, schema=schema))


def _type(pa, kind):
    return {"ts": pa.timestamp("us", tz="UTC"), "local": pa.timestamp("us"), "f64": pa.float64(),
            "i64": pa.int64(), "i32": pa.int32(), "str": pa.string(), "bool": pa.bool_()}[kind]


def _value(kind, v):
    if v is None:
        return None
    if kind == "ts":
        return EPOCH + dt.timedelta(microseconds=v)
    if kind == "local":
        return (EPOCH + dt.timedelta(microseconds=v)).replace(tzinfo=None)
    if kind == "f64" and isinstance(v, str):
        return float(v)  # "nan", "inf"
    return v


if __name__ == "__main__":
    import pyarrow as pa
    import timelake

    job = json.loads(sys.stdin.read())
    lake = timelake.Lake(job["dir"])
    make_tables(timelake, pa, lake, job["tables"])
    print(json.dumps([result(lambda q: lake.sql(q, job.get("namespace", "default")), q)
                      for q in job["queries"]]))
