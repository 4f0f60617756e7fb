"""Interop of our Parquet writer and reader with pyarrow, DuckDB and polars.

(a) files written by our writer read back identically in pyarrow and DuckDB,
    with field ids, logical/converted types, statistics, sorting columns and
    key/value metadata as written;
(b) files written by pyarrow (many variants), DuckDB and polars read back
    identically through our reader (the C driver reads them with our reader
    and writes them again with our writer; pyarrow compares the result).

The driver is tests/tools/parquet_tool.c. Set TL_PARQUET_TOOL to a built
driver, or TL_BUILD_DIR to a build directory holding libtimelake_static.a
(default: build-parquet, build, build-asan under the repo) and it is compiled here.
"""
import datetime as dt
import decimal
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pq = pytest.importorskip("pyarrow.parquet")

from conftest import static_link_flags

ROOT = Path(__file__).resolve().parents[2]


def _sanitized(build: Path) -> bool:
    cache = build / "CMakeCache.txt"
    return cache.exists() and "TL_SANITIZE:BOOL=ON" in cache.read_text()


@pytest.fixture(scope="session")
def tool(tmp_path_factory):
    if os.environ.get("TL_PARQUET_TOOL"):
        return os.environ["TL_PARQUET_TOOL"]
    dirs = [os.environ["TL_BUILD_DIR"]] if os.environ.get("TL_BUILD_DIR") else [
        ROOT / "build-parquet", ROOT / "build", ROOT / "build-asan"]
    for d in map(Path, dirs):
        d = d if d.is_absolute() else ROOT / d
        lib = d / "libtimelake_static.a"
        if not lib.exists():
            continue
        out = tmp_path_factory.mktemp("tool") / "parquet_tool"
        san = ["-fsanitize=address,undefined"] if _sanitized(d) else []
        subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-D_GNU_SOURCE", *san, "-I", str(ROOT / "include"), "-I",
                        str(ROOT / "src"), str(ROOT / "tests/tools/parquet_tool.c"), str(lib), *static_link_flags(),
                        "-o", str(out)], check=True)
        return str(out)
    pytest.skip("no built libtimelake_static.a (set TL_BUILD_DIR or TL_PARQUET_TOOL)")


