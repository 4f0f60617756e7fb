"""The library's table operations end to end through the C API."""

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tlc
from conftest import table_files

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string()), ("temp", pa.float64())])


def readings(n, start=T0, step=dt.timedelta(minutes=1), devices=("pump-7", "pump-8")):
    return pa.table(
        {
            "time": [start + i * step for i in range(n)],
            "device_id": [devices[i % len(devices)] for i in range(n)],
            "temp": [float(i) for i in range(n)],
        },
        schema=SCHEMA,
    )


def iot(lake, name="iot.readings", **kw):
    return lake.create_table(name, SCHEMA, time_column="time", series_key=["device_id"], **kw)


def test_lake_location_is_normalized(lake_dir):
    lake = tlc.Lake(str(lake_dir) + "/./x/..")
    assert lake.location == f"file://{lake_dir}"
    assert tlc.Lake("file://" + str(lake_dir)).location == f"file://{lake_dir}"


def test_create_open_list_drop(lake, lake_dir):
    t = iot(lake, retention="365d")
    assert (t.name, t.version) == ("iot.readings", 1)
    assert t.location == f"file://{lake_dir}/iot/readings"
    plain = lake.create_table("dims", pa.schema([("id", pa.int32()), ("label", pa.string())]))
    assert plain.name == "default.dims"
    assert lake.tables() == ["default.dims", "iot.readings"]
    assert lake.table("iot.readings").version == 1
    schema = t.schema
    assert schema.names == ["time", "device_id", "temp", "_ingest_ts"]
    assert schema.field("time").type == pa.timestamp("us", tz="+00:00")
    assert not schema.field("time").nullable  # the time column is required
    assert schema.field("device_id").metadata == {b"PARQUET:field_id": b"2"}
    lake.drop_table("iot.readings")
    assert lake.tables() == ["default.dims"]
    assert not (lake_dir / "iot" / "readings").exists()
    with pytest.raises(KeyError, match="iot.readings"):
        lake.table("iot.readings")
    lake.drop_table("iot.readings")  # dropping a missing table does nothing


def test_metadata_has_the_reference_shape(lake, lake_dir):
    iot(lake, retention="90d")
    md = json.loads((lake_dir / "iot/readings/metadata/v1.metadata.json").read_text())
    assert md["format-version"] == 2
    assert md["partition-specs"] == [
        {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "time_day", "transform": "day"}]}
    ]
    assert md["sort-orders"][0]["fields"] == [
        {"source-id": 2, "transform": "identity", "direction": "asc", "null-order": "nulls-first"},
        {"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"},
    ]
    props = md["properties"]
    assert props["timelake.time-column"] == "time"
    assert props["timelake.series-key"] == "device_id"
    assert props["timelake.chunk-interval"] == "day"
    assert props["timelake.retention"] == "90d"
    assert props["timelake.dedup"] == "true"
    assert props["timelake.ingest-time-column"] == "_ingest_ts"
    assert (lake_dir / "iot/readings/metadata/version-hint.text").read_text() == "1"


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        (dict(name="a.b.c"), ValueError, "a.b.c"),
        (dict(name="bad name"), ValueError, "bad name"),
        (dict(time_column="nope"), ValueError, '"nope" is not in the schema'),
        (dict(time_column="temp"), ValueError, "must be a timestamp"),
        (dict(chunk="week"), ValueError, "week"),
        (dict(retention="5q"), ValueError, "5q"),
        (dict(retention="-1d"), ValueError, "-1d"),
        (dict(series_key=["zz"]), ValueError, '"zz"'),
        (dict(properties={"timelake.bogus": "1"}), ValueError, "timelake.bogus"),
        (dict(properties={"timelake.auto-maintain": "maybe"}), ValueError, "auto-maintain"),
        (dict(properties={"timelake.time-column": "x"}), ValueError, "fixed when the table is created"),
    ],
)
def test_create_rejects_bad_input(lake, lake_dir, kwargs, exc, message):
    args = dict(name="t", time_column="time", series_key=["device_id"]) | kwargs
    name = args.pop("name")
    with pytest.raises(exc, match=message):
        lake.create_table(name, SCHEMA, **args)
    assert table_files(lake_dir) == []


def test_create_rejects_unsupported_types(lake):
    with pytest.raises(ValueError, match="UInt64"):
        lake.create_table("u", pa.schema([("x", pa.uint64())]))


