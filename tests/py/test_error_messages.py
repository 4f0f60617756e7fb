"""Error messages say what is wrong, where, and what to do (issue 14): each
message here named nothing, or advised what cannot be done."""
import os

from test_cli import SCHEMA, ok, run, write


def test_create_of_an_existing_table(tmp_path):
    lake = tmp_path / "lake"
    ok("create", "t.r", "--lake", lake, "--schema", SCHEMA)
    p = run("create", "t.r", "--lake", lake, "--schema", SCHEMA)
    assert p.returncode == 1
    assert b"table t.r already exists: choose another name, or drop it first" in p.stderr


def test_latest_of_a_missing_table(tmp_path):
    p = run("latest", "nosuch", "--lake", tmp_path / "lake")
    assert p.returncode == 1
    assert b"table default.nosuch not found: check the name (ls lists the lake's tables)" in p.stderr


def test_reserved_ingest_column_advice_works_on_the_command_line(tmp_path):
    like = write(tmp_path / "x.csv", "time,_ingest_ts,v\n2024-05-01T10:00:00Z,2024-05-01T10:00:00Z,1\n")
    p = run("create", "t", "--lake", tmp_path / "lake", "--like", like, "--time-column", "time")
    assert p.returncode == 1
    assert b"ingest_time=False\n" not in p.stderr and b"rename that column" in p.stderr


def test_import_of_a_dangling_symlink(tmp_path):
    lake = tmp_path / "lake"
    ok("create", "t", "--lake", lake, "--schema", SCHEMA)
    os.symlink(tmp_path / "gone.csv", tmp_path / "link.csv")
    p = run("import", tmp_path / "link.csv", "--lake", lake, "--table", "t")
    assert p.returncode != 0
    assert b"is a symbolic link to" in p.stderr and b"gone.csv" in p.stderr


def test_refused_statement_names_itself(tmp_path):
    lake = tmp_path / "lake"
    ok("create", "t", "--lake", lake, "--schema", SCHEMA)
    p = run("sql", "DELETE FROM t", "--lake", lake)
    assert p.returncode != 0 and b"DELETE statements are refused" in p.stderr
    assert b"serialized to json" not in p.stderr


def _time_series_table(tmp_path):
    lake = tmp_path / "lake"
    ok("create", "t", "--lake", lake, "--schema", SCHEMA, "--time-column", "time",
       "--series-key", "device_id")
    return lake


def _versions(lake):
    return sorted(p.name for p in (lake / "default" / "t" / "metadata").iterdir())


def test_null_in_a_required_column_names_file_and_line(tmp_path):
    lake = _time_series_table(tmp_path)
    before = _versions(lake)
    # 70,000 rows: the null falls in the reader's second batch and the table's
    # chunk, so only the file's own line number can name it.
    rows = "".join(f"2024-05-01T10:{i // 1000 % 60:02d}:{i % 60:02d}Z,d{i},1\n" for i in range(70000))
    big = write(tmp_path / "big.csv", "time,device_id,temp\n" + rows + ",d,2\n")
    p = run("append", big, "--lake", lake, "--table", "t")
    assert p.returncode == 1
    assert b'big.csv: line 70002, column "time": empty, but the table requires a value' in p.stderr
    na = write(tmp_path / "na.csv", "time,device_id,temp\n2024-05-01T10:00:00Z,a,1\n\nNA,b,2\n")
    p = run("append", na, "--lake", lake, "--table", "t")
    assert b'na.csv: line 4, column "time": "NA" (read as null), but the table requires' in p.stderr
    nd = write(tmp_path / "x.ndjson", '{"time":"2024-05-01T10:00:00Z","device_id":"a"}\n\n'
               '{"time":null,"device_id":"b"}\n')
    p = run("append", nd, "--lake", lake, "--table", "t")
    assert b'x.ndjson: line 3, column "time": null or missing, but the table requires' in p.stderr
    import pyarrow as pa
    import pyarrow.parquet as pq
    t = pa.table({"time": pa.array([1, 2, None], pa.timestamp("us", tz="UTC")),
                  "device_id": ["a", "b", "c"], "temp": [1.0, 2.0, 3.0]})
    pq.write_table(t, tmp_path / "x.parquet", row_group_size=2)
    p = run("append", tmp_path / "x.parquet", "--lake", lake, "--table", "t")
    assert b'x.parquet: row 2 (counting from 0), column "time": null, but the table requires' in p.stderr
    imp = tmp_path / "landing"
    imp.mkdir()
    write(imp / "a.csv", "time,device_id,temp\n2024-05-01T10:00:00Z,a,1\n")
    write(imp / "b.csv", "time,device_id,temp\n2024-05-01T10:00:00Z,a,1\n,b,2\n")
    p = run("import", imp, "--lake", lake, "--table", "t", "--files-per-commit", "2")
    assert p.returncode != 0
    assert b'b.csv: line 3, column "time": empty, but the table requires' in p.stderr
    assert _versions(lake) == before


def test_missing_time_column_names_the_file(tmp_path):
    lake = _time_series_table(tmp_path)
    before = _versions(lake)
    f = write(tmp_path / "no_time.csv", "device_id,temp\na,1\n")
    p = run("append", f, "--lake", lake, "--table", "t")
    assert p.returncode == 1
    assert (b'no_time.csv: required column "time" is missing (the file has "device_id", "temp")'
            in p.stderr)
    nd = write(tmp_path / "no_time.ndjson", '{"device_id":"a","temp":1}\n')
    p = run("append", nd, "--lake", lake, "--table", "t")
    assert b'no_time.ndjson: line 1, column "time": null or missing' in p.stderr
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"device_id": ["a"], "temp": [1.0]}), tmp_path / "no_time.parquet")
    p = run("import", tmp_path / "no_time.parquet", "--lake", lake, "--table", "t")
    assert b'no_time.parquet: required column "time" is missing (the file has "device_id", "temp")' in p.stderr
    assert _versions(lake) == before
