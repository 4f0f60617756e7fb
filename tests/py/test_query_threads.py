"""The lake option timelake_query_threads: the threads of a handle's SQL engine
(DuckDB's `threads`), for callers that run queries on threads of their own
(Karet maps files on its reading threads, one engine each). Without it, one
per processor; out of range or not a number, an error naming the option."""

import duckdb
import pyarrow as pa
import pytest

import tlc

ROWS = pa.table({"x": pa.array(range(5000), pa.int64())})


def threads(lake):
    return lake.sql("SELECT current_setting('threads') AS n").column("n")[0].as_py()


def test_one_thread_when_asked(tmp_path):
    lake = tlc.Lake(str(tmp_path / "w"), {"timelake_query_threads": "1"})
    assert threads(lake) == 1
    out = lake.query("SELECT sum(x) AS s, count(*) AS n FROM src", inputs={"src": ROWS})
    assert out.to_pylist() == [{"s": sum(range(5000)), "n": 5000}]


def test_the_engines_own_default_without_it(tmp_path):
    lake = tlc.Lake(str(tmp_path / "w"))
    assert threads(lake) == duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0]
    lake3 = tlc.Lake(str(tmp_path / "w"), {"TIMELAKE_QUERY_THREADS": "3"})  # keys in any case
    assert threads(lake3) == 3


@pytest.mark.parametrize("value", ["0", "1025", "two", "", "-1", "1.5"])
def test_a_bad_value_names_the_option(tmp_path, value):
    with pytest.raises(ValueError) as e:
        tlc.Lake(str(tmp_path / "w"), {"timelake_query_threads": value})
    assert "timelake_query_threads" in str(e.value)