def test_create_existing_is_file_exists(lake, lake_dir):
    iot(lake)
    before = table_files(lake_dir)
    with pytest.raises(FileExistsError, match="iot.readings"):
        iot(lake)
    assert table_files(lake_dir) == before


def test_type_mapping_follows_the_reference(lake):
    types = {
        "i8": (pa.int8(), pa.int32()), "u16": (pa.uint16(), pa.int32()), "u32": (pa.uint32(), pa.int64()),
        "f32": (pa.float32(), pa.float32()), "ls": (pa.large_string(), pa.string()),
        "bin": (pa.binary(), pa.large_binary()), "dec": (pa.decimal128(10, 2), pa.decimal128(10, 2)),
        "d": (pa.date32(), pa.date32()), "tsn": (pa.timestamp("ns"), pa.timestamp("us")),
        "tsz": (pa.timestamp("ms", tz="Europe/Paris"), pa.timestamp("us", tz="+00:00")),
        "dict": (pa.dictionary(pa.int32(), pa.string()), pa.string()),
        "fsb": (pa.binary(16), pa.binary(16)), "b": (pa.bool_(), pa.bool_()),
    }
    for key, (given, stored) in types.items():
        t = lake.create_table("t_" + key, pa.schema([("x", given)]))
        assert t.schema.field("x").type == stored, key


def test_append_and_info(lake, lake_dir):
    t = iot(lake)
    res = t.append(readings(3 * 24 * 60), batch_id="b-1")  # three days of minutes
    assert res["rows"] == 3 * 24 * 60
    assert res["files"] == 3  # one per day partition
    assert res["version"] == t.version == 2
    assert res["attempts"] == 1 and res["duplicate"] is False
    assert res["bytes"] == sum(p.stat().st_size for p in (lake_dir / "iot/readings/data").rglob("*.parquet"))
    dirs = sorted(p.name for p in (lake_dir / "iot/readings/data").iterdir())
    assert dirs == ["time_day=2026-01-01", "time_day=2026-01-02", "time_day=2026-01-03"]
    info = t.info()
    assert info["rows"] == 3 * 24 * 60 and info["files"] == 3 and info["bytes"] == res["bytes"]
    assert info["snapshots"] == 1 and info["manifests"] == 1
    assert (info["time_column"], info["series_key"], info["chunk"], info["dedup"]) == ("time", ["device_id"], "day", True)
    assert info["last_value_index"].startswith(f"file://{lake_dir}/iot/readings/metadata/lvi-")
    assert lake.table("iot.readings").version == 2


def test_repeated_batch_id_commits_nothing(lake, lake_dir):
    t = iot(lake)
    stale = lake.table("iot.readings")  # opened before the batch lands
    t.append(readings(10), batch_id="gateway-3-000042")
    before = table_files(lake_dir)
    res = t.append(readings(10), batch_id="gateway-3-000042")
    assert (res["rows"], res["files"], res["bytes"], res["duplicate"], res["version"]) == (0, 0, 0, True, 2)
    assert table_files(lake_dir) == before
    # A handle that has not seen the commit finds it when its own commit loses
    # the race, and removes the files it wrote.
    t.append(readings(5, start=T0 + dt.timedelta(days=9)), batch_id="next")
    before = table_files(lake_dir)
    res = stale.append(readings(10), batch_id="gateway-3-000042")
    assert res["duplicate"] and res["version"] == 3 and res["rows"] == 0 and res["attempts"] == 1
    assert table_files(lake_dir) == before
    assert t.info()["rows"] == 15


def test_rows_are_sorted_and_deduplicated(lake, lake_dir):
    t = iot(lake)
    data = pa.table(
        {
            "time": [T0 + dt.timedelta(minutes=m) for m in (5, 1, 5, 3, 1)],
            "device_id": ["b", "a", "b", "a", "b"],
            "temp": [1.0, 2.0, 3.0, 4.0, 5.0],
        },
        schema=SCHEMA,
    )
    assert t.append(data)["rows"] == 4  # (b, 5min) twice: the later row wins
    (path,) = (lake_dir / "iot/readings/data").rglob("*.parquet")
    got = pq.read_table(path).select(["device_id", "time", "temp"]).to_pylist()
    assert [(r["device_id"], r["time"].minute, r["temp"]) for r in got] == [
        ("a", 1, 2.0), ("a", 3, 4.0), ("b", 1, 5.0), ("b", 5, 3.0)
    ]


