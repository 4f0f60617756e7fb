"""A thin ctypes binding of libtimelake's public C API, for the tests.

It is not the Python package (that one is a CPython extension); it exists so
that end-to-end and interop tests can drive the C library directly, passing
pyarrow data through the Arrow C data interface exactly as a C caller would.
"""

import ctypes
import os

import pyarrow as pa

_lib = ctypes.CDLL(os.environ.get("TL_LIB", os.path.join(os.path.dirname(__file__), "../../build-asan/libtimelake.so")))


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 1024)]


class TableOptions(ctypes.Structure):
    _fields_ = [
        ("time_column", ctypes.c_char_p),
        ("series_key", ctypes.POINTER(ctypes.c_char_p)),
        ("series_key_len", ctypes.c_size_t),
        ("chunk", ctypes.c_char_p),
        ("retention", ctypes.c_char_p),
        ("dedup", ctypes.c_int),
        ("ingest_time", ctypes.c_int),
        ("properties", ctypes.POINTER(ctypes.c_char_p)),
        ("partition_by", ctypes.POINTER(ctypes.c_char_p)),
        ("partition_by_len", ctypes.c_size_t),
    ]


class Attachment(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_char_p), ("len", ctypes.c_size_t)]


class AppendOptions(ctypes.Structure):
    _fields_ = [("batch_id", ctypes.c_char_p), ("maintain", ctypes.c_int),
                ("batch_ids", ctypes.POINTER(ctypes.c_char_p)), ("n_batch_ids", ctypes.c_size_t),
                ("expect_version", ctypes.c_int64), ("summary", ctypes.POINTER(ctypes.c_char_p)),
                ("attachments", ctypes.POINTER(Attachment)), ("attachments_len", ctypes.c_size_t)]


class MaintainOptions(ctypes.Structure):
    _fields_ = [("compact", ctypes.c_int), ("retention", ctypes.c_int), ("expire", ctypes.c_int),
                ("rollups", ctypes.c_int), ("inline_mode", ctypes.c_int)]


class MaintainReport(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int64) for name in (
        "partitions_compacted", "files_rewritten", "files_written", "rows_rewritten",
        "duplicates_removed", "partitions_dropped", "snapshots_expired", "objects_deleted",
        "rollups_refreshed", "rollup_rows")] + [
        ("seconds", ctypes.c_double), ("warning", ctypes.c_char * 1024)]

    def as_dict(self):
        d = {name: getattr(self, name) for name, _ in self._fields_ if name != "warning"}
        if self.warning:
            d["warning"] = self.warning.decode()
        return d


class AppendResult(ctypes.Structure):
    _fields_ = [
        ("rows", ctypes.c_int64),
        ("files", ctypes.c_int64),
        ("bytes", ctypes.c_int64),
        ("version", ctypes.c_int64),
        ("commit_ms", ctypes.c_double),
        ("attempts", ctypes.c_int),
        ("duplicate", ctypes.c_int),
        ("maintained", ctypes.c_int),
        ("maintenance", MaintainReport),
        ("maintenance_error", ctypes.c_char * 1024),
        ("warning", ctypes.c_char * 1024),
    ]


class TableInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("location", ctypes.c_char_p),
        ("version", ctypes.c_int64),
        ("time_column", ctypes.c_char_p),
        ("series_key", ctypes.POINTER(ctypes.c_char_p)),
        ("chunk", ctypes.c_char_p),
        ("dedup", ctypes.c_int),
        ("ingest_time_column", ctypes.c_char_p),
        ("rows", ctypes.c_int64),
        ("files", ctypes.c_int64),
        ("bytes", ctypes.c_int64),
        ("snapshots", ctypes.c_int64),
        ("manifests", ctypes.c_int64),
        ("last_value_index", ctypes.c_char_p),
        ("partition_by", ctypes.POINTER(ctypes.c_char_p)),
        ("snapshot_id", ctypes.c_int64),
        ("last_commit_ms", ctypes.c_int64),
    ]


# Arrow C structs are passed as opaque memory of the right size.
ARROW_SCHEMA_SIZE = 72
ARROW_STREAM_SIZE = 40

