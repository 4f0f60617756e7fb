/* The library's result structs as the seed's dicts. */
#include "tlpy.h"

/* Sets d[key] = value, stealing value; -1 on failure. */
static int put(PyObject *d, const char *key, PyObject *value)
{
    if (value == NULL) return -1;
    int rc = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return rc;
}

static PyObject *str_or_none(const char *s)
{
    if (s == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(s);
}

static PyObject *string_list(char *const *strings)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && strings && strings[i]; i++) {
        PyObject *s = PyUnicode_FromString(strings[i]);
        if (s == NULL || PyList_Append(list, s) < 0) Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

static PyObject *finish(PyObject *d, int failed)
{
    if (!failed) return d;
    Py_DECREF(d);
    return NULL;
}

PyObject *tlpy_maintain_dict(const tl_maintain_report *r)
{
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    int bad = put(d, "partitions_compacted", PyLong_FromLongLong(r->partitions_compacted)) ||
              put(d, "files_rewritten", PyLong_FromLongLong(r->files_rewritten)) ||
              put(d, "files_written", PyLong_FromLongLong(r->files_written)) ||
              put(d, "rows_rewritten", PyLong_FromLongLong(r->rows_rewritten)) ||
              put(d, "duplicates_removed", PyLong_FromLongLong(r->duplicates_removed)) ||
              put(d, "partitions_dropped", PyLong_FromLongLong(r->partitions_dropped)) ||
              put(d, "snapshots_expired", PyLong_FromLongLong(r->snapshots_expired)) ||
              put(d, "objects_deleted", PyLong_FromLongLong(r->objects_deleted)) ||
              put(d, "rollups_refreshed", PyLong_FromLongLong(r->rollups_refreshed)) ||
              put(d, "rollup_rows", PyLong_FromLongLong(r->rollup_rows)) ||
              put(d, "seconds", PyFloat_FromDouble(r->seconds));
    if (!bad && r->warning[0]) bad = put(d, "warning", PyUnicode_FromString(r->warning));
    return finish(d, bad);
}

PyObject *tlpy_append_dict(const tl_append_result *r)
{
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    int bad = put(d, "rows", PyLong_FromLongLong(r->rows)) ||
              put(d, "files", PyLong_FromLongLong(r->files)) ||
              put(d, "bytes", PyLong_FromLongLong(r->bytes)) ||
              put(d, "version", PyLong_FromLongLong(r->version)) ||
              put(d, "commit_ms", PyFloat_FromDouble(r->commit_ms)) ||
              put(d, "attempts", PyLong_FromLong(r->attempts)) ||
              put(d, "duplicate", PyBool_FromLong(r->duplicate));
    /* As the seed says: "maintenance" only when inline maintenance did work. */
    if (!bad && r->maintained) bad = put(d, "maintenance", tlpy_maintain_dict(&r->maintenance));
    if (!bad && r->maintenance_error[0])
        bad = put(d, "maintenance_error", PyUnicode_FromString(r->maintenance_error));
    if (!bad && r->warning[0]) bad = put(d, "warning", PyUnicode_FromString(r->warning));
    return finish(d, bad);
}

/* Flat, with the reference's keys (see the README's Python section). */
PyObject *tlpy_info_dict(const tl_table_info *info)
{
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    int bad = put(d, "name", str_or_none(info->name)) ||
              put(d, "version", PyLong_FromLongLong(info->version)) ||
              put(d, "location", str_or_none(info->location)) ||
              put(d, "time_column", str_or_none(info->time_column)) ||
              put(d, "series_key", string_list(info->series_key)) ||
              put(d, "chunk", str_or_none(info->chunk)) ||
              put(d, "dedup", PyBool_FromLong(info->dedup)) ||
              put(d, "ingest_time_column", str_or_none(info->ingest_time_column)) ||
              put(d, "rows", PyLong_FromLongLong(info->rows)) ||
              put(d, "files", PyLong_FromLongLong(info->files)) ||
              put(d, "bytes", PyLong_FromLongLong(info->bytes)) ||
              put(d, "snapshots", PyLong_FromLongLong(info->snapshots)) ||
              put(d, "manifests", PyLong_FromLongLong(info->manifests)) ||
              put(d, "last_value_index", str_or_none(info->last_value_index));
    return finish(d, bad);
}

/* 0 as None: the library's "none" for snapshot ids and times. */
static PyObject *int_or_none(int64_t v)
{
    if (v == 0) Py_RETURN_NONE;
    return PyLong_FromLongLong(v);
}

PyObject *tlpy_upgrade_dict(const tl_upgrade_report *r)
{
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    int bad = put(d, "steps", string_list(r->steps)) ||
              put(d, "version_before", PyLong_FromLongLong(r->version_before)) ||
              put(d, "snapshot_before", int_or_none(r->snapshot_before)) ||
              put(d, "keep_snapshots_until_ms", int_or_none(r->keep_snapshots_until_ms));
    return finish(d, bad);
}

PyObject *tlpy_index_cache_dict(const tl_index_cache_counts *c)
{
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    int bad = put(d, "bytes", PyLong_FromLongLong(c->bytes)) ||
              put(d, "limit_bytes", PyLong_FromLongLong(c->limit_bytes)) ||
              put(d, "indexes", PyLong_FromLongLong(c->indexes)) ||
              put(d, "hits", PyLong_FromLongLong(c->hits)) ||
              put(d, "misses", PyLong_FromLongLong(c->misses)) ||
              put(d, "dropped", PyLong_FromLongLong(c->dropped));
    return finish(d, bad);
}

PyObject *tlpy_cache_dict(const tl_cache_counts *c)
{
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    int bad = put(d, "memory_hits", PyLong_FromLongLong(c->memory_hits)) ||
              put(d, "disk_hits", PyLong_FromLongLong(c->disk_hits)) ||
              put(d, "misses", PyLong_FromLongLong(c->misses)) ||
              put(d, "bytes_fetched", PyLong_FromLongLong(c->bytes_fetched));
    return finish(d, bad);
}
