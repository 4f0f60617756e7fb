#include "arrow/view_decode.h"

#include <string.h>

#include "arrow/buffers.h"

#define INLINE_BYTES 12

typedef struct view_source {
    const uint8_t *views;
    const uint8_t *const *data; /* variadic buffers */
    const int64_t *sizes;       /* their sizes: the last buffer of the array */
    int64_t n_data;
} view_source;

/* The bytes of view i, or NULL when the view points outside its buffer. */
static const uint8_t *view_bytes(const view_source *s, int64_t i, int32_t *len)
{
    const uint8_t *v = s->views + 16 * i;
    int32_t n;
    memcpy(&n, v, 4);
    *len = n;
    if (n < 0) return NULL;
    if (n <= INLINE_BYTES) return v + 4;
    int32_t buf, off;
    memcpy(&buf, v + 8, 4);
    memcpy(&off, v + 12, 4);
    if (buf < 0 || buf >= s->n_data || off < 0 || s->data[buf] == NULL) return NULL;
    if ((int64_t)off + n > s->sizes[buf]) return NULL;
    return s->data[buf] + off;
}

static tl_status measure(const tl_array_view *src, const view_source *s, int64_t *total,
                         tl_error *err)
{
    *total = 0;
    for (int64_t i = 0; i < src->length; i++) {
        if (tl_view_is_null(src, i)) continue;
        int32_t len;
        if (view_bytes(s, src->offset + i, &len) == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "string view of row %lld is out of bounds",
                                (long long)i);
        *total += len;
    }
    return TL_OK;
}

static void fill(const tl_array_view *src, const view_source *s, int64_t *offsets, uint8_t *data)
{
    offsets[0] = 0;
    for (int64_t i = 0; i < src->length; i++) {
        int32_t len = 0;
        const uint8_t *p = tl_view_is_null(src, i) ? NULL : view_bytes(s, src->offset + i, &len);
        if (p && len) memcpy(data + offsets[i], p, (size_t)len);
        offsets[i + 1] = offsets[i] + (p ? len : 0);
    }
}

tl_status tl_arrow_views_decode(const tl_array_view *src, struct ArrowArray *out, tl_error *err)
{
    const struct ArrowArray *a = src->array;
    view_source s = {
        .views = src->values,
        .data = (const uint8_t *const *)a->buffers + 2,
        .sizes = a->buffers[a->n_buffers - 1],
        .n_data = a->n_buffers - 3,
    };
    if (s.n_data > 0 && s.sizes == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "string view array without buffer sizes");
    int64_t total;
    TL_TRY(measure(src, &s, &total, err));
    TL_TRY(tl_array_init(out, 3, 0, err));
    out->length = src->length;
    int64_t *offsets = tl_array_alloc_buffer(out, 1, (size_t)(src->length + 1) * sizeof(int64_t));
    uint8_t *data = tl_array_alloc_buffer(out, 2, (size_t)total);
    tl_status st = offsets && data ? tl_validity_copy(src, out, err) : tl_error_nomem(err);
    if (st != TL_OK) {
        tl_array_release(out);
        return st;
    }
    fill(src, &s, offsets, data);
    return TL_OK;
}