_P = ctypes.c_void_p
_lib.tl_lake_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_P), ctypes.POINTER(Error)]
_lib.tl_lake_close.argtypes = [_P]
_lib.tl_lake_location.argtypes = [_P]
_lib.tl_lake_location.restype = ctypes.c_char_p
_lib.tl_lake_create_table.argtypes = [_P, ctypes.c_char_p, _P, ctypes.POINTER(TableOptions), ctypes.POINTER(_P), ctypes.POINTER(Error)]
_lib.tl_lake_open_table.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(_P), ctypes.POINTER(Error)]
_lib.tl_lake_list_tables.argtypes = [_P, ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)), ctypes.POINTER(Error)]
_lib.tl_strings_free.argtypes = [ctypes.POINTER(ctypes.c_char_p)]
_lib.tl_lake_drop_table.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(Error)]
_lib.tl_table_close.argtypes = [_P]
for fn in ("tl_table_name", "tl_table_location"):
    getattr(_lib, fn).argtypes = [_P]
    getattr(_lib, fn).restype = ctypes.c_char_p
_lib.tl_table_version.argtypes = [_P]
_lib.tl_table_version.restype = ctypes.c_int64
_lib.tl_table_schema.argtypes = [_P, _P, ctypes.POINTER(Error)]
_lib.tl_table_refresh.argtypes = [_P, ctypes.POINTER(Error)]
_lib.tl_table_append.argtypes = [_P, _P, ctypes.POINTER(AppendOptions), ctypes.POINTER(AppendResult), ctypes.POINTER(Error)]
_lib.tl_table_replace.argtypes = [_P, _P, ctypes.POINTER(AppendOptions), ctypes.POINTER(AppendResult), ctypes.POINTER(Error)]
_lib.tl_table_replace_schema.argtypes = [_P, _P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, _P,
                                          ctypes.POINTER(AppendOptions), ctypes.POINTER(AppendResult),
                                          ctypes.POINTER(Error)]
_lib.tl_table_attachment.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_size_t),
                                     ctypes.POINTER(Error)]
_lib.tl_table_batches_committed.argtypes = [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                            ctypes.POINTER(ctypes.c_int), ctypes.POINTER(Error)]
_lib.tl_table_maintain.argtypes = [_P, _P, ctypes.POINTER(MaintainReport), ctypes.POINTER(Error)]
_lib.tl_table_info_get.argtypes = [_P, ctypes.POINTER(TableInfo), ctypes.POINTER(Error)]
_lib.tl_table_info_clear.argtypes = [ctypes.POINTER(TableInfo)]


class IndexCacheCounts(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in ("bytes", "limit_bytes", "indexes", "hits", "misses", "dropped")]


_lib.tl_lake_index_cache_stats.argtypes = [_P, ctypes.POINTER(IndexCacheCounts)]


class QueryStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ("files_total", "files_read", "row_groups_total", "row_groups_read", "bytes_read")] + [
                    ("truncated", ctypes.c_int)]


class SqlInput(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("stream", ctypes.c_void_p)]


class SqlOptions(ctypes.Structure):
    _fields_ = [
        ("namespace", ctypes.c_char_p),
        ("inputs", ctypes.POINTER(SqlInput)),
        ("inputs_len", ctypes.c_size_t),
        ("only_namespace", ctypes.c_int),
        ("max_rows", ctypes.c_int64),
        ("timeout_ms", ctypes.c_int64),
        ("settings", ctypes.POINTER(ctypes.c_char_p)),
    ]


_lib.tl_lake_sql.argtypes = [_P, ctypes.c_char_p, ctypes.c_char_p, _P, ctypes.POINTER(QueryStats), ctypes.POINTER(Error)]
_lib.tl_lake_latest.argtypes = [_P, ctypes.c_char_p, _P, ctypes.POINTER(Error)]
_lib.tl_lake_latest_report.argtypes = [_P, ctypes.c_char_p, _P, ctypes.c_char_p, ctypes.POINTER(Error)]
_lib.tl_lake_query.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(SqlOptions), _P, ctypes.POINTER(QueryStats), ctypes.POINTER(Error)]


class SettingInfo(ctypes.Structure):
    _fields_ = [(n, ctypes.c_char_p) for n in ("name", "values", "default_value", "levels", "description")]


_lib.tl_setting_at.argtypes = [ctypes.c_size_t]
_lib.tl_setting_at.restype = ctypes.POINTER(SettingInfo)
_lib.tl_table_properties.argtypes = [_P, ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)), ctypes.POINTER(Error)]
_lib.tl_table_set_properties.argtypes = [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(Error)]
_lib.tl_table_rollback.argtypes = [_P, ctypes.c_int64, ctypes.POINTER(Error)]


