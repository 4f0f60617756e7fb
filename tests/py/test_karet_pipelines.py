"""Two realistic pipelines (the templates in karet/templates/), bad input,
and the output tables read back by independent readers: pyiceberg, DuckDB
over the data files pyiceberg plans, and the timelake CLI."""

import gzip
import json
import random
import subprocess
from datetime import date
from pathlib import Path

import duckdb
from pyiceberg.table import StaticTable

import karet_oracle as oracle
from karet_lake import BUILD, KARET, LocalLake, clean_env, read_table, run_karet

ROOT = Path(__file__).resolve().parents[2]


def template(name, slug):
    text = (ROOT / "karet" / "templates" / f"{name}.json").read_text()
    return json.loads(text.replace("{slug}", slug))


def expected(lake, config, table):
    files = []
    for source in config["source_containers"]:
        for key in lake.keys(source["path_prefix"]):
            rows = oracle.read_source_file(source, (lake.root / key).read_bytes())
            files.append((key, source["id"], rows))
    dims = {d["id"]: oracle.Dimension(d) for d in config["dimensions"]}
    return oracle.build_table(config, table, files, dims)


def canon(rows):
    return sorted(json.dumps({k: repr(v) for k, v in r.items()}, sort_keys=True) for r in rows)


def access_log_lines(rng, n, start):
    paths = ["/", "/api/orders", "/api/users/7", "/static/app.js", "/admin/login", "/health", "/about"]
    agents = ["Mozilla/5.0 (X11; Linux x86_64)", "Googlebot/2.1", "curl/8.0", None]
    out = []
    for i in range(n):
        rec = {"id": f"r{start + i}" if rng.random() > 0.1 else f"r{rng.randint(0, start + i)}",
               "time": {"unix": 1_706_000_000 + rng.randint(0, 86400 * 120)},
               "request": {"method": rng.choice(["GET", "get", "POST", "OPTIONS"]), "path": rng.choice(paths)},
               "response": {"status": rng.choice([200, 200, 301, 404, 500, 503]),
                            "bytes": rng.randint(0, 100_000), "duration_ms": round(rng.uniform(0.1, 900), 3)},
               "client": {"ip": f"10.0.0.{rng.randint(1, 9)}"}}
        agent = rng.choice(agents)
        if agent:
            rec["client"]["headers"] = [{"name": "user-agent", "value": agent}]
        out.append(json.dumps(rec))
    out.append('{"id": "half-writ')  # a half-written last line
    return ("\n".join(out)).encode()


def test_access_logs(tmp_path):
    lake = LocalLake(tmp_path / "lake")
    config = template("access_logs", "web")
    rng = random.Random(11)
    prefix = config["source_containers"][0]["path_prefix"]
    keys = []
    for i in range(6):
        key = f"{prefix}events_{1706000000 + i * 600}.ndjson" + (".gz" if i % 3 == 2 else "")
        data = access_log_lines(rng, 200, i * 200)
        lake.put(key, gzip.compress(data) if key.endswith(".gz") else data)
        keys.append(key)
        _, summary = run_karet(lake, "web", config, tmp_path)
        assert summary["files_processed"] == 1 and summary["run_kind"] == "incremental"
        assert summary["skipped"], "the half-written line is reported"
        assert summary["skipped"][0]["file"] == key
    got = read_table(lake, "web", "requests")
    want = expected(lake, config, "requests")
    assert canon(got) == canon(want)
    assert len({r["request_id"] for r in got}) == len(got)  # dedup keys hold
    assert not any(r["path"] == "/health" for r in got)  # record_filter
    assert not any(r["method"] == "OPTIONS" for r in got)  # where
    assert {r["section"] for r in got} <= {"api", "static", "admin", "pages"}
    # Partitioned by month(day): the data files sit in Hive-style month folders.
    meta = lake.metadata_files("web", "requests")[-1]
    files = [t.file.file_path for t in StaticTable.from_metadata(meta).scan().plan_files()]
    assert files and all("day_month=" in f for f in files), files
    # DuckDB reads the same rows from the files pyiceberg plans.
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet({[f.replace('file://', '') for f in files]!r})").fetchone()[0]
    assert n == len(want)
    # The timelake CLI queries the table in the warehouse.
    out = subprocess.run([str(BUILD / "timelake"), "sql", "--lake", str(lake.root / "warehouse"), "--json",
                          "SELECT count(*) AS n FROM web.requests"],
                         capture_output=True, text=True, env=clean_env(), check=True).stdout
    assert json.loads(out.strip().splitlines()[0])["n"] == len(want)


