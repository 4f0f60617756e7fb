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
