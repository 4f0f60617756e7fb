/* The _timelake module: its types, ConflictError, and two helpers for the
 * tests (what the library is built with, and where input buffers live). */
#include "tlpy.h"

/* Buffer addresses of each column of the first batch, as append would hand
 * it to the library: a test compares them with the producer's (zero copy). */
static PyObject *first_batch_addresses(struct ArrowArrayStream *stream)
{
    struct ArrowArray batch;
    if (stream->get_next(stream, &batch) != 0 || batch.release == NULL) {
        PyErr_SetString(PyExc_ValueError, "the stream has no batch");
        return NULL;
    }
    PyObject *columns = PyList_New(0);
    for (int64_t c = 0; columns && c < batch.n_children; c++) {
        const struct ArrowArray *col = batch.children[c];
        PyObject *bufs = PyList_New(0);
        for (int64_t b = 0; bufs && b < col->n_buffers; b++) {
            PyObject *addr = PyLong_FromVoidPtr((void *)col->buffers[b]);
            if (addr == NULL || PyList_Append(bufs, addr) < 0) Py_CLEAR(bufs);
            Py_XDECREF(addr);
        }
        if (bufs == NULL || PyList_Append(columns, bufs) < 0) Py_CLEAR(columns);
        Py_XDECREF(bufs);
    }
    batch.release(&batch);
    return columns;
}

static PyObject *input_buffer_addresses(PyObject *module, PyObject *data)
{
    (void)module;
    struct ArrowArrayStream stream;
    if (tlpy_stream_from_object(data, &stream) < 0) return NULL;
    PyObject *out = first_batch_addresses(&stream);
    stream.release(&stream);
    return out;
}

static PyMethodDef module_methods[] = {
    {"_input_buffer_addresses", input_buffer_addresses, METH_O,
     "Buffer addresses of the first batch of Arrow data as append reads it (for tests)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                                        "_timelake",
                                        "The C extension of the timelake package.",
                                        -1,
                                        module_methods,
                                        NULL,
                                        NULL,
                                        NULL,
                                        NULL};

PyMODINIT_FUNC PyInit__timelake(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    tlpy_conflict_error = PyErr_NewExceptionWithDoc(
        "timelake.ConflictError",
        "A concurrent commit won and this one could not be rebased onto it (a RuntimeError).",
        PyExc_RuntimeError, NULL);
    if (tlpy_conflict_error == NULL) goto fail;
    Py_INCREF(tlpy_conflict_error);
    if (PyModule_AddObject(m, "ConflictError", tlpy_conflict_error) < 0 ||
        tlpy_lake_type_init(m) < 0 || tlpy_table_type_init(m) < 0 ||
        tlpy_arrow_data_type_init(m) < 0 ||
        PyModule_AddStringConstant(m, "LIBRARY_VERSION", TIMELAKE_VERSION) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
