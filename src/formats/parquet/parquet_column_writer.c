#include "formats/parquet/parquet_column_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/grow.h"
#include "formats/parquet/parquet_encoding.h"

/* Past this many dictionary bytes a chunk's further pages are PLAIN. */
#define TL_PQ_DICT_LIMIT ((size_t)1 << 20)

/* ---- Min/max ---- */

void tl_pq_minmax_clear(tl_pq_minmax *m)
{
    free(m->min);
    free(m->max);
    memset(m, 0, sizeof *m);
}

int tl_pq_minmax_update(tl_pq_minmax *m, tl_pq_order order, const uint8_t *lo, size_t lo_len,
                        const uint8_t *hi, size_t hi_len)
{
    if (!m->has || tl_pq_order_compare(order, lo, lo_len, m->min, m->min_len) < 0)
        if (tl_pq_stats_take(&m->min, &m->min_len, lo, lo_len) != 0) return -1;
    if (!m->has || tl_pq_order_compare(order, hi, hi_len, m->max, m->max_len) > 0)
        if (tl_pq_stats_take(&m->max, &m->max_len, hi, hi_len) != 0) return -1;
    m->has = true;
    return 0;
}

static tl_status page_minmax(tl_pq_column_writer *w, const void *lo, const void *hi, size_t len,
                             tl_error *err)
{
    if (tl_pq_minmax_update(&w->page_mm, w->desc->order, lo, len, hi, len) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

/* ---- Statistics of freshly staged PLAIN values ---- */

static tl_status stats_int32(tl_pq_column_writer *w, const int32_t *v, size_t n, tl_error *err)
{
    if (n == 0) return TL_OK;
    uint8_t a[4], b[4];
    if (w->desc->order == TL_PQ_ORDER_U32) {
        uint32_t lo = UINT32_MAX, hi = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t x = (uint32_t)v[i];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        tl_store_le32(a, lo);
        tl_store_le32(b, hi);
    } else {
        int32_t lo = INT32_MAX, hi = INT32_MIN;
        for (size_t i = 0; i < n; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
        tl_store_le32(a, (uint32_t)lo);
        tl_store_le32(b, (uint32_t)hi);
    }
    return page_minmax(w, a, b, 4, err);
}

static tl_status stats_int64(tl_pq_column_writer *w, const int64_t *v, size_t n, tl_error *err)
{
    if (n == 0) return TL_OK;
    uint8_t a[8], b[8];
    if (w->desc->order == TL_PQ_ORDER_U64) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t x = (uint64_t)v[i];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        tl_store_le64(a, lo);
        tl_store_le64(b, hi);
    } else {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
        tl_store_le64(a, (uint64_t)lo);
        tl_store_le64(b, (uint64_t)hi);
    }
    return page_minmax(w, a, b, 8, err);
}

/* The least and greatest of v[0, n) and how many are NaN: NaN never becomes
 * min or max (comparisons with it are false). */
static void scan_float(const float *v, size_t n, float *lo, float *hi, int64_t *nans)
{
    float l = INFINITY, h = -INFINITY;
    int64_t k = 0;
    for (size_t i = 0; i < n; i++) {
        float x = v[i];
        k += x != x;
        l = x < l ? x : l;
        h = x > h ? x : h;
    }
    *lo = l, *hi = h, *nans = k;
}

/* Two lanes at a time where SSE2 is (every x86-64): minpd(x, l) is
 * x < l ? x : l lane by lane, so a NaN x leaves l as the scalar loop does;
 * the scalar loop compiled to one value per iteration (a float column's
 * statistics were a tenth of compacting the benchmark's files). */
static void scan_double(const double *v, size_t n, double *lo, double *hi, int64_t *nans)
{
    double l = INFINITY, h = -INFINITY;
    int64_t k = 0;
    size_t i = 0;
#ifdef __SSE2__
    __m128d vl = _mm_set1_pd(INFINITY), vh = _mm_set1_pd(-INFINITY);
    __m128i vk = _mm_setzero_si128();
    for (; n - i >= 2; i += 2) {
        __m128d x = _mm_loadu_pd(v + i);
        vl = _mm_min_pd(x, vl);
        vh = _mm_max_pd(x, vh);
        vk = _mm_sub_epi64(vk, _mm_castpd_si128(_mm_cmpunord_pd(x, x))); /* -1 per NaN */
    }
    double ls[2], hs[2];
    int64_t ks[2];
    _mm_storeu_pd(ls, vl);
    _mm_storeu_pd(hs, vh);
    _mm_storeu_si128((__m128i *)(void *)ks, vk);
    l = ls[0] < ls[1] ? ls[0] : ls[1];
    h = hs[0] > hs[1] ? hs[0] : hs[1];
    k = ks[0] + ks[1];
#endif
    for (; i < n; i++) {
        double x = v[i];
        k += x != x;
        l = x < l ? x : l;
        h = x > h ? x : h;
    }
    *lo = l, *hi = h, *nans = k;
}

/* Zeros are widened to -0.0 / +0.0 as the Parquet spec asks. */
#define FLOAT_STATS(T, BITS)                                                                       \
    static tl_status stats_##T(tl_pq_column_writer *w, const T *v, size_t n, tl_error *err)        \
    {                                                                                              \
        T lo, hi;                                                                                  \
        int64_t nans;                                                                              \
        scan_##T(v, n, &lo, &hi, &nans);                                                           \
        w->page_nans += nans;                                                                      \
        if ((int64_t)n == nans) return TL_OK;                                                      \
        if (lo == 0) lo = -(T)0.0;                                                                 \
        if (hi == 0) hi = (T)0.0;                                                                  \
        uint##BITS##_t ul, uh;                                                                     \
        memcpy(&ul, &lo, sizeof ul);                                                               \
        memcpy(&uh, &hi, sizeof uh);                                                               \
        uint8_t a[BITS / 8], b[BITS / 8];                                                          \
        tl_store_le##BITS(a, ul);                                                                  \
        tl_store_le##BITS(b, uh);                                                                  \
        return page_minmax(w, a, b, BITS / 8, err);                                                \
    }
FLOAT_STATS(float, 32)
FLOAT_STATS(double, 64)

static tl_status stats_fixed(tl_pq_column_writer *w, const uint8_t *v, size_t n, size_t width,
                             tl_error *err)
{
    tl_pq_order order = w->desc->order;
    if (n == 0 || order == TL_PQ_ORDER_NONE) return TL_OK;
    const uint8_t *lo = v, *hi = v;
    for (size_t i = 1; i < n; i++) {
        const uint8_t *x = v + i * width;
        if (tl_pq_order_compare(order, x, width, lo, width) < 0) lo = x;
        if (tl_pq_order_compare(order, x, width, hi, width) > 0) hi = x;
    }
    return page_minmax(w, lo, hi, width, err);
}

/* ---- Staging values ---- */

static void *stage(tl_pq_column_writer *w, size_t bytes, tl_error *err)
{
    if (tl_buf_reserve(&w->page_values, bytes) != 0) {
        tl_error_nomem(err);
        return NULL;
    }
    return w->page_values.data + w->page_values.len;
}

/* Copies or converts the non-null values of rows [start, start + n) into T_DST. */
#define GATHER(T_SRC, T_DST, EXPR)                                                                 \
    do {                                                                                           \
        const T_SRC *src_ = (const T_SRC *)v->values + v->offset + start;                          \
        T_DST *dst_ = stage(w, (size_t)n * sizeof(T_DST), err);                                    \
        if (dst_ == NULL) return TL_ERR_NOMEM;                                                     \
        size_t k_ = 0;                                                                             \
        if (valid == NULL) {                                                                       \
            for (int64_t i = 0; i < n; i++) {                                                      \
                T_SRC x = src_[i];                                                                 \
                dst_[k_++] = (T_DST)(EXPR);                                                        \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                      \
                if (!tl_bit_get(valid, v->offset + start + i)) continue;                           \
                T_SRC x = src_[i];                                                                 \
                dst_[k_++] = (T_DST)(EXPR);                                                        \
            }                                                                                      \
        }                                                                                          \
        w->page_values.len += k_ * sizeof(T_DST);                                                  \
        staged = dst_;                                                                             \
        count = k_;                                                                                \
    } while (0)

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static tl_status stage_int32(tl_pq_column_writer *w, const tl_array_view *v, const uint8_t *valid,
                             int64_t start, int64_t n, tl_error *err)
{
    void *staged;
    size_t count = 0;
    switch (w->desc->conv) {
    case TL_PQ_CONV_I8:
        GATHER(int8_t, int32_t, x);
        break;
    case TL_PQ_CONV_U8:
        GATHER(uint8_t, int32_t, x);
        break;
    case TL_PQ_CONV_I16:
        GATHER(int16_t, int32_t, x);
        break;
    case TL_PQ_CONV_U16:
        GATHER(uint16_t, int32_t, x);
        break;
    case TL_PQ_CONV_SCALE32:
        GATHER(int32_t, int32_t, (int64_t)x * 1000);
        break;
    case TL_PQ_CONV_DATE64:
        GATHER(int64_t, int32_t, floor_div(x, 86400000));
        break;
    default:
        GATHER(int32_t, int32_t, x);
        break;
    }
    if (w->desc->elem.type == TL_PQ_FLOAT) return stats_float(w, staged, count, err);
    return stats_int32(w, staged, count, err);
}

static tl_status stage_int64(tl_pq_column_writer *w, const tl_array_view *v, const uint8_t *valid,
                             int64_t start, int64_t n, tl_error *err)
{
    void *staged;
    size_t count = 0;
    if (w->desc->conv == TL_PQ_CONV_SCALE64)
        GATHER(int64_t, int64_t, (int64_t)((uint64_t)x * 1000u));
    else
        GATHER(int64_t, int64_t, x);
    if (w->desc->elem.type == TL_PQ_DOUBLE) return stats_double(w, staged, count, err);
    return stats_int64(w, staged, count, err);
}

static tl_status stage_bool(tl_pq_column_writer *w, const tl_array_view *v, const uint8_t *valid,
                            int64_t start, int64_t n, tl_error *err)
{
    size_t need = (size_t)(w->page_bools + n + 7) / 8;
    if (need > w->page_values.len &&
        tl_buf_extend(&w->page_values, need - w->page_values.len) == NULL)
        return tl_error_nomem(err);
    uint8_t *bits = w->page_values.data;
    const uint8_t *src = v->values;
    int64_t first = w->page_bools, k = first;
    if (valid == NULL) {
        tl_pq_bits_copy(bits, k, src, v->offset + start, n);
        k += n;
    } else {
        for (int64_t i = 0; i < n; i++) {
            int64_t j = v->offset + start + i;
            if (!tl_bit_get(valid, j)) continue;
            if (tl_bit_get(src, j))
                tl_pq_bit_on(bits, k);
            else
                tl_pq_bit_off(bits, k);
            k++;
        }
    }
    w->page_bools = k;
    if (k == first) return TL_OK;
    int64_t ones = tl_pq_bits_count(bits, first, k - first);
    uint8_t lo = ones == k - first, hi = ones > 0;
    return page_minmax(w, &lo, &hi, 1, err);
}

static tl_status stage_fixed(tl_pq_column_writer *w, const tl_array_view *v, const uint8_t *valid,
                             int64_t start, int64_t n, tl_error *err)
{
    size_t width = (size_t)w->desc->phys_width;
    bool decimal = w->desc->conv == TL_PQ_CONV_DECIMAL;
    bool interval = w->desc->conv == TL_PQ_CONV_INTERVAL;
    size_t src_width = decimal || interval ? 16 : width;
    uint8_t *dst = stage(w, (size_t)n * width, err);
    if (dst == NULL) return TL_ERR_NOMEM;
    const uint8_t *src = (const uint8_t *)v->values + (size_t)(v->offset + start) * src_width;
    size_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (valid && !tl_bit_get(valid, v->offset + start + i)) continue;
        const uint8_t *x = src + (size_t)i * src_width;
        uint8_t *d = dst + k * width;
        if (decimal) {
            /* Little-endian int128 to big-endian two's complement of `width` bytes. */
            for (size_t b = 0; b < width; b++) d[b] = x[width - 1 - b];
        } else if (interval) {
            /* Months, days (as they are) and nanoseconds as whole milliseconds: the
             * shredder refused values that do not fit. */
            int64_t nanos;
            memcpy(d, x, 8);
            memcpy(&nanos, x + 8, 8);
            tl_store_le32(d + 8, (uint32_t)(nanos / 1000000));
        } else {
            memcpy(d, x, width);
        }
        k++;
    }
    w->page_values.len += k * width;
    return stats_fixed(w, dst, k, width, err);
}

static tl_status stage_bytes_plain(tl_pq_column_writer *w, const tl_array_view *v,
                                   const uint8_t *valid, int64_t start, int64_t n, tl_error *err)
{
    int64_t first_len = 0, last_len = 0;
    const uint8_t *first = tl_view_bytes(v, start, &first_len);
    const uint8_t *last = tl_view_bytes(v, start + n - 1, &last_len);
    if (last + last_len < first)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": offsets decrease", w->desc->name);
    size_t total = (size_t)(last + last_len - first) + 4 * (size_t)n;
    uint8_t *dst = stage(w, total, err);
    if (dst == NULL) return TL_ERR_NOMEM;
    size_t pos = 0;
    const uint8_t *lo = NULL, *hi = NULL;
    size_t lo_len = 0, hi_len = 0;
    for (int64_t i = 0; i < n; i++) {
        if (valid && !tl_bit_get(valid, v->offset + start + i)) continue;
        int64_t len = 0;
        const uint8_t *p = tl_view_bytes(v, start + i, &len);
        if (len < 0 || len > INT32_MAX || (uint64_t)len + 4 > total - pos)
            return tl_error_set(err, TL_ERR_INVALID,
                                "column \"%s\": bad value length %lld at row %lld", w->desc->name,
                                (long long)len, (long long)(start + i));
        tl_store_le32(dst + pos, (uint32_t)len);
        if (len) memcpy(dst + pos + 4, p, (size_t)len);
        pos += 4 + (size_t)len;
        if (lo == NULL || tl_pq_order_compare(TL_PQ_ORDER_BYTES, p, (size_t)len, lo, lo_len) < 0)
            lo = p, lo_len = (size_t)len;
        if (hi == NULL || tl_pq_order_compare(TL_PQ_ORDER_BYTES, p, (size_t)len, hi, hi_len) > 0)
            hi = p, hi_len = (size_t)len;
    }
    w->page_values.len += pos;
    if (lo == NULL) return TL_OK;
    if (tl_pq_minmax_update(&w->page_mm, TL_PQ_ORDER_BYTES, lo, lo_len, hi, hi_len) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

/* Records that the current page uses dictionary entry idx (once per page). */
static int note_distinct(tl_pq_column_writer *w, uint32_t idx)
{
    if (idx >= w->stamp_cap) {
        size_t old = w->stamp_cap;
        if (TL_GROW(w->stamp, w->stamp_cap, (size_t)idx + 1, 1024) != 0) return -1;
        memset(w->stamp + old, 0, (w->stamp_cap - old) * sizeof *w->stamp);
    }
    if (w->stamp[idx] == w->page_no) return 0;
    w->stamp[idx] = w->page_no;
    if (TL_GROW(w->page_distinct, w->page_distinct_cap, w->page_distinct_n + 1, 1024) != 0)
        return -1;
    w->page_distinct[w->page_distinct_n++] = idx;
    return 0;
}

/* Whether a[0, len) and b[0, len) are equal. Series keys and other repeated
 * values are mostly 8 to 16 bytes: two overlapping words each, inline,
 * instead of a call to memcmp for every value. */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, size_t len)
{
    if (len >= 8 && len <= 16)
        return tl_load_le64(a) == tl_load_le64(b) &&
               tl_load_le64(a + len - 8) == tl_load_le64(b + len - 8);
    return len == 0 || memcmp(a, b, len) == 0;
}

static tl_status stage_bytes_dict(tl_pq_column_writer *w, const tl_array_view *v,
                                  const uint8_t *valid, int64_t start, int64_t n, tl_error *err)
{
    if (TL_GROW(w->page_idx, w->page_idx_cap, w->page_idx_n + (size_t)n, 1024) != 0)
        return tl_error_nomem(err);
    const uint8_t *prev = NULL;
    int64_t prev_len = -1;
    uint32_t idx = 0;
    for (int64_t i = 0; i < n; i++) {
        if (valid && !tl_bit_get(valid, v->offset + start + i)) continue;
        int64_t len = 0;
        const uint8_t *p = tl_view_bytes(v, start + i, &len);
        /* Sorted series repeat values in runs: skip the hash for a repeat. */
        if (len != prev_len || !same_bytes(p, prev, (size_t)len)) {
            if (len > INT32_MAX)
                return tl_error_set(err, TL_ERR_INVALID,
                                    "column \"%s\": value of %lld bytes is too long", w->desc->name,
                                    (long long)len);
            if (tl_pq_dict_insert(&w->dict, p, (size_t)len, &idx) != 0 ||
                note_distinct(w, idx) != 0)
                return tl_error_nomem(err);
            prev = p;
            prev_len = len;
        }
        w->page_idx[w->page_idx_n++] = idx;
    }
    return TL_OK;
}

static tl_status stage_values(tl_pq_column_writer *w, const tl_array_view *v, const uint8_t *valid,
                              int64_t start, int64_t n, tl_error *err)
{
    switch (w->desc->elem.type) {
    case TL_PQ_BOOLEAN:
        return stage_bool(w, v, valid, start, n, err);
    case TL_PQ_INT32:
    case TL_PQ_FLOAT:
        return stage_int32(w, v, valid, start, n, err);
    case TL_PQ_INT64:
    case TL_PQ_DOUBLE:
        return stage_int64(w, v, valid, start, n, err);
    case TL_PQ_FIXED_LEN_BYTE_ARRAY:
        return stage_fixed(w, v, valid, start, n, err);
    case TL_PQ_BYTE_ARRAY:
        if (w->dict_on) return stage_bytes_dict(w, v, valid, start, n, err);
        return stage_bytes_plain(w, v, valid, start, n, err);
    default:
        return tl_error_set(err, TL_ERR_INTERNAL, "unexpected physical type");
    }
}

static tl_status stage_slice(tl_pq_column_writer *w, const tl_array_view *v, int64_t start,
                             int64_t n, tl_error *err)
{
    int64_t nulls = 0;
    if (v->validity) nulls = n - tl_pq_bits_count(v->validity, v->offset + start, n);
    if (nulls && !w->desc->nullable)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is not nullable but has nulls",
                            w->desc->name);
    if (w->desc->nullable) {
        if (v->validity)
            tl_pq_bits_copy(w->page_valid, w->page_rows, v->validity, v->offset + start, n);
        else
            tl_pq_bits_set_range(w->page_valid, w->page_rows, n, true);
    }
    if (nulls < n) TL_TRY(stage_values(w, v, nulls ? v->validity : NULL, start, n, err));
    w->page_rows += n;
    w->page_nulls += nulls;
    return TL_OK;
}

