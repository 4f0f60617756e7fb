/* What the files of the _timelake extension share: the object layouts, the
 * locking and error helpers, and the Arrow conversions. */
#ifndef TLPY_H
#define TLPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include "timelake.h"

/* A Lake object owns one tl_lake handle. */
typedef struct {
    PyObject_HEAD tl_lake *lake;
    PyThread_type_lock lock; /* a handle is used by one thread at a time */
} tlpy_lake;

/* A Table object owns one tl_table handle and keeps its Lake alive. */
typedef struct {
    PyObject_HEAD tl_table *table;
    PyObject *lake;
    PyThread_type_lock lock;
} tlpy_table;

extern PyObject *tlpy_lake_type;
extern PyObject *tlpy_table_type;
extern PyObject *tlpy_arrow_data_type;
extern PyObject *tlpy_conflict_error;

int tlpy_lake_type_init(PyObject *module);
int tlpy_table_type_init(PyObject *module);
int tlpy_arrow_data_type_init(PyObject *module);

/* A new Table object around `table` (taken: closed on failure too). */
PyObject *tlpy_table_new(PyObject *lake, tl_table *table);

/* Takes a handle's lock. Waits with the GIL released, so a thread holding the
 * lock inside the library can always finish. */
void tlpy_lock(PyThread_type_lock lock);

/* Raises the exception of err's status (the seed's table) and returns NULL. */
PyObject *tlpy_raise(const tl_error *err);

/* UTF-8 of a str argument, or NULL (and a Python error); NULL stays NULL when
 * none_ok and obj is None. Valid while obj lives. */
int tlpy_utf8(PyObject *obj, const char *what, int none_ok, const char **out);

/* A bool argument as 0 or 1, or -1 for None when none_ok ("the table's own
 * setting"). Anything else is a TypeError, as in the reference: truthiness
 * would read "false" or 1 as true and run a real upgrade for a dry run. obj
 * NULL (not passed) leaves *out alone. Returns -1 with a Python error. */
int tlpy_bool(PyObject *obj, const char *what, int none_ok, int *out);

/* A NULL-terminated array of key, value pointers from a dict of str to str,
 * or *out = NULL for None. Pointers stay valid while `keep` (a new list the
 * caller releases) lives. Returns -1 with a Python error. */
int tlpy_string_pairs(PyObject *mapping, const char *what, const char ***out, PyObject **keep);
/* The same with None values (as NULL: "remove this key"); a non-mapping is a TypeError. */
int tlpy_string_changes(PyObject *mapping, const char *what, const char ***out, PyObject **keep);

/* A sequence of str (not a str itself) as a NULL-terminated array of *n C
 * strings (PyMem_Free it), or *out = NULL and *n = 0 for None. The strings
 * stay valid while `keep` (a new list the caller releases) lives. Returns -1
 * with a Python error (TypeError naming `what`). */
int tlpy_string_list(PyObject *seq, const char *what, const char ***out, size_t *n,
                     PyObject **keep);

/* ---- Arrow in ---- */

/* Fills *out (moved to the caller) from an object with __arrow_c_stream__ or
 * __arrow_c_array__; no data is copied. Returns -1 with a Python error. */
int tlpy_stream_from_object(PyObject *data, struct ArrowArrayStream *out);

/* The schema capsule of a pyarrow schema or anything with .schema or a stream.
 * Returns a new capsule reference or NULL; *schema points into it. */
PyObject *tlpy_schema_capsule(PyObject *obj, struct ArrowSchema **schema);

/* Rewrites *stream in place so that string/binary view columns arrive as
 * large string/binary (copied); other columns pass through. 0 or -1 (no memory). */
int tlpy_stream_without_views(struct ArrowArrayStream *stream);

/* Deep copy of a schema (for streams made of one array). 0 or -1 (no memory). */
int tlpy_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out);

/* A one-batch stream that takes schema and array (moved). 0 or -1. */
int tlpy_stream_of_array(struct ArrowSchema *schema, struct ArrowArray *array,
                         struct ArrowArrayStream *out);

/* ---- Arrow out ---- */

/* An ArrowData object taking *stream (moved): it exports __arrow_c_stream__ once. */
PyObject *tlpy_arrow_data_from_stream(struct ArrowArrayStream *stream);
/* An ArrowData object taking *schema (moved): it exports __arrow_c_schema__ once. */
PyObject *tlpy_arrow_data_from_schema(struct ArrowSchema *schema);
/* pyarrow.table(x) / pyarrow.schema(x), importing pyarrow on first use. Steals x. */
PyObject *tlpy_to_pyarrow(const char *function, PyObject *x);

/* ---- Result dicts ---- */

PyObject *tlpy_maintain_dict(const tl_maintain_report *r);
PyObject *tlpy_append_dict(const tl_append_result *r);
PyObject *tlpy_info_dict(const tl_table_info *info);
PyObject *tlpy_upgrade_dict(const tl_upgrade_report *r);
PyObject *tlpy_cache_dict(const tl_cache_counts *c);
PyObject *tlpy_index_cache_dict(const tl_index_cache_counts *c);

#endif
