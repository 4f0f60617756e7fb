#include "query/result_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct result_stream {
    duckdb_result result;
    duckdb_arrow_options options;
    char error[TL_ERROR_MESSAGE_MAX];
} result_stream;

static int set_error(result_stream *rs, duckdb_error_data e)
{
    snprintf(rs->error, sizeof rs->error, "%s", duckdb_error_data_message(e));
    duckdb_destroy_error_data(&e);
    return EIO;
}

static int get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    result_stream *rs = s->private_data;
    idx_t n = duckdb_column_count(&rs->result);
    duckdb_logical_type *types = calloc(n + 1, sizeof *types);
    const char **names = calloc(n + 1, sizeof *names);
    if (types == NULL || names == NULL) {
        free(types);
        free(names);
        snprintf(rs->error, sizeof rs->error, "out of memory");
        return ENOMEM;
    }
    for (idx_t i = 0; i < n; i++) {
        types[i] = duckdb_column_logical_type(&rs->result, i);
        names[i] = duckdb_column_name(&rs->result, i);
    }
    duckdb_error_data e = duckdb_to_arrow_schema(rs->options, types, names, n, out);
    for (idx_t i = 0; i < n; i++) duckdb_destroy_logical_type(&types[i]);
    free(types);
    free(names);
    return e ? set_error(rs, e) : 0;
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
