/* Batch reads: one thread per object up to a bound, so that the reads of a
 * query's data files overlap and cost one round trip of wall time. Every
 * backend's get and get_range (and the read cache's) are thread-safe. */
#include <stdlib.h>

#include "core/parallel.h"
#include "store/store.h"

#define MAX_GET_THREADS 16

static void get_one(tl_store *s, tl_store_get_item *it)
{
    it->out.len = 0;
    if (it->len == 0) {
        it->st = tl_store_get(s, it->key, &it->out, &it->err);
        return;
    }
    if (tl_buf_reserve(&it->out, it->len) != 0) {
        it->st = tl_error_nomem(&it->err);
        return;
    }
    it->st = tl_store_get_range(s, it->key, it->offset, it->len, it->out.data, &it->err);
    if (it->st == TL_OK) it->out.len = it->len;
}

typedef struct get_job {
    tl_store *s;
    tl_store_get_item *items;
} get_job;

static tl_status get_item(void *ctx, size_t i, tl_error *err)
{
    (void)err; /* each item keeps its own status and error */
    get_job *j = ctx;
    get_one(j->s, &j->items[i]);
    return TL_OK;
}

tl_status tl_store_get_many(tl_store *s, tl_store_get_item *items, size_t n, tl_error *err)
{
    size_t threads = tl_store_is_local(s) ? 1 : MAX_GET_THREADS;
    get_job j = {s, items};
    tl_parallel_run(n, threads, false, get_item, &j, NULL);
    for (size_t i = 0; i < n; i++)
        if (items[i].st != TL_OK) {
            if (err) *err = items[i].err;
            return items[i].st;
        }
    return TL_OK;
}
