"""`karet run` against an independent oracle.

The model check: random sequences of uploads (in and out of key order),
re-uploads with other content, deletions, rows repeated across files, config
edits and runs between them, on a local lake and on moto's S3. After every
run each output table, read back by pyiceberg, must equal what karet_oracle
computes from every current file from scratch; incremental runs must read
only the new files, and full runs happen exactly when the rules say.
"""

import copy
import gzip
import json
import random

import pytest

import karet_oracle as oracle
from karet_lake import LocalLake, S3Lake, read_table, run_karet
from store_servers import server_fixture

s3 = pytest.fixture(scope="module")(server_fixture("s3"))

SLUG = "shop"
EVENTS = "pipelines/shop/events/"
ROWS = "pipelines/shop/rows/"
USERS = ["ann", "bob", "cy", "dee", "nobody"]


def base_config():
    return {
        "version": 1,
        "source_containers": [
            {"id": "events", "name": "Events", "path_prefix": EVENTS, "format": "ndjson",
             "schema": [{"name": "id", "type": "string"},
                        {"name": "ts", "type": "int64", "path": "t.unix"},
                        {"name": "user", "type": "string", "path": "who.name"},
                        {"name": "amount", "type": "float64"},
                        {"name": "tag", "type": "string"}],
             "record_filter": {"kind": "ne", "left": {"kind": "col", "name": "tag"},
                               "right": {"kind": "str", "value": "skip"}}},
            {"id": "rows", "name": "Rows", "path_prefix": ROWS, "format": "csv",
             "schema": [{"name": "id", "type": "string"}, {"name": "day", "type": "string"},
                        {"name": "user", "type": "string"}, {"name": "amount", "type": "number"}]},
        ],
        "dimensions": [
            {"id": "tiers", "match": "exact", "case_insensitive": True, "on_miss": {"literal": "basic"},
             "rows": {"values": ["tier"], "rows": [{"patterns": ["ANN"], "values": ["gold"]},
                                                  {"patterns": ["bob"], "values": ["silver"]}]}},
        ],
        "mappings": [
            {"id": "facts_from_events", "name": "Events", "source_container_id": "events",
             "analytic_table_id": "facts",
             "columns": [{"name": "id", "expr": {"kind": "col", "name": "id"}},
                         {"name": "day", "expr": {"kind": "from_unix", "input": {"kind": "col", "name": "ts"}}},
                         {"name": "user", "expr": {"kind": "col", "name": "user"}},
                         {"name": "amount", "expr": {"kind": "col", "name": "amount"}},
                         {"name": "tier", "expr": {"kind": "dim_ref", "dim_id": "tiers",
                                                   "input": {"kind": "col", "name": "user"}}},
                         {"name": "src", "expr": {"kind": "str", "value": "e"}}],
             "where": {"kind": "ne", "left": {"kind": "col", "name": "user"},
                       "right": {"kind": "str", "value": "nobody"}}},
            {"id": "facts_from_rows", "name": "Rows", "source_container_id": "rows",
             "analytic_table_id": "facts",
             "columns": [{"name": "id", "expr": {"kind": "col", "name": "id"}},
                         {"name": "day", "expr": {"kind": "parse_date", "input": {"kind": "col", "name": "day"},
                                                  "format": "%Y-%m-%d"}},
                         {"name": "user", "expr": {"kind": "col", "name": "user"}},
                         {"name": "amount", "expr": {"kind": "col", "name": "amount"}},
                         {"name": "src", "expr": {"kind": "str", "value": "r"}}]},
            {"id": "plain_from_events", "name": "Plain", "source_container_id": "events",
             "analytic_table_id": "plain",
             "columns": [{"name": "id", "expr": {"kind": "col", "name": "id"}},
                         {"name": "user", "expr": {"kind": "coalesce", "args": [
                             {"kind": "col", "name": "user"}, {"kind": "str", "value": "?"}]}},
                         {"name": "n", "expr": {"kind": "num", "value": 1}}]},
        ],
        "analytic_tables": [
            {"id": "facts", "name": "Facts",
             "schema": [{"name": "id", "type": "string"}, {"name": "day", "type": "date"},
                        {"name": "user", "type": "string"},
                        {"name": "amount", "type": "float64", "assertions": {"max": 1000000}},
                        {"name": "tier", "type": "string"}, {"name": "src", "type": "string"}],
             "partition_keys": ["month(day)"], "dedup_keys": ["id"]},
            {"id": "plain", "name": "Plain",
             "schema": [{"name": "id", "type": "string"}, {"name": "user", "type": "string"},
                        {"name": "n", "type": "int64"}],
             "partition_keys": ["user"]},
        ],
    }


