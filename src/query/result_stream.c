#include "query/result_stream.h"

#include <stdbool.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "core/json_text.h"
#include "query/engine.h"

typedef struct result_stream {
    duckdb_result result;
    duckdb_arrow_options options;
    char error[TL_ERROR_MESSAGE_MAX];
} result_stream;

/* DuckDB's message, without the JSON some of its Arrow errors come wrapped in
 * ({"exception_type": ..., "exception_message": ...}). */
static void plain_message(const char *msg, char *buf, size_t size)
{
    bool nomem;
    json_t *j = msg && msg[0] == '{' ? tl_json_loadb(msg, strlen(msg), 0, NULL, &nomem) : NULL;
    const char *m = json_string_value(json_object_get(j, "exception_message"));
    snprintf(buf, size, "%s", m ? m : msg ? msg : "unknown error");
    json_decref(j);
}

static int set_error(result_stream *rs, duckdb_error_data e)
{
    plain_message(duckdb_error_data_message(e), rs->error, sizeof rs->error);
    duckdb_destroy_error_data(&e);
    return EIO;
}

/* A result type Arrow cannot carry (TIME_NS): names the first such column,
 * found by converting each column alone, and says what to do. */
static int schema_error(result_stream *rs, duckdb_error_data e)
{
    char why[512];
    plain_message(duckdb_error_data_message(e), why, sizeof why);
    duckdb_destroy_error_data(&e);
    snprintf(rs->error, sizeof rs->error, "%s", why);
    idx_t n = duckdb_column_count(&rs->result);
    for (idx_t i = 0; i < n; i++) {
        duckdb_logical_type type = duckdb_column_logical_type(&rs->result, i);
        const char *name = duckdb_column_name(&rs->result, i);
        struct ArrowSchema one = {0};
        duckdb_error_data ce = duckdb_to_arrow_schema(rs->options, &type, &name, 1, &one);
        duckdb_destroy_logical_type(&type);
        if (one.release) one.release(&one);
        if (ce == NULL) continue;
        duckdb_destroy_error_data(&ce);
        snprintf(rs->error, sizeof rs->error,
                 "column \"%s\" cannot be returned: %s; cast it in the query to a type that can "
                 "(\"%s\"::VARCHAR, for one)",
                 name, why, name);
        break;
    }
    return EIO;
}

/* The result's Arrow schema; a failure is DuckDB's error data (or NULL
 * with *nomem set). */
static duckdb_error_data result_schema(duckdb_result *r, duckdb_arrow_options options,
                                       struct ArrowSchema *out, bool *nomem)
{
    idx_t n = duckdb_column_count(r);
    duckdb_logical_type *types = calloc(n + 1, sizeof *types);
    const char **names = calloc(n + 1, sizeof *names);
    *nomem = types == NULL || names == NULL;
    duckdb_error_data e = NULL;
    for (idx_t i = 0; !*nomem && i < n; i++) {
        types[i] = duckdb_column_logical_type(r, i);
        names[i] = duckdb_column_name(r, i);
    }
    if (!*nomem) e = duckdb_to_arrow_schema(options, types, names, n, out);
    for (idx_t i = 0; types && i < n; i++) duckdb_destroy_logical_type(&types[i]);
    free(types);
    free(names);
    return e;
}

static int get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    result_stream *rs = s->private_data;
    bool nomem;
    duckdb_error_data e = result_schema(&rs->result, rs->options, out, &nomem);
    if (nomem) {
        snprintf(rs->error, sizeof rs->error, "out of memory");
        return ENOMEM;
    }
    return e ? schema_error(rs, e) : 0;
}

static int get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    result_stream *rs = s->private_data;
    duckdb_data_chunk chunk = duckdb_fetch_chunk(rs->result);
    if (chunk == NULL) {
        memset(out, 0, sizeof *out); /* the end of the stream */
        return 0;
    }
    duckdb_error_data e = duckdb_data_chunk_to_arrow(rs->options, chunk, out);
    duckdb_destroy_data_chunk(&chunk);
    return e ? set_error(rs, e) : 0;
}

static const char *get_last_error(struct ArrowArrayStream *s)
{
    result_stream *rs = s->private_data;
    return rs->error[0] ? rs->error : NULL;
}

