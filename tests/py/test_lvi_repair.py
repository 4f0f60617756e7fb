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


def data_files(lake):
    return sorted(p.name for p in (Path(lake) / "iot/readings/data").rglob("*.parquet"))


def damage_index(index, damage):
    if damage == "garbage":
        index.write_bytes(b"PAR1 not a parquet file PAR1")
    else:
        index.unlink()


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_append_rebuilds_a_broken_index(tmp_path, lake, reference, damage):
    args = ["append", "--lake", lake, "--table", "iot.readings"]
    assert run(*args, write_rows(tmp_path / "a.csv", [(1, 1, "p1", 1.0), (2, 1, "p1", 2.0), (1, 2, "p2", 3.0)])).returncode == 0
    index = lvi_file(lake)
    damage_index(index, damage)
    p = run(*args, write_rows(tmp_path / "b.csv", [(3, 1, "p3", 4.0), (1, 3, "p2", 0.5)]))
    err = p.stderr.decode()
    assert p.returncode == 0, err
    # The warning names the table and the file, and says what was done.
    assert "warning: iot.readings: the last-value index" in err and index.name in err, err
    assert ("is missing" if damage == "missing" else "does not fit the file") in err, err
    assert "rebuilt it from the data files" in err, err
    want = {"p1": 2.0, "p2": 0.5, "p3": 4.0}
    assert newest(lake, reference) == [want] * 4
    # The next append merges with the rebuilt index, without a warning.
    p = run(*args, write_rows(tmp_path / "c.csv", [(4, 1, "p1", 9.0)]))
    assert p.returncode == 0 and b"warning" not in p.stderr, p.stderr
    assert newest(lake, reference) == [{**want, "p1": 9.0}] * 4


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_maintain_rebuilds_a_broken_index(tmp_path, lake, reference, damage):
    args = ["append", "--lake", lake, "--table", "iot.readings", "--no-maintain"]
    assert run(*args, write_rows(tmp_path / "a.csv", [(1, 1, "p1", 1.0), (2, 1, "p2", 2.0)])).returncode == 0
    assert run(*args, write_rows(tmp_path / "b.csv", [(1, 2, "p1", 5.0)])).returncode == 0
    index = lvi_file(lake)
    damage_index(index, damage)
    files = data_files(lake)
    p = run("maintain", "iot.readings", "--lake", lake, "--json")
    err = p.stderr.decode()
    assert p.returncode == 0 and "warning:" in err and index.name in err and "rebuilt" in err, err
    report = json.loads(p.stdout)
    assert index.name in report["warning"] and "rebuilt" in report["warning"], report
    assert lvi_file(lake) != index and lvi_file(lake).read_bytes()[:4] == b"PAR1"
    assert newest(lake, reference) == [{"p1": 5.0, "p2": 2.0}] * 4
    p = run("maintain", "iot.readings", "--lake", lake, "--json")
    assert p.returncode == 0 and b"warning" not in p.stderr, p.stderr
    assert "warning" not in json.loads(p.stdout)
    assert set(files) <= set(data_files(lake))  # no data file lost


def test_commit_without_an_index_is_indexed_by_maintain(tmp_path, lake, reference):
    """A snapshot with rows that names no index (as other writers' commits do):
    an append leaves the index out (it would have to read every file) and
    latest answers by a query; maintain builds it, and says so."""
    args = ["append", "--lake", lake, "--table", "iot.readings", "--no-maintain"]
    assert run(*args, write_rows(tmp_path / "a.csv", [(1, 1, "p1", 1.0), (2, 1, "p2", 2.0)])).returncode == 0
    meta = sorted((Path(lake) / "iot/readings/metadata").glob("v*.metadata.json"),
                  key=lambda p: int(p.name[1:].split(".")[0]))[-1]
    md = json.loads(meta.read_text())
    for s in md["snapshots"]:
        s["summary"].pop("timelake.last-value-index", None)
    meta.write_text(json.dumps(md))
    p = run(*args, write_rows(tmp_path / "b.csv", [(1, 2, "p1", 5.0)]))
    assert p.returncode == 0 and b"warning" not in p.stderr, p.stderr
    assert newest(lake, reference) == [{"p1": 5.0, "p2": 2.0}] * 4
    p = run("maintain", "iot.readings", "--lake", lake)
    err = p.stderr.decode()
    assert p.returncode == 0 and "has rows but no last-value index" in err, err
    assert lvi_file(lake).read_bytes()[:4] == b"PAR1"
    assert newest(lake, reference) == [{"p1": 5.0, "p2": 2.0}] * 4


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
    assert "rebuilt" in out["warning"] and "lvi-" in out["warning"]
    assert "warning" not in t.append(rows("c", 3.0))
    Path(t.info()["last_value_index"].removeprefix("file://")).write_bytes(b"junk")
    report = t.maintain()
    assert "rebuilt" in report["warning"], report
    assert sorted(lake.latest("t").column("device_id").to_pylist()) == ["a", "b", "c"]


def table_files(lake):
    return sorted((p.relative_to(lake), p.stat().st_mtime_ns) for p in Path(lake).rglob("*") if p.is_file())


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_latest_computes_past_a_broken_index_without_writing(tmp_path, lake, damage):
    """Until the next append or maintain rebuilds it, `latest` answers from the
    data files as SQL does, with one warning (CLI: stderr; package: a
    RuntimeWarning; library: tl_lake_latest_report), and writes nothing."""
    import tlc

    args = ["append", "--lake", lake, "--table", "iot.readings", "--no-maintain"]
    assert run(*args, write_rows(tmp_path / "a.csv", [(1, 1, "p1", 1.0), (2, 1, "p2", 2.0)])).returncode == 0
    assert run(*args, write_rows(tmp_path / "b.csv", [(1, 2, "p1", 5.0), (3, 1, "p3", 7.0)])).returncode == 0
    index = lvi_file(lake)
    damage_index(index, damage)
    before = table_files(lake)
    want = {"p1": 5.0, "p2": 2.0, "p3": 7.0}
    p = run("latest", "iot.readings", "--lake", lake, "--json")
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert {r["device_id"]: r["temp"] for r in map(json.loads, p.stdout.decode().splitlines())} == want
    assert err.count("warning:") == 1 and "iot.readings" in err and index.name in err, err
    assert "computed the newest rows from the data files" in err and "rebuilds the index" in err, err
    with pytest.warns(RuntimeWarning, match="computed the newest rows from the data files"):
        rows = timelake.Lake(str(lake)).latest("iot.readings")
    assert dict(zip(rows.column("device_id").to_pylist(), rows.column("temp").to_pylist())) == want
    rows, warning = tlc.Lake(str(lake)).latest_report("iot.readings")
    assert index.name in warning and dict(zip(rows.column("device_id").to_pylist(), rows.column("temp").to_pylist())) == want
    assert table_files(lake) == before  # a read writes nothing
    # The next append rebuilds the index; latest then reads it, without a warning.
    assert run(*args, write_rows(tmp_path / "c.csv", [(4, 1, "p2", 9.0)])).returncode == 0
    p = run("latest", "iot.readings", "--lake", lake, "--json")
    assert p.returncode == 0 and b"warning" not in p.stderr, p.stderr
    assert tlc.Lake(str(lake)).latest_report("iot.readings")[1] == ""
