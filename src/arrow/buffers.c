#include "arrow/buffers.h"

#include <stdlib.h>
#include <string.h>

void *tl_buffer_alloc(struct ArrowArray *array, int64_t i, size_t size)
{
    size_t rounded = (size + 63) & ~(size_t)63;
    if (rounded < size) return NULL;
    if (rounded == 0) rounded = 64;
    uint8_t *p = aligned_alloc(64, rounded);
    if (p == NULL) return NULL;
    memset(p + size, 0, rounded - size);
    tl_array_set_buffer(array, i, p);
    return p;
}

int64_t tl_bitmap_count(const uint8_t *bits, int64_t offset, int64_t length)
{
    int64_t count = 0, i = offset, end = offset + length;
    for (; i < end && (i & 7); i++) count += tl_bit_get(bits, i);
    const uint8_t *p = bits + (i >> 3);
    for (; i + 64 <= end; i += 64, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        count += __builtin_popcountll(w);
    }
    for (; i + 8 <= end; i += 8, p++) count += __builtin_popcount(*p);
    for (; i < end; i++) count += tl_bit_get(bits, i);
    return count;
}

static void copy_bit(uint8_t *dst, int64_t d, const uint8_t *src, int64_t s)
{
    if (tl_bit_get(src, s))
        tl_bit_set(dst, d);
    else
        tl_bit_clear(dst, d);
}

void tl_bitmap_copy(uint8_t *dst, int64_t dst_off, const uint8_t *src, int64_t src_off,
                    int64_t length)
{
    /* Bit by bit until the destination is byte aligned, then whole bytes. */
    for (; length > 0 && (dst_off & 7); length--) copy_bit(dst, dst_off++, src, src_off++);
    uint8_t *d = dst + (dst_off >> 3);
    const uint8_t *s = src + (src_off >> 3);
    int64_t nbytes = length >> 3;
    int shift = (int)(src_off & 7);
    if (shift == 0) {
        memcpy(d, s, (size_t)nbytes);
    } else {
        /* Both source bytes hold bits of this destination byte, so both are in range. */
        for (int64_t k = 0; k < nbytes; k++)
            d[k] = (uint8_t)((s[k] >> shift) | (s[k + 1] << (8 - shift)));
    }
    dst_off += nbytes * 8;
    src_off += nbytes * 8;
    for (length -= nbytes * 8; length > 0; length--) copy_bit(dst, dst_off++, src, src_off++);
}

void tl_bitmap_fill(uint8_t *dst, int64_t offset, int64_t length, bool value)
{
    int64_t i = offset, end = offset + length;
    for (; i < end && (i & 7); i++) value ? tl_bit_set(dst, i) : tl_bit_clear(dst, i);
    int64_t nbytes = (end - i) >> 3;
    if (nbytes > 0) memset(dst + (i >> 3), value ? 0xff : 0, (size_t)nbytes);
    for (i += nbytes * 8; i < end; i++) value ? tl_bit_set(dst, i) : tl_bit_clear(dst, i);
}

tl_status tl_validity_copy(const tl_array_view *v, struct ArrowArray *out, tl_error *err)
{
    out->null_count = 0;
    tl_array_set_buffer(out, 0, NULL);
    bool all_null = v->type.id == TL_ATYPE_NULL && !v->is_dictionary;
    if (v->validity == NULL && !all_null) return TL_OK;
    int64_t valid = all_null ? 0 : tl_bitmap_count(v->validity, v->offset, v->length);
    if (valid == v->length) return TL_OK;
    uint8_t *bits = tl_buffer_alloc(out, 0, (size_t)(v->length + 7) / 8);
    if (bits == NULL) return tl_error_nomem(err);
    if (all_null)
        memset(bits, 0, (size_t)(v->length + 7) / 8);
    else
        tl_bitmap_copy(bits, 0, v->validity, v->offset, v->length);
    out->null_count = v->length - valid;
    return TL_OK;
}

/* The first j in [first, last) with o[j + 1] < o[j], or -1. Each block is
 * tested without an exit per element, which the compiler vectorizes (the
 * scalar loop with its early exit was 1% of the notification server's CPU);
 * only a block with a drop is searched for it. */
#define OFFSETS_BLOCK 1024
#define FIRST_DROP(name, T)                                                                        \
    static int64_t name(const T *o, int64_t first, int64_t last)                                   \
    {                                                                                              \
        for (int64_t j = first; j < last; j += OFFSETS_BLOCK) {                                    \
            int64_t end = last - j > OFFSETS_BLOCK ? j + OFFSETS_BLOCK : last;                     \
            int drop = 0;                                                                          \
            for (int64_t k = j; k < end; k++) drop |= o[k + 1] < o[k];                             \
            for (int64_t k = j; drop && k < end; k++)                                              \
                if (o[k + 1] < o[k]) return k;                                                     \
        }                                                                                          \
        return -1;                                                                                 \
    }
FIRST_DROP(first_drop32, int32_t)
FIRST_DROP(first_drop64, int64_t)

tl_status tl_offsets_check(const tl_array_view *v, tl_error *err)
{
    int64_t first = v->offset, last = v->offset + v->length;
    bool large = tl_atype_is_large(v->type.id);
    int64_t bad =
        large ? first_drop64(v->values, first, last) : first_drop32(v->values, first, last);
    if (bad < 0) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID, "offsets decrease at row %lld of a %s array",
                        (long long)(bad - first), large ? "64-bit offset" : "32-bit offset");
}

void tl_view_of_owned(const tl_arrow_type *type, const struct ArrowArray *array, tl_array_view *out)
{
    memset(out, 0, sizeof *out);
    out->type = *type;
    out->array = array;
    out->length = array->length;
    out->offset = array->offset;
    out->null_count = array->null_count;
    if (array->n_buffers > 0 && array->null_count != 0) out->validity = array->buffers[0];
    if (array->n_buffers > 1) out->values = array->buffers[1];
    if (array->n_buffers > 2) out->data = array->buffers[2];
}

int tl_type_byte_width(const tl_arrow_type *type)
{
    int bits = tl_arrow_type_bit_width(type);
    return bits >= 8 ? bits / 8 : 0;
}

bool tl_type_equal(const tl_arrow_type *a, const tl_arrow_type *b)
{
    if (a->id != b->id) return false;
    switch (a->id) {
    case TL_ATYPE_FIXED_BINARY:
        return a->byte_width == b->byte_width;
    case TL_ATYPE_DECIMAL128:
        return a->precision == b->precision && a->scale == b->scale;
    case TL_ATYPE_TIME32:
    case TL_ATYPE_TIME64:
        return a->unit == b->unit;
    case TL_ATYPE_TIMESTAMP:
        return a->unit == b->unit && a->has_tz == b->has_tz && strcmp(a->tz, b->tz) == 0;
    default:
        return true;
    }
}
