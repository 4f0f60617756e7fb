/* The start of an object with its size: the backend's one-round-trip read when
 * it has one, else a size request and a ranged read. */
#include "store/store.h"

tl_status tl_store_get_first(tl_store *s, const char *key, size_t len, uint8_t *dst, size_t *got,
                             uint64_t *total, tl_error *err)
{
    if (s->ops->get_first) return s->ops->get_first(s, key, len, dst, got, total, err);
    TL_TRY(tl_store_size(s, key, total, err));
    *got = *total < len ? (size_t)*total : len;
    return tl_store_get_range(s, key, 0, *got, dst, err);
}
