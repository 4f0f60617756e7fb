"""End-to-end tests of the timelake command-line tool: every command, every bad
input, and the CSV/NDJSON readers against pyarrow's readers of the same files."""

import gzip
import json
import os
import subprocess
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest

from conftest import table_files

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "timelake"
SCHEMA = "time:timestamptz,device_id:string,temp:float64"


def run(*args, stdin=None, env=None, cwd=None):
    e = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "TIMELAKE_WAREHOUSE", "TIMELAKE_TABLE")}
    e["ASAN_OPTIONS"] = "detect_leaks=1"
    e.update(env or {})
    return subprocess.run([str(CLI), *map(str, args)], input=stdin, capture_output=True, env=e, cwd=cwd)


def ok(*args, **kw):
    p = run(*args, **kw)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.decode()


def read_table(lake, name="iot.readings"):
    """All rows of a table, read with pyarrow from its data files (no deletes in these tests)."""
    ns, _, t = name.rpartition(".")
    files = sorted((Path(lake) / (ns or "default") / t / "data").rglob("*.parquet"))
    if not files:
        return None
    return pa.concat_tables([pq.read_table(f) for f in files])


@pytest.fixture(autouse=True)
def need_cli():
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built")


@pytest.fixture
def lake(tmp_path):
    lake = tmp_path / "lake"
    ok("create", "iot.readings", "--lake", lake, "--schema", SCHEMA, "--time-column", "time",
       "--series-key", "device_id")
    return lake


def write(path, text):
    Path(path).write_text(text)
    return path


CSV = ('time,device_id,temp\n2024-05-01T10:00:00Z,pump-1,71.5\n2024-05-01T10:01:00.25Z,pump-2,\n'
       '"2024-05-01T12:02:00+02:00","pump ""x"", big",3e2\n\n2024-05-02 00:00:00Z,"multi\nline",-1\n')


def test_help_lists_every_command():
    out = ok("--help")
    for cmd in ["create", "append", "import", "sql", "latest", "maintain", "upgrade", "rollback", "info", "ls",
                "drop"]:
        assert cmd in out
        sub = ok(cmd, "--help")
        assert sub.startswith(f"usage: timelake {cmd}")


def test_man_pages_come_from_the_help_table(tmp_path):
    ok("--man-pages", tmp_path / "man")
    page = (tmp_path / "man" / "timelake-append.1").read_text()
    assert ".TH TIMELAKE\\-append 1" in page and "batch\\-id\\-from\\-name" in page
    assert (tmp_path / "man" / "timelake.1").exists()


def test_usage_errors_exit_2(tmp_path):
    assert run().returncode == 2
    assert run("frobnicate").returncode == 2
    p = run("append", "--lake", tmp_path, "--table", "t", "--bogus", "x.csv")
    assert p.returncode == 2 and b"unknown option --bogus" in p.stderr
    p = run("append", "--table", "t", "x.csv")
    assert p.returncode == 2 and b"TIMELAKE_WAREHOUSE" in p.stderr
    assert run("create", "t", "--lake", tmp_path).returncode == 2  # neither --schema nor --like
    assert run("append", "--lake", tmp_path, "--table", "t", "-", "-").returncode == 2


def test_create_info_ls_drop(tmp_path, lake):
    info = json.loads(ok("info", "iot.readings", "--lake", lake, "--json"))
    assert info["time_column"] == "time" and info["series_key"] == ["device_id"] and info["version"] == 1
    assert "series key" in ok("info", "iot.readings", "--lake", lake)
    p = run("create", "iot.readings", "--lake", lake, "--schema", SCHEMA)
    assert p.returncode == 1 and b"error" in p.stderr
    ok("create", "plain", "--lake", lake, "--schema", "a:int64!,b:decimal(10,2),c:date", "--property", "owner=me")
    listing = json.loads(ok("ls", "--lake", lake, "--json"))
    assert [t["name"] for t in listing] == ["default.plain", "iot.readings"]
    assert "TABLE" in ok("ls", "--lake", lake)
    assert "dropped" in ok("drop", "plain", "--lake", lake)
    p = run("drop", "plain", "--lake", lake)
    assert p.returncode == 1 and b"not found" in p.stderr
    ok("drop", "plain", "--lake", lake, "--if-exists")
    p = run("info", "nope", "--lake", lake)
    assert p.returncode == 1 and b"table default.nope not found" in p.stderr


