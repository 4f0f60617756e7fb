"""`karet run` counts the partitions it writes (partitions_written): rows in
runs of one partition and interleaved, null partition values, a date and a
text partition key, counted against the partitions of the rows read back."""

import datetime
import json
import random

from karet_lake import LocalLake, read_table, run_karet

PREFIX = "pipelines/parts/events/"


def config():
    return {
        "version": 1,
        "source_containers": [
            {"id": "ev", "name": "Events", "path_prefix": PREFIX, "format": "ndjson",
             "schema": [{"name": "id", "type": "string"}, {"name": "ts", "type": "int64"},
                        {"name": "kind", "type": "string"}]}],
        "dimensions": [],
        "mappings": [
            {"id": "m", "name": "M", "source_container_id": "ev", "analytic_table_id": "t",
             "columns": [{"name": "id", "expr": {"kind": "col", "name": "id"}},
                         {"name": "day", "expr": {"kind": "from_unix", "input": {"kind": "col", "name": "ts"}}},
                         {"name": "kind", "expr": {"kind": "col", "name": "kind"}}]}],
        "analytic_tables": [
            {"id": "t", "name": "T",
             "schema": [{"name": "id", "type": "string"}, {"name": "day", "type": "date"},
                        {"name": "kind", "type": "string"}],
             "partition_keys": ["month(day)", "kind"]}],
    }


def lines(rng, n, start):
    out = []
    month = rng.randrange(0, 30)
    for i in range(n):
        if rng.random() < 0.1:  # a new run of rows
            month = rng.randrange(0, 30)
        ts = 1_600_000_000 + month * 31 * 86400 + rng.randrange(0, 86400)
        kind = rng.choice(["a", "b", "b", "ccc", "", None]) if rng.random() < 0.3 else "b"
        row = {"id": f"r{start + i}", "ts": None if rng.random() < 0.05 else ts, "kind": kind}
        out.append(json.dumps(row))
    return "\n".join(out) + "\n"


# Neighbours whose partitions differ only in what a shortcut could miss: a
# null day (stored as day 0) next to 1970-01-01, a null text next to an
# empty one, and (in a file of no nulls) texts of one length. Each partition
# here occurs once.
EDGES = [{"id": "e0", "ts": None, "kind": "z"}, {"id": "e1", "ts": 1000, "kind": "z"},
         {"id": "e4", "ts": 2_100_000_000, "kind": None},
         {"id": "e5", "ts": 2_100_000_000, "kind": ""}]
SAME_LENGTH = [{"id": "e2", "ts": 2_000_000_000, "kind": "x00001"},
               {"id": "e3", "ts": 2_000_000_000, "kind": "x00002"}]


def test_partitions_written(tmp_path):
    rng = random.Random(7)
    lake = LocalLake(tmp_path / "lake")
    for f in range(4):
        lake.put(f"{PREFIX}f{f}.ndjson", lines(rng, 3000, f * 3000).encode())
    lake.put(f"{PREFIX}f8.ndjson", "\n".join(json.dumps(r) for r in SAME_LENGTH).encode())
    lake.put(f"{PREFIX}f9.ndjson", "\n".join(json.dumps(r) for r in EDGES).encode())
    _, summary = run_karet(lake, "parts", config(), tmp_path)
    rows = read_table(lake, "parts", "t")
    assert len(rows) == 12000 + len(EDGES) + len(SAME_LENGTH)
    want = {((r["day"].year, r["day"].month) if r["day"] else None, r["kind"]) for r in rows}
    assert all(isinstance(r["day"], (datetime.date, type(None))) for r in rows)
    assert summary["partitions_written"] == len(want) > 20
