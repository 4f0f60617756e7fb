"""SQL over the lake reads the lake's tables and nothing else: DuckDB's file
readers, replacement scans of paths, ATTACH, COPY, EXPORT, INSTALL, LOAD and
SET are refused with a message saying why, and the embedded DuckDB itself has
external access off and its configuration locked (the wall behind the
planner's checks)."""
import datetime as dt
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pytest

import tlc
from conftest import table_files

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "timelake"
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])


@pytest.fixture
def filled(lake, lake_dir, tmp_path):
    t = lake.create_table("iot.readings", SCHEMA, time_column="time", series_key=["device_id"])
    t0 = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
    t.append(pa.table({"time": [t0, t0 + dt.timedelta(hours=1)], "device_id": ["a", "b"],
                       "temp": [1.5, 2.5]}, schema=SCHEMA))
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n")
    return t, secret


def data_file(lake_dir):
    return next(Path(lake_dir).rglob("*.parquet"))


FILE_FUNCTIONS = [
    "read_csv('{f}')", "read_csv_auto('{f}')", "read_json('{f}')", "read_json_auto('{f}')",
    "read_ndjson('{f}')", "read_ndjson_objects('{f}')", "read_json_objects('{f}')", "read_text('{f}')",
    "read_blob('{f}')", "read_parquet('{p}')", "parquet_scan('{p}')", "parquet_metadata('{p}')",
    "parquet_schema('{p}')", "parquet_file_metadata('{p}')", "parquet_kv_metadata('{p}')",
    "glob('{d}/*')", "sniff_csv('{f}')", "READ_CSV('/etc/passwd')",
]


@pytest.mark.parametrize("call", FILE_FUNCTIONS)
def test_file_functions_refused(filled, lake, lake_dir, call):
    _, secret = filled
    # Files outside the lake, and the lake's own files read directly (which
    # would skip dedup and everything else a table read does).
    q = f"SELECT * FROM {call.format(f=secret, p=data_file(lake_dir), d=secret.parent)}"
    with pytest.raises(tlc.TimelakeError) as e:
        lake.sql(q)
    name = call.split("(")[0].lower()
    assert f"{name}() is refused" in str(e.value) and "reads only the lake's tables" in str(e.value)
    assert "hunter2" not in str(e.value)


def test_file_function_inside_subquery_and_cte_refused(filled, lake):
    _, secret = filled
    for q in [f"SELECT * FROM iot.readings WHERE device_id IN (SELECT * FROM read_csv('{secret}'))",
              f"WITH s AS (SELECT * FROM read_text('{secret}')) SELECT * FROM s",
              f"SELECT (SELECT content FROM read_text('{secret}')) AS x"]:
        with pytest.raises(tlc.TimelakeError, match=r"read_\w+\(\) is refused"):
            lake.sql(q)


def test_replacement_scan_of_a_path_refused(filled, lake, lake_dir):
    _, secret = filled
    for path in [secret, data_file(lake_dir)]:
        with pytest.raises(tlc.TimelakeError, match="is refused: SQL over the lake reads only"):
            lake.sql(f"SELECT * FROM '{path}'")


STATEMENTS = [
    ("COPY", "COPY (SELECT 1) TO '{o}/out.csv'"),
    ("COPY", "COPY iot.readings TO '{o}/out.parquet' (FORMAT parquet)"),
    ("ATTACH", "ATTACH '{o}/x.duckdb' AS x"),
    ("EXPORT", "EXPORT DATABASE '{o}/exp'"),
    ("INSTALL", "INSTALL httpfs"),
    ("LOAD", "LOAD httpfs"),
    ("SET", "SET enable_external_access = true"),
    ("SET", "SET allowed_directories = ['/']"),
    ("PRAGMA", "PRAGMA threads = 1"),
    ("CALL", "CALL pragma_version()"),
    ("CREATE", "CREATE TABLE t AS SELECT 1"),
    ("SET", "-- a comment first\n/* and another */ SET threads = 1"),
]


@pytest.mark.parametrize("kind,stmt", STATEMENTS)
def test_statements_refused(filled, lake, lake_dir, tmp_path, kind, stmt):
    out = tmp_path / "out"
    out.mkdir()
    before = table_files(lake_dir)
    with pytest.raises(tlc.TimelakeError) as e:
        lake.sql(stmt.format(o=out))
    assert f"{kind} statements are refused" in str(e.value)
    assert "runs one SELECT query" in str(e.value)
    assert list(out.iterdir()) == [] and table_files(lake_dir) == before


def test_second_statement_refused(filled, lake, tmp_path):
    with pytest.raises(tlc.TimelakeError, match="a statement other than SELECT is refused"):
        lake.sql(f"SELECT 1; COPY (SELECT 1) TO '{tmp_path}/x.csv'")
    assert not (tmp_path / "x.csv").exists()


def test_engine_locked_down(filled, lake, lake_dir):
    """The wall behind the planner: DuckDB itself refuses files outside the
    lake and any change of its settings."""
    got = lake.sql("SELECT current_setting('enable_external_access') AS a, "
                   "current_setting('lock_configuration') AS l, "
                   "current_setting('allowed_directories') AS d, "
                   "current_setting('autoinstall_known_extensions') AS i, "
                   "current_setting('autoload_known_extensions') AS o").to_pylist()[0]
    assert got["a"] is False and got["l"] is True and got["i"] is False and got["o"] is False
    dirs = got["d"]
    assert f"{os.path.realpath(lake_dir)}/" in dirs or f"{lake_dir}/" in dirs
    # The lake, and the engine's private directory (fetched files, made on
    # first use) and its sibling for DuckDB's spills.
    private = sorted((d for d in dirs if "timelake-query-" in d), key=len)
    assert len(dirs) == 3 and len(private) == 2 and all(d.endswith("/") for d in dirs)
    assert private[1] == private[0][:-1] + ".spill/"
    assert not os.path.exists(private[0])  # a local lake fetches nothing: nothing made


def test_serialized_sql_cannot_bypass_the_planner(filled, lake):
    _, secret = filled
    with pytest.raises(tlc.TimelakeError, match="json_execute_serialized_sql"):
        lake.sql("SELECT * FROM json_execute_serialized_sql(json_serialize_sql("
                 f"'SELECT * FROM read_text(''{secret}'')'))")


def test_depth_error_gives_advice_that_works(filled, lake):
    q = "SELECT " + " + ".join(["(1"] * 1200) + ")" * 1200
    with pytest.raises(tlc.TimelakeError) as e:
        lake.sql(q)
    assert "SET" not in str(e.value) and "deep" in str(e.value)


def test_queries_still_work(filled, lake):
    got = lake.sql("SELECT device_id, temp FROM iot.readings ORDER BY 1").to_pylist()
    assert got == [{"device_id": "a", "temp": 1.5}, {"device_id": "b", "temp": 2.5}]
    assert lake.latest("iot.readings").num_rows == 2
    got = lake.sql("SELECT * FROM range(3) r, (SELECT count(*) n FROM iot.readings) c").num_rows
    assert got == 3


def test_cli_refuses_file_reads(filled, lake_dir):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    p = subprocess.run([str(CLI), "sql", "--lake", str(lake_dir), "SELECT * FROM read_csv('/etc/passwd')"],
                       capture_output=True, env=env)
    assert p.returncode != 0 and b"root:" not in p.stdout
    assert b"read_csv() is refused" in p.stderr