def test_columns_are_matched_by_name_and_cast(lake, lake_dir):
    t = iot(lake)
    data = pa.table({"temp": pa.array([1, 2], pa.int32()), "time": pa.array([T0, T0], pa.timestamp("ns", tz="UTC")),
                     "device_id": pa.array(["x", "y"]).dictionary_encode()})
    t.append(data)
    t.append(pa.table({"time": pa.array([T0], pa.timestamp("us", tz="UTC"))}))  # missing nullable columns
    rows = sorted(r["device_id"] or "" for f in (lake_dir / "iot/readings/data").rglob("*.parquet") for r in pq.read_table(f).to_pylist())
    assert rows == ["", "x", "y"]


@pytest.mark.parametrize(
    "data, message",
    [
        (pa.table({"time": [T0], "device_id": ["x"], "zz": [1]}), '"zz" is not in the table schema'),
        (pa.table({"device_id": ["x"]}), 'required column "time" is missing'),
        (pa.table({"time": pa.array([None], pa.timestamp("us", tz="UTC")), "device_id": ["x"]}), '"time" is required'),
        (pa.table({"time": [T0], "temp": ["warm"]}), '"temp"'),
        (pa.table({"time": [T0], "temp": [True]}).cast(pa.schema([("time", pa.timestamp("us", tz="UTC")), ("temp", pa.bool_())])), "temp"),
    ],
)
def test_bad_appends_leave_the_table_untouched(lake, lake_dir, data, message):
    t = iot(lake)
    t.append(readings(3), batch_id="first")
    before = table_files(lake_dir)
    with pytest.raises(ValueError, match=message):
        t.append(data, batch_id="second")
    assert table_files(lake_dir) == before
    assert t.version == 2 and lake.table("iot.readings").version == 2


def test_empty_append_commits_nothing(lake):
    t = iot(lake)
    res = t.append(readings(0))
    assert res["rows"] == 0 and res["version"] == 1


def test_plain_table_append(lake, lake_dir):
    t = lake.create_table("dims", pa.schema([("id", pa.int32()), ("label", pa.string())]))
    t.append(pa.table({"id": [2, 1], "label": ["b", "a"]}))
    (path,) = (lake_dir / "default/dims/data").glob("*.parquet")
    assert sorted(pq.read_table(path).to_pylist(), key=lambda r: r["id"]) == [{"id": 1, "label": "a"}, {"id": 2, "label": "b"}]


def test_string_and_binary_views_are_accepted(lake, lake_dir):
    """View layouts (what polars exports) are read like plain strings."""
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.string_view()), ("blob", pa.binary_view())])
    t = lake.create_table("views", schema, time_column="time", series_key=["device_id"])
    assert t.schema.field("device_id").type == pa.string()
    names = ["a", None, "a string longer than twelve bytes", "", "b" * 100]
    data = pa.table(
        {
            "time": [T0 + dt.timedelta(seconds=i) for i in range(5)],
            "device_id": pa.array(names, pa.string_view()),
            "blob": pa.array([n.encode() if n is not None else None for n in names], pa.binary_view()),
        },
        schema=schema,
    )
    t.append(data.slice(1))  # an offset into the views too
    (path,) = (lake_dir / "default/views/data").rglob("*.parquet")
    got = sorted(pq.read_table(path).to_pylist(), key=lambda r: r["time"])
    assert [r["device_id"] for r in got] == names[1:]
    assert [r["blob"] for r in got] == [n.encode() if n is not None else None for n in names[1:]]


