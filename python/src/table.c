/* timelake.Table: one table handle, with the seed's properties and methods.
 * Every library call runs with the GIL released and the table's lock held, so
 * threads appending to different tables run in parallel. */
#include "tlpy.h"

#include <string.h>

PyObject *tlpy_table_type;

PyObject *tlpy_table_new(PyObject *lake, tl_table *table)
{
    PyTypeObject *type = (PyTypeObject *)tlpy_table_type;
    tlpy_table *self = (tlpy_table *)((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
    if (self == NULL) {
        tl_table_close(table);
        return NULL;
    }
    self->table = table;
    Py_INCREF(lake);
    self->lake = lake; /* the lake handle must outlive the table handle */
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static PyObject *table_new_refused(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    (void)type, (void)args, (void)kwargs;
    PyErr_SetString(PyExc_TypeError,
                    "Table objects come from Lake.create_table() and Lake.table()");
    return NULL;
}

static void table_dealloc(PyObject *obj)
{
    tlpy_table *self = (tlpy_table *)obj;
    tl_table_close(self->table);
    Py_XDECREF(self->lake);
    if (self->lock) PyThread_free_lock(self->lock);
    PyTypeObject *type = Py_TYPE(obj);
    ((freefunc)PyType_GetSlot(type, Py_tp_free))(obj);
    Py_DECREF(type);
}

/* ---- properties (read under the lock: refresh() replaces the strings) ---- */

static PyObject *table_name(PyObject *obj, void *closure)
{
    (void)closure;
    tlpy_table *self = (tlpy_table *)obj;
    tlpy_lock(self->lock);
    PyObject *out = PyUnicode_FromString(tl_table_name(self->table));
    PyThread_release_lock(self->lock);
    return out;
}

static PyObject *table_location(PyObject *obj, void *closure)
{
    (void)closure;
    tlpy_table *self = (tlpy_table *)obj;
    tlpy_lock(self->lock);
    PyObject *out = PyUnicode_FromString(tl_table_location(self->table));
    PyThread_release_lock(self->lock);
    return out;
}

static PyObject *table_version(PyObject *obj, void *closure)
{
    (void)closure;
    tlpy_table *self = (tlpy_table *)obj;
    tlpy_lock(self->lock);
    PyObject *out = PyLong_FromLongLong(tl_table_version(self->table));
    PyThread_release_lock(self->lock);
    return out;
}

static PyObject *table_schema(PyObject *obj, void *closure)
{
    (void)closure;
    tlpy_table *self = (tlpy_table *)obj;
    struct ArrowSchema schema;
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_schema(self->table, &schema, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    return tlpy_to_pyarrow("schema", tlpy_arrow_data_from_schema(&schema));
}

static PyObject *table_repr(PyObject *obj)
{
    tlpy_table *self = (tlpy_table *)obj;
    tlpy_lock(self->lock);
    PyObject *out = PyUnicode_FromFormat("Table(%s, v%lld)", tl_table_name(self->table),
                                         (long long)tl_table_version(self->table));
    PyThread_release_lock(self->lock);
    return out;
}

/* ---- methods ---- */

static PyObject *table_append(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "batch_id", "maintain", NULL};
    PyObject *data, *batch_id = Py_None, *maintain = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:append", kwlist, &data, &batch_id,
                                     &maintain))
        return NULL;
    tl_append_options o = {.batch_id = NULL, .maintain = -1};
    if (tlpy_utf8(batch_id, "batch_id", 1, &o.batch_id) < 0) return NULL;
    if (tlpy_bool(maintain, "maintain", 1, &o.maintain) < 0) return NULL;
    struct ArrowArrayStream stream;
    if (tlpy_stream_from_object(data, &stream) < 0) return NULL;
    tlpy_table *self = (tlpy_table *)obj;
    tl_append_result r;
    memset(&r, 0, sizeof r);
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_append(self->table, &stream, &o, &r, &err); /* consumes stream */
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    return st == TL_OK ? tlpy_append_dict(&r) : tlpy_raise(&err);
}

/* The table's partition_by entries as they are (info), for a replace that
 * changes the columns only; *keep owns them (free with tl_table_info_clear). */
static tl_status current_partition_by(tl_table *t, tl_table_info *keep, size_t *n, tl_error *err)
{
    memset(keep, 0, sizeof *keep);
    tl_status st = tl_table_info_get(t, keep, err);
    if (st != TL_OK) return st;
    for (*n = 0; keep->partition_by[*n]; (*n)++) {
    }
    return TL_OK;
}

/* What replace() hands the library once its arguments are read. */
typedef struct {
    PyObject *schema_cap, *parts_keep;
    struct ArrowSchema *schema;     /* NULL: the columns stay (tl_table_replace) */
    struct ArrowSchema data_schema; /* the data's, when no schema was given */
    const char **parts;
    size_t n_parts;
    int keep_parts; /* partition_by was None: the table's own */
} replace_args;

static void replace_args_clear(replace_args *a)
{
    Py_XDECREF(a->schema_cap);
    Py_XDECREF(a->parts_keep);
    PyMem_Free(a->parts);
    if (a->data_schema.release) a->data_schema.release(&a->data_schema);
}

/* The library call: the rows only, or the rows, columns and partitioning. */
static tl_status run_replace(tl_table *t, replace_args *a, struct ArrowArrayStream *stream,
                             const tl_append_options *o, tl_append_result *r, tl_error *err)
{
    if (a->schema == NULL) return tl_table_replace(t, stream, o, r, err);
    tl_table_info info;
    memset(&info, 0, sizeof info);
    const char *const *parts = a->parts;
    size_t n = a->n_parts;
    tl_status st = TL_OK;
    if (a->keep_parts && (st = current_partition_by(t, &info, &n, err)) == TL_OK)
        parts = (const char *const *)info.partition_by;
    if (st == TL_OK)
        st = tl_table_replace_schema(t, a->schema, parts, n, stream, o, r, err);
    else
        stream->release(stream);
    if (a->keep_parts) tl_table_info_clear(&info);
    return st;
}

static PyObject *table_replace(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "schema", "partition_by", "batch_id", NULL};
    PyObject *data, *schema = Py_None, *partition_by = Py_None, *batch_id = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOO:replace", kwlist, &data, &schema,
                                     &partition_by, &batch_id))
        return NULL;
    replace_args a = {0};
    a.keep_parts = partition_by == Py_None;
    tl_append_options o = {.batch_id = NULL, .maintain = -1};
    struct ArrowArrayStream stream = {0};
    PyObject *result = NULL;
    if (tlpy_utf8(batch_id, "batch_id", 1, &o.batch_id) < 0 ||
        tlpy_string_list(partition_by, "partition_by", &a.parts, &a.n_parts, &a.parts_keep) < 0 ||
        (schema != Py_None && (a.schema_cap = tlpy_schema_capsule(schema, &a.schema)) == NULL) ||
        tlpy_stream_from_object(data, &stream) < 0)
        goto done;
    if (a.schema == NULL && !a.keep_parts) { /* new partitioning, the data's columns */
        if (stream.get_schema(&stream, &a.data_schema) != 0) {
            const char *why = stream.get_last_error(&stream);
            PyErr_Format(PyExc_ValueError, "cannot read the schema of the data: %s",
                         why ? why : "unknown error");
            stream.release(&stream);
            goto done;
        }
        a.schema = &a.data_schema;
    }
    tlpy_table *self = (tlpy_table *)obj;
    tl_append_result r;
    memset(&r, 0, sizeof r);
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = run_replace(self->table, &a, &stream, &o, &r, &err); /* consumes stream */
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    result = st == TL_OK ? tlpy_append_dict(&r) : tlpy_raise(&err);
done:
    replace_args_clear(&a);
    return result;
}

