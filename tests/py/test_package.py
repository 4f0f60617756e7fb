"""Our `timelake` Python package (python/, a CPython extension over the
library): the checks it shares with the reference (package_contract.py), then
what only ours is tested for here: polars and PyCapsule inputs, zero copy,
parallel threads with the GIL released, result export, docstrings."""

import datetime as dt
import glob
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import package_contract as contract
from store_servers import server_fixture
from conftest import ROOT

# The package as built in the build tree: <build>/python/timelake.
PKG_DIR = (Path(os.environ.get("TL_BUILD", ROOT / "build-asan")) / "python").resolve()
sys.path.insert(0, str(PKG_DIR))
timelake = pytest.importorskip("timelake")
assert Path(timelake.__file__).parent.parent == PKG_DIR, timelake.__file__

SCHEMA = contract.SCHEMA
T0 = contract.T0


@pytest.mark.parametrize("check", sorted(contract.CHECKS))
def test_shared_with_reference(check, tmp_path):
    contract.CHECKS[check](timelake, tmp_path)


def test_drop_table_removes_everything(tmp_path):
    contract.drop_table_gone(timelake, tmp_path)


def data_rows(work, table="iot/readings"):
    files = sorted(glob.glob(str(Path(work) / table / "data" / "*" / "*.parquet")))
    rows = pa.concat_tables([pq.read_table(f) for f in files]).drop_columns(["_ingest_ts"]).to_pylist()
    return sorted(rows, key=lambda r: (r["time"], r["device_id"] or ""))


# ---- inputs ----


def test_polars_input_with_strings_nulls_and_slices(tmp_path):
    pl = pytest.importorskip("polars")
    t = contract.iot(timelake.Lake(str(tmp_path)))
    times = [dt.datetime(2026, 1, 1, 0, i) for i in range(4)]
    df = pl.DataFrame({"time": times, "device_id": ["a", None, "a-much-longer-device-name", "b"],
                       "temp": [1.0, None, 3.0, 4.0]})
    assert t.append(df)["rows"] == 4
    assert t.append(df.slice(2), batch_id="tail")["rows"] == 2  # an offset into polars' buffers
    rows = data_rows(tmp_path)
    assert len(rows) == 6
    want = {(r["time"].replace(tzinfo=None), r["device_id"], r["temp"]) for r in df.to_dicts()}
    assert {(r["time"].replace(tzinfo=None), r["device_id"], r["temp"]) for r in rows} == want


def test_polars_missing_and_unknown_columns(tmp_path):
    pl = pytest.importorskip("polars")
    t = contract.iot(timelake.Lake(str(tmp_path)))
    assert t.append(pl.DataFrame({"time": [dt.datetime(2026, 1, 1)], "device_id": ["x"]}))["rows"] == 1
    with pytest.raises(ValueError, match="nope"):
        t.append(pl.DataFrame({"time": [dt.datetime(2026, 1, 1)], "nope": [1]}))
    assert t.version == 2


class ArrayOnly:
    """A producer with only __arrow_c_array__ (one record batch)."""

    def __init__(self, batch):
        self.batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self.batch.__arrow_c_array__(requested_schema)


class StreamOnly:
    def __init__(self, data):
        self.data = data

    def __arrow_c_stream__(self, requested_schema=None):
        return self.data.__arrow_c_stream__(requested_schema)


def test_pycapsule_producers(tmp_path):
    t = contract.iot(timelake.Lake(str(tmp_path)))
    data = contract.readings(9)
    assert t.append(ArrayOnly(data.slice(0, 3).to_batches()[0]))["rows"] == 3
    assert t.append(StreamOnly(data.slice(3)))["rows"] == 6
    with pytest.raises(ValueError, match="struct"):
        t.append(ArrayOnly(pa.array([1, 2, 3])))
    gen = pa.RecordBatchReader.from_batches(SCHEMA, (b for b in data.to_batches(max_chunksize=2)))
    assert t.append(gen)["rows"] == 9
    assert len(data_rows(tmp_path)) == 18


def test_schema_inputs(tmp_path):
    pl = pytest.importorskip("polars")
    lake = timelake.Lake(str(tmp_path))
    t = lake.create_table("from_polars", pl.DataFrame({"time": [dt.datetime(2026, 1, 1)], "v": [1.5]}),
                          time_column="time")
    assert t.schema.names == ["time", "v", "_ingest_ts"]
    with pytest.raises(TypeError, match="schema"):
        lake.create_table("bad", "not a schema")
    with pytest.raises(TypeError, match="series_key"):
        lake.create_table("bad", SCHEMA, time_column="time", series_key="device_id")
    with pytest.raises(TypeError, match="properties"):
        lake.create_table("bad", SCHEMA, properties={"a": 1})
    assert lake.tables() == ["default.from_polars"]


