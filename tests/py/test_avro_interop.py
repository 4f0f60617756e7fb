"""Avro files and Iceberg manifests written by us, read by fastavro and
pyiceberg; files of fastavro, pyiceberg and the reference (timelake==0.7.0)
read by us. Our side is tests/tools/avro_tool.c, compiled here against the
static library of the build under test."""

import datetime as dt
import glob
import io
import json
import os
import subprocess
from pathlib import Path

import fastavro
import fastavro._write
import fastavro.read
import pytest

from conftest import static_link_flags

ROOT = Path(__file__).resolve().parents[2]
EPOCH = dt.date(1970, 1, 1)


def _static_lib():
    """The static library of the build under test: $TL_BUILD (scripts/test.sh
    sets it), else build-asan. The tests do not build it."""
    build = Path(os.environ.get("TL_BUILD") or ROOT / "build-asan")
    lib = build / "libtimelake_static.a"
    if not lib.exists():
        pytest.fail(f"{lib} is missing: build the library first (scripts/test.sh does)")
    return lib


@pytest.fixture(scope="session")
def tool(tmp_path_factory):
    lib = _static_lib()
    sanitize = b"__asan_" in lib.read_bytes()
    exe = tmp_path_factory.mktemp("tool") / "avro_tool"
    flags = ["-std=c11", "-g", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE"]
    if sanitize:
        flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    subprocess.run(["cc", *flags, f"-I{ROOT / 'include'}", f"-I{ROOT / 'src'}", "-o", str(exe),
                    str(ROOT / "tests/tools/avro_tool.c"), str(lib), *static_link_flags()],
                   check=True)

    def run(*args):
        proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"avro_tool {' '.join(map(str, args))} failed:\n{proc.stderr}")
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    return run


def _varint(n):
    u = (n << 1) ^ (n >> 63)
    out = bytearray()
    while u >= 0x80:
        out.append(u & 0x7F | 0x80)
        u >>= 7
    return bytes(out + bytes([u]))


def _read_varint(fo):
    u = shift = 0
    while True:
        b = fo.read(1)[0]
        u |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (u >> 1) ^ -(u & 1)


def _zstd_read_block(fo):
    import zstandard

    data = fo.read(_read_varint(fo))
    return io.BytesIO(zstandard.ZstdDecompressor().decompressobj().decompress(data))


def _zstd_write_block(fo, block_bytes, compression_level):
    import zstandard

    data = zstandard.ZstdCompressor().compress(block_bytes)
    fo.write(_varint(len(data)) + data)


# fastavro wants backports.zstd for the zstandard codec on Python < 3.14; the
# zstandard package (a pyiceberg dependency) does the same job.
fastavro.read.BLOCK_READERS["zstandard"] = _zstd_read_block
fastavro._write.BLOCK_WRITERS["zstandard"] = _zstd_write_block


def read_avro(path):
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        return r.metadata, list(r)


# ---- Generic Avro files ----

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "namespace": "tl.test",
    "doc": "one reading",
    "fields": [
        {"name": "id", "type": "long", "field-id": 1},
        {"name": "ok", "type": "boolean", "field-id": 2},
        {"name": "small", "type": "int"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "name", "type": ["null", "string"], "default": None, "field-id": 3},
        {"name": "raw", "type": "bytes"},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True}},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "hash2", "type": ["null", "Hash"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string", "element-id": 9}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long"], "key-id": 10, "value-id": 11}},
        {
            "name": "pairs",
            "type": [
                "null",
                {
                    "type": "array",
                    "logicalType": "map",
                    "items": {
                        "type": "record",
                        "name": "k1_v2",
                        "fields": [{"name": "key", "type": "int", "field-id": 1}, {"name": "value", "type": "long"}],
                    },
                },
            ],
            "default": None,
        },
        {"name": "choice", "type": ["null", "long", "string", "Color"], "default": None},
    ],
}


