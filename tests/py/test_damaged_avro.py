"""A damaged manifest or manifest list (garbage, truncated, empty, wrong magic,
a block claiming more objects than it holds) is an error that names the file
and says what is wrong, from the CLI and the Python package alike: never
"out of memory", never a crash, and nothing else of the table changes."""
import hashlib
from pathlib import Path

import pytest

from conftest import table_files
from test_cli import SCHEMA, ok, run, write
from test_package import timelake

CSV = "time,device_id,temp\n2024-05-01T10:00:00Z,pump-1,71.5\n2024-05-02T10:00:00Z,pump-2,70.0\n"


def huge_count(data):
    """The first block's object count replaced by the largest varint."""
    sync = data[-16:]
    at = data.index(sync) + 16  # the header ends with the sync marker
    end = at
    while data[end] & 0x80:
        end += 1
    return data[:at] + bytes([0xfe] + [0xff] * 8 + [0x01]) + data[end + 1:]


DAMAGE = {
    "garbage": (lambda d: bytes(range(256)) * 8, "not an Avro file (bad magic)"),
    "magic": (lambda d: b"Obj\x02" + d[4:], "not an Avro file (bad magic)"),
    "empty": (lambda d: b"", "empty file (0 bytes)"),
    "truncated_header": (lambda d: d[:len(d) // 3], "truncated or damaged header"),
    "truncated_block": (lambda d: d[:-10], "truncated or damaged block 1"),
    "huge_count": (huge_count, "objects cannot fit"),
}


@pytest.fixture
def lake(tmp_path):
    lake = tmp_path / "lake"
    for name in ["iot.readings", "iot.good"]:
        ok("create", name, "--lake", lake, "--schema", SCHEMA, "--time-column", "time",
           "--series-key", "device_id")
        ok("append", write(tmp_path / "a.csv", CSV), "--lake", lake, "--table", name)
    return lake


def contents(lake):
    return {p: hashlib.sha256((lake / p).read_bytes()).hexdigest() for p in table_files(lake)}


def failed(p):
    """A clean failure: an exit status of our own, not a signal or a sanitizer report."""
    err = p.stderr.decode()
    assert p.returncode > 0 and "Sanitizer" not in err and "out of memory" not in err, err
    return err


def failure_text(fn):
    with pytest.raises(Exception) as e:
        fn()
    assert not isinstance(e.value, MemoryError), e.value
    return str(e.value)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("kind", ["manifest", "manifest list"])
def test_damaged_avro_names_the_file(tmp_path, lake, kind, damage):
    pattern = "snap-*.avro" if kind == "manifest list" else "*-m0.avro"
    target = next((lake / "iot/readings/metadata").glob(pattern))
    make, says = DAMAGE[damage]
    target.write_bytes(make(target.read_bytes()))
    before = contents(lake)
    want = f"{kind} {target.as_uri()}: "

    q = run("sql", "--lake", lake, "SELECT count(*) FROM iot.readings")
    err = failed(q)
    assert q.stdout == b"" and "iot.readings" in err and want in err and says in err, err
    p = run("append", write(tmp_path / "b.csv", CSV), "--lake", lake, "--table", "iot.readings")
    err = failed(p)
    assert want in err and says in err, err
    # info reads the manifest list (not the manifests); maintain reads both.
    for args in (["info"] if kind == "manifest list" else []) + ["maintain"]:
        err = failed(run(args, "iot.readings", "--lake", lake))
        assert target.name in err and says in err, err

    db = timelake.Lake(str(lake))
    assert want in failure_text(lambda: db.sql("SELECT count(*) FROM iot.readings"))
    import pyarrow as pa
    rows = pa.table({"time": pa.array([1714557600000000], pa.timestamp("us", tz="UTC")),
                     "device_id": ["pump-3"], "temp": [1.0]})
    text = failure_text(lambda: db.table("iot.readings").append(rows))
    assert target.name in text and says in text, text

    # Nothing of the table changed, the damaged file included; the other
    # table still takes appends.
    assert contents(lake) == before
    ok("append", write(tmp_path / "c.csv", CSV), "--lake", lake, "--table", "iot.good")


def test_append_to_a_damaged_manifest_list_names_table_and_file_and_what_to_do(tmp_path, lake):
    """Appends (CLI and package) name the table beside the file and advise a
    rollback; following the advice, the table takes appends again."""
    import json

    ok("append", write(tmp_path / "b.csv", CSV), "--lake", lake, "--table", "iot.readings", "--no-maintain")
    meta = max((lake / "iot/readings/metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    md = json.loads(meta.read_text())
    current = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    earlier = next(s for s in md["snapshots"] if s["snapshot-id"] == current["parent-snapshot-id"])
    target = Path(current["manifest-list"].removeprefix("file://"))
    target.write_bytes(b"garbage")
    before = contents(lake)
    p = run("append", write(tmp_path / "c.csv", CSV), "--lake", lake, "--table", "iot.readings")
    err = failed(p)
    assert "table iot.readings is damaged: manifest list " + target.as_uri() in err, err
    assert "`timelake rollback iot.readings SNAPSHOT`" in err and f"metadata/{meta.name}" in err, err
    import pyarrow as pa
    rows = pa.table({"time": pa.array([1714557600000000], pa.timestamp("us", tz="UTC")),
                     "device_id": ["pump-3"], "temp": [1.0]})
    text = failure_text(lambda: timelake.Lake(str(lake)).table("iot.readings").append(rows))
    assert "table iot.readings is damaged: manifest list " + target.as_uri() in text and "timelake rollback" in text, text
    assert contents(lake) == before
    ok("rollback", "iot.readings", str(earlier["snapshot-id"]), "--lake", lake)
    ok("append", write(tmp_path / "d.csv", CSV.replace("pump-2", "pump-9")), "--lake", lake, "--table", "iot.readings")
    assert ok("sql", "SELECT count(*) AS n FROM iot.readings", "--lake", lake).split() == ["n", "3"]