def test_large_appends_are_written_in_bounded_chunks(lake, lake_dir, monkeypatch):
    """An input larger than a chunk is encoded and uploaded chunk by chunk,
    committed once; a bad row in a later chunk still leaves nothing behind."""
    monkeypatch.setenv("TIMELAKE_APPEND_CHUNK_ROWS", "1000")
    t = iot(lake)
    data = readings(3500, step=dt.timedelta(seconds=10))  # one day partition, two series
    # The last 500 readings, with other temperatures, come first: the later
    # rows of the append (data's own) win, across chunks too.
    early = data.slice(3000).set_column(2, "temp", pa.array([-1.0] * 500))
    res = t.append(pa.concat_tables([early, data]).to_reader(max_chunksize=700), batch_id="big", maintain=False)
    # Chunks are whole batches of at least 1000 rows: 500+700, 700+700, 700+700,
    # whose overlapping files are merged into one (src/table/append_merge.c).
    assert res["version"] == 2 and res["files"] == 1 and res["rows"] == 3500
    got = pq.read_table(sorted((lake_dir / "iot/readings/data").rglob("*.parquet"))).to_pylist()
    assert len(got) == 3500 and -1.0 not in {r["temp"] for r in got}  # the later rows won
    newest = pq.read_table(next((lake_dir / "iot/readings/metadata").glob("lvi-*.parquet"))).to_pylist()
    assert sorted((r["device_id"], r["temp"]) for r in newest) == [("pump-7", 3498.0), ("pump-8", 3499.0)]
    before = table_files(lake_dir)
    good = readings(2500)
    good = good.set_column(2, "temp", good.column("temp").cast(pa.string()))  # "0.0", "1.0", ...
    last = pa.table({"time": [T0], "device_id": ["x"], "temp": ["warm"]}, schema=good.schema)
    bad = pa.concat_tables([good, last])  # a string that is no number, in the last chunk
    with pytest.raises(ValueError, match="temp"):
        t.append(bad.to_reader(max_chunksize=500), batch_id="bad")
    assert table_files(lake_dir) == before and lake.table("iot.readings").version == 2


def test_old_metadata_files_are_pruned_as_the_log_rolls(lake, lake_dir):
    """Our tables are created with write.metadata.delete-after-commit.enabled:
    only the versions in the metadata log (write.metadata.previous-versions-max,
    20 as the reference sets it) and the current one stay."""
    t = iot(lake)
    for k in range(25):
        t.append(readings(2, start=T0 + dt.timedelta(days=k)), maintain=False)
    assert t.version == 26
    assert lake.table("iot.readings").version == 26
    assert t.properties()["write.metadata.delete-after-commit.enabled"] == "true"
    t.close()
    lake.close()  # the deletions the appends queued (store/local_trash.h) are done by then
    versions = sorted(int(p.name[1:].split(".")[0]) for p in (lake_dir / "iot/readings/metadata").glob("v*.metadata.json"))
    assert versions == list(range(6, 27))


def metadata_versions(lake_dir, table="iot/readings"):
    return sorted(int(p.name[1:].split(".")[0]) for p in (lake_dir / table / "metadata").glob("v*.metadata.json"))


def test_pruning_takes_the_older_versions_first(lake, lake_dir):
    """A table that only now asks for pruning has every older version: they
    go with the first pruned one, lowest first, so that the versions present
    stay one run of numbers (what the commit's fence relies on)."""
    t = iot(lake, properties={"write.metadata.delete-after-commit.enabled": "false"})
    for k in range(25):
        t.append(readings(2, start=T0 + dt.timedelta(days=k)), maintain=False)
    t.set_properties({"write.metadata.delete-after-commit.enabled": "true"})  # v27
    t.append(readings(2, start=T0 + dt.timedelta(days=30)), maintain=False)  # v28
    t.close()
    lake.close()
    assert metadata_versions(lake_dir) == list(range(8, 29))


def test_a_settings_change_logs_the_version_it_replaces(lake, lake_dir):
    """As Iceberg and the reference: a commit that changes only settings adds
    the version it replaces to metadata-log, as an append does (the rollback
    is checked on both packages in package_contract.py)."""
    t = iot(lake)
    t.append(readings(2), maintain=False)
    t.set_properties({"timelake.auto-maintain": "false"})  # v3
    md = json.loads((lake_dir / "iot/readings/metadata/v3.metadata.json").read_text())
    assert [e["metadata-file"].rsplit("/", 1)[-1] for e in md["metadata-log"]] == ["v1.metadata.json", "v2.metadata.json"]


def test_a_far_behind_handle_whose_version_stayed_does_not_take_a_freed_number(lake, lake_dir):
    """A handle at v2 while another commits 30 times: v1 to v11 are pruned,
    but v2 stays (as after an unlink that failed). The create's fence must
    not take v3 from v2 and v3's absence alone: the hint names a newer
    version, so it looks further and the append lands on the newest."""
    t = iot(lake)
    t.append(readings(2), maintain=False)
    stale = tlc.Lake(str(lake_dir)).table("iot.readings")
    metadata = lake_dir / "iot/readings/metadata"
    kept = (metadata / "v2.metadata.json").read_bytes()
    for k in range(30):
        t.append(readings(2, start=T0 + dt.timedelta(days=k + 1)), maintain=False)
    t.close()
    lake.close()  # the queued deletions are done
    assert metadata_versions(lake_dir)[0] == 12
    (metadata / "v2.metadata.json").write_bytes(kept)
    res = stale.append(readings(2, start=T0 + dt.timedelta(days=40)), maintain=False)
    assert res["attempts"] >= 2 and res["version"] == 33
    assert not (metadata / "v3.metadata.json").exists()
    assert tlc.Lake(str(lake_dir)).table("iot.readings").info()["rows"] == 64