/* ---- Pages ---- */

static tl_status dict_page_minmax(tl_pq_column_writer *w, tl_error *err)
{
    if (w->page_distinct_n == 0) return TL_OK;
    const uint8_t *lo = NULL, *hi = NULL;
    uint32_t lo_len = 0, hi_len = 0;
    for (size_t i = 0; i < w->page_distinct_n; i++) {
        uint32_t len = 0;
        const uint8_t *p = tl_pq_dict_value(&w->dict, w->page_distinct[i], &len);
        if (lo == NULL || tl_pq_order_compare(TL_PQ_ORDER_BYTES, p, len, lo, lo_len) < 0)
            lo = p, lo_len = len;
        if (hi == NULL || tl_pq_order_compare(TL_PQ_ORDER_BYTES, p, len, hi, hi_len) > 0)
            hi = p, hi_len = len;
    }
    if (tl_pq_minmax_update(&w->page_mm, TL_PQ_ORDER_BYTES, lo, lo_len, hi, hi_len) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

static int encode_values(tl_pq_column_writer *w, tl_buf *s)
{
    const tl_buf *v = &w->page_values;
    size_t width = (size_t)w->desc->phys_width, n = v->len / width;
    if (w->value_encoding == TL_PQ_ENC_BYTE_STREAM_SPLIT)
        return tl_pq_byte_stream_split_encode(s, v->data, n, width);
    if (width == 4) return tl_pq_delta_encode_i32(s, (const int32_t *)(const void *)v->data, n);
    return tl_pq_delta_encode(s, (const int64_t *)(const void *)v->data, n, false);
}

/* Levels (length-prefixed, v1 layout) then values, uncompressed, into scratch. */
static tl_status append_levels(tl_buf *s, const uint32_t *levels, size_t n, int max, tl_error *err)
{
    size_t at = s->len;
    if (tl_buf_extend(s, 4) == NULL ||
        tl_pq_rle_encode(s, levels, n, tl_pq_bit_width((uint64_t)max)) != 0)
        return tl_error_nomem(err);
    tl_store_le32(s->data + at, (uint32_t)(s->len - at - 4));
    return TL_OK;
}

static tl_status assemble_page(tl_pq_column_writer *w, bool dict, tl_error *err)
{
    tl_buf *s = &w->scratch;
    s->len = 0;
    const tl_pq_column_desc *d = w->desc;
    size_t nl = (size_t)w->page_levels;
    if (d->levels && d->max_rep > 0) TL_TRY(append_levels(s, w->page_rep, nl, d->max_rep, err));
    if (d->levels && d->max_def > 0) TL_TRY(append_levels(s, w->page_def, nl, d->max_def, err));
    if (!d->levels && d->nullable) {
        if (tl_buf_extend(s, 4) == NULL ||
            tl_pq_rle_encode_bitmap(s, w->page_valid, (size_t)w->page_rows) != 0)
            return tl_error_nomem(err);
        tl_store_le32(s->data, (uint32_t)(s->len - 4));
    }
    int rc;
    if (dict) {
        int bw = tl_pq_bit_width(w->dict.n > 1 ? w->dict.n - 1 : 1);
        rc = tl_buf_append_byte(s, (uint8_t)bw);
        if (rc == 0) rc = tl_pq_rle_encode(s, w->page_idx, w->page_idx_n, bw);
    } else if (w->desc->elem.type == TL_PQ_BOOLEAN) {
        rc = tl_buf_append(s, w->page_values.data, (size_t)(w->page_bools + 7) / 8);
    } else if (w->value_encoding != TL_PQ_ENC_PLAIN) {
        rc = encode_values(w, s);
    } else {
        rc = tl_buf_append(s, w->page_values.data, w->page_values.len);
    }
    if (rc != 0) return tl_error_nomem(err);
    if (s->len > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": a page exceeds 2 GiB",
                            w->desc->name);
    return TL_OK;
}

/* Compresses scratch and appends header + body to dst. An uncompressed
 * page (noisy floats, most often) goes from scratch to dst as it is, not
 * through a copy in comp. */
static tl_status emit_page(tl_pq_column_writer *w, tl_pq_page_header *h, tl_buf *dst, tl_error *err)
{
    bool raw = !w->comp_ready && w->codec == TL_PQ_CODEC_UNCOMPRESSED;
    if (!w->comp_ready && !raw) {
        w->comp.len = 0;
        TL_TRY(tl_pq_compress(w->cctx, w->codec, w->level, w->scratch.data, w->scratch.len,
                              &w->comp, err));
    }
    w->comp_ready = false;
    const tl_buf *body = raw ? &w->scratch : &w->comp;
    if (body->len > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": a page exceeds 2 GiB",
                            w->desc->name);
    h->uncompressed_page_size = (int32_t)w->scratch.len;
    h->compressed_page_size = (int32_t)body->len;
    w->header.len = 0;
    TL_TRY(tl_pq_write_page_header(&w->header, h, err));
    if (tl_buf_append(dst, w->header.data, w->header.len) != 0 ||
        tl_buf_append(dst, body->data, body->len) != 0)
        return tl_error_nomem(err);
    w->uncompressed += (int64_t)(w->header.len + w->scratch.len);
    return TL_OK;
}

static tl_status record_page(tl_pq_column_writer *w, int64_t offset, tl_error *err)
{
    if (TL_GROW(w->pages, w->pages_cap, w->n_pages + 1, 16) != 0) return tl_error_nomem(err);
    tl_pq_page_info *pi = &w->pages[w->n_pages++];
    pi->offset = offset;
    pi->size = (int32_t)(w->chunk.len - (size_t)offset);
    pi->first_row = w->rows;
    pi->null_count = w->page_nulls;
    pi->rows = w->page_rows;
    pi->values = w->desc->levels ? w->page_levels : w->page_rows;
    pi->mm = w->page_mm;
    memset(&w->page_mm, 0, sizeof w->page_mm);
    if (pi->mm.has && tl_pq_minmax_update(&w->mm, w->desc->order, pi->mm.min, pi->mm.min_len,
                                          pi->mm.max, pi->mm.max_len) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

static void page_reset(tl_pq_column_writer *w)
{
    w->rows += w->page_rows;
    w->values += w->desc->levels ? w->page_levels : w->page_rows;
    w->page_levels = 0;
    w->nulls += w->page_nulls;
    w->nans += w->page_nans;
    w->page_rows = w->page_nulls = w->page_nans = w->page_bools = 0;
    w->page_values.len = 0;
    w->page_idx_n = 0;
    w->page_distinct_n = 0;
    w->page_no++;
    tl_pq_minmax_clear(&w->page_mm);
}

static void maybe_stop_dict(tl_pq_column_writer *w, size_t page_values)
{
    if (!w->dict_on) return;
    bool too_big = w->dict.plain.len > TL_PQ_DICT_LIMIT;
    /* Mostly-distinct values gain nothing from a dictionary. */
    bool distinct = w->n_dict_pages == 1 && page_values >= 1024 && w->dict.n * 2 > page_values;
    if (too_big || distinct) w->dict_on = false;
}

static tl_status trial_size(tl_pq_column_writer *w, tl_pq_encoding enc, size_t *size, tl_error *err)
{
    w->value_encoding = enc;
    TL_TRY(assemble_page(w, false, err));
    w->comp.len = 0;
    TL_TRY(tl_pq_compress(w->cctx, w->codec, w->level, w->scratch.data, w->scratch.len, &w->comp,
                          err));
    *size = w->comp.len;
    return TL_OK;
}

/* Whether compression pays for the readers' time to undo it: noisy
 * full-precision floats, for one, shrink by a tenth at most, yet cost every
 * scan a decompression pass. Nor does a page that is small once encoded
 * (regular timestamps, delta-packed into a few KB): undoing the codec costs
 * a fixed set-up per page (DuckDB 1.4.4 makes a zstd context per page,
 * probing the CPU with cpuid, a trap to the hypervisor on a VM) worth more
 * than reading the few KB it saves. min_saving_pct 0 compresses every page. */
#define TL_PQ_CODEC_MIN_PAGE_SAVING 8192

static bool codec_pays(const tl_pq_column_writer *w, size_t compressed, size_t raw)
{
    return compressed * 100 <= raw * (size_t)(100 - w->min_saving_pct) &&
           (w->min_saving_pct == 0 || raw >= compressed + TL_PQ_CODEC_MIN_PAGE_SAVING);
}

static void drop_codec(tl_pq_column_writer *w)
{
    w->codec = TL_PQ_CODEC_UNCOMPRESSED;
    w->comp.len = 0;
}

/* Whether no compressed size could pay for a page of `raw` bytes (see
 * codec_pays): one smaller than the saving a page must make. Its trial
 * compressions are skipped, with the outcome they would have had: small
 * appends (a thousand rows, 8,000-byte float pages) and the last-value
 * index compressed every such page up to three times for nothing, a fifth
 * of a small append's CPU. */
static bool codec_cannot_pay(const tl_pq_column_writer *w, size_t raw)
{
    return w->codec_trial && w->min_saving_pct > 0 && raw < TL_PQ_CODEC_MIN_PAGE_SAVING;
}

/* The float trial of a page of more values first compresses its first this
 * many values in each encoding; only when that sample leaves the outcome
 * close (within TL_PQ_FLOAT_TRIAL_MARGIN percentage points) is the whole page
 * tried, as before. Compressing whole pages twice was most of the cost of
 * writing a compaction's output (pages of 8,000 to 20,000 noisy floats,
 * whose codec then does not pay by far). */
#define TL_PQ_FLOAT_TRIAL_VALUES 1024
#define TL_PQ_FLOAT_TRIAL_MARGIN 5

/* Compressed sizes of the first n values PLAIN and BYTE_STREAM_SPLIT. */
static tl_status sample_sizes(tl_pq_column_writer *w, size_t n, size_t *plain, size_t *split,
                              tl_error *err)
{
    size_t width = (size_t)w->desc->phys_width;
    w->comp.len = 0;
    TL_TRY(
        tl_pq_compress(w->cctx, w->codec, w->level, w->page_values.data, n * width, &w->comp, err));
    *plain = w->comp.len;
    w->trial.len = 0;
    if (tl_pq_byte_stream_split_encode(&w->trial, w->page_values.data, n, width) != 0)
        return tl_error_nomem(err);
    w->comp.len = 0;
    TL_TRY(tl_pq_compress(w->cctx, w->codec, w->level, w->trial.data, w->trial.len, &w->comp, err));
    *split = w->comp.len;
    return TL_OK;
}

/* What the sample makes clear, its compressed sizes scaled to the page's
 * `raw` bytes: 0 nothing; -1 the codec does not pay; 1 it pays, in the
 * encoding *enc. */
static int sample_verdict(const tl_pq_column_writer *w, double plain, double split, double raw,
                          tl_pq_encoding *enc)
{
    double lo = plain < split ? plain : split, hi = plain < split ? split : plain;
    double saving = 100.0 * (1.0 - lo / raw), margin = TL_PQ_FLOAT_TRIAL_MARGIN;
    int need = w->min_saving_pct;
    if (need > 0 && saving + margin <= need) return -1;
    bool pays = need == 0 || (saving >= need + margin &&
                              raw - lo >= TL_PQ_CODEC_MIN_PAGE_SAVING + raw * margin / 100.0);
    if (!pays || hi * 100.0 < lo * (100.0 + margin)) return 0;
    *enc = split < plain ? TL_PQ_ENC_BYTE_STREAM_SPLIT : TL_PQ_ENC_PLAIN;
    return 1;
}

/* Whether BYTE_STREAM_SPLIT beats PLAIN depends on the data (it wins on noisy
 * full-precision floats and loses on rounded ones): the chunk's first page decides,
 * and whether the codec stays with it. Uncompressed, both are the same size and
 * PLAIN is the cheaper to read. The PLAIN trial goes last: when PLAIN is
 * written, as when the codec does not pay (noisy floats), the page is the one
 * in scratch (page_ready), and compressed in comp when the codec stays. */
static tl_status full_trials(tl_pq_column_writer *w, tl_error *err)
{
    size_t split = 0, plain = 0;
    TL_TRY(trial_size(w, TL_PQ_ENC_BYTE_STREAM_SPLIT, &split, err));
    TL_TRY(trial_size(w, TL_PQ_ENC_PLAIN, &plain, err));
    w->value_encoding = split < plain ? TL_PQ_ENC_BYTE_STREAM_SPLIT : TL_PQ_ENC_PLAIN;
    if (w->codec_trial && !codec_pays(w, split < plain ? split : plain, w->scratch.len)) {
        drop_codec(w);
        w->value_encoding = TL_PQ_ENC_PLAIN;
    }
    w->page_ready = w->value_encoding == TL_PQ_ENC_PLAIN;
    w->comp_ready = w->page_ready && w->codec != TL_PQ_CODEC_UNCOMPRESSED;
    return TL_OK;
}

static tl_status choose_float_encoding(tl_pq_column_writer *w, tl_error *err)
{
    w->value_encoding = TL_PQ_ENC_PLAIN;
    TL_TRY(assemble_page(w, false, err));
    w->page_ready = true;
    w->float_trial = false;
    if (codec_cannot_pay(w, w->scratch.len)) {
        w->codec_trial = false;
        drop_codec(w);
        return TL_OK; /* PLAIN, as the trials would have decided */
    }
    size_t width = (size_t)w->desc->phys_width, n = w->page_values.len / width;
    int verdict = 0;
    tl_pq_encoding enc = TL_PQ_ENC_PLAIN;
    if (n > TL_PQ_FLOAT_TRIAL_VALUES && w->codec_trial) {
        size_t plain = 0, split = 0;
        TL_TRY(sample_sizes(w, TL_PQ_FLOAT_TRIAL_VALUES, &plain, &split, err));
        double raw = (double)w->scratch.len, scale = raw / (TL_PQ_FLOAT_TRIAL_VALUES * width);
        verdict = sample_verdict(w, plain * scale, split * scale, raw, &enc);
    }
    if (verdict == 0) TL_TRY(full_trials(w, err));
    if (verdict < 0) drop_codec(w); /* PLAIN, in scratch */
    if (verdict > 0) {
        w->value_encoding = enc;
        w->page_ready = enc == TL_PQ_ENC_PLAIN;
    }
    w->codec_trial = false;
    return TL_OK;
}

/* The chunk's first page decides its codec, unless it is dictionary-encoded or
 * all null: those keep the codec (their values are not yet seen). */
static tl_status choose_codec(tl_pq_column_writer *w, tl_error *err)
{
    bool cannot_pay = codec_cannot_pay(w, w->scratch.len);
    w->codec_trial = false;
    if ((w->desc->levels ? w->page_levels : w->page_rows) == w->page_nulls) return TL_OK;
    if (cannot_pay) {
        drop_codec(w);
        return TL_OK;
    }
    w->comp.len = 0;
    TL_TRY(tl_pq_compress(w->cctx, w->codec, w->level, w->scratch.data, w->scratch.len, &w->comp,
                          err));
    if (!codec_pays(w, w->comp.len, w->scratch.len))
        drop_codec(w);
    else
        w->comp_ready = true; /* the trial is the page's compressed form */
    return TL_OK;
}

static tl_status flush_page(tl_pq_column_writer *w, tl_error *err)
{
    if (w->page_rows == 0) return TL_OK;
    bool dict = w->dict_on;
    if (w->float_trial && w->page_values.len > 0) TL_TRY(choose_float_encoding(w, err));
    if (dict) {
        w->codec_trial = false;
        TL_TRY(dict_page_minmax(w, err));
    }
    if (!w->page_ready) TL_TRY(assemble_page(w, dict, err));
    w->page_ready = false;
    if (w->codec_trial) TL_TRY(choose_codec(w, err));
    tl_pq_page_header h = {.type = TL_PQ_DATA_PAGE, .has_data = true};
    h.data.num_values = (int32_t)(w->desc->levels ? w->page_levels : w->page_rows);
    h.data.encoding = dict ? TL_PQ_ENC_RLE_DICTIONARY : w->value_encoding;
    h.data.def_encoding = TL_PQ_ENC_RLE;
    h.data.rep_encoding = TL_PQ_ENC_RLE;
    int64_t offset = (int64_t)w->chunk.len;
    TL_TRY(emit_page(w, &h, &w->chunk, err));
    TL_TRY(record_page(w, offset, err));
    if (dict) {
        w->n_dict_pages++;
        w->dict_used = true;
    } else {
        w->n_plain_pages++;
    }
    size_t values = w->page_idx_n;
    page_reset(w);
    maybe_stop_dict(w, values);
    return TL_OK;
}

/* ---- Public ---- */

static tl_pq_encoding choose_encoding(const tl_pq_column_desc *d, bool compact)
{
    if (!compact) return TL_PQ_ENC_PLAIN;
    switch (d->elem.type) {
    case TL_PQ_INT32:
    case TL_PQ_INT64:
        return TL_PQ_ENC_DELTA_BINARY_PACKED;
    case TL_PQ_FLOAT:
    case TL_PQ_DOUBLE:
        return TL_PQ_ENC_BYTE_STREAM_SPLIT;
    default:
        return TL_PQ_ENC_PLAIN;
    }
}

static bool wants_codec_trial(const tl_pq_column_writer *w)
{
    return w->codec_default != TL_PQ_CODEC_UNCOMPRESSED && w->min_saving_pct > 0;
}

tl_status tl_pq_colw_init(tl_pq_column_writer *w, const tl_pq_column_desc *desc,
                          const tl_pq_colw_options *opts, tl_pq_codec_ctx *cctx, tl_error *err)
{
    memset(w, 0, sizeof *w);
    w->desc = desc;
    w->value_encoding = choose_encoding(desc, opts->compact);
    w->float_trial = w->float_trial_default = w->value_encoding == TL_PQ_ENC_BYTE_STREAM_SPLIT;
    w->codec = w->codec_default = opts->codec;
    w->level = opts->level;
    w->min_saving_pct = opts->min_saving_pct;
    w->codec_trial = wants_codec_trial(w);
    int64_t page_rows = opts->page_rows;
    w->page_rows_max = page_rows;
    w->cctx = cctx;
    w->page_no = 1;
    w->dict_allowed = desc->elem.type == TL_PQ_BYTE_ARRAY;
    w->dict_on = w->dict_allowed;
    w->page_valid = calloc((size_t)(page_rows + 7) / 8 + 8, 1);
    if (w->page_valid == NULL) return tl_error_nomem(err);
    return TL_OK;
}

tl_status tl_pq_colw_write(tl_pq_column_writer *w, const tl_array_view *v, int64_t start, int64_t n,
                           tl_error *err)
{
    while (n > 0) {
        if (w->dict_on && w->dict.plain.len > TL_PQ_DICT_LIMIT) {
            TL_TRY(flush_page(w, err));
            w->dict_on = false;
        }
        int64_t take = w->page_rows_max - w->page_rows;
        if (take > n) take = n;
        TL_TRY(stage_slice(w, v, start, take, err));
        if (w->page_rows == w->page_rows_max) TL_TRY(flush_page(w, err));
        start += take;
        n -= take;
    }
    return TL_OK;
}

/* ---- Nested columns: level entries ---- */

static tl_status grow_levels(tl_pq_column_writer *w, size_t need, tl_error *err)
{
    if (need <= w->page_levels_cap) return TL_OK;
    size_t cap = tl_grow_capacity(w->page_levels_cap, need, sizeof *w->page_def, 1024);
    if (cap == 0 || tl_realloc_array(&w->page_def, cap, sizeof *w->page_def) != 0 ||
        tl_realloc_array(&w->page_rep, cap, sizeof *w->page_rep) != 0)
        return tl_error_nomem(err);
    w->page_levels_cap = cap;
    return TL_OK;
}

/* Stages the entries [0, n) of whole rows into the page: levels, then the values
 * (runs of consecutive slots staged together). *used gets the values taken. */
static tl_status stage_levels(tl_pq_column_writer *w, const tl_array_view *v, const uint32_t *def,
                              const uint32_t *rep, const int64_t *slots, size_t n, int64_t rows,
                              size_t *used, tl_error *err)
{
    TL_TRY(grow_levels(w, (size_t)w->page_levels + n, err));
    size_t values = 0, max_def = (size_t)w->desc->max_def;
    for (size_t i = 0; i < n; i++) {
        w->page_def[w->page_levels + (int64_t)i] = def[i];
        values += def[i] == max_def;
    }
    if (rep) memcpy(w->page_rep + w->page_levels, rep, n * sizeof *rep);
    for (size_t k = 0; k < values;) {
        size_t e = k + 1;
        while (e < values && slots[e] == slots[e - 1] + 1) e++;
        TL_TRY(stage_values(w, v, NULL, slots[k], (int64_t)(e - k), err));
        k = e;
    }
    w->page_levels += (int64_t)n;
    w->page_nulls += (int64_t)(n - values);
    w->page_rows += rows;
    *used = values;
    return TL_OK;
}

static bool page_full(const tl_pq_column_writer *w)
{
    return w->page_rows >= w->page_rows_max || w->page_levels >= w->page_rows_max;
}

tl_status tl_pq_colw_write_levels(tl_pq_column_writer *w, const tl_array_view *v,
                                  const uint32_t *def, const uint32_t *rep, const int64_t *slots,
                                  size_t n, tl_error *err)
{
    if (w->desc->max_rep == 0) rep = NULL;
    size_t a = 0;
    while (a < n) {
        if (w->dict_on && w->dict.plain.len > TL_PQ_DICT_LIMIT) {
            TL_TRY(flush_page(w, err));
            w->dict_on = false;
        }
        /* Whole rows until the page is full (a row longer than a page gets one). */
        size_t b = a;
        int64_t rows = 0;
        do {
            b++;
            rows++;
            while (rep && b < n && rep[b] != 0) b++;
        } while (b < n && w->page_rows + rows < w->page_rows_max &&
                 w->page_levels + (int64_t)(b - a) < w->page_rows_max);
        size_t used = 0;
        TL_TRY(stage_levels(w, v, def + a, rep ? rep + a : NULL, slots, b - a, rows, &used, err));
        slots += used;
        a = b;
        if (page_full(w)) TL_TRY(flush_page(w, err));
    }
    return TL_OK;
}

tl_status tl_pq_colw_finish(tl_pq_column_writer *w, tl_error *err)
{
    TL_TRY(flush_page(w, err));
    if (!w->dict_used) return TL_OK;
    w->scratch.len = 0;
    if (tl_buf_append(&w->scratch, w->dict.plain.data, w->dict.plain.len) != 0)
        return tl_error_nomem(err);
    tl_pq_page_header h = {.type = TL_PQ_DICTIONARY_PAGE, .has_dictionary = true};
    h.dictionary.num_values = (int32_t)w->dict.n;
    h.dictionary.encoding = TL_PQ_ENC_PLAIN;
    w->dict_page.len = 0;
    return emit_page(w, &h, &w->dict_page, err);
}

void tl_pq_colw_reset(tl_pq_column_writer *w)
{
    page_reset(w);
    for (size_t i = 0; i < w->n_pages; i++) tl_pq_minmax_clear(&w->pages[i].mm);
    w->n_pages = 0;
    w->chunk.len = 0;
    w->dict_page.len = 0;
    w->rows = w->values = w->nulls = w->nans = w->uncompressed = 0;
    tl_pq_minmax_clear(&w->mm);
    tl_pq_dict_reset(&w->dict);
    w->dict_on = w->dict_allowed;
    w->dict_used = false;
    if (w->float_trial_default) {
        w->value_encoding = TL_PQ_ENC_BYTE_STREAM_SPLIT;
        w->float_trial = true;
    }
    w->n_plain_pages = w->n_dict_pages = 0;
    w->codec = w->codec_default;
    w->codec_trial = wants_codec_trial(w);
    w->page_ready = w->comp_ready = false;
}

void tl_pq_colw_free(tl_pq_column_writer *w)
{
    /* desc NULL: a writer's column that was never initialized (it ran out
     * of memory on an earlier one): zeroed, it holds nothing. */
    if (w == NULL || w->desc == NULL) return;
    tl_pq_colw_reset(w);
    free(w->page_valid);
    free(w->page_def);
    free(w->page_rep);
    tl_buf_free(&w->page_values);
    free(w->page_idx);
    free(w->page_distinct);
    tl_pq_dict_free(&w->dict);
    free(w->stamp);
    tl_buf_free(&w->chunk);
    tl_buf_free(&w->dict_page);
    free(w->pages);
    tl_buf_free(&w->scratch);
    tl_buf_free(&w->comp);
    tl_buf_free(&w->trial);
    tl_buf_free(&w->header);
    memset(w, 0, sizeof *w);
}
