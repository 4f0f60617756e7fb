#include "formats/input/reader_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"

typedef struct reader_stream {
    struct ArrowSchema schema;
    tl_batch_reader reader;
    bool done;
    tl_error error;
} reader_stream;

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    reader_stream *rs = s->private_data;
    return tl_schema_copy(&rs->schema, out, &rs->error) == TL_OK ? 0 : ENOMEM;
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    reader_stream *rs = s->private_data;
    memset(out, 0, sizeof *out);
    if (rs->error.code != TL_OK) return EINVAL; /* a failed stream stays failed */
    if (rs->done) return 0;
    tl_status st = rs->reader.next(rs->reader.ctx, out, &rs->done, &rs->error);
    if (st != TL_OK) {
        rs->error.code = st;
        memset(out, 0, sizeof *out);
        return st == TL_ERR_NOMEM ? ENOMEM : EINVAL;
    }
    if (rs->done) memset(out, 0, sizeof *out);
    return 0;
}

static const char *stream_last_error(struct ArrowArrayStream *s)
{
    reader_stream *rs = s->private_data;
    return rs->error.code != TL_OK ? rs->error.message : NULL;
}

static void stream_release(struct ArrowArrayStream *s)
{
    reader_stream *rs = s->private_data;
    if (rs) {
        tl_schema_release(&rs->schema);
        if (rs->reader.free) rs->reader.free(rs->reader.ctx);
        free(rs);
    }
    s->release = NULL;
    s->private_data = NULL;
}

tl_status tl_reader_stream_make(struct ArrowSchema *schema, tl_batch_reader reader,
                                struct ArrowArrayStream *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    reader_stream *rs = calloc(1, sizeof *rs);
    if (rs == NULL) {
        tl_schema_release(schema);
        if (reader.free) reader.free(reader.ctx);
        return tl_error_nomem(err);
    }
    tl_schema_move(schema, &rs->schema);
    rs->reader = reader;
    out->get_schema = stream_get_schema;
    out->get_next = stream_get_next;
    out->get_last_error = stream_last_error;
    out->release = stream_release;
    out->private_data = rs;
    return TL_OK;
}
