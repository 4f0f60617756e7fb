/* timelake.Lake: a warehouse, with the seed's methods. Every library call runs
 * with the GIL released and the lake's lock held. */
#include "tlpy.h"

PyObject *tlpy_lake_type;

static PyObject *lake_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"location", "storage_options", "settings", NULL};
    PyObject *location, *options = Py_None, *settings = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO:Lake", kwlist, &location, &options,
                                     &settings))
        return NULL;
    PyObject *path = PyOS_FSPath(location), *keep = NULL, *keep_settings = NULL;
    const char *loc, **pairs, **session;
    tlpy_lake *self = NULL;
    if (path == NULL || tlpy_utf8(path, "location", 0, &loc) < 0 ||
        tlpy_string_pairs(options, "storage_options", &pairs, &keep) < 0 ||
        tlpy_string_pairs(settings, "settings", &session, &keep_settings) < 0)
        goto done;
    self = (tlpy_lake *)((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
    if (self == NULL) goto done;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_CLEAR(self);
        PyErr_NoMemory();
        goto done;
    }
    tl_error err;
    tl_status st;
    PyThreadState *ts = PyEval_SaveThread();
    st = tl_lake_open(loc, pairs, &self->lake, &err);
    if (st == TL_OK && session) st = tl_lake_set_settings(self->lake, session, &err);
    PyEval_RestoreThread(ts);
    if (st != TL_OK) {
        Py_CLEAR(self);
        tlpy_raise(&err);
    }
done:
    Py_XDECREF(path);
    Py_XDECREF(keep);
    Py_XDECREF(keep_settings);
    return (PyObject *)self;
}

static void lake_dealloc(PyObject *obj)
{
    tlpy_lake *self = (tlpy_lake *)obj;
    tl_lake_close(self->lake); /* Tables hold a reference, so none is open now. */
    if (self->lock) PyThread_free_lock(self->lock);
    PyTypeObject *type = Py_TYPE(obj);
    ((freefunc)PyType_GetSlot(type, Py_tp_free))(obj);
    Py_DECREF(type);
}

static PyObject *lake_location(PyObject *obj, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(tl_lake_location(((tlpy_lake *)obj)->lake));
}

static PyObject *lake_repr(PyObject *obj)
{
    return PyUnicode_FromFormat("Lake(\"%s\")", tl_lake_location(((tlpy_lake *)obj)->lake));
}

/* ---- create_table ---- */

typedef struct {
    PyObject *keys_keep, *props_keep, *schema_cap;
    const char **keys;
} create_args;

static void create_args_clear(create_args *a)
{
    Py_XDECREF(a->keys_keep);
    Py_XDECREF(a->props_keep);
    Py_XDECREF(a->schema_cap);
    PyMem_Free(a->keys);
}

static PyObject *lake_create_table(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name",      "schema", "time_column", "series_key",  "chunk",
                             "retention", "dedup",  "properties",  "ingest_time", NULL};
    PyObject *name, *schema, *time_column = Py_None, *series_key = Py_None, *chunk = Py_None;
    PyObject *retention = Py_None, *dedup = Py_None, *properties = Py_None, *ingest = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OOOOOO$O:create_table", kwlist, &name,
                                     &schema, &time_column, &series_key, &chunk, &retention, &dedup,
                                     &properties, &ingest))
        return NULL;
    tlpy_lake *self = (tlpy_lake *)obj;
    create_args a = {0};
    tl_table_options o = {0};
    const char *cname, *const *props = NULL;
    struct ArrowSchema *c_schema;
    PyObject *result = NULL;
    if (tlpy_utf8(name, "name", 0, &cname) < 0 ||
        tlpy_utf8(time_column, "time_column", 1, &o.time_column) < 0 ||
        tlpy_utf8(chunk, "chunk", 1, &o.chunk) < 0 ||
        tlpy_utf8(retention, "retention", 1, &o.retention) < 0 ||
        tlpy_string_list(series_key, "series_key", &a.keys, &o.series_key_len, &a.keys_keep) < 0 ||
        tlpy_string_pairs(properties, "properties", (const char ***)&props, &a.props_keep) < 0 ||
        tlpy_bool(dedup, "dedup", 1, &o.dedup) < 0 ||
        tlpy_bool(ingest, "ingest_time", 1, &o.ingest_time) < 0 ||
        (a.schema_cap = tlpy_schema_capsule(schema, &c_schema)) == NULL)
        goto done;
    o.series_key = a.keys;
    o.properties = props;
    tl_table *table = NULL;
    tl_error err;
    tl_status st;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    st = tl_lake_create_table(self->lake, cname, c_schema, &o, &table, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    result = st == TL_OK ? tlpy_table_new(obj, table) : tlpy_raise(&err);
done:
    create_args_clear(&a);
    return result;
}