def test_create_bad_schema_and_options(tmp_path):
    lake = tmp_path / "lake"
    for schema in ["time:timestamptzz", "time", "a:int64,a:int64", ":int64"]:
        p = run("create", "t", "--lake", lake, "--schema", schema)
        assert p.returncode == 1 and b"schema" in p.stderr, schema
    p = run("create", "t", "--lake", lake, "--schema", SCHEMA, "--time-column", "nope")
    assert p.returncode == 1
    p = run("create", "t", "--lake", lake, "--schema", SCHEMA, "--dedup", "maybe")
    assert p.returncode == 2
    p = run("create", "t", "--lake", lake, "--schema", SCHEMA, "--time-column", "time", "--retention", "ten days")
    assert p.returncode == 1
    assert not (lake / "default" / "t").exists()


@pytest.mark.parametrize("command", ["append", "import"])
def test_a_table_named_where_a_file_goes_is_pointed_out(tmp_path, lake, command):
    f = write(tmp_path / "a.csv", CSV)
    p = run(command, "iot.readings", f, "--lake", lake)
    assert p.returncode == 2
    assert b'"iot.readings" is not a file; if it is the table, write --table iot.readings' in p.stderr
    p = run(command, f, "--lake", lake)  # a file, and no table: no guess
    assert p.returncode == 2 and b"no table: give --table or set TIMELAKE_TABLE\n" in p.stderr
    assert read_table(lake) is None


def test_environment_names_lake_and_table(tmp_path, lake):
    env = {"TIMELAKE_WAREHOUSE": str(lake), "TIMELAKE_TABLE": "iot.readings"}
    f = write(tmp_path / "a.csv", CSV)
    out = json.loads(ok("append", f, "--json", env=env))
    assert out["rows"] == 4
    assert json.loads(ok("info", "--json", env=env))["rows"] == 4


def test_csv_values_match_pyarrow(tmp_path, lake):
    f = write(tmp_path / "a.csv", CSV)
    res = json.loads(ok("append", "--lake", lake, "--table", "iot.readings", f, "--json"))
    assert res["rows"] == 4 and res["duplicate"] is False
    got = read_table(lake).select(["time", "device_id", "temp"]).sort_by([("time", "ascending")])
    want = pacsv.read_csv(f, convert_options=pacsv.ConvertOptions(column_types={
        "time": pa.timestamp("us", tz="UTC"), "device_id": pa.string(), "temp": pa.float64()}))
    want = want.sort_by([("time", "ascending")])
    assert got.to_pylist() == want.to_pylist()


def test_tsv_gzip_ndjson_parquet_and_stdin(tmp_path, lake):
    args = ["append", "--lake", lake, "--table", "iot.readings", "--json"]
    tsv = write(tmp_path / "a.tsv", "time\tdevice_id\ttemp\n2024-05-01T10:00:00Z\tp1\t1.5\n")
    gz = tmp_path / "a.csv.gz"
    gz.write_bytes(gzip.compress(CSV.encode()))
    nd = write(tmp_path / "a.jsonl", '{"time":"2024-05-01T10:00:00Z","device_id":"j","temp":2}\n\n'
                                     '{"device_id":"k","temp":null,"time":"2024-05-01T11:00:00+01:00"}\n')
    pqf = tmp_path / "a.parquet"
    pq.write_table(pa.table({"time": pa.array([1714557600000000], pa.timestamp("us", tz="UTC")),
                             "device_id": ["pq"], "temp": [9.0]}), pqf)
    rows = [json.loads(ok(*args, f))["rows"] for f in [tsv, gz, nd, pqf]]
    assert rows == [1, 4, 2, 1]
    assert json.loads(ok(*args, "-", "--format", "csv", stdin=CSV.encode()))["rows"] == 4
    got = read_table(lake)
    assert sorted(set(got["device_id"].to_pylist())) == sorted(
        {"p1", "pump-1", "pump-2", 'pump "x", big', "multi\nline", "j", "k", "pq"})