static PyObject *table_maintain(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"compact", "retention", "expire", "rollups", NULL};
    tl_maintain_options o = {.compact = 1, .retention = 1, .expire = 1, .rollups = 1};
    PyObject *compact = NULL, *retention = NULL, *expire = NULL, *rollups = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOO:maintain", kwlist, &compact, &retention,
                                     &expire, &rollups) ||
        tlpy_bool(compact, "compact", 0, &o.compact) < 0 ||
        tlpy_bool(retention, "retention", 0, &o.retention) < 0 ||
        tlpy_bool(expire, "expire", 0, &o.expire) < 0 ||
        tlpy_bool(rollups, "rollups", 0, &o.rollups) < 0)
        return NULL;
    tlpy_table *self = (tlpy_table *)obj;
    tl_maintain_report r;
    memset(&r, 0, sizeof r);
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_maintain(self->table, &o, &r, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    return st == TL_OK ? tlpy_maintain_dict(&r) : tlpy_raise(&err);
}

static PyObject *table_info(PyObject *obj, PyObject *unused)
{
    (void)unused;
    tlpy_table *self = (tlpy_table *)obj;
    tl_table_info info;
    memset(&info, 0, sizeof info);
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_info_get(self->table, &info, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    PyObject *out = tlpy_info_dict(&info);
    tl_table_info_clear(&info);
    return out;
}

static PyObject *table_set_properties(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"properties", NULL};
    PyObject *properties, *keep = NULL;
    const char **changes = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:set_properties", kwlist, &properties) ||
        properties == Py_None ||
        tlpy_string_changes(properties, "properties", &changes, &keep) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "properties must be a mapping, not None");
        return NULL;
    }
    tlpy_table *self = (tlpy_table *)obj;
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_set_properties(self->table, changes, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    Py_XDECREF(keep);
    if (st != TL_OK) return tlpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *table_rollback(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"snapshot_id", NULL};
    long long id;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L:rollback", kwlist, &id)) return NULL;
    tlpy_table *self = (tlpy_table *)obj;
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_rollback(self->table, (int64_t)id, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *table_upgrade(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"dry_run", "compact", "keep_snapshots", NULL};
    tl_upgrade_options o = {.dry_run = 0, .compact = 1};
    PyObject *dry_run = NULL, *compact = NULL, *keep = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOO:upgrade", kwlist, &dry_run, &compact,
                                     &keep) ||
        tlpy_bool(dry_run, "dry_run", 0, &o.dry_run) < 0 ||
        tlpy_bool(compact, "compact", 0, &o.compact) < 0 ||
        tlpy_utf8(keep, "keep_snapshots", 0, &o.keep_snapshots) < 0)
        return NULL;
    tlpy_table *self = (tlpy_table *)obj;
    tl_upgrade_report r;
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_upgrade(self->table, &o, &r, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    PyObject *out = tlpy_upgrade_dict(&r);
    tl_upgrade_report_clear(&r);
    return out;
}