def test_storage_options_and_paths(tmp_path):
    assert timelake.Lake(tmp_path).location == f"file://{tmp_path}"  # os.PathLike
    with pytest.raises(ValueError, match="nope"):
        timelake.Lake(str(tmp_path), storage_options={"nope": "x"})
    with pytest.raises(TypeError):
        timelake.Table()


def test_zero_copy(tmp_path):
    """append hands the producer's buffers to the library: same addresses."""
    data = contract.readings(1000)
    ours = timelake._timelake._input_buffer_addresses(data)
    theirs = [[b.address if b is not None else 0 for b in col.chunks[0].buffers()] for col in data.columns]
    assert ours == theirs
    batch = data.to_batches()[0]
    theirs = [[b.address if b is not None else 0 for b in col.buffers()] for col in batch.columns]
    assert timelake._timelake._input_buffer_addresses(ArrayOnly(batch)) == theirs


def test_zero_copy_polars_numbers(tmp_path):
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"time": [dt.datetime(2026, 1, 1)] * 3, "device_id": ["a", "b", "c"], "temp": [1.0, 2.0, 3.0]})
    addresses = timelake._timelake._input_buffer_addresses(df)
    exported = pa.table(df)  # pyarrow's import of the same export is zero copy too
    assert addresses[2][1] == exported.column("temp").chunks[0].buffers()[1].address
    assert addresses[1] != exported.column("device_id").chunks[0].buffers()[1].address  # views: converted


# ---- threads ----


def test_threads_append_to_different_tables(tmp_path):
    lake = timelake.Lake(str(tmp_path))
    tables = [contract.iot(lake, f"iot.t{i}") for i in range(4)]
    errors = []

    def writer(t, seed):
        try:
            for k in range(5):
                t.append(contract.readings(200, start=T0 + dt.timedelta(days=k + seed)), batch_id=f"b{k}")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t, i)) for i, t in enumerate(tables)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert [t.info()["rows"] for t in tables] == [1000] * 4 and [t.version for t in tables] == [6] * 4


