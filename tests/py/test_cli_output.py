"""Results reach where they were sent, or the command fails: --output FILE in
every format, a full stdout (/dev/full) a message and a non-zero exit, a
failed output no file at all. Queries of any length (from a file or stdin)
and queries that start with a -- comment."""
import json
import os

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from test_cli import SCHEMA, ok, run, write

CSV = "time,device_id,temp\n2024-05-01T10:00:00Z,pump-1,71.5\n2024-05-01T11:00:00Z,pump-2,3.25\n"
Q = "SELECT device_id, temp FROM iot.readings ORDER BY 1"


@pytest.fixture
def lake(tmp_path):
    lake = tmp_path / "lake"
    ok("create", "iot.readings", "--lake", lake, "--schema", SCHEMA, "--time-column", "time",
       "--series-key", "device_id")
    ok("append", write(tmp_path / "a.csv", CSV), "--lake", lake, "--table", "iot.readings")
    return lake


@pytest.mark.parametrize("fmt", [None, "table", "csv", "jsonl", "parquet"])
def test_output_file_in_every_format(tmp_path, lake, fmt):
    out = tmp_path / "out"
    args = ["sql", Q, "--lake", lake, "--output", out] + (["--output-format", fmt] if fmt else [])
    p = run(*args)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b""  # all of it went to the file
    if fmt == "parquet":
        assert pq.read_table(out).to_pylist() == [{"device_id": "pump-1", "temp": 71.5},
                                                  {"device_id": "pump-2", "temp": 3.25}]
    elif fmt == "csv":
        assert pacsv.read_csv(out).to_pylist() == [{"device_id": "pump-1", "temp": 71.5},
                                                   {"device_id": "pump-2", "temp": 3.25}]
    elif fmt == "jsonl":
        assert [json.loads(l) for l in out.read_text().splitlines()] == [
            {"device_id": "pump-1", "temp": 71.5}, {"device_id": "pump-2", "temp": 3.25}]
    else:
        lines = out.read_text().splitlines()
        assert lines[0].split() == ["device_id", "temp"] and lines[1].split() == ["pump-1", "71.5"]
    assert sorted(os.listdir(tmp_path)) == sorted(["lake", "a.csv", "out"])  # no temporary left


@pytest.mark.parametrize("args", [
    ["sql", Q], ["sql", Q, "--output-format", "csv"], ["sql", Q, "--json"],
    ["latest", "iot.readings"], ["info", "iot.readings", "--json"], ["ls"],
])
def test_full_stdout_is_an_error(lake, args):
    with open("/dev/full", "w") as full:
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TIMELAKE_WAREHOUSE")}
        import subprocess
        from test_cli import CLI
        p = subprocess.run([str(CLI), *map(str, args), "--lake", str(lake)], stdout=full,
                           stderr=subprocess.PIPE, env=env)
    assert p.returncode != 0
    assert b"cannot write" in p.stderr and b"No space left on device" in p.stderr


def test_failed_output_leaves_no_file(tmp_path, lake):
    out = tmp_path / "r.parquet"
    for fmt in ["parquet", "csv", "table"]:
        p = run("sql", "SELECT * FROM iot.nosuch", "--lake", lake, "--output", out, "--output-format", fmt)
        assert p.returncode != 0 and not out.exists()
    # A failure does not replace the file a previous run wrote.
    ok("sql", Q, "--lake", lake, "--output", out, "--output-format", "parquet")
    before = out.read_bytes()
    p = run("sql", "SELECT error('boom')", "--lake", lake, "--output", out, "--output-format", "parquet")
    assert p.returncode != 0 and out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == sorted(["lake", "a.csv", "r.parquet"])


def test_csv_header_is_not_printed_before_a_failure(lake):
    p = run("sql", "SELECT error('boom') AS x", "--lake", lake, "--output-format", "csv")
    assert p.returncode != 0 and p.stdout == b""


def test_long_query_from_file_and_stdin(tmp_path, lake):
    # 3 MB of query text: over the argument limit (a single argument is at most 128 KiB).
    pad = "\n".join(f"-- padding line {i} " + "x" * 100 for i in range(30000))
    query = pad + "\n" + Q
    path = write(tmp_path / "q.sql", query)
    assert "pump-2" in ok("sql", "--query-file", path, "--lake", lake)
    assert "pump-2" in ok("sql", "-", "--lake", lake, stdin=query.encode())
    assert "pump-2" in ok("sql", "--query-file", "-", "--lake", lake, stdin=query.encode())
    p = run("sql", Q, "--query-file", path, "--lake", lake)
    assert p.returncode == 2 and b"not both" in p.stderr
    p = run("sql", "--query-file", tmp_path / "missing.sql", "--lake", lake)
    assert p.returncode != 0 and b"missing.sql" in p.stderr


def test_query_starting_with_a_comment_is_no_option(lake):
    out = ok("sql", "-- the newest readings\n" + Q, "--lake", lake)
    assert "pump-1" in out
    out = ok("sql", "--lake", lake, "-- comment\nSELECT 42 AS answer")
    assert "42" in out


FLOATS = [100.0, 1e16, 0.1, -0.0, 2.5, 1.5e-7, 123456789012345.0, -3.0, 1e300]


@pytest.mark.parametrize("fmt", ["table", "csv", "jsonl"])
def test_floats_print_as_python_and_duckdb_do(lake, fmt):
    """Whole floats keep their .0 (100.0, not 1e+02): Python's repr (so
    pyarrow's values) and DuckDB's shell agree on it; the oracle is repr."""
    cols = ", ".join(f"{x!r}::DOUBLE AS c{i}" for i, x in enumerate(FLOATS))
    out = ok("sql", f"SELECT {cols}", "--lake", lake, "--output-format", fmt)
    if fmt == "jsonl":
        row = json.loads(out)
        assert [row[f"c{i}"] for i in range(len(FLOATS))] == FLOATS
        texts = out.strip()[1:-1].split(",")
        got = [t.split(":", 1)[1] for t in texts]
    else:
        got = out.splitlines()[1].split("," if fmt == "csv" else None)
    assert got == [repr(x) for x in FLOATS]
