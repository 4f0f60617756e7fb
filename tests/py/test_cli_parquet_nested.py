"""`timelake sql --output-format parquet` writes every result type DuckDB
returns (issue 14, item 15): lists as the 3-level LIST, maps as MAP of
key_value, structs as groups, with nulls at every level (Dremel repetition
and definition levels); enums as strings, intervals as INTERVAL, unions as a
group of a `tag` (the member's name) and its members.

Oracles: pyarrow reads the file back and matches DuckDB's Python package's
Arrow result of the same query; DuckDB's read_parquet reads it back and
matches the query's rows."""
import math

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from test_cli import ok, run
from test_cli_result_types import COLUMNS

# Nulls at every level, empty lists and maps, deep nesting, row to row.
NESTED = {
    "ln": "CASE WHEN i % 5 = 0 THEN NULL WHEN i % 5 = 1 THEN [] "
          "ELSE [i, NULL, i + 1] END",
    "los": "CASE WHEN i % 7 = 0 THEN NULL ELSE "
           "[{'a': i, 'b': CASE WHEN i % 3 = 0 THEN NULL ELSE [i, NULL] END}, NULL, "
           "CASE WHEN i % 2 = 0 THEN {'a': NULL, 'b': []} END] END",
    "sl": "CASE WHEN i % 4 = 0 THEN NULL ELSE {'x': CASE WHEN i % 3 = 0 THEN NULL "
          "ELSE [[i], NULL, []] END, 'y': 's' || i} END",
    "mp": "CASE WHEN i % 6 = 0 THEN NULL WHEN i % 6 = 1 THEN MAP {} "
          "ELSE MAP {'k' || i: CASE WHEN i % 2 = 0 THEN NULL ELSE [i] END, 'z': []} END",
    "lll": "[[[i, NULL]], NULL, [NULL, []]]",
    "fx": "(CASE WHEN i % 3 = 0 THEN NULL ELSE [i, NULL, 3] END)::INT[3]",
    "en": "CASE WHEN i % 3 = 0 THEN NULL ELSE (['lo', 'hi'][i % 2 + 1])::ENUM('lo', 'hi') END",
    "le": "[('lo')::ENUM('lo', 'hi'), NULL]",
    "iv": "CASE WHEN i % 4 = 0 THEN NULL ELSE to_months(i) + to_days(2) + "
          "to_milliseconds(i * 1001) END",
    "li": "[INTERVAL 1 DAY, NULL]",
    "un": "CASE WHEN i % 3 = 0 THEN NULL::UNION(n INT, s VARCHAR) WHEN i % 3 = 1 "
          "THEN union_value(n := i)::UNION(n INT, s VARCHAR) "
          "ELSE union_value(s := 'v' || i)::UNION(n INT, s VARCHAR) END",
    "lun": "[union_value(n := i)::UNION(n INT, s VARCHAR)]",
}


def query(columns, rows):
    return ("SELECT " + ", ".join(f"{e} AS {c}" for c, e in columns.items()) +
            f" FROM range({rows}) t(i) ORDER BY i")


def duck():
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


def interval_py(b):
    """The (months, days, nanoseconds) an INTERVAL's 12 bytes hold."""
    months, days, millis = (int.from_bytes(b[k:k + 4], "little") for k in (0, 4, 8))
    return (months, days, millis * 1_000_000)


def scalar_written(s):
    """An Arrow scalar of DuckDB's result, as our file holds it."""
    t = s.type
    if not s.is_valid:
        return None
    if pa.types.is_union(t):
        member = t.field(t.type_codes.index(s.type_code))
        out = {"tag": member.name}
        for f in t:
            out[f.name] = scalar_written(s.value) if f.name == member.name else None
        return out
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_large_list(t):
        return [scalar_written(x) for x in s.values]
    if pa.types.is_map(t):
        return [(k.as_py(), scalar_written(x)) for k, x in zip(s.values.field(0), s.values.field(1))]
    if pa.types.is_struct(t):
        return {f.name: scalar_written(s[f.name]) for f in t}
    if pa.types.is_dictionary(t):
        return s.value.as_py()
    if pa.types.is_interval(t):
        v = s.as_py()
        return (v.months, v.days, v.nanoseconds)
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return s.value
    v = s.as_py()
    return "nan" if isinstance(v, float) and math.isnan(v) else v


def read_written(s, t):
    """A value pyarrow reads from our file, in scalar_written's terms."""
    if not s.is_valid:
        return None
    if pa.types.is_fixed_size_binary(t) and t.byte_width == 12:
        return interval_py(s.as_py())
    if pa.types.is_list(t):
        return [read_written(x, t.value_type) for x in s.values]
    if pa.types.is_map(t):
        return [(k.as_py(), read_written(x, t.item_type)) for k, x in zip(s.values.field(0), s.values.field(1))]
    if pa.types.is_struct(t):
        return {f.name: read_written(s[f.name], f.type) for f in t}
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return s.value
    v = s.as_py()
    return "nan" if isinstance(v, float) and math.isnan(v) else v