def statement(rows):
    lines = ["Date,Description,Amount,Account"]
    lines += [",".join(f'"{v}"' if "," in str(v) else str(v) for v in r) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def month_of_statements(rng, month, n):
    shops = ["STARBUCKS #12", "Uber trip", "AMAZON PAYROLL DEPOSIT", "RENT MAY", "NETFLIX.COM",
             "CUSTOMER TRANSFER", "Corner cafe", "WALMART, SUPERCENTER", "Unknown shop"]
    return [(f"{rng.randint(1, 28):02d}/{month:02d}/2026", rng.choice(shops), f"{rng.uniform(-2000, 500):.2f}",
             rng.choice(["visa-1234", "visa-9876"])) for _ in range(n)]


def test_bank_statements(tmp_path):
    lake = LocalLake(tmp_path / "lake")
    config = template("bank_statements", "my-bank")  # a slug with '-', as the service makes them
    rng = random.Random(5)
    prefix = config["source_containers"][0]["path_prefix"]
    for month in (1, 2, 3):
        lake.put(f"{prefix}2026-{month:02d}.csv", statement(month_of_statements(rng, month, 40)))
        run_karet(lake, "my-bank", config, tmp_path)
    got = read_table(lake, "my-bank", "transactions")
    assert canon(got) == canon(expected(lake, config, "transactions"))
    assert {r["category"] for r in got} <= {"BILLS", "FOOD", "TRANSPORT", "SHOPPING", "ENTERTAINMENT",
                                              "INCOME", "OTHER"}
    assert all(r["date"].month in (1, 2, 3) for r in got)
    payroll = [r for r in got if "PAYROLL" in r["description"]]
    assert payroll and all(r["category"] == "INCOME" for r in payroll)  # priority beats AMAZON

    # April's export has an amount that is not a number: the assertion fails the
    # mapping, which then writes nothing at all, and the job names the row.
    bad = month_of_statements(rng, 4, 10) + [("15/04/2026", "STARBUCKS", "n/a", "visa-1234")]
    lake.put(f"{prefix}2026-04.csv", statement(bad))
    rc, summary = run_karet(lake, "my-bank", config, tmp_path)
    assert summary["run_kind"] == "full" and "assertion" in summary["full_reason"]
    assert any(e.get("row") == 11 and e["file"].endswith("2026-04.csv") for e in summary["errors"])
    assert read_table(lake, "my-bank", "transactions") == []
    assert expected(lake, config, "transactions") == []
    # May arrives while the mapping still fails: nothing written either.
    lake.put(f"{prefix}2026-05.csv", statement(month_of_statements(rng, 5, 10)))
    _, summary = run_karet(lake, "my-bank", config, tmp_path)
    assert summary["tables"]["transactions"]["run_kind"] == "incremental"
    assert read_table(lake, "my-bank", "transactions") == []
    # The corrected export replaces April's: a full run writes every month.
    lake.put(f"{prefix}2026-04.csv", statement(bad[:-1]))
    _, summary = run_karet(lake, "my-bank", config, tmp_path)
    assert summary["run_kind"] == "full" and "replaced" in summary["full_reason"]
    got = read_table(lake, "my-bank", "transactions")
    assert canon(got) == canon(expected(lake, config, "transactions")) and len(got) > 100


def test_bad_files_are_skipped_and_named(tmp_path):
    lake = LocalLake(tmp_path / "lake")
    config = template("bank_statements", "bank")
    prefix = config["source_containers"][0]["path_prefix"]
    lake.put(f"{prefix}a.csv", statement([("01/01/2026", "RENT", "100", "visa-1")]))
    lake.put(f"{prefix}b.csv", b"Date,Description,Account\n01/01/2026,X,visa-1\n")  # no Amount column
    lake.put(f"{prefix}c.csv.gz", gzip.compress(statement([("02/01/2026", "UBER", "5", "visa-1")]))[:-8])
    lake.put(f"{prefix}d.csv", statement([("03/01/2026", "CAFE", "7", "visa-1")]))
    lake.put(f"{prefix}notes.txt", b"not a source file")
    rc, summary = run_karet(lake, "bank", config, tmp_path)
    assert rc == 0
    assert summary["files_processed"] == 4
    named = {e["file"] for e in summary["errors"]}
    assert named == {f"{prefix}b.csv", f"{prefix}c.csv.gz"}
    assert any("Amount" in e["message"] for e in summary["errors"])
    got = read_table(lake, "bank", "transactions")
    assert sorted(r["date"] for r in got) == [date(2026, 1, 1), date(2026, 1, 3)]
    # They count as read: the next run finds nothing new.
    _, summary = run_karet(lake, "bank", config, tmp_path)
    assert summary["files_processed"] == 0


def test_invalid_config_reads_nothing(tmp_path):
    lake = LocalLake(tmp_path / "lake")
    config = template("bank_statements", "bank")
    config["mappings"][0]["analytic_table_id"] = "nope"
    lake.put("pipelines/bank/statements/a.csv", statement([("01/01/2026", "RENT", "100", "visa-1")]))
    rc, summary = run_karet(lake, "bank", config, tmp_path, check=False)
    assert rc == 1
    assert summary["problems"][0]["kind"] == "dangling_reference"
    assert not (lake.root / "warehouse").exists()
    rc, summary = run_karet(lake, "no/slug", template("bank_statements", "bank"), tmp_path, check=False)
    assert rc == 1 and "slug" in summary["error"]


def test_dimension_from_lake_files(tmp_path):
    lake = LocalLake(tmp_path / "lake")
    config = template("bank_statements", "bank")
    config["dimensions"][0]["rows"] = {"path_prefix": "dims/categories/", "key": "keyword",
                                       "values": ["category"], "priority_column": "priority"}
    lake.put("dims/categories/a.csv", b"keyword,category,priority\nSTARBUCKS,FOOD,\nAMAZON,SHOPPING,0\n"
                                      b",EMPTY-KEY,9\n")
    lake.put("dims/categories/b.csv.gz", gzip.compress(b"priority,keyword,category,extra\n10,PAYROLL,INCOME,x\n"
                                                       b"high,UBER,TRANSPORT,y\n"))
    prefix = config["source_containers"][0]["path_prefix"]
    rows = [("01/01/2026", "STARBUCKS #1", "5", "v"), ("02/01/2026", "AMAZON PAYROLL", "-9", "v"),
            ("03/01/2026", "uber", "7", "v"), ("04/01/2026", "nothing", "1", "v")]
    lake.put(f"{prefix}a.csv", statement(rows))
    run_karet(lake, "bank", config, tmp_path)
    got = {r["description"]: r["category"] for r in read_table(lake, "bank", "transactions")}
    assert got == {"STARBUCKS #1": "FOOD", "AMAZON PAYROLL": "INCOME", "UBER": "TRANSPORT", "NOTHING": "OTHER"}
    dim_rows = [("STARBUCKS", ["FOOD"], 0), ("AMAZON", ["SHOPPING"], 0), ("PAYROLL", ["INCOME"], 10),
                ("UBER", ["TRANSPORT"], 0)]
    files = [(f"{prefix}a.csv", "statements", oracle.read_source_file(config["source_containers"][0],
                                                                       (lake.root / prefix / "a.csv").read_bytes()))]
    want = oracle.build_table(config, "transactions", files,
                              {"categories": oracle.Dimension(config["dimensions"][0], dim_rows)})
    assert canon(read_table(lake, "bank", "transactions")) == canon(want)
    # A changed dimension file rebuilds the tables that look it up.
    lake.put("dims/categories/a.csv", b"keyword,category,priority\nSTARBUCKS,COFFEE,\n")
    _, summary = run_karet(lake, "bank", config, tmp_path)
    assert summary["run_kind"] == "full" and "dimension" in summary["full_reason"]
    got = {r["description"]: r["category"] for r in read_table(lake, "bank", "transactions")}
    assert got["STARBUCKS #1"] == "COFFEE" and got["AMAZON PAYROLL"] == "INCOME"
    # An exact dimension with a key twice fails the run, naming it; nothing is written.
    config["dimensions"][0]["match"] = "exact"
    lake.put("dims/categories/c.csv", b"keyword,category,priority\nstarbucks,X,1\n")
    config["dimensions"][0]["case_insensitive"] = True
    rc, summary = run_karet(lake, "bank", config, tmp_path, check=False)
    assert rc == 1 and "STARBUCKS" in summary["error"].upper() and "twice" in summary["error"]


def test_schema_and_partition_changes_rebuild_the_table(tmp_path):
    lake = LocalLake(tmp_path / "lake")
    config = template("bank_statements", "bank")
    prefix = config["source_containers"][0]["path_prefix"]
    lake.put(f"{prefix}a.csv", statement(month_of_statements(random.Random(1), 1, 30)))
    run_karet(lake, "bank", config, tmp_path)
    # A new column: the table is made again with it, from every file.
    config["analytic_tables"][0]["schema"].append({"name": "note", "type": "string"})
    config["mappings"][0]["columns"].append({"name": "note", "expr": {"kind": "concat", "sep": "/", "args": [
        {"kind": "col", "name": "account"}, {"kind": "col", "name": "description"}]}})
    _, summary = run_karet(lake, "bank", config, tmp_path)
    assert summary["run_kind"] == "full" and "columns or partition keys" in summary["full_reason"]
    got = read_table(lake, "bank", "transactions")
    assert canon(got) == canon(expected(lake, config, "transactions"))
    assert all(r["note"].startswith("visa-") for r in got)
    # Other partition keys: the same.
    config["analytic_tables"][0]["partition_keys"] = ["account"]
    _, summary = run_karet(lake, "bank", config, tmp_path)
    assert summary["run_kind"] == "full" and "columns or partition keys" in summary["full_reason"]
    meta = lake.metadata_files("bank", "transactions")[-1]
    paths = [t.file.file_path for t in StaticTable.from_metadata(meta).scan().plan_files()]
    assert paths and all("account=" in p and "_month=" not in p for p in paths), paths
    assert canon(read_table(lake, "bank", "transactions")) == canon(expected(lake, config, "transactions"))


def test_run_summary_text_counts_in_words(tmp_path):
    """`karet run` without --json: one row is "1 row", not "1 rows"."""
    lake = LocalLake(tmp_path / "lake")
    config = {"version": 1, "dimensions": [],
              "source_containers": [{"id": "src", "name": "Events", "path_prefix": "p/events/", "format": "csv",
                                     "schema": [{"name": "user", "type": "string"}]}],
              "mappings": [{"id": "map", "name": "Events", "source_container_id": "src", "analytic_table_id": "events",
                            "columns": [{"name": "user", "expr": {"kind": "col", "name": "user"}}]}],
              "analytic_tables": [{"id": "events", "name": "Events", "partition_keys": [], "dedup_keys": [],
                                   "schema": [{"name": "user", "type": "string"}]}]}
    path = tmp_path / "pipeline.json"
    path.write_text(json.dumps(config))
    args = [str(KARET), "run", "--lake", lake.url, "--slug", "s", "--pipeline", str(path)]

    def run():
        return subprocess.run(args, capture_output=True, text=True, timeout=120, env=clean_env(), check=True).stdout

    lake.put("p/events/a.csv", b"user\nalice\n")
    out = run()
    assert "1 file processed, 1 row read, 1 written, 0 deduplicated, 1 partition written" in out, out
    assert "table events: incremental, 1 file, 1 row written" in out, out
    lake.put("p/events/b.csv", b"user\nbob\ncarol\n")
    out = run()
    assert "1 file processed, 2 rows read, 2 written" in out and "1 file, 2 rows written" in out, out
    assert "0 files processed, 0 rows read, 0 written, 0 deduplicated, 0 partitions written" in run()