def settings():
    """The settings registry (tl_setting_at): a list of dicts."""
    out, i = [], 0
    while True:
        p = _lib.tl_setting_at(i)
        if not p:
            return out
        out.append({n: getattr(p.contents, n).decode() for n, _ in SettingInfo._fields_})
        i += 1

class Object(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("size", ctypes.c_uint64), ("modified_ms", ctypes.c_int64),
                ("etag", ctypes.c_char_p)]

    def as_dict(self):
        return {"key": self.key.decode(), "size": self.size, "modified_ms": self.modified_ms,
                "etag": self.etag.decode() if self.etag is not None else None}


_lib.tl_free.argtypes = [_P]
_lib.tl_lake_list_objects.argtypes = [_P, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.POINTER(Object)),
                                      ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(Error)]
_lib.tl_objects_free.argtypes = [ctypes.POINTER(Object), ctypes.c_size_t]
_lib.tl_lake_stat_object.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(Object), ctypes.POINTER(Error)]
_lib.tl_object_clear.argtypes = [ctypes.POINTER(Object)]
_lib.tl_lake_get_object.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_size_t),
                                    ctypes.POINTER(Error)]
_lib.tl_lake_put_object.argtypes = [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(Error)]
_lib.tl_lake_delete_object.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(Error)]
_lib.tl_object_writer_open.argtypes = [_P, ctypes.c_char_p, ctypes.POINTER(_P), ctypes.POINTER(Error)]
_lib.tl_object_writer_write.argtypes = [_P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(Error)]
_lib.tl_object_writer_finish.argtypes = [_P, ctypes.POINTER(Error)]
_lib.tl_object_writer_abort.argtypes = [_P]

# Status codes map onto exceptions as in the Python package.
_EXCEPTIONS = {1: KeyError, 2: FileExistsError, 3: ValueError, 7: MemoryError}


class TimelakeError(RuntimeError):
    pass


def _check(status, err):
    if status != 0:
        exc = _EXCEPTIONS.get(status, TimelakeError)
        raise exc(err.message.decode())


def _cstrings(items):
    if items is None:
        return None
    arr = (ctypes.c_char_p * (len(items) + 1))(*[s.encode() for s in items], None)
    return arr


def _pairs(mapping):
    if not mapping:
        return None
    flat = []
    for k, v in mapping.items():
        flat += [k, v]
    return _cstrings(flat)


def _stream_of(data):
    """Exports pyarrow data as a C ArrowArrayStream; returns (buffer, keepalive)."""
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        data = data.to_reader()
    buf = ctypes.create_string_buffer(ARROW_STREAM_SIZE)
    data._export_to_c(ctypes.addressof(buf))
    return buf


