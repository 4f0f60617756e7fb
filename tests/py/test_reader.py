"""tl_reader end to end through the ctypes binding: CSV, TSV and NDJSON read
into typed columns, checked against pyarrow's CSV reader and DuckDB's JSON
functions on random files (plain and gzipped, with quoting, unicode, escapes,
nested paths), and the lenient rules (nulled values, skipped lines, their
report) on files made to break them."""

import datetime
import gzip
import io
import json
import random

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import tlc

TYPES = {"s": "string", "i": "int64", "f": "float64", "b": "bool", "d": "date"}
ARROW = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
         "date": pa.date32()}
WORDS = ["plain", "with,comma", 'with "quotes"', "multi\nline", "ünïcødé ✓", "tab\there", " spaced ",
         "x" * 300, "NA", "null"]


def random_value(rng, kind):
    if rng.random() < 0.1:
        return None
    if kind == "s":
        return rng.choice(WORDS) + str(rng.randrange(100))
    if kind == "i":
        return rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randrange(-10**12, 10**12)])
    if kind == "f":
        return rng.choice([0.5, -2.25, 1e300, 5e-324, rng.uniform(-1e6, 1e6)])
    if kind == "b":
        return rng.random() < 0.5
    return datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randrange(-20000, 40000))


def random_rows(rng, kinds, n):
    return [[random_value(rng, k) for k in kinds] for _ in range(n)]


def csv_text(value, kind, delim):
    if value is None:
        return ""
    if kind == "b":
        text = "true" if value else "false"
    elif kind == "f":
        text = repr(value)
    else:
        text = str(value)
    if any(c in text for c in (delim, '"', "\n", "\r")) or text != text.strip():
        text = '"' + text.replace('"', '""') + '"'
    return text


@pytest.mark.parametrize("delim,compress", [(",", False), ("\t", False), (",", True)])
def test_csv_against_pyarrow(delim, compress):
    rng = random.Random(7 + len(delim) + compress)
    kinds = "sifbd" * 2
    header = [f"c{i}{k}" for i, k in enumerate(kinds)] + ["ignored"]
    rows = random_rows(rng, kinds, 3000)
    lines = [delim.join(header)]
    for row in rows:
        lines.append(delim.join([csv_text(v, k, delim) for v, k in zip(row, kinds)] + ["zz"]))
    data = ("\r\n" if compress else "\n").join(lines).encode() + b"\n"
    if compress:
        data = gzip.compress(data)
    # Ours: the columns in another order, one read under a new name.
    cols = [(h, TYPES[k]) for h, k in zip(header, kinds)][::-1]
    cols[0] = ("renamed", cols[0][1], cols[0][0])
    name = "f.tsv" if delim == "\t" else ("f.csv.gz" if compress else "f.csv")
    ours, report = tlc.read(data, cols, name=name, batch_rows=700)
    assert report["rows"] == 3000 and report["values_nulled"] == 0 and report["lines_skipped"] == 0
    # pyarrow: the same types; only an empty field is null, in every type.
    raw = gzip.decompress(data) if compress else data
    theirs = pacsv.read_csv(
        io.BytesIO(raw),
        parse_options=pacsv.ParseOptions(delimiter=delim, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types={h: ARROW[TYPES[k]] for h, k in zip(header, kinds)},
            null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True,
            include_columns=[c[2] if len(c) > 2 else c[0] for c in cols]))
    theirs = theirs.rename_columns([c[0] for c in cols])
    assert ours.schema == theirs.schema
    assert ours.equals(theirs)


def duck_type(t):
    return {"string": "VARCHAR", "int64": "BIGINT", "float64": "DOUBLE", "bool": "BOOLEAN", "date": "DATE"}[t]


def test_ndjson_paths_against_duckdb(tmp_path):
    rng = random.Random(11)
    records = []
    for i in range(2000):
        row = random_rows(rng, "sifbd", 1)[0]
        rec = {"id": i, "top": row[0], "deep": {"n": row[1], "list": [row[2], {"flag": row[3]}]},
               "when": row[4].isoformat() if row[4] else None}
        if rng.random() < 0.2:
            del rec["deep"]  # a path the line does not have: null
        records.append(rec)
    text = "\n".join(json.dumps(r, ensure_ascii=rng.random() < 0.5) for r in records) + "\n\n"
    cols = [("id", "int64"), ("top", "string"), ("n", "int64", "deep.n"), ("x", "float64", "deep.list[0]"),
            ("flag", "bool", "deep.list[1].flag"), ("when", "date")]
    ours, report = tlc.read(gzip.compress(text.encode()), cols, name="e.ndjson.gz")
    assert report["rows"] == 2000 and report["lines"] == 2001 and report["problems"] == []
    path = tmp_path / "e.ndjson"
    path.write_text(text)
    exprs = ", ".join(
        f"CAST(json_extract{'_string' if t == 'string' else ''}(json, '$.{p if len(c) > 2 else name}') AS {duck_type(t)}) AS {name}"
        for c in cols for name, t, p in [(c[0], c[1], c[2] if len(c) > 2 else None)])
    theirs = duckdb.sql(f"SELECT {exprs} FROM read_ndjson_objects('{path}')").arrow()
    if hasattr(theirs, "read_all"):
        theirs = theirs.read_all()
    theirs = theirs.cast(ours.schema)
    assert ours.equals(theirs)