def test_one_table_shared_by_threads(tmp_path):
    t = contract.iot(timelake.Lake(str(tmp_path)))
    threads = [threading.Thread(target=lambda i=i: t.append(contract.readings(10, start=T0 + dt.timedelta(days=i))))
               for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert t.version == 7 and t.info()["rows"] == 60


GIL_PROBE = """
import sys, threading
sys.path.insert(0, {pkg!r})
sys.path.insert(0, {tests!r})
import timelake, package_contract as c
t = c.iot(timelake.Lake({lake!r}))
# Exported here, before the thread starts: pyarrow's export itself releases the
# GIL, and the probe must see only what append does.
capsule = c.readings(100_000).__arrow_c_stream__()
class Exported:
    def __arrow_c_stream__(self, requested_schema=None):
        return capsule
sys.setswitchinterval(1000)  # no forced switches: only a released GIL lets the main thread run
entered, done = threading.Event(), threading.Event()
def work():
    entered.set()
    t.append(Exported())
    done.set()
threading.Thread(target=work).start()
entered.wait()
# This line runs once the main thread holds the GIL again: during the append
# if append released it, only after the worker finished otherwise.
print("ran during append" if not done.is_set() else "blocked until append returned")
done.wait()
"""


def test_append_releases_the_gil(tmp_path):
    """Checked to fail (it prints "blocked ...") when append keeps the GIL."""
    code = GIL_PROBE.format(pkg=str(PKG_DIR), tests=str(Path(__file__).parent), lake=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ran during append"


# ---- outputs ----


def test_schema_is_pyarrow_and_results_export_arrow(tmp_path):
    t = contract.iot(timelake.Lake(str(tmp_path)))
    assert isinstance(t.schema, pa.Schema) and t.schema.field("device_id").type == pa.string()
    t.append(contract.readings(4))
    out = timelake.Lake(str(tmp_path)).sql("SELECT device_id, temp FROM iot.readings ORDER BY temp")
    pl = pytest.importorskip("polars")
    assert pl.DataFrame(out)["temp"].to_list() == [0.0, 1.0, 2.0, 3.0]
    import duckdb

    assert duckdb.sql("SELECT sum(temp) FROM out").fetchall() == [(6.0,)]


def test_inline_maintenance_reported(tmp_path):
    t = contract.iot(timelake.Lake(str(tmp_path)))
    for i in range(3):
        t.append(contract.readings(3, start=T0 + dt.timedelta(minutes=5 * i)), maintain=False)
    r = t.append(contract.readings(3, start=T0 + dt.timedelta(minutes=30)), maintain=True)
    if "maintenance" in r:
        assert contract.MAINTAIN_KEYS == set(r["maintenance"])
    assert t.version >= r["version"] and t.info()["rows"] == 12


# ---- documentation ----


def test_every_public_name_has_a_docstring_and_stub():
    stub = (Path(timelake.__file__).parent / "_timelake.pyi").read_text()
    assert (Path(timelake.__file__).parent / "py.typed").exists()
    for cls in (timelake.Lake, timelake.Table, timelake.ConflictError, timelake.ArrowData):
        assert cls.__doc__, cls
        assert f"class {cls.__name__}" in stub
        for name, member in vars(cls).items():
            if not name.startswith("_") or name.startswith("__arrow"):
                assert member.__doc__, f"{cls.__name__}.{name}"
                assert f"def {name}(" in stub, f"{cls.__name__}.{name} missing from the stub"
    assert timelake.__doc__


def test_import_does_not_import_pyarrow():
    code = f"import sys; sys.path.insert(0, {str(PKG_DIR)!r}); import timelake; print('pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_index_cache_stats_and_its_budget(tmp_path):
    """Lake.index_cache_stats(): the last-value indexes kept for the next append, under the budget
    the storage option timelake_index_cache_bytes sets (any lake, a local one too; without it the
    process's, shared by every such lake)."""
    lake = timelake.Lake(str(tmp_path), {"timelake_index_cache_bytes": "1000000"})
    t = contract.iot(lake)
    for i in range(3):
        t.append(contract.readings(10, start=T0 + dt.timedelta(days=i)), maintain=False)
    s = lake.index_cache_stats()
    assert s["limit_bytes"] == 1000000 and 0 < s["bytes"] <= 1000000 and s["indexes"] == 1, s
    assert (s["hits"], s["misses"], s["dropped"]) == (2, 0, 0), s
    with pytest.raises(ValueError, match="timelake_index_cache_bytes must be a number of bytes"):
        timelake.Lake(str(tmp_path), {"timelake_index_cache_bytes": "lots"})


# ---- the read cache of an object store ----

s3 = pytest.fixture(scope="module")(server_fixture("s3"))


def test_cache_stats_count_what_an_object_store_lake_read(s3):
    url = s3.url()  # a fresh prefix
    contract.iot(timelake.Lake(url, s3.options)).append(contract.readings(500))
    fresh = timelake.Lake(url, s3.options)
    assert fresh.cache_stats() == {"memory_hits": 0, "disk_hits": 0, "misses": 0, "bytes_fetched": 0}
    query = "SELECT count(*) AS n, sum(temp) AS s FROM iot.readings"
    assert fresh.sql(query).column("n").to_pylist() == [500]
    first = fresh.cache_stats()
    assert first["misses"] > 0 and first["bytes_fetched"] > 0 and first["disk_hits"] == 0, first
    fresh.sql(query)
    assert fresh.cache_stats() == first  # the engine kept what it fetched: no read at all
    # A writer reads back what it wrote (its manifest list, for the next commit): from memory.
    t = fresh.table("iot.readings")
    for i in range(3):
        t.append(contract.readings(10, start=T0 + dt.timedelta(days=i + 1)), maintain=False)
    fresh.sql(query)  # the new files, written through this lake's cache: from memory
    later = fresh.cache_stats()
    assert later["memory_hits"] >= 3 and later["disk_hits"] == 0, later
    assert (later["misses"], later["bytes_fetched"]) == (first["misses"], first["bytes_fetched"]), later


def test_cache_stats_count_disk_hits(s3, tmp_path):
    url = s3.url()
    contract.iot(timelake.Lake(url, s3.options)).append(contract.readings(500))
    options = {**s3.options, "cache_dir": str(tmp_path / "cache")}
    query = "SELECT sum(temp) AS s FROM iot.readings"
    one, two = timelake.Lake(url, options), timelake.Lake(url, options)
    one.sql(query)
    fetched = one.cache_stats()
    assert fetched["misses"] > 0 and fetched["disk_hits"] == 0, fetched
    two.sql(query)  # another process would find the same folder
    shared = two.cache_stats()
    assert shared["disk_hits"] >= fetched["misses"] - 1 and shared["bytes_fetched"] < fetched["bytes_fetched"], shared