class Lake:
    def __init__(self, location, storage_options=None):
        self._h = _P()
        err = Error()
        self._opts = _pairs(storage_options)
        _check(_lib.tl_lake_open(str(location).encode(), self._opts, ctypes.byref(self._h), ctypes.byref(err)), err)

    def close(self):
        if self._h:
            _lib.tl_lake_close(self._h)
            self._h = _P()

    def __del__(self):
        self.close()

    @property
    def location(self):
        return _lib.tl_lake_location(self._h).decode()

    def create_table(self, name, schema, time_column=None, series_key=None, chunk=None, retention=None,
                     dedup=None, ingest_time=None, properties=None, partition_by=None):
        sbuf = ctypes.create_string_buffer(ARROW_SCHEMA_SIZE)
        schema._export_to_c(ctypes.addressof(sbuf))
        keys = _cstrings(series_key)
        props = _pairs(properties)
        parts = _cstrings(partition_by)
        opts = TableOptions(
            time_column.encode() if time_column else None,
            ctypes.cast(keys, ctypes.POINTER(ctypes.c_char_p)) if keys else None,
            len(series_key or []),
            chunk.encode() if chunk else None,
            retention.encode() if retention else None,
            -1 if dedup is None else int(dedup),
            -1 if ingest_time is None else int(ingest_time),
            ctypes.cast(props, ctypes.POINTER(ctypes.c_char_p)) if props else None,
            ctypes.cast(parts, ctypes.POINTER(ctypes.c_char_p)) if parts else None,
            len(partition_by or []),
        )
        h = _P()
        err = Error()
        try:
            _check(_lib.tl_lake_create_table(self._h, name.encode(), sbuf, ctypes.byref(opts), ctypes.byref(h), ctypes.byref(err)), err)
        finally:
            # The library borrows the schema: release it ourselves.
            pa.Schema._import_from_c(ctypes.addressof(sbuf))
        return Table(self, h)

    def table(self, name):
        h = _P()
        err = Error()
        _check(_lib.tl_lake_open_table(self._h, name.encode(), ctypes.byref(h), ctypes.byref(err)), err)
        return Table(self, h)

    def tables(self):
        out = ctypes.POINTER(ctypes.c_char_p)()
        err = Error()
        _check(_lib.tl_lake_list_tables(self._h, ctypes.byref(out), ctypes.byref(err)), err)
        names = []
        i = 0
        while out[i] is not None:
            names.append(out[i].decode())
            i += 1
        _lib.tl_strings_free(out)
        return names

    def drop_table(self, name):
        err = Error()
        _check(_lib.tl_lake_drop_table(self._h, name.encode(), ctypes.byref(err)), err)

    def sql(self, query, namespace="default", stats=None):
        """Runs SQL; returns a pyarrow.Table. A dict passed as stats receives the query stats."""
        err, qs = Error(), QueryStats()
        buf = ctypes.create_string_buffer(ARROW_STREAM_SIZE)
        ns = namespace.encode() if namespace is not None else None
        want = ctypes.byref(qs) if stats is not None else None  # stats cost footer reads
        _check(_lib.tl_lake_sql(self._h, query.encode(), ns, buf, want, ctypes.byref(err)), err)
        if stats is not None:  # without max_rows nothing is truncated
            stats.update({n: getattr(qs, n) for n, _ in QueryStats._fields_ if n != "truncated"})
        return pa.RecordBatchReader._import_from_c(ctypes.addressof(buf)).read_all()

    def query(self, query, namespace=None, inputs=None, only_namespace=False, max_rows=0, timeout_ms=0,
              stats=None, settings=None):
        """tl_lake_query: inputs maps names to pyarrow data (each handed over as a C stream,
        which the library consumes). Returns a pyarrow.Table; stats (a dict) gets the query
        stats, "truncated" among them."""
        inputs = inputs or {}
        streams = [_stream_of(data) for data in inputs.values()]
        arr = (SqlInput * max(1, len(inputs)))(*[
            SqlInput(name.encode(), ctypes.addressof(buf)) for name, buf in zip(inputs, streams)])
        session = _pairs(settings)
        opts = SqlOptions(namespace.encode() if namespace else None, arr if inputs else None, len(inputs),
                          int(only_namespace), max_rows, timeout_ms,
                          ctypes.cast(session, ctypes.POINTER(ctypes.c_char_p)) if session else None)
        err, qs = Error(), QueryStats()
        buf = ctypes.create_string_buffer(ARROW_STREAM_SIZE)
        want = ctypes.byref(qs) if stats is not None else None
        _check(_lib.tl_lake_query(self._h, query.encode(), ctypes.byref(opts), buf, want, ctypes.byref(err)), err)
        if stats is not None:
            stats.update({n: getattr(qs, n) for n, _ in QueryStats._fields_})
        return pa.RecordBatchReader._import_from_c(ctypes.addressof(buf)).read_all()

    def list_objects(self, prefix="", recursive=True):
        """Every object under prefix (recursive) or one level with folders: a list of dicts."""
        out, n, err = ctypes.POINTER(Object)(), ctypes.c_size_t(), Error()
        pre = prefix.encode() if prefix is not None else None
        _check(_lib.tl_lake_list_objects(self._h, pre, int(recursive), ctypes.byref(out), ctypes.byref(n),
                                         ctypes.byref(err)), err)
        items = [out[i].as_dict() for i in range(n.value)]
        _lib.tl_objects_free(out, n)
        return items

    def stat_object(self, key):
        o, err = Object(), Error()
        _check(_lib.tl_lake_stat_object(self._h, _key(key), ctypes.byref(o), ctypes.byref(err)), err)
        d = o.as_dict()
        _lib.tl_object_clear(ctypes.byref(o))
        return d

    def get_object(self, key):
        data, n, err = _P(), ctypes.c_size_t(), Error()
        _check(_lib.tl_lake_get_object(self._h, _key(key), ctypes.byref(data), ctypes.byref(n), ctypes.byref(err)), err)
        out = ctypes.string_at(data, n.value)
        _lib.tl_free(data)
        return out

    def put_object(self, key, data):
        err = Error()
        _check(_lib.tl_lake_put_object(self._h, _key(key), bytes(data), len(data), ctypes.byref(err)), err)

    def delete_object(self, key):
        err = Error()
        _check(_lib.tl_lake_delete_object(self._h, _key(key), ctypes.byref(err)), err)

    def object_writer(self, key):
        return ObjectWriter(self, key)

    def index_cache_stats(self):
        """tl_lake_index_cache_stats as a dict."""
        c = IndexCacheCounts()
        _lib.tl_lake_index_cache_stats(self._h, ctypes.byref(c))
        return {n: getattr(c, n) for n, _ in c._fields_}

    def latest(self, table):
        err = Error()
        buf = ctypes.create_string_buffer(ARROW_STREAM_SIZE)
        _check(_lib.tl_lake_latest(self._h, table.encode(), buf, ctypes.byref(err)), err)
        return pa.RecordBatchReader._import_from_c(ctypes.addressof(buf)).read_all()

    def latest_report(self, table):
        """(rows, warning): tl_lake_latest_report; warning is "" unless the index was bypassed."""
        err = Error()
        buf = ctypes.create_string_buffer(ARROW_STREAM_SIZE)
        report = ctypes.create_string_buffer(1024)  # tl_latest_report: one warning message
        _check(_lib.tl_lake_latest_report(self._h, table.encode(), buf, report, ctypes.byref(err)), err)
        return pa.RecordBatchReader._import_from_c(ctypes.addressof(buf)).read_all(), report.value.decode()


