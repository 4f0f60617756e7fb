"""The data files' codec: Iceberg's write.parquet.compression-codec and
-level are honoured, and a column chunk the codec barely shrinks (noise-like
full-precision floats) is stored uncompressed, as timelake.compression-min-saving
sets. Files stay readable by pyarrow, DuckDB and the reference either way."""

import datetime as dt
import glob
import json
import random

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

from conftest import table_files

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 3, 1, tzinfo=UTC)
SCHEMA = pa.schema(
    [
        ("time", pa.timestamp("us", tz="UTC")),
        ("host", pa.string()),
        ("noise", pa.float64()),  # full precision: zstd saves about a tenth
        ("reading", pa.float64()),  # rounded to 0.1: shrinks by far more
        ("note", pa.string()),
    ]
)


def rows(n, seed=0, start=T0):
    rnd = random.Random(seed)
    return pa.table(
        {
            "time": [start + dt.timedelta(seconds=10 * (i // 8)) for i in range(n)],
            "host": [f"host-{i % 8}" for i in range(n)],
            "noise": [None if i % 13 == 0 else rnd.random() * 100 for i in range(n)],
            "reading": [round(20 + 5 * ((i * 7919) % 100) / 100, 1) for i in range(n)],
            "note": [f"status ok, queue {i % 5} nominal" for i in range(n)],
        },
        schema=SCHEMA,
    )


def codecs(lake_dir, table="iot/codec"):
    """{column: set of chunk codecs} over the table's data files."""
    out = {}
    for f in glob.glob(str(lake_dir / table / "data" / "*" / "*.parquet")):
        meta = pq.ParquetFile(f).metadata
        for g in range(meta.num_row_groups):
            for c in range(meta.num_columns):
                col = meta.row_group(g).column(c)
                out.setdefault(col.path_in_schema, set()).add(col.compression)
    return out


def read_back(lake_dir, table="iot/codec"):
    files = sorted(glob.glob(str(lake_dir / table / "data" / "*" / "*.parquet")))
    ours = pa.concat_tables([pq.read_table(f) for f in files]).drop(["_ingest_ts"]).cast(SCHEMA)
    duck = duckdb.sql(f"SELECT * EXCLUDE (_ingest_ts) FROM read_parquet({files!r}, hive_partitioning = false)")
    duck = duck.arrow()
    if hasattr(duck, "read_all"):
        duck = duck.read_all()
    key = [("host", "ascending"), ("time", "ascending")]
    return ours.sort_by(key), duck.cast(SCHEMA).sort_by(key)


def newest_metadata(lake_dir, table="iot/codec"):
    files = glob.glob(str(lake_dir / table / "metadata" / "v*.metadata.json"))
    return max(files, key=lambda f: int(f.rsplit("/v", 1)[1].split(".")[0]))


def properties(lake_dir, table="iot/codec"):
    return json.load(open(newest_metadata(lake_dir, table)))["properties"]


def make(lake, properties=None, n=20000):
    t = lake.create_table("iot.codec", SCHEMA, time_column="time", series_key=["host"], properties=properties)
    data = rows(n)
    t.append(data, maintain=False)
    return t, data


def test_noise_is_uncompressed_and_the_rest_zstd_by_default(lake, lake_dir):
    t, data = make(lake)
    got = codecs(lake_dir)
    assert got["noise"] == {"UNCOMPRESSED"}
    assert got["reading"] == got["note"] == {"ZSTD"}
    # Regular times delta-pack into a few bytes a page: zstd would save less than 8 KiB a page.
    assert got["time"] == {"UNCOMPRESSED"}
    assert properties(lake_dir)["write.parquet.compression-codec"] == "zstd"
    ours, duck = read_back(lake_dir)
    key = [("host", "ascending"), ("time", "ascending")]
    assert ours.equals(data.sort_by(key)) and duck.equals(ours)
    assert lake.sql("SELECT sum(noise) AS s FROM iot.codec").column("s")[0].as_py() == pytest.approx(
        sum(v for v in data.column("noise").to_pylist() if v is not None)
    )


@pytest.mark.parametrize(
    "props, noise, rest",
    [
        ({"timelake.compression-min-saving": "0"}, "ZSTD", "ZSTD"),
        ({"write.parquet.compression-codec": "snappy"}, "UNCOMPRESSED", "SNAPPY"),
        ({"write.parquet.compression-codec": "gzip", "write.parquet.compression-level": "9"}, "UNCOMPRESSED", "GZIP"),
        ({"write.parquet.compression-codec": "uncompressed"}, "UNCOMPRESSED", "UNCOMPRESSED"),
        ({"write.parquet.compression-codec": "lz4"}, "UNCOMPRESSED", "LZ4"),  # pyarrow's name of LZ4_RAW
        ({"write.parquet.compression-codec": "brotli"}, "UNCOMPRESSED", "BROTLI"),
        ({"write.parquet.compression-codec": "Brotli", "write.parquet.compression-level": "5"}, "UNCOMPRESSED",
         "BROTLI"),
        ({"write.parquet.compression-codec": "none"}, "UNCOMPRESSED", "UNCOMPRESSED"),
        ({"timelake.compression-min-saving": "100"}, "UNCOMPRESSED", "UNCOMPRESSED"),
    ],
)
def test_properties_choose_the_codec(lake, lake_dir, props, noise, rest):
    t, data = make(lake, props, n=4000)
    got = codecs(lake_dir)
    assert got["noise"] == {noise}
    assert got["reading"] == {rest}
    ours, duck = read_back(lake_dir)
    assert duck.equals(ours) and ours.num_rows == data.num_rows
    assert {k: properties(lake_dir)[k] for k in props} == props


def test_compaction_writes_by_the_same_rule(lake, lake_dir):
    t = lake.create_table("iot.codec", SCHEMA, time_column="time", series_key=["host"])
    for i in range(4):
        t.append(rows(3000, seed=i, start=T0 + dt.timedelta(hours=2 * i)), maintain=False)
    t.maintain()
    table = StaticTable.from_metadata(newest_metadata(lake_dir))
    live = [task.file.file_path for task in table.scan().plan_files()]
    assert len(live) == 1
    meta = pq.ParquetFile(live[0].removeprefix("file://")).metadata
    got = {meta.row_group(0).column(c).path_in_schema: meta.row_group(0).column(c).compression
           for c in range(meta.num_columns)}
    assert got["noise"] == "UNCOMPRESSED" and got["reading"] == got["note"] == "ZSTD"
    assert table.scan().to_arrow().num_rows == 12000


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("write.parquet.compression-codec", "lzo", "must be zstd, lz4, snappy, gzip, brotli or uncompressed"),
        ("write.parquet.compression-codec", "zstd2", "must be zstd, lz4, snappy, gzip, brotli or uncompressed"),
        ("write.parquet.compression-level", "high", "must be an integer from 0 to 22"),
        ("write.parquet.compression-level", "23", "must be an integer from 0 to 22"),
        ("timelake.compression-min-saving", "101", "must be a percentage from 0 to 100"),
        ("timelake.compression-min-saving", "-5", "must be a percentage from 0 to 100"),
    ],
)
def test_bad_codec_settings_are_refused_and_create_nothing(lake, lake_dir, key, value, message):
    lake.create_table("iot.other", SCHEMA, time_column="time")
    before = table_files(lake_dir)
    with pytest.raises(ValueError) as e:
        lake.create_table("iot.codec", SCHEMA, time_column="time", properties={key: value})
    assert key in str(e.value) and message in str(e.value)
    assert table_files(lake_dir) == before


def test_the_reference_reads_mixed_codecs(lake, lake_dir, reference):
    _, data = make(lake, n=5000)
    out = reference(
        f"""
        import json, timelake
        lake = timelake.Lake({str(lake_dir)!r})
        r = lake.sql("SELECT count(*) AS n, sum(noise) AS s, sum(reading) AS r FROM iot.codec").to_pylist()[0]
        print(json.dumps(r))
        """
    )
    assert out["n"] == data.num_rows
    assert out["s"] == pytest.approx(sum(v for v in data.column("noise").to_pylist() if v is not None))
    assert out["r"] == pytest.approx(sum(data.column("reading").to_pylist()))