/* ---- the other methods ---- */

static PyObject *lake_table(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name", NULL};
    PyObject *name;
    const char *cname;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:table", kwlist, &name) ||
        tlpy_utf8(name, "name", 0, &cname) < 0)
        return NULL;
    tlpy_lake *self = (tlpy_lake *)obj;
    tl_table *table = NULL;
    tl_error err;
    tl_status st;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    st = tl_lake_open_table(self->lake, cname, &table, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    return st == TL_OK ? tlpy_table_new(obj, table) : tlpy_raise(&err);
}

static PyObject *lake_tables(PyObject *obj, PyObject *unused)
{
    (void)unused;
    tlpy_lake *self = (tlpy_lake *)obj;
    char **names = NULL;
    tl_error err;
    tl_status st;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    st = tl_lake_list_tables(self->lake, &names, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && names[i]; i++) {
        PyObject *s = PyUnicode_FromString(names[i]);
        if (s == NULL || PyList_Append(list, s) < 0) Py_CLEAR(list);
        Py_XDECREF(s);
    }
    tl_strings_free(names);
    return list;
}

static PyObject *lake_drop_table(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name", NULL};
    PyObject *name;
    const char *cname;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:drop_table", kwlist, &name) ||
        tlpy_utf8(name, "name", 0, &cname) < 0)
        return NULL;
    tlpy_lake *self = (tlpy_lake *)obj;
    tl_error err;
    tl_status st;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    st = tl_lake_drop_table(self->lake, cname, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *lake_sql(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"query", "namespace", NULL};
    PyObject *query, *ns = Py_None;
    const char *cquery, *cns;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:sql", kwlist, &query, &ns) ||
        tlpy_utf8(query, "query", 0, &cquery) < 0 || tlpy_utf8(ns, "namespace", 1, &cns) < 0)
        return NULL;
    tlpy_lake *self = (tlpy_lake *)obj;
    struct ArrowArrayStream stream = {0};
    tl_error err;
    tl_status st;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    st = tl_lake_sql(self->lake, cquery, cns, &stream, NULL, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    /* A result type Arrow cannot carry (TIME_NS) fails here, as the query's
     * error (RuntimeError), not as pyarrow's OSError while reading. */
    struct ArrowSchema schema;
    if (stream.get_schema(&stream, &schema) != 0) {
        const char *why = stream.get_last_error(&stream);
        PyErr_SetString(PyExc_RuntimeError, why ? why : "the result has no schema");
        stream.release(&stream);
        return NULL;
    }
    schema.release(&schema);
    return tlpy_to_pyarrow("table", tlpy_arrow_data_from_stream(&stream));
}

static PyObject *lake_latest(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"table", NULL};
    PyObject *table;
    const char *ctable;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:latest", kwlist, &table) ||
        tlpy_utf8(table, "table", 0, &ctable) < 0)
        return NULL;
    tlpy_lake *self = (tlpy_lake *)obj;
    struct ArrowArrayStream stream = {0};
    tl_error err;
    tl_latest_report report;
    tl_status st;
    tlpy_lock(self->lock);
    PyThreadState *ts = PyEval_SaveThread();
    st = tl_lake_latest_report(self->lake, ctable, &stream, &report, &err);
    PyEval_RestoreThread(ts);
    PyThread_release_lock(self->lock);
    if (st != TL_OK) return tlpy_raise(&err);
    /* A bypassed index: the rows are right, the user hears why it was slower. */
    if (report.warning[0] && PyErr_WarnEx(PyExc_RuntimeWarning, report.warning, 1) < 0) {
        stream.release(&stream);
        return NULL;
    }
    return tlpy_to_pyarrow("table", tlpy_arrow_data_from_stream(&stream));
}