static void release(struct ArrowArrayStream *s)
{
    result_stream *rs = s->private_data;
    duckdb_destroy_arrow_options(&rs->options);
    duckdb_destroy_result(&rs->result);
    free(rs);
    s->release = NULL;
}

tl_status tl_query_result_stream(duckdb_result *result, struct ArrowArrayStream *out, tl_error *err)
{
    result_stream *rs = calloc(1, sizeof *rs);
    if (rs == NULL) {
        duckdb_destroy_result(result);
        return tl_error_nomem(err);
    }
    rs->result = *result;
    rs->options = duckdb_result_get_arrow_options(&rs->result);
    *out = (struct ArrowArrayStream){get_schema, get_next, get_last_error, release, rs};
    return TL_OK;
}

/* Converts one chunk (destroyed here) into batches[*n]. */
static tl_status chunk_to_batch(duckdb_arrow_options options, duckdb_data_chunk chunk,
                                struct ArrowArray **batches, size_t *n, tl_error *err)
{
    struct ArrowArray *b = realloc(*batches, (*n + 1) * sizeof *b);
    if (b == NULL) {
        duckdb_destroy_data_chunk(&chunk);
        return tl_error_nomem(err);
    }
    *batches = b;
    duckdb_error_data e = duckdb_data_chunk_to_arrow(options, chunk, &b[*n]);
    duckdb_destroy_data_chunk(&chunk);
    if (e) {
        tl_status st = tl_error_set(err, TL_ERR_QUERY, "%s", duckdb_error_data_message(e));
        duckdb_destroy_error_data(&e);
        return st;
    }
    (*n)++;
    return TL_OK;
}

/* Fetches chunks up to max_rows rows (0: all) into batches; *truncated
 * when rows were left. */
static tl_status fetch_rows(duckdb_result *r, duckdb_arrow_options options, int64_t max_rows,
                            struct ArrowArray **batches, size_t *n, bool *truncated, tl_error *err)
{
    int64_t rows = 0;
    *truncated = false;
    for (;;) {
        duckdb_data_chunk chunk = duckdb_fetch_chunk(*r);
        if (chunk == NULL) {
            const char *m = duckdb_result_error(r);
            return m ? tl_query_error(err, m) : TL_OK;
        }
        int64_t size = (int64_t)duckdb_data_chunk_get_size(chunk);
        if (size == 0) {
            duckdb_destroy_data_chunk(&chunk);
            continue;
        }
        if (max_rows > 0 && rows >= max_rows) {
            duckdb_destroy_data_chunk(&chunk);
            *truncated = true;
            return TL_OK;
        }
        if (max_rows > 0 && rows + size > max_rows) {
            duckdb_data_chunk_set_size(chunk, (idx_t)(max_rows - rows));
            *truncated = true;
        }
        rows += (int64_t)duckdb_data_chunk_get_size(chunk);
        TL_TRY(chunk_to_batch(options, chunk, batches, n, err));
        if (*truncated) return TL_OK;
    }
}

tl_status tl_query_result_collect(duckdb_result *result, int64_t max_rows,
                                  struct ArrowArrayStream *out, bool *truncated, tl_error *err)
{
    duckdb_arrow_options options = duckdb_result_get_arrow_options(result);
    struct ArrowSchema schema = {0};
    struct ArrowArray *batches = NULL;
    size_t n = 0;
    bool nomem;
    duckdb_error_data e = result_schema(result, options, &schema, &nomem);
    tl_status st = TL_OK;
    if (nomem) {
        st = tl_error_nomem(err);
    } else if (e) {
        st = tl_error_set(err, TL_ERR_QUERY, "%s", duckdb_error_data_message(e));
        duckdb_destroy_error_data(&e);
    }
    if (st == TL_OK) st = fetch_rows(result, options, max_rows, &batches, &n, truncated, err);
    duckdb_destroy_arrow_options(&options);
    duckdb_destroy_result(result); /* a streaming query still running stops here */
    if (st == TL_OK) st = tl_stream_from_batches(&schema, batches, n, out, err);
    for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
    free(batches);
    if (schema.release) schema.release(&schema);
    return st;
}