def test_ndjson_values_match_pyarrow(tmp_path):
    lake = tmp_path / "lake"
    lines = [{"t": "2024-05-01T10:00:00", "n": 1, "x": 1.5, "b": True, "s": "a\u00e9\\\"\n"},
             {"t": "2024-05-01T10:00:01", "n": -7, "x": 2, "b": False, "s": None},
             {"t": None, "n": None, "x": None, "b": None, "s": "\U0001F600"}]
    f = tmp_path / "a.ndjson"
    f.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    ok("create", "j", "--lake", lake, "--like", f)
    ok("append", "--lake", lake, "--table", "j", f)
    got = read_table(lake, "j")
    want = pajson.read_json(f)
    assert got.to_pylist() == want.cast(pa.schema([
        ("t", pa.timestamp("us")), ("n", pa.int64()), ("x", pa.float64()), ("b", pa.bool_()),
        ("s", pa.string())])).to_pylist()


def test_like_infers_types_as_pyarrow_does(tmp_path):
    lake = tmp_path / "lake"
    f = write(tmp_path / "w.csv", "time,host,n,x,ok,day\n2024-05-01T10:00:00Z,h1,1,1.5,true,2024-05-01\n"
                                  "2024-05-01T10:00:01.5+00:00,h2,,NaN,False,2024-05-02\n")
    ok("create", "w", "--lake", lake, "--like", f, "--time-column", "time", "--series-key", "host")
    ok("append", "--lake", lake, "--table", "w", f)
    got = read_table(lake, "w").drop_columns(["_ingest_ts"])
    want = pacsv.read_csv(f)
    # pyarrow picks timestamp[s]/[ns] for text timestamps; Iceberg keeps microseconds.
    assert [f.type for f in got.schema if f.name != "time"] == [f.type for f in want.schema if f.name != "time"]
    assert got.schema.field("time").type == pa.timestamp("us", tz="UTC")
    want = want.set_column(0, "time", pc.cast(want["time"], pa.timestamp("us", tz="UTC")))
    assert got.to_pylist() == want.to_pylist()


BAD = [
    ("bad_value.csv", "time,device_id,temp\n2024-05-01T10:00:00Z,a,1\n2024-05-01T10:00:00Z,b,warm\n",
     [b"bad_value.csv", b"line 3", b'"temp"', b"warm"]),
    ("bad_time.csv", "time,device_id,temp\n2024-13-01T10:00:00Z,a,1\n", [b"line 2", b'"time"']),
    ("ragged.csv", "time,device_id,temp\n2024-05-01T10:00:00Z,a\n", [b"ragged.csv", b"line 2", b"2 fields, expected 3"]),
    ("quote.csv", 'time,device_id,temp\n2024-05-01T10:00:00Z,"a,1\n', [b"unterminated quoted field", b"line 2"]),
    ("unknown.csv", "time,device_id,temp,color\n2024-05-01T10:00:00Z,a,1,red\n", [b'"color"', b"not in the table"]),
    ("empty.csv", "", [b"empty.csv", b"no header"]),
    ("dup.csv", "time,time\n", [b"appears twice"]),
    ("bad.ndjson", '{"time":"2024-05-01T10:00:00Z","device_id":"a","temp":1}\n{"time": oops}\n',
     [b"bad.ndjson", b"line 2"]),
    ("nested.ndjson", '{"time":"2024-05-01T10:00:00Z","device_id":{"a":1}}\n', [b"nested"]),
    ("badtype.ndjson", '{"time":"2024-05-01T10:00:00Z","device_id":"a","temp":"hot"}\n', [b"line 1", b'"temp"', b"hot"]),
    ("unknown.ndjson", '{"time":"2024-05-01T10:00:00Z","colour":"red"}\n', [b"colour", b"not a column"]),
    ("notparquet.parquet", "hello", [b"notparquet.parquet", b"Parquet"]),
    ("nulltime.csv", "time,device_id,temp\n,a,1\n", [b"time"]),
]


