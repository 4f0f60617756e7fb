"""Tables other catalogs commit to: Spark's Hadoop catalog on local disk
writes paths as file:/x (one slash), read as file:///x; JDBC and REST
catalogs name commits NNNNN-<uuid>.metadata.json, read (and appended to, as
the next vN.metadata.json). The rows are checked against pyiceberg reading
the same metadata."""
import datetime as dt
import json
import uuid
from pathlib import Path

import fastavro
import pyarrow as pa
from pyiceberg.table import StaticTable

import tlc

SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("dev", pa.string()), ("val", pa.float64())])
T0 = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)


def make(lake_dir, n_appends=2):
    lake = tlc.Lake(str(lake_dir))
    t = lake.create_table("t", SCHEMA, time_column="time", series_key=["dev"])
    for i in range(n_appends):
        t.append(pa.table({"time": [T0 + dt.timedelta(hours=i)], "dev": [f"d{i}"], "val": [float(i)]},
                          schema=SCHEMA))
    t.close()
    lake.close()
    return Path(lake_dir) / "default" / "t" / "metadata"


def rows(lake_dir):
    got = tlc.Lake(str(lake_dir)).sql("SELECT dev, val FROM t ORDER BY dev").to_pylist()
    return [(r["dev"], r["val"]) for r in got]


def rewrite_avro(path, fix):
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        schema, meta, records = r.writer_schema, dict(r.metadata), [fix(rec) for rec in r]
    meta = {k: v for k, v in meta.items() if not k.startswith("avro.")}
    with open(path, "wb") as f:
        fastavro.writer(f, schema, records, metadata=meta, codec="null")


def one_slash(url):
    return "file:/" + url[len("file:///"):] if url.startswith("file:///") else url


def test_hadoop_catalog_file_colon_one_slash(tmp_path):
    meta_dir = make(tmp_path / "lake")
    newest = max(meta_dir.glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    newest.write_text(newest.read_text().replace("file:///", "file:/"))
    for p in meta_dir.glob("snap-*.avro"):
        rewrite_avro(p, lambda r: {**r, "manifest_path": one_slash(r["manifest_path"])})
    for p in meta_dir.glob("*-m*.avro"):
        rewrite_avro(p, lambda r: {**r, "data_file": {**r["data_file"],
                                                      "file_path": one_slash(r["data_file"]["file_path"])}})
    assert "file:/" in newest.read_text() and "file:///" not in newest.read_text()
    expected = sorted((r["dev"], r["val"]) for r in StaticTable.from_metadata(str(newest)).scan().to_arrow().to_pylist())
    assert rows(tmp_path / "lake") == expected == [("d0", 0.0), ("d1", 1.0)]
    t = tlc.Lake(str(tmp_path / "lake")).table("t")
    t.append(pa.table({"time": [T0], "dev": ["d9"], "val": [9.0]}, schema=SCHEMA), maintain=False)
    assert rows(tmp_path / "lake")[-1] == ("d9", 9.0)
    t.maintain()  # reads and rewrites the file:/ data files, deletes the old ones
    assert rows(tmp_path / "lake") == [("d0", 0.0), ("d1", 1.0), ("d9", 9.0)]


def test_jdbc_catalog_commit_names(tmp_path):
    meta_dir = make(tmp_path / "lake", n_appends=2)  # v1 (create), v2, v3
    (meta_dir / "version-hint.text").unlink(missing_ok=True)
    for p in list(meta_dir.glob("v*.metadata.json")):
        n = int(p.name[1:].split(".")[0])
        p.rename(meta_dir / f"{n - 1:05d}-{uuid.uuid4()}.metadata.json")
    newest = sorted(meta_dir.glob("*.metadata.json"))[-1]
    assert newest.name.startswith("00002-")
    expected = sorted((r["dev"], r["val"]) for r in StaticTable.from_metadata(str(newest)).scan().to_arrow().to_pylist())
    assert rows(tmp_path / "lake") == expected == [("d0", 0.0), ("d1", 1.0)]
    t = tlc.Lake(str(tmp_path / "lake")).table("t")
    assert t.version == 3
    t.append(pa.table({"time": [T0], "dev": ["d9"], "val": [9.0]}, schema=SCHEMA))
    assert (meta_dir / "v4.metadata.json").exists()
    md = json.loads((meta_dir / "v4.metadata.json").read_text())
    assert md["metadata-log"][-1]["metadata-file"].endswith(newest.name)
    assert rows(tmp_path / "lake") == [("d0", 0.0), ("d1", 1.0), ("d9", 9.0)]
