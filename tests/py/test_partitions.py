"""Partitions by column values (tl_table_options.partition_by, `timelake create
--partition-by`): checked against independent readers. pyiceberg reads the
spec, the manifests' partition tuples and the rows, and prunes with them;
fastavro reads the manifests and the manifest list's partition summaries;
DuckDB reads the data files and is the oracle of every query; the reference
timelake==0.7.0 reads the tables (locally and on moto's S3)."""

import datetime as dt
import glob
import json
import os
import random
import subprocess
import urllib.parse
from pathlib import Path

import duckdb
import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import tlc
from store_servers import server_fixture

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TL_BUILD", ROOT / "build-asan"))
UTC = dt.timezone.utc

SCHEMA = pa.schema([
    ("region", pa.string()),
    ("n", pa.int64()),
    ("small", pa.int32()),
    ("ok", pa.bool_()),
    ("d", pa.date32()),
    ("ts", pa.timestamp("us", tz="UTC")),
    ("v", pa.float64()),
])
# Values needing no escaping in a path: the reference reads those (see test_reference_reads).
REGIONS = ["eu", "us", "ap-south", None]


def rows(n, seed, regions=REGIONS):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        d = dt.date(2025, 12, 1) + dt.timedelta(days=rnd.randrange(120))
        out.append({
            "region": rnd.choice(regions),
            "n": rnd.randrange(-3, 4),
            "small": None if i % 13 == 0 else rnd.randrange(3),
            "ok": rnd.choice([True, False, None]),
            "d": None if i % 17 == 0 else d,
            "ts": dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(hours=rnd.randrange(24 * 800)),
            "v": float(i),
        })
    return pa.Table.from_pylist(out, schema=SCHEMA)


def metadata_file(lake_dir, table):
    files = glob.glob(str(Path(lake_dir) / table / "metadata" / "v*.metadata.json"))
    return max(files, key=lambda f: int(os.path.basename(f)[1:].split(".")[0]))


def normalize(table):
    return sorted(table.to_pylist(), key=lambda r: json.dumps(r, default=str, sort_keys=True))


def duck_count(data, where):
    con = duckdb.connect()
    con.register("src", data)
    return con.execute(f"SELECT count(*) FROM src WHERE {where}").fetchall()[0][0]


@pytest.fixture
def sales(lake, lake_dir):
    """A plain table by region, month(d) and ok, of three appends."""
    t = lake.create_table("shop.sales", SCHEMA, partition_by=["region", "month(d)", "ok"])
    data = [rows(400, 1), rows(300, 2), rows(50, 3)]
    for i, part in enumerate(data):
        t.append(part, batch_id=f"b{i}", maintain=False)
    return t, pa.concat_tables(data)


@pytest.fixture
def other(lake):
    """By an int32 column, the year of a timestamp and a date as it is."""
    t = lake.create_table("shop.other", SCHEMA, partition_by=["small", "year(ts)", "d"])
    data = rows(300, 7)
    t.append(data, maintain=False)
    return t, data