def test_old_metadata_files_stay_unless_the_table_asks(lake, lake_dir):
    """Iceberg's default, and what the reference does: every version stays
    (deleting them frees numbers that other writers far behind could take)."""
    t = iot(lake, properties={"write.metadata.delete-after-commit.enabled": "false"})
    for k in range(25):
        t.append(readings(2, start=T0 + dt.timedelta(days=k)), maintain=False)
    t.close()
    lake.close()
    versions = sorted(int(p.name[1:].split(".")[0]) for p in (lake_dir / "iot/readings/metadata").glob("v*.metadata.json"))
    assert versions == list(range(1, 27))


def test_a_handle_whose_snapshot_expired_retries(lake, lake_dir):
    """Another writer may expire the snapshot a handle is at: the append reloads and commits."""
    t = iot(lake, properties={"timelake.max-snapshots": "2", "timelake.min-snapshots": "1"})
    t.append(readings(2), maintain=False)
    stale = lake.table("iot.readings")
    other = lake.table("iot.readings")
    for k in range(4):
        other.append(readings(2, start=T0 + dt.timedelta(days=k + 1)), maintain=False)
    other.maintain(compact=False, retention=False, expire=True)
    res = stale.append(readings(2, start=T0 + dt.timedelta(days=9)), maintain=False)
    assert res["attempts"] >= 2 and res["version"] == other.version + 1
    assert stale.info()["rows"] == 12


def test_columns_already_in_storage_form_keep_their_values(lake, lake_dir):
    """An input column already of the storage type is moved into the append
    rather than copied: only such a column (the time zone label aside), at
    offset 0, with its nulls counted and its offsets from 0. Slices, offsets
    from elsewhere, several batches and another time unit still land with
    their own values."""
    schema = pa.schema([("time", pa.timestamp("us", tz="UTC")), ("device_id", pa.large_string()),
                        ("temp", pa.float64()), ("n", pa.int64())])
    t = lake.create_table("moved", schema, time_column="time", series_key=["device_id"])
    n = 16
    times = [T0 + dt.timedelta(seconds=i) for i in range(n)]
    names = [f"dev-{i % 3}" for i in range(n)]
    temps = [None if i % 4 == 1 else i / 2 for i in range(n)]
    counts = [None if i % 5 == 2 else i * 10 for i in range(n)]

    def rows(lo, hi, unit="us"):
        return pa.table({"time": pa.array(times[lo:hi], pa.timestamp(unit, tz="Europe/Paris")),
                         "device_id": pa.array(names[lo:hi], pa.large_string()),
                         "temp": pa.array(temps[lo:hi], pa.float64()), "n": pa.array(counts[lo:hi], pa.int64())})

    # Offsets that start past 0, at offset 0: another producer's strings.
    text = b"xxxxx" + "".join(names[:4]).encode()
    offsets = pa.array([5 + sum(len(s) for s in names[:i]) for i in range(5)], pa.int64()).buffers()[1]
    device = pa.Array.from_buffers(pa.large_string(), 4, [None, offsets, pa.py_buffer(text)])
    assert device.to_pylist() == names[:4] and device.offset == 0
    t.append(rows(0, 4).set_column(1, "device_id", device))
    t.append(rows(0, 8).slice(4))  # a slice: copied
    t.append(pa.Table.from_batches(rows(8, 10).to_batches() + rows(10, 12).to_batches()))  # several batches
    t.append(rows(12, 16, unit="ms"))  # another unit: cast
    got = sorted((r for f in (lake_dir / "default/moved/data").rglob("*.parquet") for r in pq.read_table(f).to_pylist()),
                 key=lambda r: r["time"])
    assert [r["time"] for r in got] == times
    assert [r["device_id"] for r in got] == names
    assert [r["temp"] for r in got] == temps
    assert [r["n"] for r in got] == counts
