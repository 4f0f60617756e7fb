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


def unpartitioned_config():
    c = config()
    table = c["analytic_tables"][0]
    table["partition_keys"], table["dedup_keys"] = [], ["id"]
    c["mappings"][0]["where"] = {"kind": "ne", "left": {"kind": "col", "name": "id"},
                                 "right": {"kind": "str", "value": "dropped"}}
    return c


def test_an_unpartitioned_table_is_one_partition(tmp_path):
    """A run that writes rows to a table without partition keys wrote one
    partition; a run that writes none (nothing new, every row a duplicate or
    filtered out, a full run of no rows) wrote none."""
    lake = LocalLake(tmp_path / "lake")
    cfg = unpartitioned_config()

    def run(full=False):
        _, s = run_karet(lake, "parts", cfg, tmp_path, full=full)
        assert s["tables"]["t"]["partitions_written"] == s["partitions_written"], s
        return s

    lake.put(f"{PREFIX}a.ndjson", lines(random.Random(1), 50, 0).encode())
    lake.put(f"{PREFIX}b.ndjson", lines(random.Random(2), 50, 50).encode())
    s = run()
    assert (s["rows_written"], s["partitions_written"]) == (100, 1), s
    s = run()  # nothing new
    assert (s["files_processed"], s["partitions_written"]) == (0, 0), s
    lake.put(f"{PREFIX}c.ndjson", b'{"id": "r0", "ts": 1, "kind": "a"}\n{"id": "dropped", "ts": 1, "kind": "a"}\n')
    s = run()  # a duplicate and a row the where filter drops
    assert (s["files_processed"], s["rows_written"], s["partitions_written"]) == (1, 0, 0), s
    lake.put(f"{PREFIX}d.ndjson", b'{"id": "new", "ts": 1, "kind": "a"}\n')
    s = run()
    assert (s["rows_written"], s["partitions_written"]) == (1, 1), s
    s = run(full=True)
    assert (s["run_kind"], s["rows_written"], s["partitions_written"]) == ("full", 101, 1), s
    for key in ("a", "b", "c", "d"):
        lake.delete(f"{PREFIX}{key}.ndjson")
    s = run()  # a full run (files were deleted) that leaves the table empty
    assert (s["run_kind"], s["rows_written"], s["partitions_written"]) == ("full", 0, 0), s
    assert read_table(lake, "parts", "t") == []
