/* Python objects to Arrow C structs through the Arrow PyCapsule interface:
 * the structs are moved out of the producer's capsules, never copied. */
#include "tlpy.h"

#include <stdlib.h>

static int has_method(PyObject *obj, const char *name)
{
    PyObject *attr = PyObject_GetAttrString(obj, name);
    if (attr == NULL) {
        PyErr_Clear();
        return 0;
    }
    int callable = PyCallable_Check(attr);
    Py_DECREF(attr);
    return callable;
}

static int stream_from_capsule(PyObject *cap, struct ArrowArrayStream *out)
{
    struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
    if (s == NULL) return -1;
    if (s->release == NULL) {
        PyErr_SetString(PyExc_ValueError, "the Arrow stream was already consumed");
        return -1;
    }
    *out = *s;
    s->release = NULL; /* moved: the capsule's destructor must not release it */
    return 0;
}

static int stream_from_array_export(PyObject *pair, struct ArrowArrayStream *out)
{
    if (!PyTuple_Check(pair) || PyTuple_Size(pair) != 2) {
        PyErr_SetString(PyExc_TypeError, "__arrow_c_array__ must return a (schema, array) tuple");
        return -1;
    }
    struct ArrowSchema *schema = PyCapsule_GetPointer(PyTuple_GetItem(pair, 0), "arrow_schema");
    if (schema == NULL) return -1;
    struct ArrowArray *array = PyCapsule_GetPointer(PyTuple_GetItem(pair, 1), "arrow_array");
    if (array == NULL) return -1;
    if (schema->release == NULL || array->release == NULL) {
        PyErr_SetString(PyExc_ValueError, "the Arrow array was already consumed");
        return -1;
    }
    if (strcmp(schema->format, "+s") != 0) {
        PyErr_Format(PyExc_ValueError,
                     "append needs a record batch (a struct array), got Arrow format \"%s\"",
                     schema->format);
        return -1;
    }
    struct ArrowSchema s = *schema;
    struct ArrowArray a = *array;
    if (tlpy_stream_of_array(&s, &a, out) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    schema->release = NULL; /* moved into the stream */
    array->release = NULL;
    return 0;
}

int tlpy_stream_from_object(PyObject *data, struct ArrowArrayStream *out)
{
    const int stream = has_method(data, "__arrow_c_stream__");
    if (!stream && !has_method(data, "__arrow_c_array__")) {
        PyErr_Format(PyExc_TypeError,
                     "expected Arrow data (a pyarrow Table, RecordBatch or RecordBatchReader, a "
                     "polars DataFrame, or an object with __arrow_c_stream__), got %S",
                     (PyObject *)Py_TYPE(data));
        return -1;
    }
    PyObject *exported =
        PyObject_CallMethod(data, stream ? "__arrow_c_stream__" : "__arrow_c_array__", NULL);
    if (exported == NULL) return -1;
    int rc = stream ? stream_from_capsule(exported, out) : stream_from_array_export(exported, out);
    Py_DECREF(exported);
    if (rc == 0 && tlpy_stream_without_views(out) < 0) {
        out->release(out);
        PyErr_NoMemory();
        return -1;
    }
    return rc;
}

/* ---- schemas ---- */

static void release_owned_schema(PyObject *capsule)
{
    struct ArrowSchema *s = PyCapsule_GetPointer(capsule, "arrow_schema");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release) s->release(s);
    free(s);
}

/* The schema of a stream, in a capsule that owns it; the stream is released. */
static PyObject *schema_of_stream(PyObject *obj)
{
    struct ArrowArrayStream stream;
    if (tlpy_stream_from_object(obj, &stream) < 0) return NULL;
    struct ArrowSchema *s = calloc(1, sizeof *s);
    int rc = s ? stream.get_schema(&stream, s) : -1;
    if (rc != 0) {
        const char *why = s ? stream.get_last_error(&stream) : "out of memory";
        PyErr_Format(PyExc_ValueError, "cannot read the schema of the Arrow stream: %s",
                     why ? why : "unknown error");
        stream.release(&stream);
        free(s);
        return NULL;
    }
    stream.release(&stream);
    PyObject *cap = PyCapsule_New(s, "arrow_schema", release_owned_schema);
    if (cap == NULL) {
        s->release(s);
        free(s);
    }
    return cap;
}

static PyObject *exported_schema(PyObject *obj)
{
    if (has_method(obj, "__arrow_c_schema__"))
        return PyObject_CallMethod(obj, "__arrow_c_schema__", NULL);
    PyObject *inner = PyObject_GetAttrString(obj, "schema");
    if (inner != NULL && has_method(inner, "__arrow_c_schema__")) {
        PyObject *cap = PyObject_CallMethod(inner, "__arrow_c_schema__", NULL);
        Py_DECREF(inner);
        return cap;
    }
    Py_XDECREF(inner);
    PyErr_Clear();
    if (has_method(obj, "__arrow_c_stream__")) return schema_of_stream(obj);
    PyErr_Format(PyExc_TypeError,
                 "schema must be a pyarrow schema, an object with __arrow_c_schema__, or have "
                 "such a .schema; got %S",
                 (PyObject *)Py_TYPE(obj));
    return NULL;
}

PyObject *tlpy_schema_capsule(PyObject *obj, struct ArrowSchema **schema)
{
    PyObject *cap = exported_schema(obj);
    if (cap == NULL) return NULL;
    *schema = PyCapsule_GetPointer(cap, "arrow_schema");
    if (*schema == NULL) {
        Py_DECREF(cap);
        return NULL;
    }
    if ((*schema)->release == NULL) {
        Py_DECREF(cap);
        PyErr_SetString(PyExc_ValueError, "the Arrow schema was already released");
        return NULL;
    }
    return cap;
}