static PyObject *table_refresh(PyObject *obj, PyObject *unused)
{
    (void)unused;
    tlpy_table *self = (tlpy_table *)obj;
    tl_error err;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    tl_status st = tl_table_refresh(self->table, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    Py_RETURN_NONE;
}

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

static PyMethodDef table_methods[] = {
    {"append", FN(table_append), KW,
     "append(data, batch_id=None, maintain=None)\n--\n\n"
     "Appends Arrow data (pyarrow Table, RecordBatch or RecordBatchReader, polars DataFrame, or "
     "any __arrow_c_stream__ object) as one commit. Returns a dict: rows, files, bytes, version, "
     "commit_ms, attempts, duplicate, and maintenance when inline maintenance ran. A batch_id "
     "already committed writes nothing and reports duplicate=True. maintain overrides the "
     "table's auto-maintain setting. Raises ValueError when the data does not fit the table."},
    {"replace", FN(table_replace), KW,
     "replace(data, schema=None, partition_by=None, batch_id=None)\n--\n\n"
     "Replaces every row of the table with data, in one commit: readers see the old table or "
     "the new one, never a mix or a missing table. With schema (a pyarrow schema) the table's "
     "columns become those (a column keeping its name and type, or widening it, continues; the "
     "others are new; the ones left out are dropped), and with partition_by (a list such as "
     "['region', 'month(day)'], besides the time partition) its partitioning; either alone "
     "takes the other from the data's columns and the table's partitioning. Earlier snapshots "
     "stay readable under their own columns. Returns the dict append returns. Raises "
     "ValueError, with nothing written, for a bad schema or partition_by or rows that do not "
     "fit."},
    {"maintain", FN(table_maintain), KW,
     "maintain(compact=True, retention=True, expire=True, rollups=True)\n--\n\n"
     "Runs retention, compaction, the refresh of the table's rollups and snapshot expiry. "
     "Returns a dict: partitions_compacted, files_rewritten, files_written, rows_rewritten, "
     "duplicates_removed, partitions_dropped, snapshots_expired, objects_deleted, "
     "rollups_refreshed, rollup_rows, seconds."},
    {"upgrade", FN(table_upgrade), KW,
     "upgrade(dry_run=False, compact=True, keep_snapshots='7d')\n--\n\n"
     "Brings the table to the current format: format version, last-value index, sorted and "
     "compacted files, head object; each step a commit. No snapshot expires for "
     "keep_snapshots, so rollback(report['snapshot_before']) undoes it. Returns a dict: steps, "
     "version_before, snapshot_before, keep_snapshots_until_ms. dry_run only reports the "
     "steps."},
    {"set_properties", FN(table_set_properties), KW,
     "set_properties(properties)\n--\n\n"
     "Changes table settings, such as {'read_dedup': 'false'}, in one commit of new metadata "
     "(no new snapshot); None returns one to its default. Settings are named with or without "
     "the 'timelake.' prefix, with dashes or underscores; other keys with a dot are Iceberg "
     "properties. Raises ValueError for an unknown setting, a bad value or one fixed at "
     "creation."},
    {"rollback", FN(table_rollback), KW,
     "rollback(snapshot_id)\n--\n\n"
     "Makes an earlier snapshot current again; later snapshots stay in the history until they "
     "expire. Raises KeyError when the table has no such snapshot."},
    {"info", table_info, METH_NOARGS,
     "info()\n--\n\nContract, size and layout of this version, as a flat dict: name, version, "
     "location, time_column, series_key, chunk, dedup, ingest_time_column, rows, files, bytes, "
     "snapshots, manifests, last_value_index."},
    {"refresh", table_refresh, METH_NOARGS,
     "refresh()\n--\n\nReloads the latest committed version."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef table_getset[] = {
    {"name", table_name, NULL, "The full name, \"namespace.table\".", NULL},
    {"location", table_location, NULL, "The table's root URL.", NULL},
    {"version", table_version, NULL, "The metadata version this handle is at.", NULL},
    {"schema", table_schema, NULL, "The table's schema, as a pyarrow.Schema.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot table_slots[] = {
    {Py_tp_new, table_new_refused},
    {Py_tp_dealloc, table_dealloc},
    {Py_tp_repr, table_repr},
    {Py_tp_methods, table_methods},
    {Py_tp_getset, table_getset},
    {Py_tp_doc, "A Timelake table. Methods that commit (append, maintain) advance the handle to "
                "the new version."},
    {0, NULL}};

static PyType_Spec table_spec = {"timelake.Table", sizeof(tlpy_table), 0, Py_TPFLAGS_DEFAULT,
                                 table_slots};

int tlpy_table_type_init(PyObject *module)
{
    tlpy_table_type = PyType_FromSpec(&table_spec);
    if (tlpy_table_type == NULL) return -1;
    Py_INCREF(tlpy_table_type);
    return PyModule_AddObject(module, "Table", tlpy_table_type);
}