def test_spec_manifests_and_folders(lake_dir, sales, other):
    table = StaticTable.from_metadata(metadata_file(lake_dir, "shop/sales"))
    spec = table.spec()
    ids = {f.name: f.field_id for f in table.schema().fields}
    assert [(f.name, str(f.transform), f.source_id, f.field_id) for f in spec.fields] == [
        ("region", "identity", ids["region"], 1000),
        ("d_month", "month", ids["d"], 1001),
        ("ok", "identity", ids["ok"], 1002),
    ]
    spec2 = StaticTable.from_metadata(metadata_file(lake_dir, "shop/other")).spec()
    assert [(f.name, str(f.transform)) for f in spec2.fields] == [
        ("small", "identity"), ("ts_year", "year"), ("d", "identity")]

    # Every data file: its folders name its partition tuple, and its rows have it.
    files = list(table.scan().plan_files())
    assert len(files) > 12
    month = lambda d: None if d is None else (d.year - 1970) * 12 + d.month - 1
    for task in files:
        f = task.file
        region, d_month, ok = f.partition[0], f.partition[1], f.partition[2]
        path = urllib.parse.urlparse(f.file_path).path
        rel = path.split("/data/", 1)[1].split("/")
        human = "null" if d_month is None else f"{1970 + d_month // 12:04d}-{d_month % 12 + 1:02d}"
        assert rel[:3] == [f"region={region if region is not None else 'null'}", f"d_month={human}",
                           f"ok={'null' if ok is None else str(ok).lower()}"]
        got = pq.read_table(path).to_pylist()
        assert got and all((r["region"], month(r["d"]), r["ok"]) == (region, d_month, ok) for r in got)

    # The manifests' partition records, as fastavro reads them: types by transform.
    snap = table.current_snapshot()
    with open(urllib.parse.urlparse(snap.manifest_list).path, "rb") as fh:
        manifests = list(fastavro.reader(fh))
    for m in manifests:
        with open(urllib.parse.urlparse(m["manifest_path"]).path, "rb") as fh:
            reader = fastavro.reader(fh)
            schema = reader.writer_schema
            entries = list(reader)
        part = next(fl for fl in next(fl for fl in schema["fields"] if fl["name"] == "data_file")["type"]["fields"]
                    if fl["name"] == "partition")
        types = {fl["name"]: fl["type"][1] for fl in part["type"]["fields"]}
        assert types == {"region": "string", "d_month": "int", "ok": "boolean"}
        assert json.loads(reader.metadata["partition-spec"]) == [
            {"source-id": ids["region"], "field-id": 1000, "name": "region", "transform": "identity"},
            {"source-id": ids["d"], "field-id": 1001, "name": "d_month", "transform": "month"},
            {"source-id": ids["ok"], "field-id": 1002, "name": "ok", "transform": "identity"}]
        # The manifest list's summaries: the bounds of each field over the manifest's files.
        tuples = [e["data_file"]["partition"] for e in entries]
        regions = [t["region"] for t in tuples if t["region"] is not None]
        months = [t["d_month"] for t in tuples if t["d_month"] is not None]
        summary = m["partitions"]
        assert summary[0]["contains_null"] == any(t["region"] is None for t in tuples)
        assert summary[0]["lower_bound"] == min(regions).encode()
        assert summary[0]["upper_bound"] == max(regions).encode()
        assert summary[1]["lower_bound"] == min(months).to_bytes(4, "little")
        assert summary[1]["upper_bound"] == max(months).to_bytes(4, "little")
        assert summary[2]["lower_bound"] == b"\x00" and summary[2]["upper_bound"] == b"\x01"


def test_every_reader_sees_the_same_rows(lake, lake_dir, sales, other):
    for name, (t, data) in (("shop.sales", sales), ("shop.other", other)):
        want = normalize(data)
        assert normalize(lake.sql(f"SELECT * FROM {name}").cast(SCHEMA)) == want
        table = StaticTable.from_metadata(metadata_file(lake_dir, name.replace(".", "/")))
        assert normalize(table.scan().to_arrow().cast(SCHEMA)) == want
        paths = [urllib.parse.urlparse(task.file.file_path).path for task in table.scan().plan_files()]
        listed = ", ".join(f"'{p}'" for p in paths)
        duck = duckdb.sql(f"SELECT * FROM read_parquet([{listed}], hive_partitioning = false)").arrow()
        if hasattr(duck, "read_all"):
            duck = duck.read_all()
        assert normalize(duck.cast(SCHEMA)) == want


PREDICATES = [
    "region = 'eu'", "region IN ('eu', 'us')", "'ap-south' = region", "region IS NULL",
    "region IS NOT NULL", "region != 'eu'", "region > 'eu'", "region BETWEEN 'ap' AND 'eu'",
    "d >= '2026-02-01'", "d < DATE '2026-01-01'", "d > '2026-01-31'", "d <= '2025-12-31'",
    "d BETWEEN DATE '2026-01-10' AND DATE '2026-01-20'", "d > TIMESTAMP '2026-01-31 10:00:00'",
    "d IS NULL", "ok", "NOT ok", "ok = false", "ok IS NULL",
    "region = 'eu' AND ok AND d < '2026-02-01'", "region = 'us' OR ok",
    "small = 1", "small IN (0, 2)", "small > 0", "small < 1.5", "small = '2'",
    "ts >= TIMESTAMPTZ '2025-06-01 00:00:00+00'", "year(ts) = 2024", "n = 2",
]


@pytest.mark.parametrize("where", PREDICATES)
def test_queries_prune_and_agree_with_duckdb(lake, sales, other, where):
    # Each predicate runs on the table whose partitions it names.
    name, data = ("shop.other", other[1]) if ("small" in where or "ts" in where) else ("shop.sales", sales[1])
    stats = {}
    got = lake.sql(f"SELECT count(*) AS c, sum(v) AS s FROM {name} WHERE {where}", stats=stats).to_pylist()[0]
    con = duckdb.connect()
    con.register("src", data)
    c, s = con.execute(f"SELECT count(*), sum(v) FROM src WHERE {where}").fetchall()[0]
    assert (got["c"], got["s"]) == (c, s)
    assert stats["files_read"] <= stats["files_total"]