@pytest.mark.parametrize("name,text,words", BAD, ids=[b[0] for b in BAD])
def test_bad_input_appends_nothing(tmp_path, lake, name, text, words):
    good = write(tmp_path / "good.csv", CSV)
    ok("append", "--lake", lake, "--table", "iot.readings", good)
    before = table_files(lake)
    f = write(tmp_path / name, text)
    p = run("append", "--lake", lake, "--table", "iot.readings", f, good)
    assert p.returncode == 1, p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)
    assert table_files(lake) == before


def test_bad_gzip_and_missing_file(tmp_path, lake):
    before = table_files(lake)
    gz = tmp_path / "trunc.csv.gz"
    gz.write_bytes(gzip.compress(CSV.encode() * 1000)[:-40])
    p = run("append", "--lake", lake, "--table", "iot.readings", gz)
    assert p.returncode == 1 and b"trunc.csv.gz" in p.stderr
    p = run("append", "--lake", lake, "--table", "iot.readings", tmp_path / "missing.csv")
    assert p.returncode == 1 and b"missing.csv" in p.stderr
    p = run("append", "--lake", lake, "--table", "iot.readings", write(tmp_path / "x.txt", "a"))
    assert p.returncode == 1 and b"unknown file type" in p.stderr
    assert table_files(lake) == before


def gzip_cut_on_a_row(text, keep):
    """`text` gzipped, flushed after its first `keep` lines and cut there: it
    decompresses to whole rows, and only the missing trailer tells."""
    lines = text.splitlines(keepends=True)
    z = zlib.compressobj(6, zlib.DEFLATED, 31)
    return z.compress("".join(lines[:keep]).encode()) + z.flush(zlib.Z_SYNC_FLUSH)


def test_cut_or_damaged_gzip_commits_nothing_and_keeps_its_batch_id(tmp_path, lake):
    text = "time,device_id,temp\n" + "".join(
        f"2024-05-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,dev-{i % 7},{i}\n" for i in range(10000))
    whole = gzip.compress(text.encode())
    ndjson = gzip.compress("".join(json.dumps(dict(zip(("time", "device_id", "temp"), l.split(","))))
                                   + "\n" for l in text.splitlines()[1:]).encode())
    damaged = bytearray(whole)
    damaged[-8] ^= 1  # the CRC-32 in the trailer
    cases = {"cut.csv.gz": (gzip_cut_on_a_row(text, 5001), "truncated gzip file"),
             "crc.csv.gz": (bytes(damaged), "CRC-32 does not match"),
             "len.ndjson.gz": (ndjson[:-1] + bytes([ndjson[-1] ^ 1]), "length does not match")}
    before = table_files(lake)
    args = ["append", "--lake", lake, "--table", "iot.readings", "--json"]
    for name, (data, words) in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        for extra in (["--batch-id", "b1"], ["--batch-id-from-name"]):
            p = run(*args, *extra, f)
            err = p.stderr.decode()
            assert p.returncode == 1, err
            assert str(f) in err and words in err and "<fd:" not in err, err
            assert table_files(lake) == before
    # The batch ids were not used up: the whole file loads under each.
    (tmp_path / "cut.csv.gz").write_bytes(whole)
    assert json.loads(ok(*args, "--batch-id", "b1", tmp_path / "cut.csv.gz"))["rows"] == 10000
    assert json.loads(ok(*args, "--batch-id-from-name", tmp_path / "cut.csv.gz"))["rows"] == 10000
    assert "10000" in ok("sql", "--lake", lake, "SELECT count(*) FROM iot.readings")


