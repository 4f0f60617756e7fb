"""An independent evaluator of Karet pipelines, for the tests.

It implements the semantics README.md writes down for Karet (expression types,
casts, nulls, division by zero, substring windows, dimension matching, record
and where filters, assertions, dedup in ingest order) in plain Python, with no
SQL and nothing shared with karet/: the tests run the same data through both
and compare.
"""

import math
import re
from datetime import date, datetime, timedelta

WS = " \t\n\x0b\x0c\r"
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
EPOCH = datetime(1970, 1, 1)
MIN_US = -62135596800000000  # 0001-01-01
MAX_US = 253402300799999999  # 9999-12-31 23:59:59.999999

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
    if a in ("date", "timestamp") and b in ("date", "timestamp"):
        return "timestamp"
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
    if k == "parse_date":
        return "date"
    if k == "from_unix":
        return "timestamp"
    if k in ("year", "month", "day"):
        return "int64"
    if k == "cast":
        return CAST_TYPES[node["to"]]
    raise ValueError(k)


# ---- conversions -----------------------------------------------------------

def float_text(v):
    if v == 0:
        return "0.0"
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def date_text(d):
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def timestamp_text(t):
    s = f"{date_text(t)} {t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    return s + (f".{t.microsecond:06d}" if t.microsecond else "")


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
        if frm == "timestamp":
            return timestamp_text(v)
        return str(v)
    if frm == "string":
        s = v.strip(WS)
        if to == "int64":
            if not re.fullmatch(r"[+-]?[0-9]+", s):
                return None
            n = int(s)
            return n if INT_MIN <= n <= INT_MAX else None
        if to == "float64":
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
    if to == "date" and frm == "timestamp":
        return v.date()
    if to == "timestamp" and frm == "date":
        return datetime(v.year, v.month, v.day)
    raise TypeError(f"no conversion from {frm} to {to}")


def simple_upper(s):
    return "".join(c.upper() if len(c.upper()) == 1 else c for c in s)


def simple_lower(s):
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in s)


def finite(f):
    return f if math.isfinite(f) else None


def round_half_away(x):
    a = abs(x)
    fl = math.floor(a)
    r = fl + (1 if a - fl >= 0.5 else 0)
    return math.copysign(r, x)


# ---- evaluation ------------------------------------------------------------

class Dimension:
    def __init__(self, spec, rows=None):
        """spec: the config's dimension; rows: [(key, {value col: text}, priority)] for a CSV one."""
        self.spec = spec
        key = spec.get("key", "key")
        self.values = spec.get("values", ["value"])
        prio = spec.get("priority_column")
        if rows is None:
            rows = []
            for r in spec["rows"]:
                rows.append((cell(r.get(key)), {v: cell(r.get(v)) for v in self.values},
                             float(r.get(prio, 0)) if prio else 0.0))
        self.rows = rows

    def lookup(self, s, value):
        spec = self.spec
        ci = spec.get("case_insensitive", False)
        probe = simple_lower(s) if (ci and s is not None) else s
        best = None
        for i, (k, vals, p) in enumerate(self.rows):
            if k is None or probe is None:
                continue
            kk = simple_lower(k) if ci else k
            hit = kk == probe if spec.get("match", "exact") == "exact" else kk in probe
            if hit and (best is None or p > best[0]):
                best = (p, i, vals)
        if best is not None:
            return best[2][value or self.values[0]]
        miss = spec.get("on_miss", "null")
        if miss == "passthrough":
            return s
        if isinstance(miss, dict):
            return cell(miss["literal"])
        return None


def cell(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return float_text(v)
    return v


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
            return None if b == 0 else finite(a / b)
        r = a + b if k == "add" else a - b if k == "sub" else a * b
        if t == "int64":
            return r if INT_MIN <= r <= INT_MAX else None
        return finite(r)
    if k in ("eq", "ne", "gt", "lt", "ge", "le"):
        lt, rt = ty(node["left"]), ty(node["right"])
        a, b = ev(node["left"]), ev(node["right"])
        for side in (0, 1):  # a date against a "YYYY-MM-DD" literal compares as dates
            n, other = (node["left"], rt) if side == 0 else (node["right"], lt)
            if n["kind"] == "str" and other in ("date", "timestamp"):
                if side == 0:
                    a, lt = date.fromisoformat(n["value"]), "date"
                else:
                    b, rt = date.fromisoformat(n["value"]), "date"
        if a is None or b is None:
            return None
        if lt in NUMERIC and rt in NUMERIC:
            if not (lt == "int64" and rt == "int64"):
                a, b = float(a), float(b)
        elif {lt, rt} == {"date", "timestamp"}:
            a, b = convert(a, lt, "timestamp"), convert(b, rt, "timestamp")
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
        begin = start if start >= 0 else max(len(s) + start, 0)
        end = len(s) if length is None else begin + length
        return s[begin:end]
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
        scale = 1000 if node.get("unit") == "ms" else 1000000
        if t == "int64":
            us = v * scale
            if not INT_MIN <= us <= INT_MAX:
                return None
        else:
            x = v * scale
            if not math.isfinite(x):
                return None
            r = round_half_away(x)
            if not -(2.0**63) <= r < 2.0**63:
                return None
            us = int(r)
        if not MIN_US <= us <= MAX_US:
            return None
        return EPOCH + timedelta(microseconds=us)
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
    """Whether value v of column col breaks its assertions."""
    a = col.get("assertions", {})
    if v is None:
        return bool(a.get("not_null")) or col.get("nullable") is False
    if "min" in a and float(v) < a["min"]:
        return True
    return "max" in a and float(v) > a["max"]


def map_rows(config, mapping, rows, dims):
    """Runs one mapping over a file's rows (dicts of typed source values).
    Returns [(row number, output dict, breaks assertions)] for the rows kept."""
    source = next(s for s in config["source_containers"] if s["id"] == mapping["source_container_id"])
    table = next(t for t in config["analytic_tables"] if t["id"] == mapping["analytic_table_id"])
    sscope, tscope = column_types(source["schema"]), column_types(table["schema"])
    exprs = {c["name"]: c["expr"] for c in mapping["columns"]}
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
        if w is not None and evaluate(w, o, tscope, dims) is not True:
            continue
        bad = bad or any(breaks(c, o[c["name"]]) for c in table["schema"])
        out.append((i, o, bad))
    return out


def build_table(config, table_id, files, dims):
    """The rows table `table_id` holds after reading `files` from scratch:
    files is [(key, source id, rows)] (rows None for a file that cannot be
    read). Ingest order: files by key, then mappings in config order, then
    rows; a (mapping, file) with a row that breaks an assertion adds nothing;
    with dedup keys the first row of each key survives."""
    table = next(t for t in config["analytic_tables"] if t["id"] == table_id)
    keys = table.get("dedup_keys", [])
    seen, result = set(), []
    for key, source_id, rows in sorted(files, key=lambda f: f[0].encode()):
        if rows is None:
            continue
        for m in config["mappings"]:
            if m["analytic_table_id"] != table_id or m["source_container_id"] != source_id:
                continue
            mapped = map_rows(config, m, rows, dims)
            if any(bad for _, _, bad in mapped):
                continue
            for _, o, _ in mapped:
                if keys:
                    k = tuple(o[c] for c in keys)
                    if k in seen:
                        continue
                    seen.add(k)
                result.append(o)
    return result
