/* Status codes to the seed's exceptions, and the per-handle lock. */
#include "tlpy.h"

PyObject *tlpy_conflict_error;

void tlpy_lock(PyThread_type_lock lock)
{
    if (PyThread_acquire_lock(lock, NOWAIT_LOCK)) return;
    PyThreadState *ts = PyEval_SaveThread();
    PyThread_acquire_lock(lock, WAIT_LOCK);
    PyEval_RestoreThread(ts);
}

static PyObject *exception_of(tl_status code)
{
    switch (code) {
    case TL_ERR_NOT_FOUND:
        return PyExc_KeyError;
    case TL_ERR_EXISTS:
        return PyExc_FileExistsError;
    case TL_ERR_INVALID:
        return PyExc_ValueError;
    case TL_ERR_CONFLICT:
        return tlpy_conflict_error;
    case TL_ERR_NOMEM:
        return PyExc_MemoryError;
    default:
        return PyExc_RuntimeError;
    }
}

PyObject *tlpy_raise(const tl_error *err)
{
    const char *msg = err->message[0] ? err->message : tl_status_name(err->code);
    PyErr_SetString(exception_of(err->code), msg);
    return NULL;
}
