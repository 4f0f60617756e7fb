"""Checks src/iceberg (table metadata, transforms, bounds) against pyiceberg and the
reference implementation, through the small C driver tests/tools/iceberg_tool.c."""

import glob
import json
import os
import random
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from pyiceberg.conversions import to_bytes
from pyiceberg.table import StaticTable
from pyiceberg.table.metadata import TableMetadataUtil, new_table_metadata
from pyiceberg.schema import Schema
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import (BucketTransform, DayTransform, HourTransform, IdentityTransform,
                                  MonthTransform, YearTransform)
from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType,
                             FixedType, FloatType, IntegerType, LongType, NestedField, StringType,
                             TimestampType, TimestamptzType, TimeType, UUIDType)

from conftest import static_link_flags

ROOT = Path(__file__).resolve().parents[2]
TOOL_SRC = ROOT / "tests" / "tools" / "iceberg_tool.c"
OWN_SOURCES = ["src/core/buf.c", "src/core/grow.c", "src/core/error.c", "src/arrow/array.c", "src/arrow/arrow_type.c"] + [
    f"src/iceberg/{n}.c" for n in ("schema", "schema_json", "schema_arrow", "metadata", "metadata_edit",
                                   "metadata_json", "metadata_parse", "metadata_write", "transform", "bounds")]


def _pkg_libs():
    return static_link_flags()


def _static_library():
    env = os.environ.get("TL_STATIC_LIB")
    if env:
        return Path(env)
    preferred = ROOT / "build-iceberg" / "libtimelake_static.a"
    if preferred.exists():
        return preferred
    found = sorted(glob.glob(str(ROOT / "build*" / "libtimelake_static.a")), key=os.path.getmtime)
    return Path(found[-1]) if found else None


@pytest.fixture(scope="session")
def tool(tmp_path_factory):
    """Builds the driver against the static library (with the sanitizers when the library
    has them), or from the iceberg sources alone when no library is built."""
    exe = tmp_path_factory.mktemp("tool") / "iceberg_tool"
    base = ["cc", "-std=c11", "-D_GNU_SOURCE", "-I", str(ROOT / "include"), "-I", str(ROOT / "src"),
            str(TOOL_SRC), "-o", str(exe)]
    san = ["-fsanitize=address,undefined"]
    lib = _static_library()
    attempts = []
    if lib is not None:
        attempts += [base + [str(lib)] + _pkg_libs(), base + san + [str(lib)] + _pkg_libs()]
    attempts.append(base + san + [str(ROOT / s) for s in OWN_SOURCES] + _pkg_libs())
    errors = []
    for cmd in attempts:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode == 0:
            return exe
        errors.append(proc.stderr[-2000:])
    pytest.fail("cannot build iceberg_tool:\n" + "\n".join(errors))


def run(tool, *args):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    proc = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ---- Metadata we write, read by pyiceberg ----

EXPECTED_FIELDS = [
    (1, "time", "timestamptz", True, None), (2, "device_id", "string", False, None),
    (3, "temp", "double", False, "degrees"), (4, "qty", "int", False, None),
    (5, "big", "long", False, None), (6, "price", "decimal(10, 2)", False, None),
    (7, "raw", "binary", False, None), (8, "tag", "fixed[4]", False, None),
    (9, "id", "uuid", False, None), (10, "day", "date", False, None),
    (11, "tod", "time", False, None), (12, "local", "timestamp", False, None),
    (13, "flag", "boolean", False, None), (14, "f", "float", False, None),
]


def check_common(md, location):
    assert md.format_version == 2
    assert str(md.table_uuid) == "01a226cc-8bc3-742f-84ed-84dcdd777b95"
    assert md.location == location
    assert md.last_column_id == 14
    assert md.last_partition_id == 1001
    schema = md.schema()
    assert [(f.field_id, f.name, str(f.field_type), f.required, f.doc) for f in schema.fields] == EXPECTED_FIELDS
    spec = md.spec()
    assert [(f.source_id, f.field_id, f.name, f.transform) for f in spec.fields] == [
        (1, 1000, "time_day", DayTransform()), (2, 1001, "device_id_bucket", BucketTransform(8))]
    order = md.sort_order_by_id(md.default_sort_order_id)
    assert order.order_id == 1
    assert [(f.source_id, f.transform, f.direction, f.null_order) for f in order.fields] == [
        (2, IdentityTransform(), SortDirection.ASC, NullOrder.NULLS_FIRST),
        (1, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST)]
    assert md.properties == {"write.format.default": "parquet", "timelake.time-column": "time",
                             "write.metadata.previous-versions-max": "20"}


