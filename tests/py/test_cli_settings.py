"""The command line's settings and storage options (issue 19): the global
-w/--warehouse and -o KEY=VALUE, alter, settings [--json], sql --set,
append --no-maintain and --rows-per-commit, create --no-ingest-time, and
maintain of many tables at once; checked against the library (tlc), pyarrow
and the reference where it has the same call."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tlc
from conftest import table_files
from store_servers import server_fixture
from test_cli import CLI, SCHEMA, ok, run

s3 = pytest.fixture(scope="module")(server_fixture("s3"))
CSV = "time,device_id,temp\n" + "".join(
    f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,d{i % 3},{i}\n" for i in range(1000))


@pytest.fixture(autouse=True)
def need_cli():
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text(CSV)
    return p


def create(lake, name="iot.readings", *extra):
    ok("-w", lake, "create", name, "--schema", SCHEMA, "--time-column", "time", "--series-key", "device_id",
       *extra)


def count(lake, name="iot.readings", *extra):
    out = ok("-w", lake, "sql", f"SELECT count(*) AS n FROM {name}", "--json", *extra)
    return json.loads(out.splitlines()[0])["n"]


def test_warehouse_and_storage_options_anywhere(tmp_path, data):
    lake = tmp_path / "lake"
    ok("-w", lake, "create", "t", "--schema", SCHEMA, "--time-column", "time")
    ok("create", "u", "-w", lake, "--schema", SCHEMA, "--time-column", "time")
    ok(f"--warehouse={lake}", "append", "--table", "t", data)
    ok("append", "--table", "u", f"-w{lake}", data)
    assert ok("--warehouse", lake, "ls", "--json").count('"name"') == 2
    assert count(lake, "t") == count(lake, "u") == 1000
    # The environment still names it; -w wins over it.
    assert ok("ls", env={"TIMELAKE_WAREHOUSE": str(lake)}).count("default.") == 2
    assert "default.t" in ok("-w", lake, "ls", env={"TIMELAKE_WAREHOUSE": str(tmp_path / "other")})
    # Storage options reach the lake: an unknown one is refused naming it.
    p = run("-w", lake, "-o", "bogus_option=1", "ls")
    assert p.returncode == 1 and b"bogus_option" in p.stderr
    for bad in (["-o", "novalue"], ["-o"], ["-w", lake, "-w", tmp_path / "x", "ls"], ["ls", "-o", "=x"]):
        p = run(*bad)
        assert p.returncode == 2, bad
    p = run("ls")
    assert p.returncode == 2 and b"-w" in p.stderr
    assert b"-o KEY=VALUE" in run("--help").stdout and b"--warehouse" in run("sql", "--help").stdout


def test_storage_options_on_s3(s3, tmp_path, data):
    url = s3.url()
    opts = [x for k, v in s3.options.items() for x in ("-o", f"{k}={v}")]
    ok("-w", url, *opts, "create", "iot.readings", "--schema", SCHEMA, "--time-column", "time")
    ok("-w", url, *opts, "append", "--table", "iot.readings", data)
    assert count(url, "iot.readings", *opts) == 1000
    assert tlc.Lake(url, s3.options).table("iot.readings").info()["rows"] == 1000
    # Without the options the endpoint is unknown: the command fails, it does not hang.
    dead = s3.option_list(aws_endpoint="http://127.0.0.1:9", max_retries="0")
    p = run("-w", url, *[x for k, v in dead.items() for x in ("-o", f"{k}={v}")], "ls")
    assert p.returncode == 3, p.stderr


def test_alter_and_settings(tmp_path, data, reference):
    lake = tmp_path / "lake"
    create(lake)
    before = table_files(lake)
    p = run("-w", lake, "alter", "iot.readings", "--set", "read_dedup=maybe")
    assert p.returncode == 1 and b'timelake.read-dedup: must be true or false, got "maybe"' in p.stderr
    p = run("-w", lake, "alter", "iot.readings", "--set", "time_column=x")
    assert p.returncode == 1 and b"fixed when the table is created" in p.stderr
    assert run("-w", lake, "alter", "iot.readings").returncode == 2
    assert table_files(lake) == before  # nothing committed
    out = json.loads(ok("-w", lake, "alter", "iot.readings", "--set", "read_dedup=false", "--set",
                        "timelake.retention=90 days", "--set", "owner.team=a", "--json"))
    assert out == {"table": "iot.readings", "version": 2, "changed": True}
    shown = json.loads(ok("-w", lake, "settings", "iot.readings", "--json"))
    values = {s["name"]: (s["value"], s["source"]) for s in shown["settings"]}
    assert values["read-dedup"] == ("false", "table") and values["retention"] == ("90 days", "table")
    assert values["newest-first"] == ("true", "default") and values["ingest-time-column"][0] == "_ingest_ts"
    assert shown["properties"]["owner.team"] == "a"
    # The reference reads the table's settings as set.
    theirs = reference(f"""
        import json, timelake
        t = timelake.Lake({str(lake)!r}).table("iot.readings")
        t.set_properties({{"newest_first": "false"}})
        print(json.dumps(t.version))
        """)
    assert theirs == 3
    ok("-w", lake, "alter", "iot.readings", "--unset", "read-dedup", "--unset", "owner.team")
    props = tlc.Lake(lake).table("iot.readings").properties()
    assert "timelake.read-dedup" not in props and "owner.team" not in props
    assert props["timelake.newest-first"] == "false" and props["timelake.retention"] == "90 days"


def test_settings_lists_the_registry():
    listed = json.loads(ok("settings", "--json"))
    assert [s["name"] for s in listed] == [s["name"] for s in tlc.settings()]
    text = ok("settings")
    for s in tlc.settings():
        assert s["name"] in text
    assert "SET AT" in text.splitlines()[0]


def test_sql_set(tmp_path, data):
    lake = tmp_path / "lake"
    create(lake)
    ok("-w", lake, "append", "--table", "iot.readings", data, "--no-maintain")
    ok("-w", lake, "append", "--table", "iot.readings", data, "--no-maintain")  # the same rows again
    assert count(lake) == 1000
    assert count(lake, "iot.readings", "--set", "timelake.read_dedup=false") == 2000
    assert count(lake, "iot.readings", "--set", "read-dedup=false", "--set", "newest_first=false") == 2000
    p = run("-w", lake, "sql", "SELECT 1", "--set", "retention=1d")
    assert p.returncode == 1 and b"can't be set at the session level, only at: create, table" in p.stderr
    assert run("-w", lake, "sql", "SELECT 1", "--set", "noequals").returncode == 2


def test_append_no_maintain(tmp_path, data):
    lake = tmp_path / "lake"
    create(lake, "iot.readings", "--property", "timelake.compact-min-files=2")
    for _ in range(3):
        ok("-w", lake, "append", "--table", "iot.readings", data, "--no-maintain")
    info = tlc.Lake(lake).table("iot.readings").info()
    assert (info["files"], info["version"]) == (3, 4)  # three commits, nothing compacted
    ok("-w", lake, "append", "--table", "iot.readings", data)
    assert tlc.Lake(lake).table("iot.readings").info()["files"] < 4  # inline maintenance ran


def test_append_rows_per_commit(tmp_path, data):
    lake = tmp_path / "lake"
    create(lake)
    out = ok("-w", lake, "append", "--table", "iot.readings", data, "--rows-per-commit", "300",
             "--batch-id", "load-1", "--no-maintain", "--json")
    commits = [json.loads(line) for line in out.splitlines()]
    assert [c["rows"] for c in commits] == [300, 300, 300, 100] and [c["commit"] for c in commits] == [1, 2, 3, 4]
    t = tlc.Lake(lake).table("iot.readings")
    assert t.info()["version"] == 5 and t.batches_committed(["load-1#1", "load-1#4", "load-1#5"]) == [
        True, True, False]
    # Again: every commit is a duplicate, nothing is added, and no row lands under another id.
    again = [json.loads(line) for line in ok("-w", lake, "append", "--table", "iot.readings", data,
                                              "--rows-per-commit", "300", "--batch-id", "load-1",
                                              "--json").splitlines()]
    assert [c["duplicate"] for c in again] == [True] * 4
    assert tlc.Lake(lake).table("iot.readings").info()["version"] == 5
    rows = pa.concat_tables(pq.read_table(f) for f in sorted((lake / "iot/readings/data").rglob("*.parquet")))
    assert sorted(rows.column("temp").to_pylist()) == [float(i) for i in range(1000)]
    # Each file its own batch of commits with --batch-id-from-name; stdin without an id.
    other = tmp_path / "b.csv"
    other.write_text(CSV.replace("d0", "e0"))
    out = ok("-w", lake, "append", "--table", "iot.readings", other, "--batch-id-from-name",
             "--rows-per-commit", "999", "--json")
    assert [json.loads(line)["rows"] for line in out.splitlines()] == [999, 1]
    p = run("-w", lake, "append", "--table", "iot.readings", "-", "--format", "csv", "--rows-per-commit", "400",
            "--json", stdin=CSV.replace("d1", "f1").encode())
    assert [json.loads(line)["rows"] for line in p.stdout.splitlines()] == [400, 400, 200]
    assert count(lake) == 1000 + 334 + 333
    for bad in ("0", "-5", "x"):
        assert run("-w", lake, "append", "--table", "iot.readings", data, "--rows-per-commit", bad).returncode == 2


def test_create_no_ingest_time(tmp_path, reference):
    lake = tmp_path / "lake"
    create(lake, "iot.plain", "--no-ingest-time")
    t = tlc.Lake(lake).table("iot.plain")
    assert t.schema.names == ["time", "device_id", "temp"] and t.info()["ingest_time_column"] is None
    theirs = reference(f"""
        import json, pyarrow as pa, timelake
        lake = timelake.Lake({str(lake)!r})
        t = lake.table("iot.plain")
        mine = lake.create_table("iot.theirs", t.schema, time_column="time", series_key=["device_id"],
                                 ingest_time=False)
        print(json.dumps([t.info()["ingest_time_column"], mine.schema.names]))
        """)
    assert theirs == [None, ["time", "device_id", "temp"]]


def test_maintain_many_tables(tmp_path, data):
    lake = tmp_path / "lake"
    for name in ("a.one", "a.two", "b.three"):
        create(lake, name)
        for _ in range(2):
            ok("-w", lake, "append", "--table", name, data, "--no-maintain")
    out = [json.loads(line) for line in ok("-w", lake, "maintain", "a.one", "b.three", "--json").splitlines()]
    assert [r["table"] for r in out] == ["a.one", "b.three"] and all(r["files_rewritten"] == 2 for r in out)
    assert tlc.Lake(lake).table("a.two").info()["files"] == 2
    p = run("-w", lake, "maintain", "a.two", "nope.missing", "b.three", "--json")
    assert p.returncode == 1 and b"nope.missing" in p.stderr
    assert [json.loads(line)["table"] for line in p.stdout.splitlines()] == ["a.two", "b.three"]
    assert tlc.Lake(lake).table("a.two").info()["files"] == 1
    out = ok("-w", lake, "maintain", "--all", "--json").splitlines()
    assert [json.loads(line)["table"] for line in out] == ["a.one", "a.two", "b.three"]
    assert run("-w", lake, "maintain", "--all", "a.one").returncode == 2
    assert run("-w", lake, "maintain").returncode == 2


def test_serve_notifications_opens_the_lake_with_the_storage_options(tmp_path):
    lake = tmp_path / "lake"
    create(lake)
    p = run("-w", lake, "-o", "bogus_key=1", "serve-notifications", "--table", "iot.readings", "--token", "x",
            "--bind", "127.0.0.1", "--port", "1")
    assert p.returncode == 1 and b"bogus_key" in p.stderr


def test_rows_per_commit_splits_keep_every_value(tmp_path):
    """Batches split between commits keep their nulls, strings and nested
    values where they were (the split shares the batch's buffers)."""
    lake = tmp_path / "lake"
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("temp", pa.float64()),
                        ("tags", pa.struct([("a", pa.int64()), ("b", pa.string())]))])
    tlc.Lake(lake).create_table("t.plain", schema=schema).close()
    rows = []
    for i in range(23):
        row = {"id": i}
        if i % 3:
            row["name"] = f"n{i}" * (i % 4)
        if i % 5:
            row["temp"] = i / 2
        if i % 7:
            row["tags"] = {"a": i, "b": None if i % 2 else f"b{i}"}
        rows.append(row)
    data = tmp_path / "rows.ndjson"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = ok("-w", lake, "append", "--table", "t.plain", data, "--rows-per-commit", "5", "--json")
    assert [json.loads(line)["rows"] for line in out.splitlines()] == [5, 5, 5, 5, 3]
    out = ok("-w", lake, "sql", "SELECT id, name, temp, tags FROM t.plain ORDER BY id", "--json")
    seen = [json.loads(line) for line in out.splitlines()]
    want = [{"id": r["id"], "name": r.get("name"), "temp": r.get("temp"), "tags": r.get("tags")}
            for r in rows]
    assert seen == want
