"""tl_lake_query through the ctypes binding: Arrow inputs as relations of one
query (joined with lake tables, scanned twice, of every type they take),
checked against DuckDB (Python) running the same SQL over the same data;
only_namespace, max_rows (with truncated), timeout_ms; inputs leave nothing
behind, and the query still reads nothing but tables and inputs."""

import datetime
import random

import duckdb
import pyarrow as pa
import pytest

import tlc


def duck(sql, **tables):
    con = duckdb.connect()
    for name, data in tables.items():
        con.register(name, data)
    out = con.sql(sql).arrow()
    return out.read_all() if hasattr(out, "read_all") else out


def rows(table):
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def lake_with_table(tmp_path, n=500, seed=3):
    rng = random.Random(seed)
    data = pa.table({
        "k": [f"k{rng.randrange(60)}" for _ in range(n)],
        "v": [rng.randrange(-1000, 1000) for _ in range(n)],
        "d": [datetime.date(2026, 1, 1) + datetime.timedelta(days=rng.randrange(300)) for _ in range(n)],
    })
    lake = tlc.Lake(str(tmp_path / "lake"))
    lake.create_table("pipe.facts", data.schema).append(data)
    return lake, data


def random_input(seed, n=300):
    rng = random.Random(seed)
    return pa.table({
        "k": pa.array([f"k{rng.randrange(80)}" if rng.random() > 0.05 else None for _ in range(n)],
                      pa.large_string()),
        "small": pa.array([rng.randrange(-100, 100) for _ in range(n)], pa.int8()),
        "big": pa.array([rng.randrange(2**40) for _ in range(n)], pa.uint64()),
        "x": [rng.random() if rng.random() > 0.1 else None for _ in range(n)],
        "ok": [rng.random() < 0.5 for _ in range(n)],
        "when": pa.array([1_700_000_000_000 + rng.randrange(10**9) for _ in range(n)], pa.timestamp("ms", "UTC")),
        "cat": pa.array([rng.choice(["red", "green", "blue"]) for _ in range(n)]).dictionary_encode(),
    })


QUERIES = [
    "SELECT f.k, f.v, s.small, s.x FROM facts f JOIN src s ON f.k = s.k",
    "SELECT a.k, count(*) AS n FROM src a JOIN src b ON a.k = b.k GROUP BY a.k",  # scanned twice
    "SELECT k, sum(v) AS total, max(d) AS last FROM facts WHERE k IN (SELECT k FROM src WHERE ok) GROUP BY k",
    "SELECT cat, avg(x) AS ax, sum(big) AS sb, min(\"when\") AS w FROM src GROUP BY cat",
    "WITH s AS (SELECT * FROM src WHERE small > 0) SELECT s.k, other.v FROM s JOIN other ON s.k = other.k",
]


@pytest.mark.parametrize("query", QUERIES)
def test_inputs_against_duckdb(tmp_path, query):
    lake, facts = lake_with_table(tmp_path)
    src, other = random_input(1), pa.table({"k": ["k1", "k2", "k3"], "v": [1, 2, 3]})
    ours = lake.query(query, namespace="pipe", inputs={"src": src, "OTHER": other})
    theirs = duck(query, facts=facts, src=src.cast(pa.schema([
        ("k", pa.string()), ("small", pa.int64()), ("big", pa.int64()), ("x", pa.float64()), ("ok", pa.bool_()),
        ("when", pa.timestamp("us", "UTC")), ("cat", pa.string())])), other=other)
    assert ours.num_rows > 0
    assert rows(ours) == rows(theirs.cast(ours.schema))


def test_input_types_round_trip(tmp_path):
    lake = tlc.Lake(str(tmp_path / "lake"))
    src = pa.table({
        "s": pa.array(["a", None, "ü"], pa.string_view()),
        "b": pa.array([b"\x00\x01", None, b"x"], pa.large_binary()),
        "i16": pa.array([1, None, -3], pa.int16()),
        "u32": pa.array([0, 4_000_000_000, None], pa.uint32()),
        "f16": pa.array([1.5, None, -2.0], pa.float16()),
        "f32": pa.array([0.25, 1e30, None], pa.float32()),
        "d": pa.array([datetime.date(1, 1, 1), None, datetime.date(9999, 12, 31)]),
        "ts": pa.array([0, None, 2**32], pa.timestamp("s")),
    })
    out = lake.query("SELECT * FROM src", inputs={"src": src})
    assert out.schema.names == src.schema.names
    assert out.column("s").to_pylist() == ["a", None, "ü"]
    assert out.column("b").to_pylist() == [b"\x00\x01", None, b"x"]
    assert out.column("i16").to_pylist() == [1, None, -3]
    assert out.column("u32").to_pylist() == [0, 4_000_000_000, None]
    assert out.column("f16").to_pylist() == [1.5, None, -2.0]
    assert out.column("f32").to_pylist() == [0.25, pa.array([1e30], pa.float32())[0].as_py(), None]
    assert out.column("d").to_pylist() == [datetime.date(1, 1, 1), None, datetime.date(9999, 12, 31)]
    assert out.column("ts").cast(pa.int64()).to_pylist() == [0, None, 2**32 * 1_000_000]
    # A value that does not fit is refused, never wrapped.
    with pytest.raises(ValueError, match=r'input "src": column "ts".*out of range'):
        lake.query("SELECT * FROM src", inputs={"src": pa.table({"ts": pa.array([2**50], pa.timestamp("s"))})})
    # An empty input still has its columns.
    empty = pa.table({"a": pa.array([], pa.int64())})
    assert lake.query("SELECT count(*) AS n, sum(a) AS s FROM e", inputs={"e": empty}).to_pylist() == [
        {"n": 0, "s": None}]