def run_tool(tool, *args):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1")
    p = subprocess.run([tool, *map(str, args)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, f"parquet_tool {' '.join(map(str, args))} failed:\n{p.stderr}"
    return json.loads(p.stdout) if p.stdout.strip() else None


# ---- test data ----

N = 2500


def _nulls(i, every=7):
    return i % every == 3 or 600 <= i < 700


def sample_table(n=N, with_float16=True):
    rng = range(n)

    def col(f, every=7):
        return [None if _nulls(i, every) else f(i) for i in rng]

    utc = dt.timezone.utc
    base = dt.datetime(2024, 1, 1, tzinfo=utc)
    cols = {
        "i8": pa.array(col(lambda i: (i * 37) % 256 - 128), pa.int8()),
        "u8": pa.array(col(lambda i: (i * 37) % 256), pa.uint8()),
        "i16": pa.array(col(lambda i: (i * 7919) % 65536 - 32768), pa.int16()),
        "u16": pa.array(col(lambda i: (i * 7919) % 65536), pa.uint16()),
        "i32": pa.array(col(lambda i: (i * 2654435761) % 2**32 - 2**31), pa.int32()),
        "u32": pa.array(col(lambda i: (i * 2654435761) % 2**32), pa.uint32()),
        "i64": pa.array(col(lambda i: (i * 0x9E3779B97F4A7C15) % 2**64 - 2**63), pa.int64()),
        "u64": pa.array(col(lambda i: (i * 0x9E3779B97F4A7C15) % 2**64), pa.uint64()),
        "f32": pa.array(col(lambda i: float("nan") if i % 50 == 1 else (i - 1000) / 8), pa.float32()),
        "f64": pa.array(col(lambda i: float("nan") if i % 50 == 1 else (i - 1000) * 1.25), pa.float64()),
        "flag": pa.array(col(lambda i: i % 3 == 0), pa.bool_()),
        "host": pa.array(col(lambda i: "" if i % 11 == 0 else f"host-{i % 97:03d}"), pa.string()),
        "note": pa.array(col(lambda i: "x" * (i % 13) + f"é{i}"), pa.large_string()),
        "blob": pa.array(col(lambda i: bytes([i % 256, 0, (i * 3) % 256]) * (i % 4)), pa.binary()),
        "fixed": pa.array(col(lambda i: (i * 2654435761 % 2**32).to_bytes(4, "big")), pa.binary(4)),
        "dec": pa.array(col(lambda i: decimal.Decimal(i * 7919 - 10**6) / 100), pa.decimal128(10, 2)),
        "dec38": pa.array(col(lambda i: decimal.Decimal((i - 1250) * 10**20 + i) / 10**5),
                          pa.decimal128(38, 5)),
        "day": pa.array(col(lambda i: dt.date(2000, 1, 1) + dt.timedelta(days=i * 3)), pa.date32()),
        "ts": pa.array(col(lambda i: base + dt.timedelta(seconds=i, microseconds=i)), pa.timestamp("us", "UTC")),
        "ts_local": pa.array(col(lambda i: dt.datetime(2020, 5, 1) + dt.timedelta(milliseconds=i * 1001)),
                             pa.timestamp("ms")),
        "ts_ns": pa.array(col(lambda i: (1_700_000_000_000_000_000 + i * 1_000_000_007)), pa.timestamp("ns")),
        "t_us": pa.array(col(lambda i: dt.time(i % 24, i % 60, i % 60, i)), pa.time64("us")),
        "t_ms": pa.array(col(lambda i: (i * 1000 + 7) % 86_400_000), pa.time32("ms")),
        "req": pa.array([i * 3 for i in rng], pa.int64()),
    }
    if with_float16:
        halfs = struct.pack(f"<{n}e", *[i / 4 for i in rng])
        cols["f16"] = pa.Array.from_buffers(pa.float16(), n, [None, pa.py_buffer(halfs)])
    fields = [pa.field(k, v.type, nullable=(k != "req")) for k, v in cols.items()]
    return pa.Table.from_arrays(list(cols.values()), schema=pa.schema(fields))


def expected_after_ours(table):
    """The table as our reader hands it back (pyarrow's mapping of Parquet types)."""
    fields = []
    for f in table.schema:
        t = f.type
        if t == pa.large_string():
            t = pa.string()
        elif t == pa.large_binary():
            t = pa.binary()
        elif pa.types.is_timestamp(t) and t.tz is not None:
            t = pa.timestamp(t.unit, "UTC")
        fields.append(pa.field(f.name, t, nullable=f.nullable))
    return table.cast(pa.schema(fields))


def arrays_equal(a, b):
    if a.type == pa.float16() and b.type == pa.float16():
        return a.view(pa.uint16()).equals(b.view(pa.uint16()))
    if not (pa.types.is_floating(a.type) and pa.types.is_floating(b.type)):
        return a.equals(b)
    if len(a) != len(b) or not a.is_null().equals(b.is_null()):
        return False
    # NaN equals NaN here; Arrow's equals says it does not.
    same = pc.or_(pc.equal(a, b), pc.and_(pc.is_nan(a), pc.is_nan(b)))
    return pc.all(pc.fill_null(same, True)).as_py()


def columns_match(a, b):
    """Compares a column read by another engine (a) with ours (b), in b's type."""
    if pa.types.is_timestamp(b.type):
        # Engines name the UTC zone differently; the instants must agree.
        a = a.cast(pa.timestamp(b.type.unit, a.type.tz)).cast(pa.int64())
        b = b.cast(pa.int64())
    else:
        a = a.cast(b.type)
    return arrays_equal(a, b)


def duckdb_table(path):
    import duckdb
    got = duckdb.sql(f"SELECT * FROM read_parquet('{path}')").arrow()
    return got.read_all() if hasattr(got, "read_all") else got


def assert_tables_equal(got, want):
    assert got.num_rows == want.num_rows
    assert got.column_names == want.column_names
    for name in want.column_names:
        a, b = got[name].combine_chunks(), want[name].combine_chunks()
        assert a.type == b.type, f"{name}: {a.type} != {b.type}"
        assert arrays_equal(a, b), f"column {name} differs"


# ---- (a) our writer, read by pyarrow, DuckDB, polars ----

LOGICAL = {
    "i8": ("INT", "INT_8"), "u8": ("INT", "UINT_8"), "i16": ("INT", "INT_16"),
    "u16": ("INT", "UINT_16"), "u32": ("INT", "UINT_32"), "u64": ("INT", "UINT_64"),
    "host": ("STRING", "UTF8"), "note": ("STRING", "UTF8"), "dec": ("DECIMAL", "DECIMAL"),
    "dec38": ("DECIMAL", "DECIMAL"), "day": ("DATE", "DATE"), "ts": ("TIMESTAMP", "TIMESTAMP_MICROS"),
    "ts_local": ("TIMESTAMP", "NONE"), "ts_ns": ("TIMESTAMP", "NONE"), "t_us": ("TIME", "TIME_MICROS"),
    "t_ms": ("TIME", "TIME_MILLIS"), "i64": ("NONE", "NONE"), "f64": ("NONE", "NONE"),
}


@pytest.fixture(scope="module")
def ours(tool, tmp_path_factory):
    d = tmp_path_factory.mktemp("ours")
    table = sample_table()
    src, out = d / "src.parquet", d / "ours.parquet"
    pq.write_table(table, src, compression="none", use_dictionary=False)
    stats = run_tool(tool, "rewrite", src, out, "--field-ids", "--sort", "23,18", "--page-index",
                     "--page-rows", 300, "--row-group-rows", 1000, "--kv", "origin=interop")
    return table, out, stats


def test_pyarrow_reads_our_values(ours):
    table, out, _ = ours
    assert_tables_equal(pq.read_table(out), expected_after_ours(table))


def test_our_field_ids_types_and_metadata(ours):
    table, out, _ = ours
    f = pq.ParquetFile(out)
    for i, field in enumerate(f.schema_arrow):
        assert field.metadata[b"PARQUET:field_id"] == str(i + 1).encode()
        assert field.nullable == table.schema.field(i).nullable
    for name, (logical, converted) in LOGICAL.items():
        col = f.schema.column(table.schema.get_field_index(name))
        assert col.logical_type.type == logical, name
        assert col.converted_type == converted, name
    ts = f.schema.column(table.schema.get_field_index("ts")).logical_type
    assert '"isAdjustedToUTC":true' in ts.to_json().replace(" ", "")
    local = f.schema.column(table.schema.get_field_index("ts_local")).logical_type
    assert '"isAdjustedToUTC":false' in local.to_json().replace(" ", "")
    md = f.metadata
    assert md.metadata[b"origin"] == b"interop"
    assert md.num_row_groups == 3 and md.num_rows == N
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        assert [(s.column_index, s.descending, s.nulls_first) for s in rg.sorting_columns] == [
            (23, False, True), (18, False, True)]
        assert rg.column(0).has_offset_index and rg.column(0).has_column_index


ORDERED = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64", "flag", "host",
           "note", "blob", "fixed", "dec", "dec38", "day", "ts", "ts_local", "ts_ns", "t_us", "t_ms", "req"]


def test_our_statistics(ours):
    table, out, stats = ours
    want = expected_after_ours(table)
    md = pq.ParquetFile(out).metadata
    for g in range(md.num_row_groups):
        part = want.slice(g * 1000, 1000)
        for name in ORDERED:
            i = want.schema.get_field_index(name)
            s = md.row_group(g).column(i).statistics
            col = part[name]
            assert s.null_count == col.null_count, name
            if pa.types.is_floating(col.type):
                col = pc.filter(col, pc.invert(pc.is_nan(col)))
            assert s.has_min_max, name
            if col.type == pa.timestamp("ns"):  # no Python datetime holds nanoseconds
                col = col.cast(pa.int64())
                assert (s.min_raw, s.max_raw) == (pc.min(col).as_py(), pc.max(col).as_py())
                continue
            mm = pc.min_max(col)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
            assert (s.min, s.max) == (lo, hi), name
    # The writer's per-file stats (what Iceberg manifests get) agree with the data.
    cols = stats["columns"]
    for i, name in enumerate(want.column_names):
        c = cols[i]
        assert c["field_id"] == i + 1 and c["value_count"] == N
        assert c["null_count"] == want[name].null_count, name
    f64 = want["f64"]
    assert cols[want.schema.get_field_index("f64")]["nan_count"] == pc.sum(pc.is_nan(f64)).as_py()
    i64 = cols[want.schema.get_field_index("i64")]
    assert int.from_bytes(bytes.fromhex(i64["min"]), "little", signed=True) == pc.min(want["i64"]).as_py()
    assert int.from_bytes(bytes.fromhex(i64["max"]), "little", signed=True) == pc.max(want["i64"]).as_py()
    host = cols[want.schema.get_field_index("host")]
    assert bytes.fromhex(host["min"]) == b"" and bytes.fromhex(host["max"]) == b"host-096"
    assert stats["row_group_offsets"] == [md.row_group(g).column(0).file_offset for g in range(3)]


def test_duckdb_reads_our_values(ours):
    duckdb = pytest.importorskip("duckdb")
    table, out, _ = ours
    want = expected_after_ours(table)
    # DuckDB has no float16, and keeps time at microsecond precision.
    names = [n for n in want.column_names if n != "f16"]
    got = duckdb.sql(f"SELECT {', '.join(names)} FROM read_parquet('{out}')").arrow()
    if hasattr(got, "read_all"):
        got = got.read_all()
    assert got.num_rows == N
    for name in names:
        a, b = got[name].combine_chunks(), want[name].combine_chunks()
        assert columns_match(a, b), f"duckdb column {name} differs"
    counts = duckdb.sql(f"SELECT count(*), count(host), min(i64), max(u64) FROM '{out}'").fetchall()[0]
    assert counts[0] == N and counts[1] == want["host"].length() - want["host"].null_count


def test_polars_reads_our_values(ours):
    pl = pytest.importorskip("polars")
    table, out, _ = ours
    want = expected_after_ours(table)
    df = pl.read_parquet(out, columns=["i64", "u64", "host", "ts", "dec", "f64", "req"])
    assert df.height == N
    assert df["i64"].to_list() == want["i64"].to_pylist()
    assert df["host"].to_list() == want["host"].to_pylist()
    assert df["req"].to_list() == want["req"].to_pylist()


# ---- (b) other writers, read by our reader ----

def _pyarrow_variant(**kw):
    def write(table, path):
        pq.write_table(table, path, **kw)
    return write


INT_COLS = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "day", "ts", "ts_local", "ts_ns",
            "t_us", "t_ms", "req"]