def test_batch_ids(tmp_path, lake):
    f = write(tmp_path / "gw-000042.csv", CSV)
    args = ["append", "--lake", lake, "--table", "iot.readings", "--json"]
    first = json.loads(ok(*args, f, "--batch-id", "x1"))
    again = json.loads(ok(*args, f, "--batch-id", "x1"))
    assert first["rows"] == 4 and again["duplicate"] is True and again["rows"] == 0
    g = write(tmp_path / "gw-000043.csv", CSV.replace("pump", "tank"))
    out = [json.loads(l) for l in ok(*args, f, g, "--batch-id-from-name").splitlines()]
    assert [o["rows"] for o in out] == [4, 4]
    out = [json.loads(l) for l in ok(*args, f, g, "--batch-id-from-name").splitlines()]
    assert [o["duplicate"] for o in out] == [True, True]
    assert run(*args, f, "--batch-id", "a", "--batch-id-from-name").returncode == 2


def test_import_is_resumable(tmp_path, lake):
    d = tmp_path / "drop"
    (d / "sub").mkdir(parents=True)
    for i in range(5):
        write(d / f"f{i}.csv", CSV.replace("pump", f"p{i}-"))
    write(d / "sub" / "g.ndjson", '{"time":"2024-05-01T10:00:00Z","device_id":"nd","temp":1}\n')
    write(d / "README.txt", "not data")
    # an interrupted run: only the first two files were committed
    ok("import", "--lake", lake, "--table", "iot.readings", d / "f0.csv", d / "f1.csv")
    out = [json.loads(l) for l in ok("import", "--lake", lake, "--table", "iot.readings", d, "--json").splitlines()]
    assert [o["file"] for o in out] == ["f0.csv", "f1.csv", "f2.csv", "f3.csv", "f4.csv", "sub/g.ndjson"]
    assert [o["duplicate"] for o in out] == [True, True, False, False, False, False]
    assert read_table(lake).num_rows == 21
    out = [json.loads(l) for l in ok("import", "--lake", lake, "--table", "iot.readings", d,
                                     "--files-per-commit", "2", "--json").splitlines()]
    assert [o["file"] for o in out] == ["f0.csv", "f1.csv", "f2.csv", "f3.csv", "f4.csv", "sub/g.ndjson"]
    assert all(o["duplicate"] and o["rows"] == 0 for o in out)
    assert "imported 6 files" in ok("import", "--lake", lake, "--table", "iot.readings", d, "--files-per-commit", "2")