def edited_config(config):
    """Another version: the events mapping of facts upper-cases the user."""
    c = copy.deepcopy(config)
    c["mappings"][0]["columns"][2]["expr"] = {"kind": "upper", "input": {"kind": "col", "name": "user"}}
    return c


# ---- files ------------------------------------------------------------------

def event_lines(rng, n, bad_amount=False):
    lines = []
    for _ in range(n):
        e = {"id": f"id{rng.randint(0, 60)}", "t": {"unix": rng.randint(1_700_000_000, 1_720_000_000)},
             "who": {"name": rng.choice(USERS)}, "amount": round(rng.uniform(-50, 500), 2),
             "tag": rng.choice(["a", "b", "skip"])}
        if rng.random() < 0.05:
            del e["who"]
        if rng.random() < 0.05:
            e["amount"] = "lots"  # does not fit float64: null
        lines.append(json.dumps(e))
    if bad_amount:
        lines.append(json.dumps({"id": "huge", "t": {"unix": 1_710_000_000}, "who": {"name": "ann"},
                                 "amount": 5e6, "tag": "a"}))
    if rng.random() < 0.2:
        lines.insert(rng.randint(0, len(lines)), "{not json")  # a broken line is skipped
    return ("\n".join(lines) + "\n").encode()


def row_csv(rng, n):
    out = ["id,day,user,amount,extra"]
    for _ in range(n):
        day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" if rng.random() > 0.05 else "bad-day"
        out.append(f"id{rng.randint(0, 60)},{day},{rng.choice(USERS)},{round(rng.uniform(0, 99), 2)},x")
    return ("\n".join(out) + "\n").encode()


