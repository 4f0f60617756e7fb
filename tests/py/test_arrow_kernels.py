"""Differential tests of the Arrow kernels (src/arrow: cast, sort, take, concat)
against pyarrow, through the Arrow C data interface.

The kernels and their core helpers are compiled into a small shared library
for this test (so it needs no other layer to build), loaded with ctypes, and fed
arrays that pyarrow exports; results are imported back into pyarrow and
compared with what pyarrow computes (or, where timelake is deliberately
stricter or different, with values computed in Python).
"""

import ctypes
import datetime as dt
import decimal
import glob
import os
import random
import subprocess

import pyarrow as pa
import pyarrow.compute as pc
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

HELPER_C = r"""
#include <stddef.h>
#include "arrow/array.h"
size_t tl_test_view_size(void) { return sizeof(tl_array_view); }
"""


class ArrowSchema(ctypes.Structure):
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_char_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class ArrowArray(ctypes.Structure):
    _fields_ = [
        ("length", ctypes.c_int64),
        ("null_count", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("buffers", ctypes.c_void_p),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class TlError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 1024)]


class SortKey(ctypes.Structure):
    _fields_ = [("view", ctypes.c_void_p), ("descending", ctypes.c_bool),
                ("nulls_first", ctypes.c_bool)]


RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
RELEASE_ARRAY = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))


@pytest.fixture(scope="session")
def lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("arrow_kernels")
    helper = out / "helper.c"
    helper.write_text(HELPER_C)
    so = out / "libtl_arrow_kernels.so"
    sources = sorted(glob.glob(os.path.join(ROOT, "src", "arrow", "*.c")))
    sources += [os.path.join(ROOT, "src", "core", f) for f in ("error.c", "buf.c", "grow.c", "parallel.c", "forks.c", "scratch.c", "double_text.c")]
    cmd = ["cc", "-std=c11", "-O2", "-shared", "-fPIC", "-D_GNU_SOURCE",
           "-I", os.path.join(ROOT, "include"), "-I", os.path.join(ROOT, "src"),
           *sources, str(helper), "-lm", "-pthread", "-o", str(so)]
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(str(so))
    lib.tl_test_view_size.restype = ctypes.c_size_t
    lib.tl_array_view_init.restype = ctypes.c_int
    lib.tl_arrow_cast.restype = ctypes.c_int
    lib.tl_arrow_sort_indices.restype = ctypes.c_int
    lib.tl_arrow_take.restype = ctypes.c_int
    lib.tl_arrow_concat.restype = ctypes.c_int
    lib.tl_arrow_type_parse.restype = ctypes.c_int
    return lib


class Exported:
    """A pyarrow array exported through the C data interface, with a view of it."""

    def __init__(self, lib, arr, views=None, index=0):
        self.lib = lib
        self.schema = ArrowSchema()
        self.array = ArrowArray()
        arr._export_to_c(ctypes.addressof(self.array), ctypes.addressof(self.schema))
        size = lib.tl_test_view_size()
        if views is None:
            self.view_buf = ctypes.create_string_buffer(size)
            self.view = ctypes.addressof(self.view_buf)
        else:
            self.view = ctypes.addressof(views) + index * size
        err = TlError()
        st = lib.tl_array_view_init(ctypes.c_void_p(self.view), ctypes.byref(self.schema),
                                    ctypes.byref(self.array), ctypes.byref(err))
        assert st == 0, err.message.decode()

    def close(self):
        self.lib.tl_array_view_free(ctypes.c_void_p(self.view))
        RELEASE_ARRAY(self.array.release)(ctypes.pointer(self.array))
        RELEASE_SCHEMA(self.schema.release)(ctypes.pointer(self.schema))


def import_result(out, pa_type):
    schema = ArrowSchema()
    pa_type._export_to_c(ctypes.addressof(schema))
    return pa.Array._import_from_c(ctypes.addressof(out), ctypes.addressof(schema))


def tl_type(lib, pa_type):
    schema = ArrowSchema()
    pa_type._export_to_c(ctypes.addressof(schema))
    buf = ctypes.create_string_buffer(256)
    st = lib.tl_arrow_type_parse(schema.format, buf, None)
    RELEASE_SCHEMA(schema.release)(ctypes.pointer(schema))
    assert st == 0
    return buf