def records(n):
    out = []
    for i in range(n):
        out.append(
            {
                "id": i * 2**35 - 7,
                "ok": i % 3 == 0,
                "small": -i,
                "f": i / 4,
                "d": i * 1.25e-3,
                "name": None if i % 4 == 0 else f"n\u00e9-{i}",
                "raw": bytes(range(i % 256)) + b"\xff\x00",
                "day": dt.date(2026, 1, 1) + dt.timedelta(days=i),
                "ts": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=i * 1001),
                "color": ["RED", "GREEN", "BLUE"][i % 3],
                "hash": bytes([i % 256, 1, 2, 3]),
                "hash2": None if i % 2 else b"wxyz",
                "tags": [f"t{k}" for k in range(i % 4)],
                "attrs": {f"k{k}": (None if k % 2 else k * 3) for k in range(i % 3)},
                "pairs": None if i % 5 == 0 else [{"key": k, "value": k * i} for k in range(i % 3)],
                "choice": [None, i, f"s{i}", "BLUE"][i % 4],
            }
        )
    return out


def avro_json_lines(recs):
    """Records in Avro's JSON encoding (unions wrapped by branch name)."""
    buf = io.StringIO()
    fastavro.json_writer(buf, fastavro.parse_schema(SCHEMA), recs)
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def from_avro_json(lines):
    return list(fastavro.json_reader(io.StringIO("\n".join(json.dumps(x) for x in lines)), SCHEMA))


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_fastavro_reads_what_we_write(tool, tmp_path, codec):
    recs = records(300)
    spec = {"schema": SCHEMA, "codec": codec, "metadata": {"user.key": "v\u00e4lue", "format-version": "2"},
            "records": avro_json_lines(recs), "block_size": 2000}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "out.avro"
    tool("write", tmp_path / "spec.json", out)
    with open(out, "rb") as f:
        r = fastavro.reader(f)
        assert r.codec == codec
        assert r.metadata["user.key"] == "v\u00e4lue" and r.metadata["format-version"] == "2"
        # The schema keeps every attribute (field-id, element-id, key-id, logicalType, doc).
        assert json.loads(r.metadata["avro.schema"]) == SCHEMA
        got = list(r)
    assert got == recs
    assert out.read_bytes().count(out.read_bytes()[-16:]) > 3  # several blocks


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_we_read_what_fastavro_writes(tool, tmp_path, codec):
    recs = records(300)
    path = tmp_path / "in.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(SCHEMA), recs, codec=codec, sync_interval=1500,
                        metadata={"k": "v"})
    dump = tool("dump", path)
    assert dump["codec"] == codec
    assert dump["metadata"]["k"] == "v"
    # fastavro stores full names where we print short ones: compare meanings.
    theirs = json.loads(dump["metadata"]["avro.schema"])
    assert fastavro.parse_schema(dump["schema"]) == fastavro.parse_schema(theirs)
    assert dump["schema"]["fields"][-3]["type"]["key-id"] == 10
    assert from_avro_json(dump["records"]) == recs


def test_we_read_fastavro_blocks_with_byte_sizes(tool, tmp_path):
    """fastavro's writer never emits negative array counts; craft them."""
    schema = {"type": "record", "name": "R", "fields": [{"name": "a", "type": {"type": "array", "items": "long"}}]}
    path = tmp_path / "neg.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, schema, [{"a": [1, 2, 3]}], sync_marker=b"S" * 16)
    data = bytearray(path.read_bytes())
    # The datum is 06 02 04 06 00 (count 3, items, end); rewrite it as -3 with a byte size.
    old = bytes([0x06, 0x02, 0x04, 0x06, 0x00])
    new = bytes([0x05, 0x06, 0x02, 0x04, 0x06, 0x00])
    at = data.index(old + b"S" * 16)
    data[at - 1] = len(new) * 2  # block byte size (zig-zag)
    data[at:at + len(old)] = new
    path.write_bytes(bytes(data))
    assert list(fastavro.reader(open(path, "rb"))) == [{"a": [1, 2, 3]}]
    assert tool("dump", path)["records"] == [{"a": [1, 2, 3]}]


# ---- Manifests ----