VARIANTS = {
    "pyarrow-defaults": _pyarrow_variant(),
    "pyarrow-no-dictionary": _pyarrow_variant(use_dictionary=False),
    "pyarrow-page-v2": _pyarrow_variant(data_page_version="2.0"),
    "pyarrow-page-v2-no-dict-gzip": _pyarrow_variant(data_page_version="2.0", use_dictionary=False,
                                                     compression="gzip"),
    "pyarrow-snappy": _pyarrow_variant(compression="snappy"),
    "pyarrow-gzip": _pyarrow_variant(compression="gzip"),
    "pyarrow-zstd": _pyarrow_variant(compression="zstd"),
    "pyarrow-lz4": _pyarrow_variant(compression="lz4"),  # LZ4_RAW
    "pyarrow-brotli": _pyarrow_variant(compression="brotli"),
    "pyarrow-lz4-page-v2": _pyarrow_variant(data_page_version="2.0", compression="lz4"),
    "pyarrow-none": _pyarrow_variant(compression="none"),
    "pyarrow-small-pages": _pyarrow_variant(data_page_size=512, row_group_size=700,
                                            write_batch_size=64),
    "pyarrow-delta-encodings": _pyarrow_variant(
        use_dictionary=False, compression="zstd",
        column_encoding={**{c: "DELTA_BINARY_PACKED" for c in INT_COLS},
                         "f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT",
                         "host": "DELTA_BYTE_ARRAY", "note": "DELTA_LENGTH_BYTE_ARRAY",
                         "blob": "DELTA_BYTE_ARRAY"}),
    "pyarrow-delta-v2": _pyarrow_variant(
        use_dictionary=False, data_page_version="2.0",
        column_encoding={"i64": "DELTA_BINARY_PACKED", "i32": "DELTA_BINARY_PACKED",
                         "f64": "BYTE_STREAM_SPLIT", "fixed": "BYTE_STREAM_SPLIT",
                         "host": "DELTA_LENGTH_BYTE_ARRAY", "flag": "RLE"}),
    "pyarrow-int96": _pyarrow_variant(use_deprecated_int96_timestamps=True),
    "pyarrow-format-1.0": lambda t, p: pq.write_table(t.drop_columns(["ts_ns"]), p, version="1.0"),
}