def write(tmp_path, q):
    out = tmp_path / "r.parquet"
    ok("sql", q, "--lake", tmp_path / "lake", "--output", out, "--output-format", "parquet")
    return out


def plain(t):
    """Types whose values scalar_written and read_written give as pyarrow's
    to_pylist does (ints, strings, booleans, and lists, maps and structs of
    them): such columns are compared whole, without a Python call per value."""
    if pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_boolean(t):
        return True
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return plain(t.value_type)
    if pa.types.is_map(t):
        return plain(t.key_type) and plain(t.item_type)
    if pa.types.is_struct(t):
        return all(plain(f.type) for f in t)
    return False


def check_against_duckdb(path, q, intervals=()):
    got = pq.read_table(path)
    oracle = duck().sql(q).to_arrow_table()
    assert got.column_names == oracle.column_names and got.num_rows == oracle.num_rows
    for c in oracle.column_names:
        if c == "uh":  # DuckDB's Python gives a lossy decimal128; the CLI gets DuckDB's
            continue   # opaque 16 bytes (flat, as before) and writes them as they are
        if plain(oracle.schema.field(c).type) and plain(got.schema.field(c).type):
            assert got.column(c).to_pylist() == oracle.column(c).to_pylist(), c
            continue
        want = [scalar_written(s) for s in oracle.column(c)]
        have = [read_written(s, got.schema.field(c).type) for s in got.column(c)]
        assert have == want, c
    # DuckDB reads the file back as the query's rows; left out: unions (read back as
    # the groups pyarrow saw), and flat columns DuckDB maps its own way (a UUID and
    # an opaque UHUGEINT as bytes or text, a TIME adjusted to UTC as a TIMETZ).
    con = duck()
    cols = [c for c, f in zip(oracle.column_names, oracle.schema)
            if "union" not in str(f.type) and c not in ("uh", "uu", "t", "t0", "inner")]
    sel = ", ".join(f'"{c}"' for c in cols)
    back = con.sql(f"SELECT {sel} FROM read_parquet('{path}')").fetchall()
    assert normal(back) == normal(con.sql(f"SELECT {sel} FROM ({q})").fetchall())


def normal(v):
    """Rows compared as values: fixed-size lists read back as lists, NaN equal to itself."""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, (list, tuple)):
        return [normal(x) for x in v]
    if isinstance(v, dict):
        return {k: normal(x) for k, x in v.items()}
    return v


def test_every_result_type_round_trips(tmp_path):
    q = query({**COLUMNS, **NESTED}, 30)
    check_against_duckdb(write(tmp_path, q), q)


def test_many_rows_of_deep_nesting_span_pages_and_row_groups(tmp_path):
    """A list of structs of lists over more rows than a page (20,000) and a row
    group (2^20) holds, nulls and empty lists varying by row."""
    cols = {"i": "i", "los": NESTED["los"], "mp": NESTED["mp"], "fx": NESTED["fx"]}
    small = query(cols, 50_000)
    check_against_duckdb(write(tmp_path, small), small)
    big = query({"i": "i", "l": "CASE WHEN i % 3 = 0 THEN NULL ELSE [i, NULL] END"}, 1_100_000)
    path = write(tmp_path, big)
    assert pq.ParquetFile(path).metadata.num_row_groups == 2
    con = duck()
    assert con.sql(f"SELECT count(*), count(l), sum(len(l)), sum(l[1]) FROM read_parquet('{path}')").fetchall() \
        == con.sql(f"SELECT count(*), count(l), sum(len(l)), sum(l[1]) FROM ({big})").fetchall()
    t = pq.read_table(path)
    assert t.column("l").slice(0, 4).to_pylist() == [None, [1, None], [2, None], None]
    assert t.column("i")[-1].as_py() == 1_099_999


def test_interval_parquet_cannot_hold_names_column_and_row(tmp_path):
    """INTERVAL holds unsigned months, days and milliseconds: a finer or negative
    value is refused, naming the column and row, and leaves no file."""
    out = tmp_path / "r.parquet"
    for expr, row in [("to_milliseconds(i) + CASE WHEN i = 3 THEN to_microseconds(1) ELSE INTERVAL 0 DAY END", 3),
                      ("[to_days(2 - i)]", 3)]:
        p = run("sql", f"SELECT i, {expr} AS x FROM range(5) t(i) ORDER BY i", "--lake", tmp_path / "lake",
                "--output", out, "--output-format", "parquet")
        assert p.returncode == 1, expr
        assert f'column "x'.encode() in p.stderr and f"row {row}:".encode() in p.stderr, p.stderr
        assert b"cast it (col::VARCHAR)" in p.stderr
        assert not out.exists() and list(tmp_path.glob("r.parquet*")) == []


def test_union_member_named_tag_is_refused(tmp_path):
    out = tmp_path / "r.parquet"
    p = run("sql", "SELECT union_value(tag := 1) AS u", "--lake", tmp_path / "lake",
            "--output", out, "--output-format", "parquet")
    assert p.returncode == 1
    assert b'column "u"' in p.stderr and b"rename the member" in p.stderr
    assert not out.exists()