def test_pruning_reads_exactly_the_matching_partitions(lake, lake_dir, sales):
    table = StaticTable.from_metadata(metadata_file(lake_dir, "shop/sales"))
    parts = [task.file.partition for task in table.scan().plan_files()]
    month = lambda y, m: (y - 1970) * 12 + m - 1
    cases = {
        "region = 'eu'": lambda p: p[0] == "eu",
        "region IN ('eu', 'us') AND ok": lambda p: p[0] in ("eu", "us") and p[2] is True,
        "region IS NULL": lambda p: p[0] is None,
        "d >= '2026-02-01'": lambda p: p[1] is not None and p[1] >= month(2026, 2),
        "d < '2026-02-01'": lambda p: p[1] is not None and p[1] < month(2026, 2),
        "d < '2026-02-02'": lambda p: p[1] is not None and p[1] <= month(2026, 2),
        "region > 'ap-south' AND region < 'us'": lambda p: p[0] == "eu",
        "NOT ok AND d IS NOT NULL": lambda p: p[2] is False and p[1] is not None,
    }
    for where, keep in cases.items():
        stats = {}
        lake.sql(f"SELECT count(*) FROM shop.sales WHERE {where}", stats=stats)
        assert stats["files_read"] == sum(1 for p in parts if keep(p)), where
    # pyiceberg prunes with our partition tuples as well.
    assert len(list(table.scan(row_filter="region = 'eu'").plan_files())) == sum(1 for p in parts if p[0] == "eu")


def test_compaction_keeps_partitions_apart(lake, lake_dir, sales):
    t, data = sales
    before = t.info()["files"]
    report = t.maintain()
    assert report["files_rewritten"] > 0 and t.info()["files"] < before
    table = StaticTable.from_metadata(metadata_file(lake_dir, "shop/sales"))
    tuples = [tuple(task.file.partition) for task in table.scan().plan_files()]
    assert len(tuples) == len(set(tuples))  # one file per partition
    assert normalize(table.scan().to_arrow().cast(SCHEMA)) == normalize(data)
    assert normalize(lake.sql("SELECT * FROM shop.sales").cast(SCHEMA)) == normalize(data)


def test_escaped_values_round_trip(lake, lake_dir):
    """Values with characters a path cannot hold as they are: URL-escaped
    folder names, exact values in the metadata."""
    odd = ["a/b c", "café", "x=y", "100%", "eu"]
    t = lake.create_table("shop.odd", SCHEMA, partition_by=["region"])
    data = rows(100, 5, regions=odd)
    t.append(data)
    folders = sorted(os.listdir(lake_dir / "shop" / "odd" / "data"))
    assert folders == sorted("region=" + urllib.parse.quote(v, safe="") for v in odd)
    table = StaticTable.from_metadata(metadata_file(lake_dir, "shop/odd"))
    assert sorted({task.file.partition[0] for task in table.scan().plan_files()}) == sorted(odd)
    assert normalize(table.scan().to_arrow().cast(SCHEMA)) == normalize(data)
    for v in odd:
        stats = {}
        got = lake.sql("SELECT count(*) AS c FROM shop.odd WHERE region = '%s'" % v, stats=stats)
        assert got.column("c")[0].as_py() == duck_count(data, "region = '%s'" % v)
        assert stats["files_read"] == 1


