"""Random, well-typed Karet expression trees and source rows full of edge
cases (nulls, unicode, very long strings, bad dates, zeros, overflow), for
testing the expression compiler against karet_oracle."""

import random
import string
from datetime import date, timedelta

# The source columns the expressions read; the odd names check quoting.
SOURCE = [
    ("s1", "string"), ("s2", "string"), ("n1", "string"), ("i1", "int64"), ("i2", "int64"),
    ("f1", "float64"), ("f2", "float64"), ("b1", "bool"), ("d1", "date"),
    ('Wéird "col"; DROP', "string"), ("select", "int64"),
    # names DuckDB would bind to something else if a reference went unqualified
    ("user", "string"), ("current_date", "date"), ("k", "string"),
]

UNICODE = ["é", "ü", "Ж", "ω", "日本", "👍", "e\u0301", "Ω", "ñ", "ø"]
FORMATS = ["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%y", "%Y%m%d", "%d %b %Y", "%B %d, %Y",
           "%Y-%m-%dT%H:%M:%S", "%Y-%j", "%I:%M %p %Y-%m-%d"]


def rand_string(rng):
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.12:
        return ""
    if r < 0.15:
        return "x" * rng.choice([5000, 20000]) + rng.choice(UNICODE)
    if r < 0.30:
        return rng.choice(["  padded  ", "\tTab\n", "a'b", 'q"uote', "back\\slash", "50%_off",
                           "STARBUCKS #12", "amazon payroll deposit", "uber trip", "Café Ñandú",
                           "true", "FALSE", "1", "0", "yes", "  42 ", "-7", "+3", "1e3", ".5",
                           "5.", "nan", "inf", "1_000", "0x10", "2024-02-29", "2023-02-29",
                           "0000-01-01", "2024-13-01", " 2024-01-05 ", "12/31/99", "31/12/1999",
                           "2024-001", "9223372036854775808", "-9223372036854775808"])
    n = rng.randint(1, 12)
    alphabet = string.ascii_letters + string.digits + " -_./" + "".join(UNICODE)
    return "".join(rng.choice(alphabet) for _ in range(n))


def rand_int(rng):
    r = rng.random()
    if r < 0.1:
        return None
    if r < 0.25:
        return rng.choice([0, 1, -1, 2**63 - 1, -(2**63) + 1, 2**62, 1700000000, 1700000000123,
                           253402300799, 253402300800, -62135596800, -62135596801, 86400])
    return rng.randint(-1000, 1000)


def rand_float(rng):
    r = rng.random()
    if r < 0.1:
        return None
    if r < 0.3:
        return rng.choice([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e308, -1e308, 1e-300, 0.1, 1e16,
                           1700000000.5, 1700000000123.4, 9.2e18, -9.3e18, 123456.789,
                           float("inf"), float("-inf"), float("nan"), -0.0004, 86399.9999])
    return round(rng.uniform(-1000, 1000), rng.randint(0, 4))


def rand_date(rng):
    if rng.random() < 0.1:
        return None
    return date(2000, 1, 1) + timedelta(days=rng.randint(-20000, 20000))


def rand_value(rng, t):
    if t == "string":
        return rand_string(rng)
    if t == "int64":
        return rand_int(rng)
    if t == "float64":
        return rand_float(rng)
    if t == "bool":
        return None if rng.random() < 0.1 else rng.random() < 0.5
    return rand_date(rng)


def rand_rows(rng, n):
    rows = []
    for _ in range(n):
        row = {name: rand_value(rng, t) for name, t in SOURCE}
        # n1 holds text that may parse as a number, date or bool.
        if rng.random() < 0.6:
            row["n1"] = rng.choice([str(rng.randint(-99, 99)), f" {rng.uniform(-50, 50):.3f} ",
                                    "1e400", "-0", "00012", date_text_of(rng), "TRUE", "0", None])
        rows.append(row)
    return rows


def date_text_of(rng):
    d = rand_date(rng) or date(2020, 1, 1)
    return d.strftime(rng.choice(FORMATS[:4]))


