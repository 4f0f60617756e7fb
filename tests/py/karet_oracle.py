"""An independent evaluator of Karet pipelines, for the tests.

It implements the semantics README.md writes down for Karet (expression types,
casts, nulls, division by zero, substring windows, dimension matching, record
and where filters, assertions, dedup in ingest order) in plain Python, with no
SQL and nothing shared with karet/: the tests run the same data through both
and compare.
"""

import json
import math
import re
from datetime import date, datetime, timedelta

WS = " \t\n\x0b\x0c\r"
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
EPOCH = datetime(1970, 1, 1)
MIN_MS = -62135596800000  # 0001-01-01
MAX_MS = 253402300799999  # 9999-12-31 23:59:59.999

COLUMN_TYPES = {"string": "string", "number": "float64", "int64": "int64", "float64": "float64",
                "bool": "bool", "date": "date"}
CAST_TYPES = dict(COLUMN_TYPES)
NUMERIC = ("int64", "float64", "null")


# ---- types -----------------------------------------------------------------

def unify(a, b):
    if a == b or b == "null":
        return a
    if a == "null":
        return b
    if a in NUMERIC and b in NUMERIC:
        return "float64"
    raise TypeError(f"cannot unify {a} and {b}")


def expr_type(node, scope):
    k = node["kind"]
    if k == "col":
        return scope[node["name"]]
    if k == "str":
        return "string"
    if k == "num":
        return "int64" if isinstance(node["value"], int) and not isinstance(node["value"], bool) else "float64"
    if k == "bool":
        return "bool"
    if k == "null":
        return "null"
    if k in ("add", "sub", "mul"):
        lt, rt = expr_type(node["left"], scope), expr_type(node["right"], scope)
        return "float64" if "float64" in (lt, rt) else "int64"
    if k == "div":
        return "float64"
    if k in ("eq", "ne", "gt", "lt", "ge", "le", "and", "or", "not", "contains"):
        return "bool"
    if k in ("upper", "lower", "trim", "substring", "concat", "dim_ref"):
        return "string"
    if k == "if":
        return unify(expr_type(node["then"], scope), expr_type(node["else"], scope))
    if k == "coalesce":
        t = "null"
        for a in node["args"]:
            t = unify(t, expr_type(a, scope))
        return t
    if k in ("parse_date", "from_unix"):
        return "date"
    if k in ("year", "month", "day"):
        return "int64"
    if k == "cast":
        return CAST_TYPES[node["to"]]
    raise ValueError(k)


# ---- conversions -----------------------------------------------------------

def float_text(v):
    if math.isnan(v):
        return "NaN"
    if v == 0:
        return "0.0"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def date_text(d):
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def convert(v, frm, to):
    if v is None:
        return None
    if frm == to:
        return v
    if to == "string":
        if frm == "bool":
            return "true" if v else "false"
        if frm == "float64":
            return float_text(v)
        if frm == "date":
            return date_text(v)
        return str(v)
    if frm == "string":
        s = v.strip(WS)
        if to == "int64":
            if not re.fullmatch(r"[+-]?[0-9]+", s):
                return None
            n = int(s)
            return n if INT_MIN <= n <= INT_MAX else None
        if to == "float64":
            if re.fullmatch(r"[+-]?(inf|infinity|nan)", s, re.IGNORECASE):
                return float(s)
            if not re.fullmatch(r"[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?", s):
                return None
            f = float(s)
            return None if math.isinf(f) else f
        if to == "bool":
            return {"true": True, "1": True, "false": False, "0": False}.get(simple_lower(s))
        if to == "date":
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", s) or s.startswith("0000"):
                return None
            try:
                return date.fromisoformat(s)
            except ValueError:
                return None
    if to == "int64":
        if frm == "float64":
            if not math.isfinite(v) or not (-(2.0**63) <= v < 2.0**63):
                return None
            return int(math.trunc(v))
        return int(v)  # bool
    if to == "float64":
        return float(v)
    if to == "bool":
        if frm == "float64" and math.isnan(v):
            return None
        return v != 0
    raise TypeError(f"no conversion from {frm} to {to}")


def simple_upper(s):
    return "".join(c.upper() if len(c.upper()) == 1 else c for c in s)


def simple_lower(s):
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in s)