def tl_cast(lib, arr, to):
    """Returns (result array or None, error message or None)."""
    src = Exported(lib, arr)
    out = ArrowArray()
    err = TlError()
    st = lib.tl_arrow_cast(ctypes.c_void_p(src.view), tl_type(lib, to), b"col",
                           ctypes.byref(out), ctypes.byref(err))
    src.close()
    if st != 0:
        return None, err.message.decode()
    result = import_result(out, to)
    result.validate(full=True)
    return result, None


def pa_safe_cast(arr, to):
    try:
        return pc.cast(arr, to, safe=True), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        return None, str(e)


# ---- casts ----

INT_EDGES = [0, 1, -1, 127, -128, 128, 255, 256, 32767, -32768, 65535, 65536,
             2**31 - 1, -2**31, 2**31, 2**32 - 1, 2**32, 2**53, 2**53 + 1, 2**63 - 1, -2**63]


@pytest.mark.parametrize("to", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(),
                                pa.uint16(), pa.uint32(), pa.uint64(), pa.float64()])
def test_int64_casts_match_pyarrow_safe_casts(lib, to):
    # Each value alone: success and failure must agree with pyarrow's safe cast.
    for v in INT_EDGES:
        arr = pa.array([None, v, 5], pa.int64())
        ours, err = tl_cast(lib, arr, to)
        theirs, their_err = pa_safe_cast(arr, to)
        if pa.types.is_floating(to):
            assert ours is not None
            assert ours.to_pylist() == [None, float(v), 5.0]
            continue
        assert (ours is None) == (theirs is None), (v, err, their_err)
        if ours is not None:
            assert ours.equals(theirs)
        else:
            assert err == f'column "col": value {v} (row 1) out of range for {to}'


def test_uint64_to_signed(lib):
    arr = pa.array([2**64 - 1, 3], pa.uint64())
    ours, err = tl_cast(lib, arr, pa.int64())
    assert ours is None and "18446744073709551615 (row 0)" in err
    ours, _ = tl_cast(lib, arr.slice(1), pa.int8())
    assert ours.to_pylist() == [3]


@pytest.mark.parametrize("to", [pa.int32(), pa.int64(), pa.uint32()])
def test_float_to_int_matches_pyarrow_safe_casts(lib, to):
    values = [0.0, -0.0, 1.0, 1.5, -2.0, 2.0**31, 2.0**31 - 1, -2.0**31, 2.0**63, -2.0**63,
              2.0**53, 1e300, float("inf"), float("nan")]
    for v in values:
        arr = pa.array([v, None], pa.float64())
        ours, err = tl_cast(lib, arr, to)
        theirs, their_err = pa_safe_cast(arr, to)
        assert (ours is None) == (theirs is None), (v, err, their_err)
        if ours is not None:
            assert ours.equals(theirs)
        else:
            assert "(row 0)" in err


def test_float64_to_float32(lib):
    arr = pa.array([1.1, None, float("inf"), float("nan"), -0.0, 3.4e38], pa.float64())
    ours, _ = tl_cast(lib, arr, pa.float32())
    theirs = pc.cast(arr, pa.float32())
    assert ours.to_pylist()[:3] == theirs.to_pylist()[:3]
    ours, err = tl_cast(lib, pa.array([1e300]), pa.float32())
    assert ours is None and "out of range for float32" in err


def test_bool_and_null_casts(lib):
    arr = pa.array([True, None, False])
    ours, _ = tl_cast(lib, arr, pa.int16())
    assert ours.equals(pc.cast(arr, pa.int16()))
    ours, _ = tl_cast(lib, pa.nulls(5), pa.string())
    assert ours.equals(pa.nulls(5, pa.string()))
    ours, err = tl_cast(lib, pa.array([1, 0]), pa.bool_())
    assert ours is None and err == 'column "col": cannot cast int64 to bool'


@pytest.mark.parametrize("src,to", [
    (pa.decimal128(10, 2), pa.decimal128(12, 4)),
    (pa.decimal128(10, 4), pa.decimal128(10, 2)),
    (pa.decimal128(38, 10), pa.decimal128(20, 0)),
    (pa.decimal128(5, 2), pa.decimal128(5, 3)),
])
def test_decimal_rescale_matches_pyarrow(lib, src, to):
    rng = random.Random(1)
    for _ in range(200):
        digits = rng.randint(1, src.precision)
        unscaled = rng.randint(-10**digits + 1, 10**digits - 1)
        if rng.random() < 0.3:
            unscaled = unscaled // 10**min(src.scale, 3) * 10**min(src.scale, 3)
        value = decimal.Decimal(unscaled).scaleb(-src.scale)
        arr = pa.array([value, None], src)
        ours, err = tl_cast(lib, arr, to)
        theirs, their_err = pa_safe_cast(arr, to)
        assert (ours is None) == (theirs is None), (value, err, their_err)
        if ours is not None:
            assert ours.equals(theirs)