def test_ndjson_lenient_rules():
    lines = [
        '{"i": "42", "f": "2.5", "b": 1, "s": 7.50, "d": "2024-05-01"}',
        '{"i": 4.2e1, "f": 3, "b": "FALSE", "s": true, "d": null}',
        '{"i": 4.5, "f": true, "b": 2, "s": {"k": [1, 2]}, "d": 20240501}',
        'not json',
        '[1, 2]',
        '{"i": 9223372036854775808, "s": "", "f": 1e400}',
        '{"i": 1, "b": true',  # a half-written last line
    ]
    cols = [("i", "int64"), ("f", "float64"), ("b", "bool"), ("s", "string"), ("d", "date")]
    table, report = tlc.read("\n".join(lines).encode(), cols, name="x.jsonl")
    assert table.to_pylist() == [
        {"i": 42, "f": 2.5, "b": True, "s": "7.50", "d": datetime.date(2024, 5, 1)},
        {"i": 42, "f": 3.0, "b": False, "s": "true", "d": None},
        {"i": None, "f": None, "b": None, "s": '{"k": [1, 2]}', "d": None},
        {"i": None, "f": None, "b": None, "s": "", "d": None},
    ]
    assert report["lines"] == 7 and report["rows"] == 4
    assert report["lines_skipped"] == 3 and report["values_nulled"] == 6
    skipped = [(line, msg) for line, col, msg in report["problems"] if col is None]
    assert [line for line, _ in skipped] == [4, 5, 7]
    assert "not a JSON object" in skipped[1][1]
    assert (3, "i", '"4.5" is not a valid int64') in report["problems"]
    assert (6, "i", '"9223372036854775808" is not a valid int64') in report["problems"]

    with pytest.raises(ValueError, match=r"x.jsonl: line 3, column \"i\": \"4.5\" is not a valid int64"):
        tlc.read("\n".join(lines).encode(), cols, name="x.jsonl", lenient=False)


def test_csv_files_that_fail():
    cols = [("a", "int64"), ("b", "string"), ("c", "date")]
    with pytest.raises(ValueError, match=r'f.csv: the header has no column "b", "c"'):
        tlc.read(b"a,x\n1,2\n", cols, name="f.csv")
    with pytest.raises(ValueError, match="f.csv: empty file"):
        tlc.read(b"", cols, name="f.csv")
    data = gzip.compress(b"a,b,c\n" + b"1,x,2024-01-01\n" * 5000)
    with pytest.raises(ValueError, match="f.csv.gz: truncated gzip file"):
        tlc.read(data[:-20], cols, name="f.csv.gz")
    with pytest.raises(ValueError, match="f.csv.gz: corrupt gzip data"):
        bad = bytearray(data)
        bad[-6] ^= 0xFF  # the CRC
        tlc.read(bytes(bad), cols, name="f.csv.gz")
    # Lenient: a ragged row is skipped and said; values that do not fit are nulled and said.
    table, report = tlc.read(b"a,b,c\n1,x,2024-01-01\n2,y\nzz,w,2024-13-01\n", cols, name="f.csv")
    assert table.to_pylist() == [{"a": 1, "b": "x", "c": datetime.date(2024, 1, 1)},
                                 {"a": None, "b": "w", "c": None}]
    assert report["problems"] == [(3, None, "2 fields, expected 3"),
                                  (4, "a", '"zz" is not a valid int64'),
                                  (4, "c", '"2024-13-01" is not a valid date')]


def test_bad_options():
    with pytest.raises(ValueError, match='unknown type "decimal"'):
        tlc.read(b"a\n1\n", [("a", "decimal")], name="f.csv")
    with pytest.raises(ValueError, match=r'path "a\[b\]": malformed array index'):
        tlc.read(b"{}\n", [("a", "int64", "a[b]")], name="f.ndjson")
    with pytest.raises(ValueError, match="unknown file type"):
        tlc.read(b"a\n1\n", [("a", "int64")], name="f.xls")