class Gen:
    """Builds well-typed trees: gen(t) returns a node whose type is t."""

    def __init__(self, rng, dims):
        self.rng = rng
        self.dims = dims  # [(id, [value columns])]

    def leaf(self, t):
        rng = self.rng
        cols = [n for n, ct in SOURCE if ct == t]
        if cols and rng.random() < 0.7:
            return {"kind": "col", "name": rng.choice(cols)}
        if t == "string":
            return {"kind": "str", "value": rng.choice(["", "a", " x ", "Ünï", "it's", "%", "2024-01-05"])}
        if t == "int64":
            return {"kind": "num", "value": rng.choice([0, 1, -3, 7, 1000000, 2**62])}
        if t == "float64":
            return {"kind": "num", "value": rng.choice([0.0, 0.5, -1.25, 3.0, 1e10])}
        if t == "bool":
            return {"kind": "bool", "value": rng.random() < 0.5}
        if t == "date":
            return {"kind": "parse_date", "input": {"kind": "str", "value": "2021-06-15"}, "format": "%Y-%m-%d"}
        return {"kind": "null"}

    def any_type(self):
        return self.rng.choice(["string", "int64", "float64", "bool", "date"])

    def gen(self, t, depth=0):
        rng = self.rng
        if depth > 3 or rng.random() < 0.25:
            if rng.random() < 0.05:
                return {"kind": "null"}
            return self.leaf(t)
        g = lambda tt: self.gen(tt, depth + 1)  # noqa: E731
        choices = []
        if t == "string":
            choices = [
                lambda: {"kind": rng.choice(["upper", "lower", "trim"]), "input": g(self.any_type())},
                lambda: {"kind": "substring", "input": g("string"), "start": rng.randint(-6, 6),
                         **({"length": rng.randint(0, 5)} if rng.random() < 0.6 else {})},
                lambda: {"kind": "concat", "sep": rng.choice(["", "-", ", ", "é"]),
                         "args": [g(self.any_type()) for _ in range(rng.randint(0, 4))]},
                lambda: {"kind": "cast", "input": g(rng.choice(["int64", "float64", "bool", "date"])),
                         "to": "string"},
                lambda: self.dim_ref(depth),
                lambda: {"kind": "if", "cond": g("bool"), "then": g("string"), "else": g("string")},
                lambda: {"kind": "coalesce", "args": [g("string") for _ in range(rng.randint(1, 3))]},
            ]
        elif t == "int64":
            choices = [
                lambda: {"kind": rng.choice(["add", "sub", "mul"]), "left": g("int64"), "right": g("int64")},
                lambda: {"kind": rng.choice(["year", "month", "day"]), "input": g("date")},
                lambda: {"kind": "cast", "input": g(rng.choice(["string", "float64", "bool"])), "to": "int64"},
                lambda: {"kind": "coalesce", "args": [g("int64"), g("int64")]},
                lambda: {"kind": "if", "cond": g("bool"), "then": g("int64"), "else": g("int64")},
            ]
        elif t == "float64":
            choices = [
                lambda: {"kind": rng.choice(["add", "sub", "mul", "div"]), "left": g("float64"),
                         "right": g(rng.choice(["int64", "float64"]))},
                lambda: {"kind": "div", "left": g("int64"), "right": g("int64")},
                lambda: {"kind": "cast", "input": g(rng.choice(["string", "int64", "bool"])),
                         "to": rng.choice(["float64", "number"])},
                lambda: {"kind": "if", "cond": g("bool"), "then": g("int64"), "else": g("float64")},
                lambda: {"kind": "coalesce", "args": [g("float64"), g("int64")]},
            ]
        elif t == "bool":
            def cmp():
                a = rng.choice(["string", "int64", "float64", "date", "bool", "numeric"])
                if a == "numeric":
                    return {"kind": rng.choice(["eq", "ne", "gt", "lt", "ge", "le"]), "left": g("int64"), "right": g("float64")}
                if a == "date" and rng.random() < 0.5:
                    return {"kind": rng.choice(["gt", "le", "eq"]), "left": g("date"),
                            "right": {"kind": "str", "value": "2001-01-01"}}
                return {"kind": rng.choice(["eq", "ne", "gt", "lt", "ge", "le"]), "left": g(a), "right": g(a)}
            choices = [
                cmp,
                lambda: {"kind": rng.choice(["and", "or"]), "left": g("bool"), "right": g("bool")},
                lambda: {"kind": "not", "input": g("bool")},
                lambda: {"kind": "contains", "input": g(self.any_type()), "pattern": g("string")},
                lambda: {"kind": "cast", "input": g(rng.choice(["string", "int64", "float64"])), "to": "bool"},
            ]
        elif t == "date":
            choices = [
                lambda: {"kind": "parse_date", "input": g("string"), "format": rng.choice(FORMATS)},
                lambda: {"kind": "parse_date", "input": {"kind": "col", "name": "n1"}, "format": rng.choice(FORMATS[:4])},
                lambda: {"kind": "cast", "input": g("string"), "to": "date"},
                lambda: {"kind": "coalesce", "args": [g("date"), g("date")]},
                lambda: {"kind": "from_unix", "input": g(rng.choice(["int64", "float64"])),
                         **({"unit": rng.choice(["s", "ms"])} if rng.random() < 0.8 else {})},
                lambda: {"kind": "if", "cond": g("bool"), "then": g("date"), "else": g("date")},
            ]
        if not choices:
            return self.leaf(t)
        return rng.choice(choices)()

    def dim_ref(self, depth):
        dim_id, values = self.rng.choice(self.dims)
        node = {"kind": "dim_ref", "dim_id": dim_id, "input": self.gen("string", depth + 1)}
        if self.rng.random() < 0.5:
            node["value"] = self.rng.choice(values)
        return node


TABLE_TYPE = {"string": "string", "int64": "int64", "float64": "float64", "bool": "bool",
              "date": "date", "null": "string"}