def ieee_div(a, b):
    """Float division as IEEE 754 (and DuckDB) does it: x/0 is +-inf, 0/0 NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1, b)
    return a / b


def float_key(v):
    """DuckDB orders NaN after everything and NaN equals NaN."""
    return (1, 0.0) if math.isnan(v) else (0, v)


# ---- evaluation ------------------------------------------------------------

class Dimension:
    def __init__(self, spec, rows=None):
        """spec: the config's dimension; rows: [(key, [values], priority)] of a file one."""
        self.spec = spec
        self.values = spec["rows"]["values"]
        if rows is None:
            rows = [(p, r["values"], r.get("priority", 0))
                    for r in spec["rows"]["rows"] for p in r["patterns"]]
            order = [i for i, r in enumerate(spec["rows"]["rows"]) for _ in r["patterns"]]
        else:
            order = list(range(len(rows)))
        self.rows = [(k, v, p, o) for (k, v, p), o in zip(rows, order)]

    def lookup(self, s, value):
        if s is None:
            return None
        spec = self.spec
        ci = spec.get("case_insensitive", False)
        probe = simple_lower(s) if ci else s
        best = None
        for k, vals, p, o in self.rows:
            kk = simple_lower(k) if ci else k
            hit = kk == probe if spec.get("match", "exact") == "exact" else kk in probe
            if hit and (best is None or p > best[0] or (p == best[0] and o < best[1])):
                best = (p, o, vals)
        if best is not None:
            return best[2][self.values.index(value) if value else 0]
        miss = spec.get("on_miss", "null")
        if miss == "passthrough":
            return s
        if isinstance(miss, dict):
            return miss["literal"]
        return None


def evaluate(node, row, scope, dims):
    """The value of expression `node` for `row` (column name -> value)."""
    k = node["kind"]
    ev = lambda n: evaluate(n, row, scope, dims)  # noqa: E731
    ty = lambda n: expr_type(n, scope)  # noqa: E731
    if k == "col":
        return row[node["name"]]
    if k in ("str", "num", "bool"):
        return node["value"]
    if k == "null":
        return None
    if k in ("add", "sub", "mul", "div"):
        t = expr_type(node, scope)
        a = convert(ev(node["left"]), ty(node["left"]), t)
        b = convert(ev(node["right"]), ty(node["right"]), t)
        if a is None or b is None:
            return None
        if k == "div":
            return ieee_div(a, b)
        r = a + b if k == "add" else a - b if k == "sub" else a * b
        if t == "int64":
            return r if INT_MIN <= r <= INT_MAX else None
        return r
    if k in ("eq", "ne", "gt", "lt", "ge", "le"):
        lt, rt = ty(node["left"]), ty(node["right"])
        a, b = ev(node["left"]), ev(node["right"])
        for side in (0, 1):  # a date against a "YYYY-MM-DD" literal compares as dates
            n, other = (node["left"], rt) if side == 0 else (node["right"], lt)
            if n["kind"] == "str" and other == "date":
                if side == 0:
                    a, lt = date.fromisoformat(n["value"]), "date"
                else:
                    b, rt = date.fromisoformat(n["value"]), "date"
        if a is None or b is None:
            return None
        if lt in NUMERIC and rt in NUMERIC and not (lt == "int64" and rt == "int64"):
            a, b = float_key(float(a)), float_key(float(b))
        return {"eq": a == b, "ne": a != b, "gt": a > b, "lt": a < b, "ge": a >= b, "le": a <= b}[k]
    if k in ("and", "or"):
        a = convert(ev(node["left"]), ty(node["left"]), "bool")
        b = convert(ev(node["right"]), ty(node["right"]), "bool")
        if k == "and":
            if a is False or b is False:
                return False
            return None if a is None or b is None else True
        if a is True or b is True:
            return True
        return None if a is None or b is None else False
    if k == "not":
        a = convert(ev(node["input"]), ty(node["input"]), "bool")
        return None if a is None else not a
    if k in ("upper", "lower", "trim"):
        s = convert(ev(node["input"]), ty(node["input"]), "string")
        if s is None:
            return None
        return simple_upper(s) if k == "upper" else simple_lower(s) if k == "lower" else s.strip(WS)
    if k == "contains":
        s = convert(ev(node["input"]), ty(node["input"]), "string")
        p = convert(ev(node["pattern"]), ty(node["pattern"]), "string")
        return None if s is None or p is None else p in s
    if k == "substring":
        s = convert(ev(node["input"]), ty(node["input"]), "string")
        if s is None:
            return None
        start, length = node["start"], node.get("length")
        begin = start if start >= 0 else len(s) + start
        end = len(s) if length is None else begin + length
        lo, hi = max(begin, 0), max(min(end, len(s)), 0)
        return s[lo:hi] if hi > lo else ""
    if k == "concat":
        parts = [convert(ev(a), ty(a), "string") for a in node["args"]]
        return node["sep"].join(p for p in parts if p is not None)
    if k == "if":
        t = expr_type(node, scope)
        c = convert(ev(node["cond"]), ty(node["cond"]), "bool")
        branch = node["then"] if c is True else node["else"]
        return convert(ev(branch), ty(branch), t)
    if k == "coalesce":
        t = expr_type(node, scope)
        for a in node["args"]:
            v = ev(a)
            if v is not None:
                return convert(v, ty(a), t)
        return None
    if k == "parse_date":
        t, v = ty(node["input"]), ev(node["input"])
        if t != "string":
            return convert(v, t, "date")
        if v is None:
            return None
        try:
            return datetime.strptime(v.strip(WS), node["format"]).date()
        except ValueError:
            return None
    if k == "from_unix":
        t, v = ty(node["input"]), ev(node["input"])
        if v is None:
            return None
        ms_unit = node.get("unit") == "ms"
        if t == "int64":
            ms = v if ms_unit else v * 1000
            if not INT_MIN <= ms <= INT_MAX:
                return None
        else:
            prod = v * (1.0 if ms_unit else 1000.0)
            x = math.trunc(prod) if math.isfinite(prod) else None
            if x is None or not -(2**63) <= x < 2**63:
                return None
            ms = int(x)
        if not MIN_MS <= ms <= MAX_MS:
            return None
        return (EPOCH + timedelta(milliseconds=ms)).date()
    if k in ("year", "month", "day"):
        v = ev(node["input"])
        return None if v is None else getattr(v, k)
    if k == "cast":
        return convert(ev(node["input"]), ty(node["input"]), CAST_TYPES[node["to"]])
    if k == "dim_ref":
        s = convert(ev(node["input"]), ty(node["input"]), "string")
        return dims[node["dim_id"]].lookup(s, node.get("value"))
    raise ValueError(k)