def _key(key):
    return key.encode() if isinstance(key, str) else key


class ObjectWriter:
    """tl_object_writer: write() chunks, then finish() or abort(); as a context
    manager it finishes on success and aborts on an exception."""

    def __init__(self, lake, key):
        self._lake = lake
        self._h = _P()
        err = Error()
        _check(_lib.tl_object_writer_open(lake._h, _key(key), ctypes.byref(self._h), ctypes.byref(err)), err)

    def write(self, data):
        err = Error()
        _check(_lib.tl_object_writer_write(self._h, bytes(data), len(data), ctypes.byref(err)), err)

    def finish(self):
        h, self._h = self._h, _P()
        err = Error()
        _check(_lib.tl_object_writer_finish(h, ctypes.byref(err)), err)

    def abort(self):
        if self._h:
            _lib.tl_object_writer_abort(self._h)
            self._h = _P()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        else:
            self.abort()

    def __del__(self):
        self.abort()


class Table:
    def __init__(self, lake, handle):
        self._lake = lake  # keeps the lake open while the table lives
        self._h = handle

    def close(self):
        if self._h:
            _lib.tl_table_close(self._h)
            self._h = _P()

    def __del__(self):
        self.close()

    name = property(lambda self: _lib.tl_table_name(self._h).decode())
    location = property(lambda self: _lib.tl_table_location(self._h).decode())
    version = property(lambda self: _lib.tl_table_version(self._h))

    @property
    def schema(self):
        buf = ctypes.create_string_buffer(ARROW_SCHEMA_SIZE)
        err = Error()
        _check(_lib.tl_table_schema(self._h, buf, ctypes.byref(err)), err)
        return pa.Schema._import_from_c(ctypes.addressof(buf))

    def refresh(self):
        err = Error()
        _check(_lib.tl_table_refresh(self._h, ctypes.byref(err)), err)

    def properties(self):
        """The table's properties at this handle's version, as a dict."""
        out = ctypes.POINTER(ctypes.c_char_p)()
        err = Error()
        _check(_lib.tl_table_properties(self._h, ctypes.byref(out), ctypes.byref(err)), err)
        props, i = {}, 0
        while out[i] is not None:
            props[out[i].decode()] = out[i + 1].decode()
            i += 2
        _lib.tl_strings_free(out)
        return props

    def set_properties(self, changes):
        """tl_table_set_properties: changes maps keys to values, None removes."""
        flat = []
        for k, v in changes.items():
            flat += [k.encode(), None if v is None else v.encode()]
        arr = (ctypes.c_char_p * (len(flat) + 1))(*flat, None)
        err = Error()
        _check(_lib.tl_table_set_properties(self._h, arr, ctypes.byref(err)), err)

    def rollback(self, snapshot_id):
        """tl_table_rollback: snapshot_id made current again."""
        err = Error()
        _check(_lib.tl_table_rollback(self._h, snapshot_id, ctypes.byref(err)), err)

    def batches_committed(self, ids):
        """[bool] per id: committed as a batch id (tl_table_batches_committed)."""
        arr = _cstrings(ids)
        out = (ctypes.c_int * max(len(ids), 1))()
        err = Error()
        _check(_lib.tl_table_batches_committed(self._h, arr, len(ids), out, ctypes.byref(err)), err)
        return [bool(out[i]) for i in range(len(ids))]

    def append(self, data, batch_id=None, maintain=None, batch_ids=None, expect_version=None, summary=None,
               attachments=None, replace=False, schema=None, partition_by=None):
        """tl_table_append (tl_table_replace with replace=True; tl_table_replace_schema
        with a new pyarrow schema and partition_by list too). summary: a dict;
        attachments: a dict name -> bytes."""
        stream = _stream_of(data)
        opts = AppendOptions(batch_id.encode() if batch_id else None, -1 if maintain is None else int(maintain))
        keep = []
        if batch_ids is not None:
            opts.batch_ids = _cstrings(batch_ids)
            opts.n_batch_ids = len(batch_ids)
        if expect_version is not None:
            opts.expect_version = expect_version
        if summary is not None:
            keep.append(_pairs(summary))
            opts.summary = ctypes.cast(keep[-1], ctypes.POINTER(ctypes.c_char_p)) if summary else None
        if attachments:
            arr = (Attachment * len(attachments))(*[Attachment(_key(k), bytes(v), len(v)) for k, v in attachments.items()])
            keep.append(arr)
            opts.attachments = arr
            opts.attachments_len = len(attachments)
        res = AppendResult()
        err = Error()
        if schema is not None:
            sbuf = ctypes.create_string_buffer(ARROW_SCHEMA_SIZE)
            schema._export_to_c(ctypes.addressof(sbuf))
            parts = _cstrings(partition_by or [])
            try:
                _check(_lib.tl_table_replace_schema(self._h, sbuf, parts, len(partition_by or []), stream,
                                                    ctypes.byref(opts), ctypes.byref(res), ctypes.byref(err)), err)
            finally:
                pa.Schema._import_from_c(ctypes.addressof(sbuf))  # borrowed: release it ourselves
        else:
            call = _lib.tl_table_replace if replace else _lib.tl_table_append
            _check(call(self._h, stream, ctypes.byref(opts), ctypes.byref(res), ctypes.byref(err)), err)
        out = {
            "rows": res.rows, "files": res.files, "bytes": res.bytes, "version": res.version,
            "commit_ms": res.commit_ms, "attempts": res.attempts, "duplicate": bool(res.duplicate),
        }
        if res.maintained:
            out["maintenance"] = res.maintenance.as_dict()
        if res.maintenance_error:
            out["maintenance_error"] = res.maintenance_error.decode()
        if res.warning:
            out["warning"] = res.warning.decode()
        return out

    def replace(self, data, **kwargs):
        return self.append(data, replace=True, **kwargs)

    def attachment(self, name):
        data, n, err = _P(), ctypes.c_size_t(), Error()
        _check(_lib.tl_table_attachment(self._h, _key(name), ctypes.byref(data), ctypes.byref(n), ctypes.byref(err)), err)
        out = ctypes.string_at(data, n.value)
        _lib.tl_free(data)
        return out

    def maintain(self, compact=True, retention=True, expire=True, rollups=True):
        opts = MaintainOptions(int(compact), int(retention), int(expire), int(rollups))
        rep = MaintainReport()
        err = Error()
        _check(_lib.tl_table_maintain(self._h, ctypes.byref(opts), ctypes.byref(rep), ctypes.byref(err)), err)
        return rep.as_dict()

    def info(self):
        info = TableInfo()
        err = Error()
        _check(_lib.tl_table_info_get(self._h, ctypes.byref(info), ctypes.byref(err)), err)
        dec = lambda s: s.decode() if s is not None else None
        def strings(arr):
            out, i = [], 0
            while arr and arr[i] is not None:
                out.append(arr[i].decode())
                i += 1
            return out

        keys = strings(info.series_key)
        out = {
            "name": dec(info.name), "version": info.version, "location": dec(info.location),
            "time_column": dec(info.time_column), "series_key": keys, "chunk": dec(info.chunk),
            "dedup": bool(info.dedup), "ingest_time_column": dec(info.ingest_time_column),
            "rows": info.rows, "files": info.files, "bytes": info.bytes, "snapshots": info.snapshots,
            "manifests": info.manifests, "last_value_index": dec(info.last_value_index),
            "partition_by": strings(info.partition_by), "snapshot_id": info.snapshot_id,
            "last_commit_ms": info.last_commit_ms,
        }
        _lib.tl_table_info_clear(ctypes.byref(info))
        return out


