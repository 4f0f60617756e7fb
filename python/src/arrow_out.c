/* ArrowData: what the library returns (a stream or a schema), exported to
 * Python through the Arrow PyCapsule interface, once. pyarrow, polars and
 * DuckDB take it directly; tlpy_to_pyarrow turns it into pyarrow objects. */
#include "tlpy.h"

#include <stdlib.h>

PyObject *tlpy_arrow_data_type;

typedef struct {
    PyObject_HEAD struct ArrowArrayStream *stream; /* owned; NULL once exported */
    struct ArrowSchema *schema;                    /* owned; NULL once exported */
} arrow_data;

static void release_stream_capsule(PyObject *capsule)
{
    struct ArrowArrayStream *s = PyCapsule_GetPointer(capsule, "arrow_array_stream");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release) s->release(s);
    free(s);
}

static void release_schema_capsule(PyObject *capsule)
{
    struct ArrowSchema *s = PyCapsule_GetPointer(capsule, "arrow_schema");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release) s->release(s);
    free(s);
}

static PyObject *export_stream(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"requested_schema", NULL};
    PyObject *requested = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:__arrow_c_stream__", kwlist, &requested))
        return NULL;
    arrow_data *d = (arrow_data *)self;
    if (d->stream == NULL) {
        PyErr_SetString(PyExc_ValueError, "this Arrow stream was already exported");
        return NULL;
    }
    PyObject *cap = PyCapsule_New(d->stream, "arrow_array_stream", release_stream_capsule);
    if (cap != NULL) d->stream = NULL;
    return cap;
}

static PyObject *export_schema(PyObject *self, PyObject *unused)
{
    (void)unused;
    arrow_data *d = (arrow_data *)self;
    if (d->schema == NULL) {
        PyErr_SetString(PyExc_ValueError, "this Arrow schema was already exported");
        return NULL;
    }
    PyObject *cap = PyCapsule_New(d->schema, "arrow_schema", release_schema_capsule);
    if (cap != NULL) d->schema = NULL;
    return cap;
}

static void arrow_data_dealloc(PyObject *self)
{
    arrow_data *d = (arrow_data *)self;
    if (d->stream && d->stream->release) d->stream->release(d->stream);
    free(d->stream);
    if (d->schema && d->schema->release) d->schema->release(d->schema);
    free(d->schema);
    PyTypeObject *type = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(self);
    Py_DECREF(type);
}

static PyMethodDef arrow_data_methods[] = {
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))export_stream, METH_VARARGS | METH_KEYWORDS,
     "Exports the data as an ArrowArrayStream PyCapsule (once; requested_schema is ignored)."},
    {"__arrow_c_schema__", export_schema, METH_NOARGS,
     "Exports the schema as an ArrowSchema PyCapsule (once)."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot arrow_data_slots[] = {
    {Py_tp_dealloc, arrow_data_dealloc},
    {Py_tp_methods, arrow_data_methods},
    {Py_tp_doc, "Arrow data returned by timelake, exported once through the Arrow PyCapsule "
                "interface (__arrow_c_stream__ or __arrow_c_schema__)."},
    {0, NULL}};

static PyType_Spec arrow_data_spec = {"timelake._timelake.ArrowData", sizeof(arrow_data), 0,
                                      Py_TPFLAGS_DEFAULT, arrow_data_slots};

int tlpy_arrow_data_type_init(PyObject *module)
{
    tlpy_arrow_data_type = PyType_FromSpec(&arrow_data_spec);
    if (tlpy_arrow_data_type == NULL) return -1;
    Py_INCREF(tlpy_arrow_data_type);
    return PyModule_AddObject(module, "ArrowData", tlpy_arrow_data_type);
}

static PyObject *arrow_data_new(void)
{
    PyTypeObject *type = (PyTypeObject *)tlpy_arrow_data_type;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    return alloc(type, 0); /* zeroed: no stream, no schema */
}

PyObject *tlpy_arrow_data_from_stream(struct ArrowArrayStream *stream)
{
    arrow_data *d = (arrow_data *)arrow_data_new();
    struct ArrowArrayStream *owned = malloc(sizeof *owned);
    if (d == NULL || owned == NULL) {
        stream->release(stream);
        free(owned);
        Py_XDECREF(d);
        return d ? PyErr_NoMemory() : NULL;
    }
    *owned = *stream;
    stream->release = NULL;
    d->stream = owned;
    return (PyObject *)d;
}

PyObject *tlpy_arrow_data_from_schema(struct ArrowSchema *schema)
{
    arrow_data *d = (arrow_data *)arrow_data_new();
    struct ArrowSchema *owned = malloc(sizeof *owned);
    if (d == NULL || owned == NULL) {
        schema->release(schema);
        free(owned);
        Py_XDECREF(d);
        return d ? PyErr_NoMemory() : NULL;
    }
    *owned = *schema;
    schema->release = NULL;
    d->schema = owned;
    return (PyObject *)d;
}

PyObject *tlpy_to_pyarrow(const char *function, PyObject *x)
{
    if (x == NULL) return NULL;
    /* pyarrow is imported here, on first use, so `import timelake` stays light. */
    PyObject *pyarrow = PyImport_ImportModule("pyarrow");
    if (pyarrow == NULL) {
        Py_DECREF(x);
        return NULL;
    }
    PyObject *out = PyObject_CallMethod(pyarrow, function, "O", x);
    Py_DECREF(pyarrow);
    Py_DECREF(x);
    return out;
}