def _compare_through_ours(tool, src, tmp_path, extra=()):
    out = tmp_path / "ours.parquet"
    run_tool(tool, "rewrite", src, out, *extra)
    want = pq.read_table(src)
    got = pq.read_table(out)
    # Our reader keeps pyarrow's type mapping but not the ARROW:schema extras.
    got = got.cast(pa.schema([pa.field(f.name, want.schema.field(f.name).type, f.nullable)
                              for f in got.schema]))
    assert_tables_equal(got, want.cast(got.schema))
    return want, out


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reads_pyarrow_files(tool, tmp_path, variant):
    src = tmp_path / "src.parquet"
    VARIANTS[variant](sample_table(), src)
    want, _ = _compare_through_ours(tool, src, tmp_path)
    # Chunk statistics through our reader match pyarrow's view of the same file.
    chunks = run_tool(tool, "stats", src)
    md = pq.ParquetFile(src).metadata
    i64 = want.schema.get_field_index("i64")
    host = want.schema.get_field_index("host")
    for g in range(md.num_row_groups):
        s = md.row_group(g).column(i64).statistics
        c = chunks[g][i64]
        assert c["null_count"] == s.null_count
        assert int.from_bytes(bytes.fromhex(c["min"]), "little", signed=True) == s.min
        assert int.from_bytes(bytes.fromhex(c["max"]), "little", signed=True) == s.max
        h = md.row_group(g).column(host).statistics
        assert bytes.fromhex(chunks[g][host]["max"]).decode() == h.max