class Model:
    """What the lake holds and what each table has read, by the rules."""

    def __init__(self, lake, tmp_path, rng):
        self.lake, self.tmp, self.rng = lake, tmp_path, rng
        self.files = {}  # key -> bytes
        self.configs = [base_config(), edited_config(base_config())]
        self.config_index = 0
        self.read = {"facts": None, "plain": None}  # key -> bytes at the last run, per table
        self.built_with = {"facts": None, "plain": None}
        self.failing = {"facts": False}
        self.n = 0

    @property
    def config(self):
        return self.configs[self.config_index]

    def name(self, prefix, in_order, ext):
        self.n += 1
        if in_order:
            return f"{prefix}{self.n:06d}{ext}"
        return f"{prefix}{self.rng.randint(0, self.n):06d}-{self.rng.randint(0, 999)}{ext}"

    def upload(self, in_order=True, bad=False):
        rng = self.rng
        if rng.random() < 0.6:
            key = self.name(EVENTS, in_order, rng.choice([".ndjson", ".jsonl", ".json", ".ndjson.gz"]))
            data = event_lines(rng, rng.randint(0, 30), bad_amount=bad)
        else:
            key = self.name(ROWS, in_order, rng.choice([".csv", ".csv.gz"]))
            data = row_csv(rng, rng.randint(0, 30))
        if key.endswith(".gz"):
            data = gzip.compress(data)
        self.lake.put(key, data)
        self.files[key] = data
        return key

    def replace(self):
        if self.files:
            key = self.rng.choice(sorted(self.files))
            data = event_lines(self.rng, 5) if key.startswith(EVENTS) else row_csv(self.rng, 5)
            if key.endswith(".gz"):
                data = gzip.compress(data)
            self.lake.put(key, data)
            self.files[key] = data

    def delete(self):
        if self.files:
            key = self.rng.choice(sorted(self.files))
            self.lake.delete(key)
            del self.files[key]

    def signature(self, table):
        """What the table is built from changes with the config edit for facts only."""
        return self.config_index if table == "facts" else 0

    def prefixes(self, table):
        return (EVENTS,) if table == "plain" else (EVENTS, ROWS)

    def expected_kind(self, table, full):
        """(run kind, files read) the rules give for this table now."""
        mine = {k: v for k, v in self.files.items() if k.startswith(self.prefixes(table))}
        read = self.read[table]
        if read is None:  # never committed: every file is new
            return ("full" if full else "incremental"), len(mine)
        if full or self.built_with[table] != self.signature(table):
            return "full", len(mine)
        if any(k not in mine or mine[k] != v for k, v in read.items()):
            return "full", len(mine)
        new = [k for k in mine if k not in read]
        if table == "facts" and read and any(k < max(read) for k in new):
            return "full", len(mine)
        return "incremental", len(new)

    def run(self, full=False):
        expected = {t: self.expected_kind(t, full) for t in ("facts", "plain")}
        rc, summary = run_karet(self.lake, SLUG, self.config, self.tmp, full=full)
        for t, (kind, n) in expected.items():
            got = summary["tables"][t]
            # A mapping found failing turns an incremental run into a full one.
            if not (t == "facts" and kind == "incremental" and got["run_kind"] == "full"
                    and "assertion" in (got["full_reason"] or "")):
                assert got["run_kind"] == kind, (t, got, expected)
                assert got["files_processed"] == n, (t, got, expected)
            if got["run_kind"] == "full" or got["files_processed"] > 0:  # it committed
                self.read[t] = {k: v for k, v in self.files.items() if k.startswith(self.prefixes(t))}
                self.built_with[t] = self.signature(t)
        self.check()
        return summary

    def check(self):
        files = []
        for key, data in self.files.items():
            source = self.config["source_containers"][0 if key.startswith(EVENTS) else 1]
            files.append((key, source["id"], oracle.read_source_file(source, data)))
        dims = {d["id"]: oracle.Dimension(d) for d in self.config["dimensions"]}
        for t in ("facts", "plain"):
            want = oracle.build_table(self.config, t, files, dims)
            got = read_table(self.lake, SLUG, t)
            assert canon(got or []) == canon(want), f"table {t} differs from the oracle"


def canon(rows):
    def key(r):
        return json.dumps({k: (repr(v) if isinstance(v, float) else str(v)) for k, v in r.items()}, sort_keys=True)
    return sorted(key(r) for r in rows)


def model_check(lake, tmp_path, seed, steps):
    rng = random.Random(seed)
    m = Model(lake, tmp_path, rng)
    m.run()  # nothing yet: empty tables
    for _ in range(steps):
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if r < 0.55:
                m.upload(in_order=True)
            elif r < 0.7:
                m.upload(in_order=False)
            elif r < 0.77:
                m.upload(in_order=True, bad=True)
            elif r < 0.85:
                m.replace()
            elif r < 0.92:
                m.delete()
            else:
                m.config_index = 1 - m.config_index
        summary = m.run(full=rng.random() < 0.05)
        # Run twice for one upload: the second finds nothing new, writes nothing.
        if rng.random() < 0.2:
            again = m.run()
            assert again["files_processed"] == 0 and again["rows_written"] == 0
            for t in ("facts", "plain"):
                assert again["tables"][t]["version"] == summary["tables"][t]["version"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_model_check_local(tmp_path, seed):
    model_check(LocalLake(tmp_path / "lake"), tmp_path, seed, steps=25)


def test_model_check_s3(tmp_path, s3):
    model_check(S3Lake(s3), tmp_path, seed=7, steps=15)