def raw_rows(lake, table="iot.readings"):
    """Rows committed, from the snapshot summaries (a reload would show here
    even after compaction removed the duplicate rows)."""
    ns, _, t = table.rpartition(".")
    meta = sorted((Path(lake) / ns / t / "metadata").glob("v*.metadata.json"),
                  key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    snaps = json.loads(meta.read_text())["snapshots"]
    return sum(int(s["summary"].get("added-records", 0)) for s in snaps
               if s["summary"].get("operation") == "append")


def test_import_loads_each_file_once_whatever_the_grouping(tmp_path, lake):
    d = tmp_path / "drop"
    d.mkdir()
    imp = ["import", "--lake", lake, "--table", "iot.readings", d, "--json"]

    def add(name, i):
        write(d / name, "time,device_id,temp\n" + "".join(
            f"2024-05-01T10:0{r}:00Z,{name}-{r},{i}\n" for r in range(4)))

    def loaded(*extra):
        out = [json.loads(l) for l in ok(*imp, *extra).splitlines()]
        return {o["file"]: o["rows"] for o in out if not o["duplicate"]}, out

    add("a.csv", 0)
    add("c.csv", 2)
    assert loaded("--files-per-commit", "10")[0] == {"a.csv..c.csv": 8}
    # A file added later between two already imported in one group loads.
    add("b.csv", 1)
    new, out = loaded("--files-per-commit", "10")
    assert new == {"b.csv": 4}
    assert {o["file"] for o in out if o["duplicate"]} == {"a.csv", "c.csv"}
    # Groups of 2 over d..g, then a file that sorts first: only it loads.
    for i, name in enumerate(["d.csv", "e.csv", "f.csv", "g.csv"]):
        add(name, 3 + i)
    assert loaded("--files-per-commit", "2")[0] == {"d.csv..e.csv": 8, "f.csv..g.csv": 8}
    add("0.csv", 9)
    assert loaded("--files-per-commit", "2")[0] == {"0.csv": 4}
    assert loaded("--files-per-commit", "3")[0] == {}
    assert loaded()[0] == {}
    assert raw_rows(lake) == 8 * 4
    assert "32" in ok("sql", "--lake", lake, "SELECT count(*) FROM iot.readings")


def test_import_stops_at_a_bad_file(tmp_path, lake):
    d = tmp_path / "drop"
    d.mkdir()
    write(d / "a.csv", CSV)
    write(d / "b.csv", "time,device_id,temp\nnot a time,x,1\n")
    write(d / "c.csv", CSV)
    p = run("import", "--lake", lake, "--table", "iot.readings", d)
    assert p.returncode == 1 and b"b.csv" in p.stderr
    assert read_table(lake).num_rows == 4


def test_sql_output_formats(tmp_path, lake):
    f = write(tmp_path / "a.csv", CSV)
    ok("append", "--lake", lake, "--table", "iot.readings", f)
    q = "select device_id, temp, time from iot.readings order by time"
    want = pacsv.read_csv(f).sort_by("time").select(["device_id", "temp"])
    rows = [json.loads(l) for l in ok("sql", q, "--lake", lake, "--json").splitlines()]
    assert [(r["device_id"], r["temp"]) for r in rows] == [(r["device_id"], r["temp"]) for r in want.to_pylist()]
    assert rows[0]["time"] == "2024-05-01T10:00:00Z"
    out = tmp_path / "out.csv"
    ok("sql", q, "--lake", lake, "--output-format", "csv", "--output", out)
    back = pacsv.read_csv(out)
    assert back.select(["device_id", "temp"]).to_pylist() == want.to_pylist()
    table = ok("sql", "select count(*) as n from iot.readings", "--lake", lake)
    assert table.split() == ["n", "4"]
    p = run("sql", "selec oops", "--lake", lake)
    assert p.returncode == 1 and b"selec" in p.stderr
    p = run("sql", "select * from nope", "--lake", lake)
    assert p.returncode == 1 and b"nope" in p.stderr
    assert run("sql", "select 1", "--lake", lake, "--output-format", "xml").returncode == 2


def test_latest_and_maintain(tmp_path, lake):
    f = write(tmp_path / "a.csv", CSV)
    ok("append", "--lake", lake, "--table", "iot.readings", f)
    ok("append", "--lake", lake, "--table", "iot.readings", f)
    latest = [json.loads(l) for l in ok("latest", "iot.readings", "--lake", lake, "--json").splitlines()]
    assert sorted(r["device_id"] for r in latest) == sorted(set(pacsv.read_csv(f)["device_id"].to_pylist()))
    rep = json.loads(ok("maintain", "iot.readings", "--lake", lake, "--json"))
    assert rep["files_rewritten"] >= 2 and rep["duplicates_removed"] == 4
    assert read_table(lake).num_rows >= 4
    assert json.loads(ok("info", "iot.readings", "--lake", lake, "--json"))["rows"] == 4
    p = run("maintain", "nope", "--lake", lake)
    assert p.returncode == 1 and b"table default.nope not found" in p.stderr


def test_upgrade_and_rollback(tmp_path, lake):
    f = write(tmp_path / "a.csv", CSV)
    for i in range(3):
        ok("append", "--lake", lake, "--table", "iot.readings", "--batch-id", f"b{i}", f)
    before = json.loads(ok("info", "iot.readings", "--lake", lake, "--json"))
    dry = json.loads(ok("upgrade", "iot.readings", "--lake", lake, "--dry-run", "--json"))
    assert dry["steps"] == ["rewrite 6 unsorted or small files in 2 partitions"] and dry["dry_run"], dry
    assert dry["snapshot_before"] == before["snapshot_id"] and dry["keep_snapshots_until_ms"] is None
    text = ok("upgrade", "iot.readings", "--lake", lake, "--keep-snapshots", "2d")
    assert "rewrite 6 unsorted or small files" in text and f"timelake rollback iot.readings {before['snapshot_id']}" in text
    assert json.loads(ok("info", "iot.readings", "--lake", lake, "--json"))["files"] == 2
    assert "is current" in ok("upgrade", "iot.readings", "--lake", lake)
    p = run("upgrade", "iot.readings", "--lake", lake, "--keep-snapshots", "soon")
    assert p.returncode == 1 and b"soon" in p.stderr
    # rollback NAME SNAPSHOT, or SNAPSHOT with --table
    out = json.loads(ok("rollback", "iot.readings", str(before["snapshot_id"]), "--lake", lake, "--json"))
    assert out["snapshot_id"] == before["snapshot_id"]
    assert json.loads(ok("info", "iot.readings", "--lake", lake, "--json"))["files"] == 6
    ok("rollback", str(before["snapshot_id"]), "--lake", lake, "--table", "iot.readings")
    p = run("rollback", "iot.readings", "12345", "--lake", lake)
    assert p.returncode == 1 and b"snapshot 12345" in p.stderr
    assert run("rollback", "iot.readings", "abc", "--lake", lake).returncode == 2
    assert run("rollback", "--lake", lake).returncode == 2
    rep = json.loads(ok("maintain", "iot.readings", "--lake", lake, "--no-rollups", "--json"))
    assert (rep["rollups_refreshed"], rep["rollup_rows"]) == (0, 0)


def test_no_color_and_plain_output(lake):
    p = run("info", "nope", "--lake", lake, env={"NO_COLOR": "1"})
    assert b"\x1b[" not in p.stderr and b"\x1b[" not in p.stdout


def test_reference_reads_what_the_cli_appended(tmp_path, lake, reference):
    f = write(tmp_path / "a.csv", CSV)
    ok("append", "--lake", lake, "--table", "iot.readings", f)
    n = reference(f"""
        import json, timelake
        t = timelake.Lake({str(lake)!r}).table("iot.readings")
        print(json.dumps(t.info()["rows"]))
    """)
    assert n == 4


def test_sql_parquet_output_and_stats(tmp_path, lake):
    ok("append", write(tmp_path / "a.csv", CSV), "--lake", lake, "--table", "iot.readings")
    out = tmp_path / "result.parquet"
    q = "select device_id, temp from iot.readings where time >= TIMESTAMPTZ '2024-05-02 00:00:00+00'"
    p = run("sql", q, "--lake", lake, "--output-format", "parquet", "--output", out, "--stats")
    assert p.returncode == 0, p.stderr.decode()
    assert pq.read_table(out).to_pylist() == [{"device_id": "multi\nline", "temp": -1.0}]
    # Two day partitions, one of them pruned from the manifest bounds.
    assert "files: 2 considered, 1 read" in p.stderr.decode()
    assert run("sql", q, "--lake", lake, "--output-format", "parquet").returncode == 2  # needs --output
