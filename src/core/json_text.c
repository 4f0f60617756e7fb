#include "core/json_text.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct sink {
    tl_buf *out;
    bool failed; /* a write failed: every later one fails too */
} sink;

static int write_text(const char *data, size_t size, void *ctx)
{
    sink *s = ctx;
    if (!s->failed && tl_buf_append(s->out, data, size) != 0) s->failed = true;
    return s->failed ? -1 : 0;
}

int tl_json_dump_buf(const json_t *j, size_t flags, tl_buf *out)
{
    size_t len = out->len;
    sink s = {out, false};
    if (json_dump_callback(j, write_text, &s, flags) == 0 && !s.failed) return 0;
    out->len = len;
    if (out->data) out->data[len] = '\0';
    return -1;
}

char *tl_json_dumps(const json_t *j, size_t flags)
{
    tl_buf b = {0};
    /* The NUL tl_buf keeps after the data ends the string; an empty dump
     * (none is) would have no buffer. */
    if (tl_json_dump_buf(j, flags, &b) != 0 || b.data == NULL) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}