def norm(v):
    """fastavro values in the tool's JSON form: dates as day numbers, bytes as hex."""
    if isinstance(v, dt.date):
        return (v - EPOCH).days
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, list):
        if v and isinstance(v[0], dict) and set(v[0]) == {"key", "value"}:
            return [[x["key"], norm(x["value"])] for x in v]
        return [norm(x) for x in v] if v else None
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def tool_partition(values):
    return [None if v is None else next(iter(v.values())) for v in values]


def check_manifest(ours, theirs):
    """Our manifest-read JSON against fastavro's records of the same file."""
    assert len(ours["entries"]) == len(theirs)
    for o, t in zip(ours["entries"], theirs):
        t = norm(t)
        for k in ["status", "snapshot_id"]:
            assert o[k] == t[k]
        for k in ["sequence_number", "file_sequence_number"]:
            assert o[k] == t.get(k)
        od, td = o["data_file"], t["data_file"]
        assert tool_partition(od["partition"]) == [
            x.hex() if isinstance(x, bytes) else x for x in td["partition"].values()]
        assert od["content"] == td.get("content", 0)
        for k, v in od.items():
            if k in ("partition", "content"):
                continue
            want = td.get(k)
            if k.endswith("counts") or k.endswith("sizes") or k.endswith("bounds"):
                want = want or None
            assert v == want, k


def check_list(ours, theirs):
    assert len(ours["manifests"]) == len(theirs)
    for o, t in zip(ours["manifests"], theirs):
        t = norm(t)
        aliases = {"added_files_count": "added_data_files_count",
                   "existing_files_count": "existing_data_files_count",
                   "deleted_files_count": "deleted_data_files_count"}
        for k, v in o.items():
            want = t.get(k, t.get(aliases.get(k, "")))
            if k == "partitions":
                want = [dict({"contains_nan": None}, **p) for p in want or []]
            elif k != "key_metadata" and want is None:
                want = 0  # v1 leaves counts and sequence numbers out or null
            assert v == want, k


FULL_ENTRY = {
    "status": 1, "snapshot_id": 5813220597814538045, "sequence_number": 4, "file_sequence_number": 3,
    "data_file": {
        "content": 0, "file_path": "file:///wh/data/time_day=2026-01-01/a.parquet", "file_format": "PARQUET",
        "partition": [{"int": 20454}, {"string": "pump-7"}], "record_count": 2, "file_size_in_bytes": 1780,
        "column_sizes": [[1, 43], [2, 75]], "value_counts": [[1, 2], [2, 2]], "null_value_counts": [[1, 0]],
        "nan_value_counts": [[3, 0]], "lower_bounds": [[1, "0040204648470600"], [2, "70756d702d37"]],
        "upper_bounds": [[2, "70756d702d38"]], "key_metadata": "00ff", "split_offsets": [4, 99],
        "equality_ids": None, "sort_order_id": 1, "first_row_id": None, "referenced_data_file": None,
        "content_offset": None, "content_size_in_bytes": None,
    },
}
BARE_ENTRY = {
    "status": 1, "snapshot_id": 7, "sequence_number": None, "file_sequence_number": None,
    "data_file": {
        "content": 0, "file_path": "s3://b/k.parquet", "file_format": "PARQUET",
        "partition": [None, {"string": "pump-8"}], "record_count": 0, "file_size_in_bytes": 1,
        "column_sizes": None, "value_counts": None, "null_value_counts": None, "nan_value_counts": None,
        "lower_bounds": None, "upper_bounds": None, "key_metadata": None, "split_offsets": None,
        "equality_ids": None, "sort_order_id": None, "first_row_id": None, "referenced_data_file": None,
        "content_offset": None, "content_size_in_bytes": None,
    },
}
TABLE_SCHEMA = ('{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"time","required":true,'
                '"type":"timestamptz"},{"id":2,"name":"device id","required":false,"type":"string"}]}')
SPEC = ('[{"source-id":1,"field-id":1000,"name":"time_day","transform":"day"},'
        '{"source-id":2,"field-id":1001,"name":"device id","transform":"identity"}]')