def test_created_metadata_reads_in_pyiceberg(tool, tmp_path):
    run(tool, "create", tmp_path)
    location = f"file://{tmp_path}"
    v1 = TableMetadataUtil.parse_raw((tmp_path / "v1.metadata.json").read_text())
    check_common(v1, location)
    assert v1.current_snapshot_id is None and v1.snapshots == [] and v1.refs == {}
    assert v1.last_sequence_number == 0 and v1.last_updated_ms == 1795947269059

    v3 = TableMetadataUtil.parse_raw((tmp_path / "v3.metadata.json").read_text())
    check_common(v3, location)
    assert v3.last_sequence_number == 2
    assert v3.last_updated_ms == 1795947269999
    assert v3.current_snapshot_id == 9223372036854775807
    assert [(s.snapshot_id, s.parent_snapshot_id, s.sequence_number, s.timestamp_ms, s.manifest_list,
             s.summary.operation.value, s.summary.additional_properties, s.schema_id) for s in v3.snapshots] == [
        (5813220597814538045, None, 1, 1795947269071, "file:///m/snap-1.avro", "append",
         {"added-records": "3", "total-records": "3"}, 0),
        (9223372036854775807, 5813220597814538045, 2, 1795947269999, "file:///m/snap-2.avro", "overwrite",
         {"added-records": "1", "total-records": "4"}, 0)]
    assert v3.refs["main"].snapshot_id == 9223372036854775807
    assert v3.refs["main"].snapshot_ref_type.value == "branch"
    assert [(e.snapshot_id, e.timestamp_ms) for e in v3.snapshot_log] == [
        (5813220597814538045, 1795947269071), (9223372036854775807, 1795947269999)]
    assert [(e.metadata_file, e.timestamp_ms) for e in v3.metadata_log] == [
        (f"{location}/metadata/v1.metadata.json", 1795947269059),
        (f"{location}/metadata/v2.metadata.json", 1795947269071)]

    table = StaticTable.from_metadata(str(tmp_path / "v3.metadata.json"))
    assert table.current_snapshot().snapshot_id == 9223372036854775807
    assert table.properties["timelake.time-column"] == "time"
    assert [f.name for f in table.schema().fields][:3] == ["time", "device_id", "temp"]


def test_pyiceberg_written_metadata_round_trips(tool, tmp_path):
    schema = Schema(
        NestedField(1, "time", TimestamptzType(), required=True),
        NestedField(2, "dev", StringType(), required=False, doc="the device"),
        NestedField(3, "p", DecimalType(38, 9), required=False),
        NestedField(4, "u", UUIDType(), required=False),
        NestedField(5, "b", BinaryType(), required=False),
        NestedField(6, "x", FixedType(3), required=False),
        NestedField(7, "n", IntegerType(), required=True),
        NestedField(8, "l", LongType(), required=False),
        NestedField(9, "d", DateType(), required=False),
        NestedField(10, "t", TimeType(), required=False),
        NestedField(11, "ts", TimestampType(), required=False),
        NestedField(12, "o", BooleanType(), required=False),
        NestedField(13, "fl", FloatType(), required=False),
        NestedField(14, "db", DoubleType(), required=False),
    )
    spec = PartitionSpec(PartitionField(1, 1000, HourTransform(), "time_hour"),
                         PartitionField(2, 1001, BucketTransform(16), "dev_bucket"))
    order = SortOrder(SortField(2, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST))
    md = new_table_metadata(schema, spec, order, "file:///tmp/t", {"a": "b", "c": "d"})
    doc = json.loads(md.model_dump_json())
    doc["x-other-engine"] = {"keep": [1, 2.5, "three", None]}
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "out.json"
    run(tool, "roundtrip", src, out)
    ours = json.loads(out.read_text())
    assert ours["x-other-engine"] == doc["x-other-engine"]
    assert TableMetadataUtil.parse_raw(out.read_text()) == TableMetadataUtil.parse_raw(src.read_text())
    # A second pass is a fixed point.
    out2 = tmp_path / "out2.json"
    run(tool, "roundtrip", out, out2)
    assert out2.read_text() == out.read_text()


# ---- The reference implementation's own files ----

REF_SCRIPT = """
import datetime as dt, json, pyarrow as pa, timelake
lake = timelake.Lake({lake!r})
schema = pa.schema([('time', pa.timestamp('us', tz='UTC')), ('device_id', pa.string()),
    ('temp', pa.float64()), ('qty', pa.int16()), ('big', pa.uint32()), ('price', pa.decimal128(10, 2)),
    ('raw', pa.binary()), ('tag', pa.binary(4)), ('day', pa.date32()), ('tod', pa.time64('us')),
    ('local', pa.timestamp('ns')), ('flag', pa.bool_()), ('f', pa.float32())])
t = lake.create_table('iot.readings', schema, time_column='time', series_key=['device_id'])
now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
n = 3
batch = pa.table({{'time': [now, now + dt.timedelta(days=1), now - dt.timedelta(days=400)],
    'device_id': ['a', 'b', None], 'temp': [1.0, 2.0, 3.0]}})
t.append(batch)
t.append(batch)
print(json.dumps([[f.name, str(f.type), f.nullable, f.metadata[b'PARQUET:field_id'].decode()] for f in t.schema]))
"""

