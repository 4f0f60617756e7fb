/* Python arguments to the C strings the library takes. */
#include "tlpy.h"

int tlpy_utf8(PyObject *obj, const char *what, int none_ok, const char **out)
{
    *out = NULL;
    if (obj == NULL || (none_ok && obj == Py_None)) return 0;
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %S", what, (PyObject *)Py_TYPE(obj));
        return -1;
    }
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(obj, &len);
    if (s == NULL) return -1;
    if ((size_t)len != strlen(s)) {
        PyErr_Format(PyExc_ValueError, "%s must not contain NUL characters", what);
        return -1;
    }
    *out = s;
    return 0;
}

int tlpy_bool(PyObject *obj, const char *what, int none_ok, int *out)
{
    if (obj == NULL) return 0;
    if (none_ok && obj == Py_None) {
        *out = -1;
        return 0;
    }
    if (!PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a bool%s, not %S", what,
                     none_ok ? " or None" : "", (PyObject *)Py_TYPE(obj));
        return -1;
    }
    *out = obj == Py_True;
    return 0;
}

static void free_pointers(PyObject *capsule)
{
    PyMem_Free(PyCapsule_GetPointer(capsule, NULL));
}

/* Appends key and value of one item to keep (which owns them) and to ptrs. */
static int add_pair(PyObject *key, PyObject *value, const char *what, int none_ok, PyObject *keep,
                    const char **ptrs, Py_ssize_t at)
{
    if (PyList_Append(keep, key) < 0 || PyList_Append(keep, value) < 0) return -1;
    if (tlpy_utf8(key, what, 0, &ptrs[at]) < 0) return -1;
    return tlpy_utf8(value, what, none_ok, &ptrs[at + 1]);
}

static int pairs(PyObject *mapping, const char *what, int none_ok, const char ***out,
                 PyObject **keep)
{
    *out = NULL;
    *keep = NULL;
    if (mapping == NULL || mapping == Py_None) return 0;
    PyObject *items = PyMapping_Items(mapping);
    if (items == NULL) return -1;
    Py_ssize_t n = PyList_Size(items);
    const char **ptrs = PyMem_Calloc((size_t)(2 * n + 1), sizeof(char *));
    *keep = PyList_New(0);
    if (ptrs == NULL || *keep == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GetItem(items, i); /* a (key, value) tuple, borrowed */
        PyObject *key = PyTuple_GetItem(item, 0), *value = PyTuple_GetItem(item, 1);
        if (key == NULL || value == NULL ||
            add_pair(key, value, what, none_ok, *keep, ptrs, 2 * i) < 0)
            goto fail;
    }
    Py_DECREF(items);
    /* The pointer array itself lives as long as keep, in a capsule that frees it. */
    PyObject *holder = PyCapsule_New(ptrs, NULL, free_pointers);
    if (holder == NULL) PyMem_Free(ptrs);
    if (holder == NULL || PyList_Append(*keep, holder) < 0) {
        Py_XDECREF(holder);
        Py_CLEAR(*keep);
        return -1;
    }
    Py_DECREF(holder);
    *out = ptrs;
    return 0;
fail:
    Py_DECREF(items);
    PyMem_Free(ptrs);
    Py_CLEAR(*keep);
    return -1;
}

int tlpy_string_pairs(PyObject *mapping, const char *what, const char ***out, PyObject **keep)
{
    return pairs(mapping, what, 0, out, keep);
}

int tlpy_string_changes(PyObject *mapping, const char *what, const char ***out, PyObject **keep)
{
    if (mapping != Py_None && !PyObject_HasAttrString(mapping, "items")) {
        PyErr_Format(PyExc_TypeError, "%s must be a mapping of str to str or None, not %S", what,
                     (PyObject *)Py_TYPE(mapping));
        return -1;
    }
    return pairs(mapping, what, 1, out, keep);
}

int tlpy_string_list(PyObject *seq, const char *what, const char ***out, size_t *n, PyObject **keep)
{
    *out = NULL;
    *n = 0;
    *keep = NULL;
    if (seq == Py_None) return 0;
    if (PyUnicode_Check(seq) || !PySequence_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s must be a list of str, not %S", what,
                     (PyObject *)Py_TYPE(seq));
        return -1;
    }
    *keep = PySequence_List(seq);
    if (*keep == NULL) return -1;
    Py_ssize_t len = PyList_Size(*keep);
    *out = PyMem_Calloc((size_t)len + 1, sizeof(char *));
    if (*out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *n = (size_t)len;
    for (Py_ssize_t i = 0; i < len; i++)
        if (tlpy_utf8(PyList_GetItem(*keep, i), what, 0, &(*out)[i]) < 0) return -1;
    return 0;
}