def manifest_spec(version):
    return {
        "info": {"schema_json": TABLE_SCHEMA, "partition_spec_json": SPEC, "partition_spec_id": 0,
                 "schema_id": 0, "format_version": version, "content": 0,
                 "partition_fields": [
                     {"name": "time_day", "field_id": 1000, "avro_type": {"type": "int", "logicalType": "date"}},
                     {"name": "device id", "field_id": 1001, "avro_type": "string"}]},
        "entries": [FULL_ENTRY, BARE_ENTRY],
    }


def write_ours(tool, tmp_path, version):
    spec = tmp_path / f"m{version}.json"
    spec.write_text(json.dumps(manifest_spec(version)))
    manifest = tmp_path / f"m{version}.avro"
    tool("manifest-write", spec, manifest)
    files = [{
        "manifest_path": str(manifest), "manifest_length": manifest.stat().st_size, "partition_spec_id": 0,
        "content": 0, "sequence_number": 4, "min_sequence_number": 3, "added_snapshot_id": 5813220597814538045,
        "added_files_count": 1, "existing_files_count": 1, "deleted_files_count": 0, "added_rows_count": 2,
        "existing_rows_count": 0, "deleted_rows_count": 0,
        "partitions": [
            {"contains_null": True, "contains_nan": None, "lower_bound": "e64f0000", "upper_bound": "e64f0000"},
            {"contains_null": False, "contains_nan": False, "lower_bound": "70756d702d37",
             "upper_bound": "70756d702d38"}],
        "key_metadata": None,
    }]
    lspec = tmp_path / f"l{version}.json"
    lspec.write_text(json.dumps({"snapshot_id": 5813220597814538045, "parent_snapshot_id": None,
                                 "sequence_number": 4, "format_version": version, "manifests": files}))
    mlist = tmp_path / f"l{version}.avro"
    tool("list-write", lspec, mlist)
    return manifest, mlist


@pytest.mark.parametrize("version", [1, 2])
def test_fastavro_reads_our_manifests(tool, tmp_path, version):
    manifest, mlist = write_ours(tool, tmp_path, version)
    meta, recs = read_avro(manifest)
    assert meta["format-version"] == str(version) and meta["partition-spec"] == SPEC
    assert meta["schema"] == TABLE_SCHEMA and meta["content"] == "data" and meta["avro.codec"] == "null"
    assert recs[0]["data_file"]["partition"] == {"time_day": dt.date(2026, 1, 1), "device_x20id": "pump-7"}
    schema = json.loads(meta["avro.schema"])
    part = [f for f in schema["fields"][-1]["type"]["fields"] if f["name"] == "partition"][0]
    assert part["field-id"] == 102
    assert part["type"]["fields"][1] == {"name": "device_x20id", "type": ["null", "string"], "default": None,
                                         "field-id": 1001, "iceberg-field-name": "device id"}
    ours = tool("manifest-read", manifest)
    check_manifest(ours, recs)
    if version == 2:
        assert ours["entries"] == [FULL_ENTRY, BARE_ENTRY]
    lmeta, lrecs = read_avro(mlist)
    assert lmeta["snapshot-id"] == "5813220597814538045" and lmeta["parent-snapshot-id"] == "null"
    assert lmeta.get("sequence-number") == ("4" if version == 2 else None)
    check_list(tool("list-read", mlist), lrecs)


@pytest.mark.parametrize("version", [1, 2])
def test_pyiceberg_reads_our_manifests(tool, tmp_path, version):
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list

    _, mlist = write_ours(tool, tmp_path, version)
    fio = PyArrowFileIO()
    files = list(read_manifest_list(fio.new_input(str(mlist))))
    assert len(files) == 1
    mf = files[0]
    assert mf.added_snapshot_id == 5813220597814538045 and mf.added_files_count == 1
    assert mf.partitions[0].contains_null and mf.partitions[1].upper_bound == b"pump-8"
    if version == 2:
        assert (mf.sequence_number, mf.min_sequence_number) == (4, 3)
    entries = mf.fetch_manifest_entry(fio, discard_deleted=False)
    assert len(entries) == 2
    full, bare = entries[0].data_file, entries[1].data_file
    assert full.file_path == FULL_ENTRY["data_file"]["file_path"]
    assert full.partition[0] == 20454 and full.partition[1] == "pump-7"
    assert bare.partition[0] is None and bare.partition[1] == "pump-8"
    assert full.column_sizes == {1: 43, 2: 75} and full.lower_bounds[2] == b"pump-7"
    assert full.split_offsets == [4, 99] and full.sort_order_id == 1
    assert bare.column_sizes is None or bare.column_sizes == {}
    assert entries[0].snapshot_id == 5813220597814538045
    if version == 2:
        assert entries[0].sequence_number == 4 and entries[0].file_sequence_number == 3
        assert entries[1].sequence_number == 4  # an added entry inherits the list's


