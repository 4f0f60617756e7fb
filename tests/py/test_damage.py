"""A damaged lake is reported, never taken for a smaller one: a table with an
unreadable manifest refuses appends (which would report success into a table
no query can read) and its queries name the table and the file; `ls` lists
the readable tables and names the broken ones; a registry that is a folder
is an error, not an empty lake."""
import json
from pathlib import Path

import pytest

from conftest import table_files
from test_cli import SCHEMA, ok, run, write

CSV = "time,device_id,temp\n2024-05-01T10:00:00Z,pump-1,71.5\n"


@pytest.fixture
def lake(tmp_path):
    lake = tmp_path / "lake"
    for name in ["iot.readings", "iot.good"]:
        ok("create", name, "--lake", lake, "--schema", SCHEMA, "--time-column", "time",
           "--series-key", "device_id")
        ok("append", write(tmp_path / "a.csv", CSV), "--lake", lake, "--table", name)
    return lake


def test_damaged_manifest_refuses_appends_and_names_the_file(tmp_path, lake):
    manifest = next((lake / "iot/readings/metadata").glob("*-m0.avro"))
    manifest.write_bytes(b"Obj\x01garbage")
    q = run("sql", "--lake", lake, "SELECT count(*) FROM iot.readings")
    assert q.returncode != 0
    assert b"iot.readings" in q.stderr and manifest.name.encode() in q.stderr
    before = table_files(lake)
    p = run("append", write(tmp_path / "b.csv", CSV), "--lake", lake, "--table", "iot.readings")
    assert p.returncode != 0 and p.stdout == b""
    err = p.stderr.decode()
    assert "table iot.readings is damaged" in err and manifest.name in err and "restore" in err
    assert table_files(lake) == before
    # The other table is untouched by its neighbour's damage.
    ok("append", write(tmp_path / "c.csv", CSV.replace("pump-1", "pump-2")), "--lake", lake,
       "--table", "iot.good")


def test_ls_lists_readable_tables_and_names_broken_ones(lake):
    meta = sorted((lake / "iot/readings/metadata").glob("v*.metadata.json"))[-1]
    meta.write_text("{not json")
    p = run("ls", "--lake", lake)
    assert p.returncode != 0
    assert b"iot.good" in p.stdout and b"iot.readings" in p.stdout
    assert b"table iot.readings cannot be read" in p.stderr and meta.name.encode() in p.stderr
    p = run("ls", "--lake", lake, "--json")
    listing = json.loads(p.stdout)
    assert [t["name"] for t in listing] == ["iot.good", "iot.readings"]
    assert "error" in listing[1] and listing[0]["version"] >= 1


def test_registry_that_is_a_folder_is_an_error(tmp_path):
    lake = tmp_path / "lake"
    (lake / "timelake-tables.json").mkdir(parents=True)
    p = run("ls", "--lake", lake)
    assert p.returncode != 0 and p.stdout == b""
    assert b"timelake-tables.json" in p.stderr and b"directory" in p.stderr