# ---- mappings and tables ---------------------------------------------------

def column_types(schema):
    return {c["name"]: COLUMN_TYPES[c["type"]] for c in schema}


def breaks(col, v):
    """Whether value v of column col breaks its assertions (NaN: above any max)."""
    a = col.get("assertions", {})
    if v is None:
        return bool(a.get("not_null")) or col.get("nullable") is False
    if "min" in a and float(v) < a["min"]:
        return True
    return "max" in a and (math.isnan(float(v)) or float(v) > a["max"])


def map_rows(config, mapping, rows, dims):
    """Runs one mapping over a file's rows (dicts of typed source values).
    Returns [(row number, output dict, breaks assertions)] for the rows kept."""
    source = next(s for s in config["source_containers"] if s["id"] == mapping["source_container_id"])
    table = next(t for t in config["analytic_tables"] if t["id"] == mapping["analytic_table_id"])
    sscope, tscope = column_types(source["schema"]), column_types(table["schema"])
    exprs = {c["name"]: c["expr"] for c in mapping["columns"]}
    wscope = {n: t for n, t in tscope.items() if n in exprs}  # where sees the mapping's outputs
    out = []
    for i, row in enumerate(rows):
        rf = source.get("record_filter")
        if rf is not None and evaluate(rf, row, sscope, dims) is not True:
            continue
        bad = any(breaks(c, row[c["name"]]) for c in source["schema"])
        o = {}
        for c in table["schema"]:
            e = exprs.get(c["name"])
            o[c["name"]] = None if e is None else convert(evaluate(e, row, sscope, dims),
                                                         expr_type(e, sscope), tscope[c["name"]])
        w = mapping.get("where")
        if w is not None and evaluate(w, o, wscope, dims) is not True:
            continue
        bad = bad or any(breaks(c, o[c["name"]]) for c in table["schema"])
        out.append((i, o, bad))
    return out