def pyiceberg_files(tmp_path, version, codec):
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestEntry, ManifestEntryStatus,
                                    write_manifest, write_manifest_list)
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import DayTransform, IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import NestedField, StringType, TimestamptzType

    fio = PyArrowFileIO()
    schema = Schema(NestedField(1, "time", TimestamptzType(), required=True),
                    NestedField(2, "device id", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=DayTransform(), name="time_day"),
                         PartitionField(source_id=2, field_id=1001, transform=IdentityTransform(), name="device id"))
    manifest = tmp_path / f"py-m{version}.avro"
    with write_manifest(version, spec, schema, fio.new_output(str(manifest)), snapshot_id=11,
                        avro_compression=codec) as w:
        for i in range(3):
            df = DataFile.from_args(content=DataFileContent.DATA, file_path=f"s3://x/{i}.parquet",
                                    file_format=FileFormat.PARQUET, partition=Record(20454 + i, f"pump-{i}"),
                                    record_count=2 + i, file_size_in_bytes=100 * i, column_sizes={1: 2, 2: i},
                                    value_counts={1: 2}, null_value_counts={1: 0}, nan_value_counts={},
                                    lower_bounds={1: b"ab"}, upper_bounds={1: b"cd"}, split_offsets=[4],
                                    sort_order_id=0)
            w.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=11, data_file=df))
    mlist = tmp_path / f"py-l{version}.avro"
    with write_manifest_list(version, fio.new_output(str(mlist)), 11, 10, 1 if version == 2 else None,
                             codec) as lw:
        lw.add_manifests([w.to_manifest_file()])
    return manifest, mlist


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("codec", ["null", "deflate", "zstd"])
def test_we_read_pyiceberg_manifests(tool, tmp_path, version, codec):
    manifest, mlist = pyiceberg_files(tmp_path, version, codec)
    _, recs = read_avro(manifest)
    ours = tool("manifest-read", manifest)
    check_manifest(ours, recs)
    assert ours["entries"][2]["data_file"]["partition"] == [{"int": 20456}, {"string": "pump-2"}]
    _, lrecs = read_avro(mlist)
    check_list(tool("list-read", mlist), lrecs)


def test_we_read_java_style_v1_manifest_list_by_name(tool, tmp_path):
    """Java's v1 names (added_data_files_count, ...) and no field-ids at all."""
    schema = {"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string"}, {"name": "manifest_length", "type": "long"},
        {"name": "partition_spec_id", "type": "int"},
        {"name": "added_snapshot_id", "type": ["null", "long"], "default": None},
        {"name": "added_data_files_count", "type": ["null", "int"], "default": None},
        {"name": "existing_data_files_count", "type": ["null", "int"], "default": None},
        {"name": "deleted_data_files_count", "type": ["null", "int"], "default": None},
        {"name": "partitions", "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "r508", "fields": [
                {"name": "contains_null", "type": "boolean"},
                {"name": "lower_bound", "type": ["null", "bytes"], "default": None},
                {"name": "upper_bound", "type": ["null", "bytes"], "default": None}]}}], "default": None},
        {"name": "added_rows_count", "type": ["null", "long"], "default": None},
        {"name": "existing_rows_count", "type": ["null", "long"], "default": None},
        {"name": "deleted_rows_count", "type": ["null", "long"], "default": None}]}
    recs = [{"manifest_path": "s3://m.avro", "manifest_length": 5654, "partition_spec_id": 0,
             "added_snapshot_id": 52896, "added_data_files_count": 3, "existing_data_files_count": 1,
             "deleted_data_files_count": 2, "partitions": [{"contains_null": False, "lower_bound": b"a",
                                                            "upper_bound": None}],
             "added_rows_count": 3, "existing_rows_count": 0, "deleted_rows_count": None}]
    path = tmp_path / "java-v1.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, schema, recs, codec="deflate", metadata={"format-version": "1"})
    got = tool("list-read", path)["manifests"][0]
    assert (got["added_files_count"], got["existing_files_count"], got["deleted_files_count"]) == (3, 1, 2)
    assert got["partitions"] == [{"contains_null": False, "contains_nan": None, "lower_bound": "61",
                                  "upper_bound": None}]
    assert got["sequence_number"] == 0 and got["content"] == 0