def test_reads_pyarrow_legacy_converted_types_only(tool, tmp_path):
    """Files whose schema carries converted types only (as parquet-mr 1.x wrote)."""
    src = tmp_path / "legacy.parquet"
    table = sample_table(with_float16=False).select(["i8", "u16", "u32", "host", "dec", "day",
                                                      "ts", "t_ms", "i64"])
    pq.write_table(table, src, version="1.0", use_dictionary=False)
    _compare_through_ours(tool, src, tmp_path)


def test_reads_duckdb_files(tool, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    table = sample_table(with_float16=False).drop_columns(["fixed", "t_ms"])
    con = duckdb.connect()
    con.register("t", table)
    for i, opts in enumerate(["FORMAT parquet", "FORMAT parquet, PARQUET_VERSION v2",
                              "FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1024"]):
        src, out = tmp_path / f"duck{i}.parquet", tmp_path / f"ours{i}.parquet"
        con.execute(f"COPY (SELECT * FROM t) TO '{src}' ({opts})")
        run_tool(tool, "rewrite", src, out)
        # DuckDB's own reading is the oracle: pyarrow cannot read its v2 INT32 deltas.
        want, got = duckdb_table(src), pq.read_table(out)
        assert got.column_names == want.column_names and got.num_rows == want.num_rows
        for name in want.column_names:
            a, b = want[name].combine_chunks(), got[name].combine_chunks()
            assert columns_match(a, b), f"{opts}: column {name} differs"
        again = duckdb_table(out)
        for name in want.column_names:
            assert columns_match(again[name].combine_chunks(), got[name].combine_chunks()), name


def test_reads_polars_files(tool, tmp_path):
    pl = pytest.importorskip("polars")
    table = sample_table(with_float16=False).select(
        ["i8", "u8", "i16", "u32", "i64", "u64", "f32", "f64", "flag", "host", "note", "dec", "day",
         "ts", "ts_ns", "t_us", "req"])
    df = pl.from_arrow(table)
    for i, kw in enumerate([{}, {"compression": "snappy", "use_pyarrow": False},
                            {"statistics": True, "row_group_size": 600}]):
        src = tmp_path / f"polars{i}.parquet"
        df.write_parquet(src, **kw)
        _compare_through_ours(tool, src, tmp_path)


def test_rust_reference_style_encodings(tool, tmp_path):
    """RLE_DICTIONARY strings, DELTA_BINARY_PACKED timestamps and BYTE_STREAM_SPLIT
    doubles under zstd, as the Rust reference implementation writes them."""
    n = 20000
    table = pa.table({
        "ts": pa.array([1_700_000_000_000_000 + (i % 2000) * 10_000_000 for i in range(n)],
                       pa.timestamp("us", "UTC")),
        "series": pa.array([f"s-{i // 2000}" for i in range(n)]),
        "value": pa.array([i * 0.1 for i in range(n)], pa.float64()),
    })
    src = tmp_path / "rust_style.parquet"
    pq.write_table(table, src, compression="zstd", use_dictionary=["series"],
                   column_encoding={"ts": "DELTA_BINARY_PACKED", "value": "BYTE_STREAM_SPLIT"})
    _compare_through_ours(tool, src, tmp_path, ("--codec", "zstd"))


def test_our_compact_encodings_read_by_everyone(tool, tmp_path):
    """Our default (DELTA / BYTE_STREAM_SPLIT) pages read back in pyarrow, DuckDB and polars."""
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    n = 50000
    table = pa.table({
        "ts": pa.array([1_700_000_000_000_000 + i * 1_000_000 for i in range(n)], pa.timestamp("us", "UTC")),
        "host": pa.array([f"h{i // 5000}" for i in range(n)]),
        "noisy": pa.array([((i * 2654435761) % 10**9) / 7.0 for i in range(n)], pa.float64()),
        "count": pa.array([i // 3 for i in range(n)], pa.int32()),
    })
    src, out = tmp_path / "src.parquet", tmp_path / "ours.parquet"
    pq.write_table(table, src)
    run_tool(tool, "rewrite", src, out)
    encodings = {pq.ParquetFile(out).metadata.row_group(0).column(i).path_in_schema:
                 pq.ParquetFile(out).metadata.row_group(0).column(i).encodings for i in range(4)}
    assert "DELTA_BINARY_PACKED" in encodings["ts"] and "RLE_DICTIONARY" in encodings["host"]
    assert "BYTE_STREAM_SPLIT" in encodings["noisy"]
    assert pq.read_table(out).equals(table)
    got = duckdb.sql(f"SELECT * FROM '{out}'").fetchall()
    assert [r[3] for r in got] == table["count"].to_pylist()
    assert [r[2] for r in got] == table["noisy"].to_pylist()
    assert pl.read_parquet(out)["noisy"].to_list() == table["noisy"].to_pylist()


@pytest.mark.parametrize("codec, name", [("lz4", "LZ4_RAW"), ("brotli", "BROTLI")])
def test_our_lz4_and_brotli_read_by_pyarrow_and_duckdb(tool, tmp_path, codec, name):
    duckdb = pytest.importorskip("duckdb")
    src = tmp_path / "src.parquet"
    pq.write_table(sample_table(with_float16=False), src)
    want, out = _compare_through_ours(tool, src, tmp_path, ("--codec", codec, "--page-rows", "700"))
    assert duckdb.sql(f"SELECT DISTINCT compression FROM parquet_metadata('{out}')").fetchall() == [(name,)]
    got = duckdb.sql(f"SELECT i64, host FROM '{out}'").fetchall()
    assert got == list(zip(want["i64"].to_pylist(), want["host"].to_pylist()))


def test_benchmark_runs(tool):
    r = run_tool(tool, "bench", 100000)
    assert r["rows"] == 100000 and r["bytes"] > 0
