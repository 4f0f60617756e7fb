#include "arrow/stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "core/grow.h"

typedef struct tl_batch_stream {
    struct ArrowSchema schema;
    struct ArrowArray *batches;
    size_t n;
    size_t next;
    char last_error[TL_ERROR_MESSAGE_MAX];
} tl_batch_stream;

static int batch_stream_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out)
{
    tl_batch_stream *s = stream->private_data;
    tl_error err;
    if (tl_schema_copy(&s->schema, out, &err) != TL_OK) {
        snprintf(s->last_error, sizeof s->last_error, "%s", err.message);
        return ENOMEM;
    }
    return 0;
}

static int batch_stream_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out)
{
    tl_batch_stream *s = stream->private_data;
    if (s->next == s->n) {
        memset(out, 0, sizeof *out); /* release == NULL marks the end */
        return 0;
    }
    tl_array_move(&s->batches[s->next++], out);
    return 0;
}

static const char *batch_stream_last_error(struct ArrowArrayStream *stream)
{
    tl_batch_stream *s = stream->private_data;
    return s->last_error[0] ? s->last_error : NULL;
}

static void batch_stream_release(struct ArrowArrayStream *stream)
{
    tl_batch_stream *s = stream->private_data;
    for (size_t i = s->next; i < s->n; i++) tl_array_release(&s->batches[i]);
    free(s->batches);
    tl_schema_release(&s->schema);
    free(s);
    stream->release = NULL;
}

tl_status tl_stream_from_batches(struct ArrowSchema *schema, struct ArrowArray *batches, size_t n,
                                 struct ArrowArrayStream *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    tl_batch_stream *s = calloc(1, sizeof *s);
    if (s == NULL) return tl_error_nomem(err);
    s->batches = calloc(n ? n : 1, sizeof *s->batches);
    if (s->batches == NULL) {
        free(s);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n; i++) tl_array_move(&batches[i], &s->batches[i]);
    tl_schema_move(schema, &s->schema);
    s->n = n;
    out->get_schema = batch_stream_get_schema;
    out->get_next = batch_stream_get_next;
    out->get_last_error = batch_stream_last_error;
    out->release = batch_stream_release;
    out->private_data = s;
    return TL_OK;
}

tl_status tl_stream_producer_error(struct ArrowArrayStream *stream, int code, const char *call,
                                   tl_error *err)
{
    const char *msg = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    return tl_error_set(err, code == ENOMEM ? TL_ERR_NOMEM : TL_ERR_INVALID,
                        "stream %s failed: %s (error %d)", call,
                        msg && msg[0] ? msg : strerror(code), code);
}

static void release_batches(struct ArrowArray *batches, size_t n)
{
    for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
    free(batches);
}

tl_status tl_stream_read_rows(struct ArrowArrayStream *stream, int64_t max_rows,
                              struct ArrowArray **batches_out, size_t *n_out, bool *eof,
                              tl_error *err)
{
    *batches_out = NULL;
    *n_out = 0;
    *eof = false;
    struct ArrowArray *batches = NULL;
    size_t n = 0, cap = 0;
    for (int64_t rows = 0; rows < max_rows;) {
        if (TL_GROW(batches, cap, n + 1, 8) != 0) {
            release_batches(batches, n);
            return tl_error_nomem(err);
        }
        memset(&batches[n], 0, sizeof batches[n]);
        int rc = stream->get_next(stream, &batches[n]);
        if (rc != 0) {
            tl_status st = tl_stream_producer_error(stream, rc, "get_next", err);
            tl_array_release(&batches[n]);
            release_batches(batches, n);
            return st;
        }
        if (batches[n].release == NULL) {
            *eof = true;
            break;
        }
        rows += batches[n++].length;
    }
    if (n == 0) {
        free(batches);
        batches = NULL;
    }
    *batches_out = batches;
    *n_out = n;
    return TL_OK;
}

tl_status tl_stream_collect(struct ArrowArrayStream *stream, struct ArrowSchema *schema_out,
                            struct ArrowArray **batches_out, size_t *n_out, tl_error *err)
{
    *batches_out = NULL;
    *n_out = 0;
    memset(schema_out, 0, sizeof *schema_out);
    if (stream == NULL || stream->release == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "stream is released");
    int rc = stream->get_schema(stream, schema_out);
    if (rc != 0) return tl_stream_producer_error(stream, rc, "get_schema", err);
    bool eof;
    tl_status st = tl_stream_read_rows(stream, INT64_MAX, batches_out, n_out, &eof, err);
    if (st != TL_OK) tl_schema_release(schema_out);
    return st;
}