static PyObject *lake_cache_stats(PyObject *obj, PyObject *unused)
{
    (void)unused;
    tlpy_lake *self = (tlpy_lake *)obj;
    tl_cache_counts c;
    tlpy_lock(self->lock);
    int on = tl_lake_cache_stats(self->lake, &c);
    PyThread_release_lock(self->lock);
    if (!on) Py_RETURN_NONE;
    return tlpy_cache_dict(&c);
}

static PyObject *lake_index_cache_stats(PyObject *obj, PyObject *unused)
{
    (void)unused;
    tlpy_lake *self = (tlpy_lake *)obj;
    tl_index_cache_counts c;
    tl_lake_index_cache_stats(self->lake, &c); /* locks itself */
    return tlpy_index_cache_dict(&c);
}

#define KW (METH_VARARGS | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

static PyMethodDef lake_methods[] = {
    {"create_table", FN(lake_create_table), KW,
     "create_table(name, schema, time_column=None, series_key=None, chunk=None, retention=None, "
     "dedup=None, properties=None, *, ingest_time=None)\n--\n\n"
     "Creates table `name` and returns it at version 1. Raises FileExistsError if it exists, "
     "ValueError for a bad name, schema or option."},
    {"table", FN(lake_table), KW,
     "table(name)\n--\n\nThe table at its latest version. Raises KeyError if it does not exist."},
    {"tables", lake_tables, METH_NOARGS,
     "tables()\n--\n\nThe names of all tables, as sorted \"namespace.table\" strings."},
    {"sql", FN(lake_sql), KW,
     "sql(query, namespace='default')\n--\n\nRuns SQL over the lake's tables and returns a "
     "pyarrow.Table. Unqualified names resolve in `namespace`. Besides queries it runs CREATE, "
     "REFRESH and DROP MATERIALIZED ROLLUP, which return one row: the rollup and the rows it "
     "took. `FROM t AT (VERSION => snapshot_id)` or `AT (TIMESTAMP => time)` reads a table as "
     "of an earlier snapshot (KeyError for an unknown or expired one)."},
    {"cache_stats", lake_cache_stats, METH_NOARGS,
     "cache_stats()\n--\n\nWhat the read cache did since the lake was opened, as a dict: "
     "memory_hits, disk_hits, misses, bytes_fetched; None with the cache off (a local lake)."},
    {"index_cache_stats", lake_index_cache_stats, METH_NOARGS,
     "index_cache_stats()\n--\n\nThe last-value indexes the lake's table handles keep in memory "
     "for their next append, as a dict: bytes, limit_bytes (the storage option "
     "timelake_index_cache_bytes; without it the process's 64 MiB, shared by every lake opened "
     "without it), indexes, hits, misses, dropped (the oldest first when the budget is "
     "exceeded)."},
    {"latest", FN(lake_latest), KW,
     "latest(table)\n--\n\nThe newest row of every series of `table`, as a pyarrow.Table."},
    {"drop_table", FN(lake_drop_table), KW,
     "drop_table(name)\n--\n\nDeletes a table and its files; a missing table is no error."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef lake_getset[] = {
    {"location", lake_location, NULL, "The normalized URL of the warehouse.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot lake_slots[] = {
    {Py_tp_new, lake_new},
    {Py_tp_dealloc, lake_dealloc},
    {Py_tp_repr, lake_repr},
    {Py_tp_methods, lake_methods},
    {Py_tp_getset, lake_getset},
    {Py_tp_doc, "Lake(location, storage_options=None, settings=None)\n--\n\n"
                "A warehouse of Timelake tables: a local path or a file://, s3://, gs:// or "
                "az:// URL. storage_options is a dict of str object-store options; settings a "
                "dict of session settings for every query, such as {'read_dedup': 'false'}, "
                "which override the tables' own."},
    {0, NULL}};

static PyType_Spec lake_spec = {"timelake.Lake", sizeof(tlpy_lake), 0, Py_TPFLAGS_DEFAULT,
                                lake_slots};

int tlpy_lake_type_init(PyObject *module)
{
    tlpy_lake_type = PyType_FromSpec(&lake_spec);
    if (tlpy_lake_type == NULL) return -1;
    Py_INCREF(tlpy_lake_type);
    return PyModule_AddObject(module, "Lake", tlpy_lake_type);
}
