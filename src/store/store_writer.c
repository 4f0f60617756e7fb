/* tl_store_writer_open, and the writer of a backend without its own: the
 * bytes are kept in memory and put in one piece at finish. */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

typedef struct memory_writer {
    tl_store_writer base;
    tl_store *s;
    char *key;
    tl_buf bytes;
} memory_writer;

static void memory_free(memory_writer *w)
{
    tl_buf_free(&w->bytes);
    free(w->key);
    free(w);
}

static tl_status memory_write(tl_store_writer *w_, const void *data, size_t len, tl_error *err)
{
    memory_writer *w = (memory_writer *)w_;
    return tl_buf_append(&w->bytes, data, len) == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status memory_finish(tl_store_writer *w_, tl_error *err)
{
    memory_writer *w = (memory_writer *)w_;
    tl_status st = tl_store_put(w->s, w->key, w->bytes.data, w->bytes.len, err);
    memory_free(w);
    return st;
}

static void memory_abort(tl_store_writer *w_)
{
    memory_free((memory_writer *)w_);
}

tl_status tl_store_writer_open(tl_store *s, const char *key, tl_store_writer **out, tl_error *err)
{
    if (s->ops->writer_open) return s->ops->writer_open(s, key, out, err);
    memory_writer *w = calloc(1, sizeof *w);
    if (w == NULL || (w->key = strdup(key)) == NULL) {
        free(w);
        return tl_error_nomem(err);
    }
    w->base = (tl_store_writer){memory_write, memory_finish, memory_abort};
    w->s = s;
    *out = &w->base;
    return TL_OK;
}