def test_int_to_decimal(lib):
    arr = pa.array([999, -999, None], pa.int32())
    ours, _ = tl_cast(lib, arr, pa.decimal128(5, 2))
    # pyarrow refuses this at the type level (int32 needs precision 12); values fit.
    assert ours.to_pylist() == [decimal.Decimal("999.00"), decimal.Decimal("-999.00"), None]
    ours, err = tl_cast(lib, pa.array([1000]), pa.decimal128(5, 2))
    assert ours is None and "value 1000 (row 0) out of range" in err


def floor_div(a, b):
    return a // b


@pytest.mark.parametrize("src_unit,to_unit", [("ns", "us"), ("us", "ms"), ("s", "ns"),
                                              ("ms", "s"), ("us", "ns")])
def test_timestamp_units(lib, src_unit, to_unit):
    factor = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
    rng = random.Random(2)
    values = [rng.randint(-10**15, 10**15) for _ in range(500)] + [-1, 0, 1, -999, 999]
    arr = pa.array(values, pa.timestamp(src_unit, tz="Europe/Paris"))
    to = pa.timestamp(to_unit, tz="UTC")
    ours, err = tl_cast(lib, arr, to)
    ratio = factor[src_unit] / factor[to_unit]
    if ratio >= 1:
        expect_ok = all(abs(v * int(ratio)) < 2**63 for v in values)
        assert (ours is not None) == expect_ok, err
        if ours is not None:
            assert ours.cast(pa.int64()).to_pylist() == [v * int(ratio) for v in values]
    else:
        div = factor[to_unit] // factor[src_unit]
        # To a coarser unit only exact values: a lost part is an error naming
        # the first such row; multiples of the unit convert exactly.
        first = next(i for i, v in enumerate(values) if v % div)
        assert ours is None and f"(row {first})" in err and "would be lost" in err, err
        exact = [v - v % div for v in values]
        ours, err = tl_cast(lib, pa.array(exact, pa.timestamp(src_unit, tz="Europe/Paris")), to)
        assert ours.cast(pa.int64()).to_pylist() == [floor_div(v, div) for v in exact], err


def test_date_timestamp(lib):
    days = [0, 1, -1, 20455, -719162, 2932896]
    arr = pa.array(days, pa.date32())
    ours, _ = tl_cast(lib, arr, pa.timestamp("us"))
    assert ours.equals(pc.cast(arr, pa.timestamp("us")))
    back, _ = tl_cast(lib, pa.array([-86_400_000_000, 0, 86_400_000_000], pa.timestamp("us")),
                      pa.date32())
    assert back.to_pylist() == [dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(1970, 1, 2)]
    back, err = tl_cast(lib, pa.array([0, 86_399_999_999], pa.timestamp("us")), pa.date32())
    assert back is None and "(row 1)" in err and "time of day would be lost" in err, err


def test_string_parsing(lib):
    texts = ["2026-01-02T03:04:05.123456Z", "2026-01-02 04:04:05.123456+01:00", "2026-01-02",
             "1969-12-31T23:59:59.9999990", None, "2000-02-29T12:00:00-05:30"]
    ours, err = tl_cast(lib, pa.array(texts), pa.timestamp("us", tz="UTC"))
    assert err is None

    def expect(t):
        if t is None:
            return None
        t = t.replace(" ", "T")
        if len(t) == 10:
            t += "T00:00:00"
        frac = ""
        if "." in t:
            head, rest = t.split(".", 1)
            digits = rest[:len(rest) - len(rest.lstrip("0123456789"))]
            tz = rest[len(digits):]
            t, frac = head + tz, digits
        d = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
        if d.tzinfo is None:
            d = d.replace(tzinfo=dt.timezone.utc)
        micros = int((frac + "000000")[:6]) if frac else 0
        return d.replace(microsecond=0) + dt.timedelta(microseconds=micros)

    assert ours.to_pylist() == [expect(t) for t in texts]
    rng = random.Random(3)
    numbers = [repr(rng.uniform(-1e6, 1e6)) for _ in range(300)] + ["1e-5", "-0.0", "3.14"]
    ours, _ = tl_cast(lib, pa.array(numbers, pa.large_string()), pa.float64())
    assert ours.to_pylist() == [float(x) for x in numbers]
    ours, _ = tl_cast(lib, pa.array(["12", "-7", None]), pa.int32())
    assert ours.to_pylist() == [12, -7, None]
    ours, err = tl_cast(lib, pa.array(["1", "2", "x3"]), pa.int64())
    assert ours is None and err == 'column "col": cannot cast "x3" (row 2) to int64'


