/* Ranged reads of one object through one handle (store.h): the backend's
 * own reader where it has one, else each read a get_range. */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

typedef struct ranged_reader {
    tl_store_reader base;
    tl_store *store;
    char *key;
} ranged_reader;

static tl_status ranged_read(tl_store_reader *r, uint64_t offset, size_t len, uint8_t *dst,
                             tl_error *err)
{
    ranged_reader *rr = (ranged_reader *)r;
    return tl_store_get_range(rr->store, rr->key, offset, len, dst, err);
}

static void ranged_close(tl_store_reader *r)
{
    ranged_reader *rr = (ranged_reader *)r;
    free(rr->key);
    free(rr);
}

tl_status tl_store_reader_open(tl_store *s, const char *key, tl_store_reader **out, tl_error *err)
{
    *out = NULL;
    if (s->ops->reader_open) return s->ops->reader_open(s, key, out, err);
    ranged_reader *rr = calloc(1, sizeof *rr);
    if (rr == NULL || (rr->key = strdup(key)) == NULL) {
        free(rr);
        return tl_error_nomem(err);
    }
    rr->store = s;
    rr->base.read = ranged_read;
    rr->base.close = ranged_close;
    tl_status st = tl_store_size(s, key, &rr->base.size, err);
    if (st != TL_OK) {
        ranged_close(&rr->base);
        return st;
    }
    *out = &rr->base;
    return TL_OK;
}