# ---- Reading CSV / TSV / NDJSON into typed columns (tl_reader) ----

class ReadColumn(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("path", ctypes.c_char_p), ("type", ctypes.c_char_p)]


class ReadOptions(ctypes.Structure):
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("columns", ctypes.POINTER(ReadColumn)),
        ("columns_len", ctypes.c_size_t),
        ("lenient", ctypes.c_int),
        ("batch_rows", ctypes.c_int64),
    ]


class ReadProblem(ctypes.Structure):
    _fields_ = [("line", ctypes.c_int64), ("column", ctypes.c_char_p), ("message", ctypes.c_char_p)]


class ReadReport(ctypes.Structure):
    _fields_ = [
        ("lines", ctypes.c_int64),
        ("rows", ctypes.c_int64),
        ("lines_skipped", ctypes.c_int64),
        ("values_nulled", ctypes.c_int64),
        ("problems", ctypes.POINTER(ReadProblem)),
        ("problems_len", ctypes.c_size_t),
    ]


_lib.tl_reader_open.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ReadOptions), ctypes.POINTER(_P), ctypes.POINTER(Error)]
_lib.tl_reader_stream.argtypes = [_P, _P, ctypes.POINTER(Error)]
_lib.tl_reader_report.argtypes = [_P, ctypes.POINTER(ReadReport)]
_lib.tl_reader_close.argtypes = [_P]