def test_dictionary_and_sliced_inputs(lib):
    base = pa.array(["10", "20", None, "30", "20", "10"] * 5)
    dict_arr = base.dictionary_encode()
    for arr in (dict_arr, dict_arr.slice(3, 20)):
        ours, _ = tl_cast(lib, arr, pa.string())
        assert ours.equals(pc.cast(arr, pa.string()))
        ours, _ = tl_cast(lib, arr, pa.int64())
        assert ours.equals(pc.cast(pc.cast(arr, pa.string()), pa.int64()))
    sliced = pa.array(list(range(100)), pa.int64()).slice(37, 40)
    ours, _ = tl_cast(lib, sliced, pa.int32())
    assert ours.equals(pc.cast(sliced, pa.int32()))
    strs = pa.array(["a", None, "ccc", ""] * 10, pa.string()).slice(5, 30)
    for to in (pa.large_string(), pa.binary(), pa.large_binary(), pa.string()):
        ours, _ = tl_cast(lib, strs, to)
        assert ours.equals(pc.cast(strs, to))


# ---- sort ----

def random_column(rng, kind, n):
    def maybe_null(v):
        return None if rng.random() < 0.1 else v
    if kind == "int32":
        return pa.array([maybe_null(rng.randint(-3, 3)) for _ in range(n)], pa.int32())
    if kind == "int64":
        return pa.array([maybe_null(rng.randint(-2**63, 2**63 - 1)) for _ in range(n)], pa.int64())
    if kind == "float64":
        pool = [float("inf"), float("-inf"), float("nan"), 0.0, 1.5, -1.5]
        return pa.array([maybe_null(rng.choice(pool) if rng.random() < 0.3
                                    else rng.uniform(-100, 100)) for _ in range(n)], pa.float64())
    if kind == "string":
        words = ["", "a", "ab", "b", "zz", "\u00e9", "region-1", "region-10", "region-9"]
        return pa.array([maybe_null(rng.choice(words)) for _ in range(n)], pa.string())
    if kind == "dict":
        return random_column(rng, "string", n).dictionary_encode()
    if kind == "large_string":
        return pa.array([maybe_null(f"k{rng.randint(0, 500)}") for _ in range(n)],
                        pa.large_string())
    if kind == "binary":
        return pa.array([maybe_null(bytes([rng.randint(0, 255)]) * rng.randint(0, 3))
                         for _ in range(n)], pa.binary())
    if kind == "bool":
        return pa.array([maybe_null(rng.random() < 0.5) for _ in range(n)])
    if kind == "timestamp":
        return pa.array([maybe_null(rng.randint(0, 10**12)) for _ in range(n)],
                        pa.timestamp("us", tz="UTC"))
    if kind == "date32":
        return pa.array([maybe_null(rng.randint(-1000, 1000)) for _ in range(n)], pa.date32())
    if kind == "decimal":
        return pa.array([maybe_null(decimal.Decimal(rng.randint(-10**20, 10**20)).scaleb(-3))
                         for _ in range(n)], pa.decimal128(30, 3))
    raise ValueError(kind)


def decoded(arr):
    """pyarrow cannot sort dictionary arrays: give it the values."""
    return pc.cast(arr, arr.type.value_type) if pa.types.is_dictionary(arr.type) else arr