def test_reference_reads(lake_dir, sales, reference):
    _, data = sales
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        rows = lake.sql("SELECT region, ok, count(*) AS n, sum(v) AS s FROM shop.sales GROUP BY 1, 2 ORDER BY 1, 2").to_pylist()
        eu = lake.sql("SELECT count(*) AS n FROM shop.sales WHERE region = 'eu'").to_pylist()
        print(json.dumps({{"rows": rows, "eu": eu, "info": lake.table("shop.sales").info()}}))
        """
    )
    con = duckdb.connect()
    con.register("src", data)
    want = con.execute("SELECT region, ok, count(*), sum(v) FROM src GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    assert [(r["region"], r["ok"], r["n"], r["s"]) for r in out["rows"]] == want
    assert out["eu"] == [{"n": duck_count(data, "region = 'eu'")}]
    assert out["info"]["rows"] == data.num_rows


def test_time_series_table_by_series_key(lake, lake_dir, reference):
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("host", pa.string()), ("temp", pa.float64())])
    t = lake.create_table("iot.m", schema, time_column="time", series_key=["host"], partition_by=["host"])
    t0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
    first = pa.table({"time": [t0, t0, t0 + dt.timedelta(days=1)], "host": ["a", "b", "a"], "temp": [1.0, 2.0, 3.0]},
                     schema=schema)
    again = pa.table({"time": [t0], "host": ["a"], "temp": [9.0]}, schema=schema)  # rewrites (a, t0)
    t.append(first, maintain=False)
    t.append(again, maintain=False)
    info = t.info()
    assert (info["partition_by"], info["chunk"]) == (["host"], "day")
    assert sorted(os.listdir(lake_dir / "iot" / "m" / "data")) == ["time_day=2026-01-01", "time_day=2026-01-02"]
    assert sorted(os.listdir(lake_dir / "iot" / "m" / "data" / "time_day=2026-01-01")) == ["host=a", "host=b"]
    want = [{"host": "a", "temp": 9.0}, {"host": "a", "temp": 3.0}, {"host": "b", "temp": 2.0}]
    query = "SELECT host, temp FROM iot.m ORDER BY host, time"
    assert lake.sql(query).to_pylist() == want
    stats = {}
    assert lake.sql("SELECT count(*) AS c FROM iot.m WHERE host = 'b'", stats=stats).column("c")[0].as_py() == 1
    assert stats["files_read"] == 1
    assert {r["host"]: r["temp"] for r in lake.latest("iot.m").to_pylist()} == {"a": 3.0, "b": 2.0}
    table = StaticTable.from_metadata(metadata_file(lake_dir, "iot/m"))
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [("time_day", "day"), ("host", "identity")]
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        print(json.dumps(lake.sql({query!r}).to_pylist()))
        """
    )
    assert out == want
    t.maintain()
    assert lake.sql(query).to_pylist() == want


def test_cli_partition_by(tmp_path):
    exe = BUILD / "timelake"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    lake = str(tmp_path / "lake")
    run = lambda *a: subprocess.run([str(exe), *a, "--lake", lake], capture_output=True, text=True, env=env)
    r = run("create", "s.p", "--schema", "region:string,d:date,v:float64", "--partition-by", "region,month(d)")
    assert r.returncode == 0, r.stderr
    (tmp_path / "x.csv").write_text("region,d,v\neu,2026-11-02,1\nus,2026-12-01,2\n")
    assert run("append", str(tmp_path / "x.csv"), "--table", "s.p").returncode == 0
    info = json.loads(run("info", "s.p", "--json").stdout)
    assert info["partition_by"] == ["region", "month(d)"] and info["rows"] == 2
    assert info["snapshot_id"] > 0 and info["last_commit_ms"] > 0
    assert sorted(os.listdir(tmp_path / "lake" / "s" / "p" / "data" / "region=eu")) == ["d_month=2026-11"]
    r = run("create", "s.q", "--schema", "region:string,v:float64", "--partition-by", "month(region)")
    assert r.returncode == 1 and "day, month and year take a date or timestamp column" in r.stderr
    r = run("create", "s.q", "--schema", "region:string,v:float64", "--partition-by", "v")
    assert r.returncode == 1 and "double column cannot be a partition" in r.stderr
    assert not (tmp_path / "lake" / "s" / "q").exists()


s3_server = pytest.fixture(scope="module")(server_fixture("s3"))


def test_on_s3_with_the_reference(s3_server, reference):
    url = s3_server.url()
    lake = tlc.Lake(url, s3_server.options)
    t = lake.create_table("shop.sales", SCHEMA, partition_by=["region", "month(d)"])
    data = rows(300, 11)
    t.append(data)
    stats = {}
    got = lake.sql("SELECT count(*) AS c FROM shop.sales WHERE region = 'eu'", stats=stats).column("c")[0].as_py()
    assert got == duck_count(data, "region = 'eu'")
    assert 0 < stats["files_read"] < stats["files_total"]
    keys = [o["key"] for o in lake.list_objects("shop/sales/data/", recursive=False)]
    assert keys == ["shop/sales/data/region=ap-south/", "shop/sales/data/region=eu/",
                    "shop/sales/data/region=null/", "shop/sales/data/region=us/"]
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({url!r}, storage_options={s3_server.options!r})
        print(json.dumps(lake.sql("SELECT count(*) AS n, sum(v) AS s FROM shop.sales WHERE region = 'eu'").to_pylist()))
        """
    )
    con = duckdb.connect()
    con.register("src", data)
    assert out == [dict(zip(("n", "s"), con.execute("SELECT count(*), sum(v) FROM src WHERE region = 'eu'").fetchall()[0]))]
