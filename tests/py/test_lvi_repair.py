"""A missing or garbage last-value index no longer fails every append: the
append, or `maintain`, rebuilds it from the data files with a warning, and
`latest` (ours, the Python package's and the reference's reading our table)
then agrees with SQL over the data."""

import json
from pathlib import Path

import pyarrow as pa
import pytest

from test_cli import lake, run  # noqa: F401 (lake: the CLI-made table fixture)
from test_package import timelake

CSV = "time,device_id,temp\n"


def write_rows(path, rows):
    Path(path).write_text(CSV + "".join(f"2024-05-0{d}T10:00:0{s}Z,{dev},{v}\n" for d, s, dev, v in rows))
    return path


def lvi_file(lake):
    meta = sorted((Path(lake) / "iot/readings/metadata").glob("v*.metadata.json"),
                  key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    md = json.loads(meta.read_text())
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    return Path(snap["summary"]["timelake.last-value-index"].removeprefix("file://"))


def newest(lake, reference):
    """{device: temp} of `latest` through the CLI, the package and the reference, and of SQL."""
    p = run("latest", "iot.readings", "--lake", lake, "--json")
    assert p.returncode == 0, p.stderr
    cli = {r["device_id"]: r["temp"] for r in map(json.loads, p.stdout.decode().splitlines())}
    pkg = {r["device_id"]: r["temp"] for r in timelake.Lake(str(lake)).latest("iot.readings").to_pylist()}
    ref = reference(f"""
        import json, timelake
        rows = timelake.Lake({str(lake)!r}).latest("iot.readings").to_pylist()
        print(json.dumps({{r["device_id"]: r["temp"] for r in rows}}))
    """)
    sql = timelake.Lake(str(lake)).sql(
        "SELECT DISTINCT ON (device_id) device_id, temp FROM iot.readings ORDER BY device_id, time DESC")
    return [cli, pkg, ref, dict(zip(sql.column("device_id").to_pylist(), sql.column("temp").to_pylist()))]


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_append_rebuilds_a_broken_index(tmp_path, lake, reference, damage):
    args = ["append", "--lake", lake, "--table", "iot.readings"]
    assert run(*args, write_rows(tmp_path / "a.csv", [(1, 1, "p1", 1.0), (2, 1, "p1", 2.0), (1, 2, "p2", 3.0)])).returncode == 0
    index = lvi_file(lake)
    if damage == "garbage":
        index.write_bytes(b"PAR1 not a parquet file PAR1")
    else:
        index.unlink()
    p = run(*args, write_rows(tmp_path / "b.csv", [(3, 1, "p3", 4.0), (1, 3, "p2", 0.5)]))
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert "warning:" in err and "last-value index" in err and "rebuilt" in err, err
    want = {"p1": 2.0, "p2": 0.5, "p3": 4.0}
    assert newest(lake, reference) == [want] * 4
    # The next append merges with the rebuilt index, without a warning.
    p = run(*args, write_rows(tmp_path / "c.csv", [(4, 1, "p1", 9.0)]))
    assert p.returncode == 0 and b"warning" not in p.stderr, p.stderr
    assert newest(lake, reference) == [{**want, "p1": 9.0}] * 4


def test_maintain_rebuilds_a_broken_index(tmp_path, lake, reference):
    args = ["append", "--lake", lake, "--table", "iot.readings"]
    assert run(*args, write_rows(tmp_path / "a.csv", [(1, 1, "p1", 1.0), (2, 1, "p2", 2.0)])).returncode == 0
    lvi_file(lake).write_bytes(b"garbage")
    p = run("maintain", "iot.readings", "--lake", lake)
    err = p.stderr.decode()
    assert p.returncode == 0 and "warning:" in err and "rebuilt" in err, err
    assert lvi_file(lake).read_bytes()[:4] == b"PAR1"
    assert newest(lake, reference) == [{"p1": 1.0, "p2": 2.0}] * 4
    p = run("maintain", "iot.readings", "--lake", lake)
    assert p.returncode == 0 and b"warning" not in p.stderr, p.stderr


def test_package_reports_the_rebuild(tmp_path):
    lake = timelake.Lake(str(tmp_path / "lake"))
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
    t = lake.create_table("t", schema, time_column="time", series_key=["device_id"])
    rows = lambda dev, v: pa.table({"time": pa.array([1714557600000000], pa.timestamp("us", tz="UTC")),  # noqa: E731
                                    "device_id": [dev], "temp": [v]}, schema=schema)
    t.append(rows("a", 1.0))
    meta = json.loads(sorted((tmp_path / "lake/default/t/metadata").glob("v2.metadata.json"))[0].read_text())
    Path(meta["snapshots"][-1]["summary"]["timelake.last-value-index"].removeprefix("file://")).unlink()
    out = t.append(rows("b", 2.0))
    assert "rebuilt" in out["warning"]
    assert sorted(lake.latest("t").column("device_id").to_pylist()) == ["a", "b"]