def tl_sort(lib, columns, orders, nulls_first):
    exported = [Exported(lib, c) for c in columns]
    keys = (SortKey * len(columns))()
    for i, (e, order) in enumerate(zip(exported, orders)):
        keys[i] = SortKey(e.view, order == "descending", nulls_first)
    out = ctypes.POINTER(ctypes.c_int64)()
    err = TlError()
    n = len(columns[0])
    st = lib.tl_arrow_sort_indices(keys, ctypes.c_size_t(len(columns)), ctypes.c_int64(n),
                                   ctypes.byref(out), ctypes.byref(err))
    assert st == 0, err.message.decode()
    result = [out[i] for i in range(n)]
    ctypes.CDLL(None).free(out)
    for e in exported:
        e.close()
    return result


@pytest.mark.parametrize("kind", ["int32", "int64", "float64", "string", "dict", "large_string",
                                  "binary", "bool", "timestamp", "date32", "decimal"])
def test_sort_matches_pyarrow(lib, kind):
    rng = random.Random(hash(kind) & 0xffff)
    for n in (0, 1, 7, 100, 3000):
        col = random_column(rng, kind, n)
        for order in ("ascending", "descending"):
            for placement in ("at_end", "at_start"):
                if kind == "float64" and placement == "at_start":
                    continue  # pyarrow moves NaNs to the start too; we keep them after numbers
                ours = tl_sort(lib, [col], [order], placement == "at_start")
                theirs = pc.sort_indices(pa.table({"c": decoded(col)}),
                                         sort_keys=[("c", order, placement)]).to_pylist()
                assert ours == theirs, (kind, n, order, placement)


def test_multi_key_sort_matches_pyarrow(lib):
    rng = random.Random(11)
    n = 20000
    table = pa.table({
        "p": random_column(rng, "int32", n),
        "s1": random_column(rng, "string", n),
        "s2": random_column(rng, "dict", n),
        "t": random_column(rng, "timestamp", n),
    })
    for orders in (["ascending"] * 4, ["descending", "ascending", "descending", "ascending"]):
        ours = tl_sort(lib, [table[c].combine_chunks() for c in table.column_names], orders, False)
        plain = pa.table({c: decoded(table[c].combine_chunks()) for c in table.column_names})
        keys = [(c, o, "at_end") for c, o in zip(table.column_names, orders)]
        theirs = pc.sort_indices(plain, sort_keys=keys).to_pylist()
        assert ours == theirs


# ---- take and concat ----

def comparable(arr):
    """Python values with NaN made equal to itself."""
    return [("nan",) if isinstance(v, float) and v != v else v for v in arr.to_pylist()]


def tl_take(lib, arr, indices):
    src = Exported(lib, arr)
    idx = (ctypes.c_int64 * len(indices))(*[-1 if i is None else i for i in indices])
    out = ArrowArray()
    err = TlError()
    st = lib.tl_arrow_take(ctypes.c_void_p(src.view), idx, ctypes.c_int64(len(indices)),
                           ctypes.byref(out), ctypes.byref(err))
    src.close()
    assert st == 0, err.message.decode()
    result = import_result(out, arr.type)
    result.validate(full=True)
    return result


@pytest.mark.parametrize("kind", ["int32", "int64", "float64", "string", "large_string",
                                  "binary", "bool", "timestamp", "decimal"])
def test_take_matches_pyarrow(lib, kind):
    rng = random.Random(5)
    col = random_column(rng, kind, 500).slice(13, 400)
    indices = [None if rng.random() < 0.05 else rng.randrange(len(col)) for _ in range(1000)]
    ours = tl_take(lib, col, indices)
    theirs = col.take(pa.array(indices, pa.int64()))
    assert comparable(ours) == comparable(theirs)


def test_concat_matches_pyarrow(lib):
    rng = random.Random(6)
    for kind in ("int64", "string", "bool", "decimal", "dict"):
        parts = [random_column(rng, kind, rng.randint(0, 50)).slice(rng.randint(0, 3))
                 for _ in range(5)]
        size = lib.tl_test_view_size()
        views = ctypes.create_string_buffer(size * len(parts))
        exported = [Exported(lib, p, views, i) for i, p in enumerate(parts)]
        out = ArrowArray()
        err = TlError()
        st = lib.tl_arrow_concat(views, ctypes.c_size_t(len(parts)), ctypes.byref(out),
                                 ctypes.byref(err))
        assert st == 0, err.message.decode()
        value_type = parts[0].type.value_type if kind == "dict" else parts[0].type
        ours = import_result(out, value_type)
        for e in exported:
            e.close()
        plain = [pc.cast(p, value_type) for p in parts]
        assert comparable(ours) == comparable(pa.concat_arrays(plain))