def build_table(config, table_id, files, dims):
    """The rows table `table_id` holds after reading `files` from scratch:
    files is [(key, source id, rows)] (rows None for a file that cannot be
    read). A mapping with a row that breaks an assertion, in any file, adds
    nothing (as the peer). Ingest order: files by key, then mappings in config
    order, then rows; with dedup keys the first row of each key survives."""
    table = next(t for t in config["analytic_tables"] if t["id"] == table_id)
    keys = table.get("dedup_keys", [])
    files = sorted((f for f in files if f[2] is not None), key=lambda f: f[0].encode())
    mappings = [m for m in config["mappings"] if m["analytic_table_id"] == table_id]
    mapped = {}
    for m in mappings:
        for key, source_id, rows in files:
            if m["source_container_id"] == source_id:
                mapped[(m["id"], key)] = map_rows(config, m, rows, dims)
    failed = {mid for (mid, _), rows in mapped.items() if any(bad for _, _, bad in rows)}
    seen, result = set(), []
    for key, _, _ in files:
        for m in mappings:
            if m["id"] in failed or (m["id"], key) not in mapped:
                continue
            for _, o, _ in mapped[(m["id"], key)]:
                if keys:
                    k = tuple(dedup_key(o[c]) for c in keys)
                    if k in seen:
                        continue
                    seen.add(k)
                result.append(o)
    return result


def dedup_key(v):
    """Dedup keys compare as DuckDB and karet do: NaN equals NaN, -0.0 equals 0.0."""
    if isinstance(v, float):
        return ("nan",) if math.isnan(v) else (0.0 if v == 0 else v)
    return v


# ---- reading source files (the library's lenient rules) ----------------------

def parse_text(t, s):
    """A text value (CSV field, JSON string) read as column type t; None when it does not fit."""
    if t == "string":
        return s
    v = s.strip(WS)
    if t == "int64":
        try:
            f = float(v) if re.fullmatch(r"[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?", v) else None
        except ValueError:
            f = None
        if f is None or f != math.floor(f):
            return None
        n = int(v) if re.fullmatch(r"[+-]?[0-9]+", v) else int(f)
        return n if INT_MIN <= n <= INT_MAX else None
    return convert(v, "string", t)  # float64, bool, date: as a cast from text


def json_value(t, v):
    """A JSON value read as column type t."""
    if v is None:
        return None
    if isinstance(v, str):
        return parse_text(t, v)
    if t == "string":
        return json.dumps(v, separators=(",", ":")) if isinstance(v, (dict, list)) else (
            ("true" if v else "false") if isinstance(v, bool) else json.dumps(v))
    if isinstance(v, bool):
        return v if t == "bool" else None
    if isinstance(v, (int, float)):
        if t == "int64":
            return int(v) if float(v) == math.floor(v) and INT_MIN <= v <= INT_MAX else None
        if t == "float64":
            return float(v)
        if t == "bool":
            return {1: True, 0: False}.get(v)
    return None


def at_path(obj, path):
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            i = int(part[1:-1])
            if not isinstance(obj, list) or i >= len(obj):
                return None
            obj = obj[i]
        else:
            if not isinstance(obj, dict) or part not in obj:
                return None
            obj = obj[part]
    return obj


def read_source_file(source, data):
    """The rows (dicts of typed values) a source file holds, as the library
    reads it leniently; None when the file cannot be read at all."""
    import csv
    import gzip
    import io
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except Exception:
            return None
    cols = [(c["name"], c.get("path") or c["name"], COLUMN_TYPES[c["type"]]) for c in source["schema"]]
    text = data.decode("utf-8", errors="replace")
    rows = []
    if source.get("format", "csv") == "csv":
        records = list(csv.reader(io.StringIO(text)))
        if not records:
            return None
        header = records[0]
        if any(p not in header for _, p, _ in cols):
            return None
        idx = {p: header.index(p) for _, p, _ in cols}
        for rec in records[1:]:
            if rec == []:
                continue
            if len(rec) != len(header):
                continue
            rows.append({n: (None if rec[idx[p]] == "" else parse_text(t, rec[idx[p]])) for n, p, t in cols})
        return rows
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        rows.append({n: json_value(t, at_path(obj, p)) for n, p, t in cols})
    return rows