def test_inputs_are_the_querys_only(tmp_path):
    lake, facts = lake_with_table(tmp_path)
    src = pa.table({"k": ["k1"]})
    # An input hides a table of its name, for this query only.
    assert lake.query("SELECT * FROM facts", namespace="pipe", inputs={"facts": src}).num_rows == 1
    assert lake.query("SELECT count(*) AS n FROM facts", namespace="pipe").to_pylist() == [{"n": facts.num_rows}]
    lake.query("SELECT * FROM src", inputs={"src": src})
    with pytest.raises(KeyError, match="src"):
        lake.query("SELECT * FROM src")
    with pytest.raises(tlc.TimelakeError, match="src"):
        lake.query("SELECT * FROM temp.main.src")
    # Bad inputs are refused naming them; every stream is consumed either way.
    with pytest.raises(ValueError, match='input "d": column "x" is of type decimal128'):
        lake.query("SELECT 1", inputs={"ok": src, "d": pa.table({"x": pa.array([1], pa.decimal128(5, 2))})})
    with pytest.raises(ValueError, match="have one name"):
        lake.query("SELECT 1", inputs={"a": src, "A": src})
    with pytest.raises(ValueError, match="max_rows"):
        lake.query("SELECT 1", inputs={"a": src}, max_rows=-1)
    # Files stay out of reach, inputs or not.
    with pytest.raises(tlc.TimelakeError, match="refused"):
        lake.query("SELECT * FROM src, read_csv('/etc/passwd')", inputs={"src": src})


def test_only_namespace(tmp_path):
    lake, _ = lake_with_table(tmp_path)
    lake.create_table("secret.t", pa.schema([("a", pa.int64())])).append(pa.table({"a": [42]}))
    assert lake.query("SELECT a FROM secret.t", namespace="pipe").to_pylist() == [{"a": 42}]
    for q in ("SELECT a FROM secret.t", "SELECT a FROM memory.secret.t", "SELECT a FROM SECRET.T",
              "SELECT * FROM pipe.facts, secret.t"):
        with pytest.raises(KeyError, match="outside namespace pipe"):
            lake.query(q, namespace="pipe", only_namespace=True)
    # information_schema shows the namespace's own tables only; DuckDB's catalogs none
    seen = lake.query("SELECT table_schema, table_name FROM information_schema.tables "
                      "WHERE table_schema <> 'information_schema'", namespace="pipe", only_namespace=True)
    assert seen.to_pylist() == [{"table_schema": "pipe", "table_name": "facts"}]
    for q in ("SELECT * FROM system.information_schema.tables", "SELECT * FROM system.pg_catalog.pg_tables"):
        with pytest.raises(tlc.TimelakeError, match="may see only its namespace"):
            lake.query(q, namespace="pipe", only_namespace=True)
    for q in ("SELECT * FROM duckdb_views()", "SELECT * FROM duckdb_tables()", "SELECT * FROM pragma_table_info('x')"):
        with pytest.raises(tlc.TimelakeError, match="may see only its namespace"):
            lake.query(q, namespace="pipe", only_namespace=True)
    assert lake.query("SELECT count(*) AS n FROM pipe.facts", namespace="pipe", only_namespace=True).num_rows == 1


def test_max_rows(tmp_path):
    lake, facts = lake_with_table(tmp_path)
    q = "SELECT k, v FROM facts ORDER BY v, k"
    full = duck(q, facts=facts).to_pylist()
    for limit in (1, 7, 2048, 2049, len(full), len(full) + 1):
        stats = {}
        out = lake.query(q, namespace="pipe", max_rows=limit, stats=stats)
        assert out.to_pylist() == full[:limit]
        assert stats["truncated"] == (limit < len(full))
    stats = {}
    out = lake.query("SELECT * FROM range(100000000000)", max_rows=3, stats=stats)
    assert out.num_rows == 3 and stats["truncated"] == 1


def test_max_rows_on_newest_first(tmp_path):
    """A top-k query over a time-series table, answered from its newest data, is cut too."""
    lake = tlc.Lake(str(tmp_path / "lake"))
    t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    data = pa.table({"time": [t0 + datetime.timedelta(minutes=i) for i in range(5000)],
                     "dev": [f"d{i % 7}" for i in range(5000)], "val": list(range(5000))})
    lake.create_table("m.r", data.schema, time_column="time", series_key=["dev"]).append(data)
    q = "SELECT time, dev, val FROM r ORDER BY time DESC LIMIT 100"
    stats = {}
    out = lake.query(q, namespace="m", max_rows=10, stats=stats)
    assert out.column("val").to_pylist() == list(range(4999, 4989, -1)) and stats["truncated"] == 1


def test_timeout(tmp_path):
    lake, _ = lake_with_table(tmp_path)
    slow = "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"
    with pytest.raises(tlc.TimelakeError, match="timed out.*200 ms"):
        lake.query(slow, timeout_ms=200)
    with pytest.raises(tlc.TimelakeError, match="timed out"):
        lake.query(slow, timeout_ms=200, max_rows=5, inputs={"src": pa.table({"a": [1]})})
    # The engine is fine afterwards, and a query inside its limit runs.
    assert lake.query("SELECT count(*) AS n FROM facts", namespace="pipe", timeout_ms=60000).to_pylist() == [
        {"n": 500}]