ARROW_FORMATS = {
    "timestamp[us, tz=+00:00]": "tsu:+00:00", "timestamp[us]": "tsu:", "string": "u", "double": "g",
    "float": "f", "int32": "i", "int64": "l", "decimal128(10, 2)": "d:10,2", "large_binary": "Z",
    "fixed_size_binary[4]": "w:4", "date32[day]": "tdD", "time64[us]": "ttu", "bool": "b",
}


def test_reference_tables_round_trip_exactly(tool, tmp_path, reference):
    lake = tmp_path / "lake"
    fields = reference(REF_SCRIPT.format(lake=str(lake)))
    metadata_dir = lake / "iot" / "readings" / "metadata"
    versions = sorted(metadata_dir.glob("v*.metadata.json"))
    assert len(versions) >= 3  # create, two appends (and whatever maintenance it commits)
    for path in versions:
        out = tmp_path / path.name
        run(tool, "roundtrip", path, out)
        assert out.read_text() == path.read_text(), path.name

    # The Arrow schema we give users is the one the reference gives.
    ours = [line.split(" ") for line in run(tool, "arrow", versions[-1]).splitlines()]
    assert ours == [[name, ARROW_FORMATS[typ], str(int(nullable)), fid] for name, typ, nullable, fid in fields]

    # pyiceberg reads the same data through our copy of the metadata as through the original.
    copy = tmp_path / "copy.metadata.json"
    run(tool, "roundtrip", versions[-1], copy)
    ours = StaticTable.from_metadata(str(copy)).scan().to_arrow().sort_by("time")
    theirs = StaticTable.from_metadata(str(versions[-1])).scan().to_arrow().sort_by("time")
    assert ours.num_rows > 0 and ours.equals(theirs)


# ---- Transforms and bounds against pyiceberg ----

def sample_micros():
    rng = random.Random(7)
    values = [0, -1, 1, -86_400_000_000, -86_400_000_001, 1_767_225_600_000_000,
              951_825_600_000_000, -2_203_872_833_000_000, 253_402_300_799_999_999, -62_135_596_800_000_000]
    values += [rng.randrange(-62_135_596_800_000_000, 253_402_300_799_999_999) for _ in range(300)]
    return values


@pytest.mark.parametrize("name,transform", [("year", YearTransform()), ("month", MonthTransform()),
                                            ("day", DayTransform()), ("hour", HourTransform())])
def test_transforms_match_pyiceberg(tool, name, transform):
    values = sample_micros()
    lines = run(tool, "transform", name, *values).splitlines()
    apply = transform.transform(TimestampType())
    for v, line in zip(values, lines, strict=True):
        got, human = line.split(" ")
        want = apply(v)
        assert int(got) == want, (name, v)
        result_type = DateType() if name == "day" else IntegerType()
        assert human == transform.to_human_string(result_type, want), (name, v)


@pytest.mark.parametrize("type_str,iceberg_type,values", [
    ("int", IntegerType(), [0, 1, -1, 2**31 - 1, -2**31]),
    ("date", DateType(), [0, 20454, -25508]),
    ("long", LongType(), [0, -5, 2**63 - 1, -2**63]),
    ("timestamptz", TimestamptzType(), [1_767_225_600_000_000, -1]),
    ("time", TimeType(), [0, 86_399_999_999]),
    ("boolean", BooleanType(), [0, 1]),
])
def test_integer_bounds_match_pyiceberg(tool, type_str, iceberg_type, values):
    lines = run(tool, "bound", type_str, *values).splitlines()
    for v, line in zip(values, lines, strict=True):
        value = bool(v) if type_str == "boolean" else v
        assert bytes.fromhex(line) == to_bytes(iceberg_type, value), (type_str, v)


def test_decimal_bounds_match_pyiceberg(tool):
    rng = random.Random(11)
    unscaled = [0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 2**63 - 1, -2**63]
    unscaled += [rng.randrange(-2**63, 2**63) >> rng.randrange(0, 63) for _ in range(200)]
    lines = run(tool, "bound", "decimal(38, 3)", *unscaled).splitlines()
    for u, line in zip(unscaled, lines, strict=True):
        want = to_bytes(DecimalType(38, 3), Decimal(u).scaleb(-3))
        assert bytes.fromhex(line) == want, u


def test_float_bounds_match_pyiceberg(tool):
    common = ["0", "-0", "1.5", "3.4e38", "1e-45", "inf", "-inf", "0.1"]
    for type_str, iceberg_type, values in (("double", DoubleType(), common + ["-2.25e300", "5e-324"]),
                                           ("float", FloatType(), common)):
        lines = run(tool, "bound", type_str, *values).splitlines()
        for v, line in zip(values, lines, strict=True):
            assert bytes.fromhex(line) == to_bytes(iceberg_type, float(v)), (type_str, v)