def read(data, columns, name=None, format=None, lenient=True, batch_rows=0):
    """Reads bytes with tl_reader. columns: (name, type) or (name, type, path) tuples.
    Returns (pyarrow.Table, report dict with "problems" as (line, column, message))."""
    cols = (ReadColumn * len(columns))(*[
        ReadColumn(c[0].encode(), c[2].encode() if len(c) > 2 and c[2] is not None else None, c[1].encode())
        for c in columns])
    opts = ReadOptions(format.encode() if format else None, name.encode() if name else None,
                       cols, len(columns), int(lenient), batch_rows)
    h, err = _P(), Error()
    _check(_lib.tl_reader_open(data, len(data), ctypes.byref(opts), ctypes.byref(h), ctypes.byref(err)), err)
    try:
        buf = ctypes.create_string_buffer(ARROW_STREAM_SIZE)
        _check(_lib.tl_reader_stream(h, buf, ctypes.byref(err)), err)
        reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(buf))
        try:
            table = reader.read_all()
        except pa.ArrowException as e:
            raise ValueError(str(e)) from None
        finally:
            reader.close()
        rep = ReadReport()
        _lib.tl_reader_report(h, ctypes.byref(rep))
        report = {n: getattr(rep, n) for n in ("lines", "rows", "lines_skipped", "values_nulled")}
        report["problems"] = [
            (rep.problems[i].line, rep.problems[i].column.decode() if rep.problems[i].column else None,
             rep.problems[i].message.decode()) for i in range(rep.problems_len)]
        return table, report
    finally:
        _lib.tl_reader_close(h)


# ---- Which dedup keys a table already holds (tl_table_filter_new_keys) ----

_lib.tl_table_filter_new_keys.argtypes = [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, _P, _P,
                                          ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(Error)]


def filter_new_keys(table, data, columns):
    """The rows of data (pyarrow) whose keys the table does not hold; returns (pyarrow.Table, dropped)."""
    stream = _stream_of(data)
    cols = _cstrings(columns)
    buf = ctypes.create_string_buffer(ARROW_STREAM_SIZE)
    dropped, err = ctypes.c_int64(), Error()
    _check(_lib.tl_table_filter_new_keys(table._h, ctypes.cast(cols, ctypes.POINTER(ctypes.c_char_p)), len(columns),
                                         stream, buf, ctypes.byref(dropped), ctypes.byref(err)), err)
    return pa.RecordBatchReader._import_from_c(ctypes.addressof(buf)).read_all(), dropped.value