# ---- The reference implementation ----

REFERENCE_TABLE = """
import datetime as dt, json, pyarrow as pa, timelake
lake = timelake.Lake({lake!r})
schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])
t = lake.create_table("iot.readings", schema, time_column="time", series_key=["device_id"])
t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
for k in range(2):
    t.append(pa.table({{"time": [t0, t0 + dt.timedelta(days=1), t0], "device_id": ["pump-7", "pump-7", "pump-8"],
                       "temp": [71.5 + k, float("nan"), None]}}, schema=schema), batch_id=f"b{{k}}")
print(json.dumps(True))
"""


def reference_avro_files(reference, tmp_path):
    lake = tmp_path / "ref"
    reference(REFERENCE_TABLE.format(lake=str(lake)))
    files = sorted(glob.glob(str(lake / "iot/readings/metadata/*.avro")))
    lists = [f for f in files if os.path.basename(f).startswith("snap-")]
    manifests = [f for f in files if f not in lists]
    assert len(lists) == 2 and len(manifests) >= 2
    return manifests, lists


def test_we_read_the_reference_manifests(tool, tmp_path, reference):
    manifests, lists = reference_avro_files(reference, tmp_path)
    for m in manifests:
        _, recs = read_avro(m)
        check_manifest(tool("manifest-read", m), recs)
    for m in lists:
        _, recs = read_avro(m)
        check_list(tool("list-read", m), recs)


def test_we_write_the_reference_manifest_shape(tool, tmp_path, reference):
    """Re-writing the reference's manifests and lists from what we read gives
    the same avro.schema text, metadata and records."""
    manifests, lists = reference_avro_files(reference, tmp_path)
    for i, m in enumerate(manifests):
        meta, recs = read_avro(m)
        schema = json.loads(meta["avro.schema"])
        data_file = [f for f in schema["fields"] if f["name"] == "data_file"][0]["type"]
        part = [f for f in data_file["fields"] if f["name"] == "partition"][0]["type"]
        spec = {"info": {"schema_json": meta["schema"], "partition_spec_json": meta["partition-spec"],
                         "partition_spec_id": int(meta["partition-spec-id"]), "schema_id": int(meta["schema-id"]),
                         "format_version": int(meta["format-version"]), "content": 0,
                         "partition_fields": [{"name": f["name"], "field_id": f["field-id"],
                                               "avro_type": f["type"][1]} for f in part["fields"]]},
                "entries": tool("manifest-read", m)["entries"]}
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        out = tmp_path / f"ours-{i}.avro"
        tool("manifest-write", tmp_path / "spec.json", out)
        our_meta, our_recs = read_avro(out)
        assert our_meta == meta
        assert our_recs == recs
    for i, m in enumerate(lists):
        meta, recs = read_avro(m)
        parent = None if meta["parent-snapshot-id"] == "null" else int(meta["parent-snapshot-id"])
        spec = {"snapshot_id": int(meta["snapshot-id"]), "parent_snapshot_id": parent,
                "sequence_number": int(meta["sequence-number"]), "format_version": int(meta["format-version"]),
                "manifests": tool("list-read", m)["manifests"]}
        (tmp_path / "lspec.json").write_text(json.dumps(spec))
        out = tmp_path / f"ours-l{i}.avro"
        tool("list-write", tmp_path / "lspec.json", out)
        our_meta, our_recs = read_avro(out)
        assert our_meta == meta
        assert our_recs == recs
