#include "formats/parquet/parquet_stats.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

void tl_parquet_column_stats_clear(tl_parquet_column_stats *s)
{
    free(s->min);
    free(s->max);
    s->min = s->max = NULL;
    s->min_len = s->max_len = 0;
    s->has_min_max = false;
}

void tl_parquet_file_stats_free(tl_parquet_file_stats *s)
{
    if (s == NULL) return;
    for (size_t i = 0; i < s->n_columns; i++) tl_parquet_column_stats_clear(&s->columns[i]);
    free(s->columns);
    free(s->row_group_offsets);
    memset(s, 0, sizeof *s);
}

static int cmp_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return alen < blen ? -1 : alen > blen;
}

static int cmp_decimal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    bool an = alen && (a[0] & 0x80), bn = blen && (b[0] & 0x80);
    if (an != bn) return an ? -1 : 1;
    /* Same sign: sign-extend the shorter one, then compare as unsigned bytes. */
    uint8_t pad = an ? 0xFF : 0x00;
    size_t n = alen > blen ? alen : blen;
    for (size_t i = 0; i < n; i++) {
        uint8_t x = i < n - alen ? pad : a[i - (n - alen)];
        uint8_t y = i < n - blen ? pad : b[i - (n - blen)];
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y))

int tl_pq_order_compare(tl_pq_order order, const uint8_t *a, size_t alen, const uint8_t *b,
                        size_t blen)
{
    switch (order) {
    case TL_PQ_ORDER_BOOL:
        return CMP(alen ? a[0] : 0, blen ? b[0] : 0);
    case TL_PQ_ORDER_I32:
        if (alen < 4 || blen < 4) break;
        return CMP((int32_t)tl_load_le32(a), (int32_t)tl_load_le32(b));
    case TL_PQ_ORDER_U32:
        if (alen < 4 || blen < 4) break;
        return CMP(tl_load_le32(a), tl_load_le32(b));
    case TL_PQ_ORDER_I64:
        if (alen < 8 || blen < 8) break;
        return CMP((int64_t)tl_load_le64(a), (int64_t)tl_load_le64(b));
    case TL_PQ_ORDER_U64:
        if (alen < 8 || blen < 8) break;
        return CMP(tl_load_le64(a), tl_load_le64(b));
    case TL_PQ_ORDER_FLOAT: {
        if (alen < 4 || blen < 4) break;
        float x, y;
        uint32_t ux = tl_load_le32(a), uy = tl_load_le32(b);
        memcpy(&x, &ux, 4);
        memcpy(&y, &uy, 4);
        return CMP(x, y);
    }
    case TL_PQ_ORDER_DOUBLE: {
        if (alen < 8 || blen < 8) break;
        double x, y;
        uint64_t ux = tl_load_le64(a), uy = tl_load_le64(b);
        memcpy(&x, &ux, 8);
        memcpy(&y, &uy, 8);
        return CMP(x, y);
    }
    case TL_PQ_ORDER_DECIMAL_BE:
        return cmp_decimal(a, alen, b, blen);
    case TL_PQ_ORDER_BYTES:
    case TL_PQ_ORDER_NONE:
        break;
    }
    return cmp_bytes(a, alen, b, blen);
}

int tl_pq_stats_take(uint8_t **dst, size_t *dst_len, const uint8_t *src, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (p == NULL) return -1;
    if (len) memcpy(p, src, len);
    free(*dst);
    *dst = p;
    *dst_len = len;
    return 0;
}
