#include "formats/parquet/parquet_column_reader.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "core/grow.h"
#include "formats/parquet/parquet_encoding.h"

typedef struct colread {
    const tl_pq_column_desc *d;
    tl_pq_codec_id codec;
    tl_pq_codec_ctx *cctx;
    int64_t rows, done;
    struct ArrowArray *out;
    uint8_t *validity; /* NULL for required columns */
    uint8_t *values;   /* fixed-width Arrow values, or the bitmap of booleans */
    int32_t *offsets;
    tl_buf data;
    size_t width; /* Arrow bytes per value; 0 for var-width and booleans */

    bool has_dict;
    uint8_t *dict_page;
    size_t dict_n;
    tl_pq_view *dict_views;

    uint8_t *page;
    size_t page_cap;
    uint8_t *phys;
    size_t phys_cap;
    tl_pq_view *views;
    size_t views_cap;
    uint32_t *idx;
    size_t idx_cap;
    int64_t *tmp64;
    size_t tmp64_cap;
    uint8_t *storage; /* values rebuilt by DELTA_BYTE_ARRAY */
    /* Leaves of nested columns: each entry's levels (rows counts entries). */
    uint32_t *def, *rep;
    /* Counting (tl_pq_count_column_pages): values in [range[0], range[1]]. */
    const int64_t *range;
    int64_t counted;
    /* Dictionary indices instead of values (tl_pq_read_column_codes). */
    bool codes;
} colread;

/* Whether pages carry definition levels. */
static bool has_def(const colread *c)
{
    return c->d->levels ? c->d->max_def > 0 : c->d->nullable;
}

static int level_bits(int16_t max)
{
    int bits = 0;
    while ((1 << bits) <= max) bits++;
    return bits;
}

/* A page's decoded physical values: fixed-width bytes (a bitmap for BOOLEAN) or views. */
typedef struct phys_values {
    const uint8_t *fixed;
    const tl_pq_view *views;
} phys_values;

static tl_status invalid(tl_error *err, const char *what)
{
    return tl_error_set(err, TL_ERR_INVALID, "%s", what);
}

#define GROW(c, field, cap, n, err)                                                                \
    do {                                                                                           \
        if (TL_GROW((c)->field, (c)->cap, (n), 64) != 0) return tl_error_nomem(err);               \
    } while (0)

/* ---- Physical values ---- */

/* The page's k dictionary indices into c->idx, each checked. */
static tl_status decode_indices(colread *c, const uint8_t *p, size_t len, size_t k, tl_error *err)
{
    if (!c->has_dict) return invalid(err, "dictionary-encoded page without a dictionary page");
    if (len < 1 || p[0] > 32) return invalid(err, "bad dictionary index bit width");
    GROW(c, idx, idx_cap, k ? k : 1, err);
    TL_TRY(tl_pq_rle_decode(p + 1, len - 1, p[0], c->idx, k, NULL, err));
    uint32_t top = 0;
    for (size_t i = 0; i < k; i++) top = c->idx[i] > top ? c->idx[i] : top;
    if (k && top >= c->dict_n)
        return tl_error_set(err, TL_ERR_INVALID, "dictionary index %u out of range (%zu entries)",
                            top, c->dict_n);
    return TL_OK;
}

static tl_status decode_dictionary_refs(colread *c, const uint8_t *p, size_t len, size_t k,
                                        phys_values *pv, tl_error *err)
{
    TL_TRY(decode_indices(c, p, len, k, err));
    if (c->d->elem.type == TL_PQ_BYTE_ARRAY) {
        GROW(c, views, views_cap, k ? k : 1, err);
        for (size_t i = 0; i < k; i++) c->views[i] = c->dict_views[c->idx[i]];
        pv->views = c->views;
        return TL_OK;
    }
    size_t w = (size_t)c->d->phys_width;
    GROW(c, phys, phys_cap, k * w + 1, err);
    if (w == 8) {
        for (size_t i = 0; i < k; i++) memcpy(c->phys + i * 8, c->dict_page + c->idx[i] * 8, 8);
    } else if (w == 4) {
        for (size_t i = 0; i < k; i++) memcpy(c->phys + i * 4, c->dict_page + c->idx[i] * 4, 4);
    } else {
        for (size_t i = 0; i < k; i++) memcpy(c->phys + i * w, c->dict_page + c->idx[i] * w, w);
    }
    pv->fixed = c->phys;
    return TL_OK;
}

static tl_status decode_delta_ints(colread *c, const uint8_t *p, size_t len, size_t k,
                                   phys_values *pv, tl_error *err)
{
    tl_pq_type t = c->d->elem.type;
    if (t != TL_PQ_INT32 && t != TL_PQ_INT64)
        return invalid(err, "DELTA_BINARY_PACKED on a non-integer column");
    size_t got = 0, used = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (t == TL_PQ_INT64) { /* decoded in place: int64 values are their little-endian bytes */
        GROW(c, phys, phys_cap, k * 8 + 1, err);
        TL_TRY(tl_pq_delta_decode(p, len, false, (int64_t *)(void *)c->phys, k, &got, &used, err));
        if (got != k)
            return tl_error_set(err, TL_ERR_INVALID,
                                "DELTA_BINARY_PACKED holds %zu values, expected %zu", got, k);
        pv->fixed = c->phys;
        return TL_OK;
    }
#endif
    GROW(c, tmp64, tmp64_cap, k ? k : 1, err);
    TL_TRY(tl_pq_delta_decode(p, len, t == TL_PQ_INT32, c->tmp64, k, &got, &used, err));
    if (got != k)
        return tl_error_set(err, TL_ERR_INVALID,
                            "DELTA_BINARY_PACKED holds %zu values, expected %zu", got, k);
    GROW(c, phys, phys_cap, k * 8 + 1, err);
    if (t == TL_PQ_INT32)
        for (size_t i = 0; i < k; i++) tl_store_le32(c->phys + 4 * i, (uint32_t)c->tmp64[i]);
    else
        for (size_t i = 0; i < k; i++) tl_store_le64(c->phys + 8 * i, (uint64_t)c->tmp64[i]);
    pv->fixed = c->phys;
    return TL_OK;
}

static tl_status decode_delta_bytes(colread *c, int32_t enc, const uint8_t *p, size_t len, size_t k,
                                    phys_values *pv, tl_error *err)
{
    tl_pq_type t = c->d->elem.type;
    if (t != TL_PQ_BYTE_ARRAY &&
        !(enc == TL_PQ_ENC_DELTA_BYTE_ARRAY && t == TL_PQ_FIXED_LEN_BYTE_ARRAY))
        return invalid(err, "delta byte-array encoding on a column of another type");
    GROW(c, views, views_cap, k ? k : 1, err);
    if (enc == TL_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY) {
        TL_TRY(tl_pq_delta_length_decode(p, len, c->views, k, NULL, err));
    } else {
        free(c->storage);
        c->storage = NULL;
        TL_TRY(tl_pq_delta_byte_array_decode(p, len, c->views, k, &c->storage, err));
    }
    pv->views = c->views;
    if (t == TL_PQ_BYTE_ARRAY) return TL_OK;
    size_t w = (size_t)c->d->phys_width;
    GROW(c, phys, phys_cap, k * w + 1, err);
    for (size_t i = 0; i < k; i++) {
        if (c->views[i].len != w) return invalid(err, "fixed-length value of the wrong length");
        memcpy(c->phys + i * w, c->views[i].data, w);
    }
    pv->views = NULL;
    pv->fixed = c->phys;
    return TL_OK;
}

static tl_status decode_values(colread *c, int32_t enc, const uint8_t *p, size_t len, size_t k,
                               phys_values *pv, tl_error *err)
{
    tl_pq_type t = c->d->elem.type;
    size_t w = (size_t)c->d->phys_width;
    memset(pv, 0, sizeof *pv);
    switch (enc) {
    case TL_PQ_ENC_PLAIN:
        if (t == TL_PQ_BYTE_ARRAY) {
            GROW(c, views, views_cap, k ? k : 1, err);
            pv->views = c->views;
            return tl_pq_plain_bytes_decode(p, len, c->views, k, err);
        }
        if (t == TL_PQ_BOOLEAN ? (k + 7) / 8 > len : k > len / w)
            return tl_error_set(err, TL_ERR_INVALID, "PLAIN page has %zu bytes for %zu values", len,
                                k);
        pv->fixed = p;
        return TL_OK;
    case TL_PQ_ENC_PLAIN_DICTIONARY:
    case TL_PQ_ENC_RLE_DICTIONARY:
        return decode_dictionary_refs(c, p, len, k, pv, err);
    case TL_PQ_ENC_DELTA_BINARY_PACKED:
        return decode_delta_ints(c, p, len, k, pv, err);
    case TL_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case TL_PQ_ENC_DELTA_BYTE_ARRAY:
        return decode_delta_bytes(c, enc, p, len, k, pv, err);
    case TL_PQ_ENC_BYTE_STREAM_SPLIT:
        if (t == TL_PQ_BOOLEAN || t == TL_PQ_BYTE_ARRAY || t == TL_PQ_INT96)
            return invalid(err, "BYTE_STREAM_SPLIT on a column of another type");
        GROW(c, phys, phys_cap, k * w + 1, err);
        pv->fixed = c->phys;
        return tl_pq_byte_stream_split_decode(p, len, w, k, c->phys, err);
    case TL_PQ_ENC_RLE: {
        if (t != TL_PQ_BOOLEAN) return invalid(err, "RLE values on a non-boolean column");
        if (len < 4 || tl_load_le32(p) > len - 4) return invalid(err, "RLE booleans truncated");
        GROW(c, phys, phys_cap, k / 8 + 1, err);
        int64_t ones = 0;
        pv->fixed = c->phys;
        return tl_pq_rle_decode_bitmap(p + 4, tl_load_le32(p), c->phys, 0, k, &ones, err);
    }
    default:
        return tl_error_set(err, TL_ERR_INVALID, "unsupported value encoding %d", (int)enc);
    }
}

/* ---- Storing into the Arrow array ---- */

/* Converts k physical values into rows [row0, row0 + n), skipping null rows. */
#define SCATTER(T_IN, IN_SIZE, T_OUT, EXPR)                                                        \
    do {                                                                                           \
        T_OUT *dst_ = (T_OUT *)c->values + row0;                                                   \
        const uint8_t *src_ = pv->fixed;                                                           \
        size_t j_ = 0;                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                          \
            if (valid && !tl_bit_get(valid, row0 + i)) continue;                                   \
            T_IN x;                                                                                \
            memcpy(&x, src_ + j_ * (IN_SIZE), sizeof x);                                           \
            dst_[i] = (T_OUT)(EXPR);                                                               \
            j_++;                                                                                  \
        }                                                                                          \
    } while (0)

static void be_to_i128(const uint8_t *be, size_t len, uint8_t *out)
{
    memset(out, len && (be[0] & 0x80) ? 0xFF : 0, 16);
    for (size_t i = 0; i < len; i++) out[i] = be[len - 1 - i];
}

static int64_t int96_to_ns(const uint8_t *p)
{
    uint64_t nanos = tl_load_le64(p);
    int64_t days = (int32_t)tl_load_le32(p + 8) - 2440588; /* Julian day of 1970-01-01 */
    return (int64_t)((uint64_t)days * 86400000000000ull + nanos);
}

/* Copies one value of len bytes. Values of 8 to 16 bytes (series keys,
 * names) are two overlapping words, inline, within both ends: a call to
 * memcpy for each value of a dictionary-encoded column cost more than the
 * copy. */
static inline void copy_value(uint8_t *dst, const uint8_t *src, size_t len)
{
    if (len >= 8 && len <= 16) {
        uint64_t head = tl_load_le64(src), tail = tl_load_le64(src + len - 8);
        tl_store_le64(dst, head);
        tl_store_le64(dst + len - 8, tail);
    } else if (len) {
        memcpy(dst, src, len);
    }
}

static tl_status store_bytes(colread *c, int64_t row0, int64_t n, const tl_pq_view *v,
                             const uint8_t *valid, tl_error *err)
{
    size_t total = 0, j = 0;
    for (int64_t i = 0; i < n; i++)
        if (!valid || tl_bit_get(valid, row0 + i)) total += v[j++].len;
    if (total > (size_t)INT32_MAX - c->data.len)
        return invalid(err, "column holds over 2 GiB of values in one row group");
    if (tl_buf_reserve(&c->data, total) != 0) return tl_error_nomem(err);
    int32_t pos = c->offsets[row0];
    j = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!valid || tl_bit_get(valid, row0 + i)) {
            copy_value(c->data.data + pos, v[j].data, v[j].len);
            pos += (int32_t)v[j].len;
            j++;
        }
        c->offsets[row0 + i + 1] = pos;
    }
    c->data.len = (size_t)pos;
    return TL_OK;
}

static tl_status store_decimal(colread *c, int64_t row0, int64_t n, const phys_values *pv,
                               const uint8_t *valid, tl_error *err)
{
    size_t w = (size_t)c->d->phys_width, j = 0;
    for (int64_t i = 0; i < n; i++) {
        if (valid && !tl_bit_get(valid, row0 + i)) continue;
        const uint8_t *be = pv->views ? pv->views[j].data : pv->fixed + j * w;
        size_t len = pv->views ? pv->views[j].len : w;
        if (len > 16) return invalid(err, "decimal value longer than 16 bytes");
        be_to_i128(be, len, c->values + (row0 + i) * 16);
        j++;
    }
    return TL_OK;
}

static void store_bools(colread *c, int64_t row0, int64_t n, const phys_values *pv,
                        const uint8_t *valid)
{
    if (valid == NULL) {
        tl_pq_bits_copy(c->values, row0, pv->fixed, 0, n);
        return;
    }
    int64_t j = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!tl_bit_get(valid, row0 + i)) continue;
        if (tl_bit_get(pv->fixed, j++)) tl_pq_bit_on(c->values, row0 + i);
    }
}

static tl_status store_values(colread *c, int64_t row0, int64_t n, const phys_values *pv,
                              const uint8_t *valid, tl_error *err)
{
    size_t w = c->width;
    switch (c->d->conv) {
    case TL_PQ_CONV_BOOL:
        store_bools(c, row0, n, pv, valid);
        return TL_OK;
    case TL_PQ_CONV_BYTES:
        return store_bytes(c, row0, n, pv->views, valid, err);
    case TL_PQ_CONV_DECIMAL:
        return store_decimal(c, row0, n, pv, valid, err);
    case TL_PQ_CONV_COPY32:
    case TL_PQ_CONV_COPY64:
    case TL_PQ_CONV_FIXED:
        if (valid == NULL) {
            memcpy(c->values + (size_t)row0 * w, pv->fixed, (size_t)n * w);
            return TL_OK;
        }
        for (int64_t i = 0, j = 0; i < n; i++) /* a null's slot zeroed: not allocated so */
            if (tl_bit_get(valid, row0 + i))
                memcpy(c->values + (size_t)(row0 + i) * w, pv->fixed + w * j++, w);
            else
                memset(c->values + (size_t)(row0 + i) * w, 0, w);
        return TL_OK;
    case TL_PQ_CONV_I8:
        SCATTER(int32_t, 4, int8_t, x);
        return TL_OK;
    case TL_PQ_CONV_U8:
        SCATTER(int32_t, 4, uint8_t, x);
        return TL_OK;
    case TL_PQ_CONV_I16:
        SCATTER(int32_t, 4, int16_t, x);
        return TL_OK;
    case TL_PQ_CONV_U16:
        SCATTER(int32_t, 4, uint16_t, x);
        return TL_OK;
    case TL_PQ_CONV_INT96:
        for (int64_t i = 0, j = 0; i < n; i++)
            if (!valid || tl_bit_get(valid, row0 + i))
                ((int64_t *)c->values)[row0 + i] = int96_to_ns(pv->fixed + 12 * j++);
        return TL_OK;
    case TL_PQ_CONV_DECIMAL_I32:
    case TL_PQ_CONV_DECIMAL_I64: {
        bool is32 = c->d->conv == TL_PQ_CONV_DECIMAL_I32;
        for (int64_t i = 0, j = 0; i < n; i++) {
            if (valid && !tl_bit_get(valid, row0 + i)) continue;
            int64_t x = is32 ? (int32_t)tl_load_le32(pv->fixed + 4 * j)
                             : (int64_t)tl_load_le64(pv->fixed + 8 * j);
            uint8_t *d = c->values + (row0 + i) * 16;
            tl_store_le64(d, (uint64_t)x);
            tl_store_le64(d + 8, x < 0 ? UINT64_MAX : 0);
            j++;
        }
        return TL_OK;
    }
    default:
        return invalid(err, "unsupported conversion");
    }
}

/* ---- Pages ---- */

/* Returns the page body uncompressed: in place when stored uncompressed. */
static tl_status page_body(colread *c, bool compressed, const uint8_t *body, size_t clen,
                           size_t ulen, const uint8_t **out, tl_error *err)
{
    if (!compressed || c->codec == TL_PQ_CODEC_UNCOMPRESSED) {
        if (clen != ulen) return invalid(err, "uncompressed page size mismatch");
        *out = body;
        return TL_OK;
    }
    GROW(c, page, page_cap, ulen ? ulen : 1, err);
    TL_TRY(tl_pq_decompress(c->cctx, c->codec, body, clen, c->page, ulen, err));
    *out = c->page;
    return TL_OK;
}

static tl_status read_dictionary(colread *c, const tl_pq_page_header *h, const uint8_t *body,
                                 tl_error *err)
{
    if (c->has_dict) return invalid(err, "a second dictionary page");
    if (!h->has_dictionary) return invalid(err, "dictionary page without its header");
    int32_t enc = h->dictionary.encoding;
    if (enc != TL_PQ_ENC_PLAIN && enc != TL_PQ_ENC_PLAIN_DICTIONARY)
        return tl_error_set(err, TL_ERR_INVALID, "dictionary page encoding %d", (int)enc);
    tl_pq_type t = c->d->elem.type;
    if (t == TL_PQ_BOOLEAN) return invalid(err, "dictionary page on a boolean column");
    size_t ulen = (size_t)h->uncompressed_page_size, n = (size_t)h->dictionary.num_values;
    size_t min_size = t == TL_PQ_BYTE_ARRAY ? 4 : (size_t)c->d->phys_width;
    if (h->dictionary.num_values < 0 || n > ulen / min_size)
        return invalid(err, "dictionary page has more entries than bytes allow");
    c->dict_page = malloc(ulen ? ulen : 1);
    if (c->dict_page == NULL) return tl_error_nomem(err);
    if (c->codec == TL_PQ_CODEC_UNCOMPRESSED) {
        if ((size_t)h->compressed_page_size != ulen) return invalid(err, "page size mismatch");
        if (ulen) memcpy(c->dict_page, body, ulen);
    } else {
        TL_TRY(tl_pq_decompress(c->cctx, c->codec, body, (size_t)h->compressed_page_size,
                                c->dict_page, ulen, err));
    }
    c->dict_n = n;
    c->has_dict = true;
    if (t != TL_PQ_BYTE_ARRAY) return TL_OK;
    c->dict_views = malloc((n ? n : 1) * sizeof *c->dict_views);
    if (c->dict_views == NULL) return tl_error_nomem(err);
    return tl_pq_plain_bytes_decode(c->dict_page, ulen, c->dict_views, n, err);
}

static tl_status check_rows(colread *c, int32_t n, tl_error *err)
{
    if (n < 0 || n > c->rows - c->done)
        return tl_error_set(err, TL_ERR_INVALID, "page has %d values but %lld rows remain", (int)n,
                            (long long)(c->rows - c->done));
    return TL_OK;
}

/* Decodes definition levels into the validity bitmap; *k gets the non-null count. */
static tl_status read_levels(colread *c, const uint8_t *p, size_t len, int64_t n, size_t *k,
                             tl_error *err)
{
    if (!has_def(c)) {
        *k = (size_t)n;
        return TL_OK;
    }
    if (c->d->levels) {
        uint32_t *def = c->def + c->done;
        TL_TRY(tl_pq_rle_decode(p, len, level_bits(c->d->max_def), def, (size_t)n, NULL, err));
        size_t ones = 0;
        for (int64_t i = 0; i < n; i++) {
            if (def[i] > (uint32_t)c->d->max_def) return invalid(err, "definition level too high");
            if (def[i] == (uint32_t)c->d->max_def) {
                tl_bit_set(c->validity, c->done + i);
                ones++;
            }
        }
        *k = ones;
        return TL_OK;
    }
    int64_t ones = 0;
    TL_TRY(tl_pq_rle_decode_bitmap(p, len, c->validity, c->done, (size_t)n, &ones, err));
    *k = (size_t)ones;
    return TL_OK;
}

static tl_status read_reps(colread *c, const uint8_t *p, size_t len, int64_t n, tl_error *err)
{
    uint32_t *rep = c->rep + c->done;
    TL_TRY(tl_pq_rle_decode(p, len, level_bits(c->d->max_rep), rep, (size_t)n, NULL, err));
    for (int64_t i = 0; i < n; i++)
        if (rep[i] > (uint32_t)c->d->max_rep) return invalid(err, "repetition level too high");
    return TL_OK;
}

/* The page's k INT64 values counted, not stored. */
static tl_status count_page(colread *c, int32_t enc, const uint8_t *p, size_t len, size_t k,
                            tl_error *err)
{
    int64_t lo = c->range[0], hi = c->range[1];
    if (enc == TL_PQ_ENC_DELTA_BINARY_PACKED) {
        size_t got = 0, in = 0;
        TL_TRY(tl_pq_delta_count64(p, len, k, lo, hi, &got, &in, err));
        if (got != k)
            return tl_error_set(err, TL_ERR_INVALID,
                                "DELTA_BINARY_PACKED holds %zu values, expected %zu", got, k);
        c->counted += (int64_t)in;
        return TL_OK;
    }
    phys_values pv;
    TL_TRY(decode_values(c, enc, p, len, k, &pv, err));
    int64_t in = 0;
    for (size_t i = 0; i < k; i++) {
        int64_t v = (int64_t)tl_load_le64(pv.fixed + 8 * i);
        in += v >= lo && v <= hi;
    }
    c->counted += in;
    return TL_OK;
}

/* The page's dictionary indices into rows [row0, row0 + n) of the int32
 * output (0 at null rows); TL_ERR_NOT_FOUND for a page of values (a writer
 * falls back to them when the dictionary grows too large). */
static tl_status store_codes(colread *c, int32_t enc, const uint8_t *p, size_t len, int64_t n,
                             size_t k, tl_error *err)
{
    if (enc != TL_PQ_ENC_RLE_DICTIONARY && enc != TL_PQ_ENC_PLAIN_DICTIONARY)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "a page of values, not dictionary indices");
    TL_TRY(decode_indices(c, p, len, k, err));
    int32_t *dst = (int32_t *)c->values + c->done;
    if ((int64_t)k == n) {
        memcpy(dst, c->idx, (size_t)n * sizeof *dst);
        return TL_OK;
    }
    for (int64_t i = 0, j = 0; i < n; i++)
        dst[i] = tl_bit_get(c->validity, c->done + i) ? (int32_t)c->idx[j++] : 0;
    return TL_OK;
}

static tl_status finish_page(colread *c, int32_t enc, const uint8_t *p, size_t len, int64_t n,
                             size_t k, tl_error *err)
{
    if (c->codes) {
        TL_TRY(store_codes(c, enc, p, len, n, k, err));
        c->done += n;
        return TL_OK;
    }
    if (c->range) {
        TL_TRY(count_page(c, enc, p, len, k, err));
        c->done += n;
        return TL_OK;
    }
    tl_pq_type t = c->d->elem.type;
    tl_pq_conv conv = c->d->conv;
    /* A page of split values with no null, stored as they are: decoded
     * straight into the output, not through a copy. */
    if (enc == TL_PQ_ENC_BYTE_STREAM_SPLIT && (int64_t)k == n && c->values &&
        (t == TL_PQ_INT32 || t == TL_PQ_INT64 || t == TL_PQ_FLOAT || t == TL_PQ_DOUBLE) &&
        (conv == TL_PQ_CONV_COPY32 || conv == TL_PQ_CONV_COPY64) &&
        c->width == (size_t)c->d->phys_width) {
        TL_TRY(tl_pq_byte_stream_split_decode(p, len, c->width, k,
                                              c->values + (size_t)c->done * c->width, err));
        c->done += n;
        return TL_OK;
    }
    /* Dictionary codes of fixed-width values with no null, stored as they
     * are (a rollup's counts): the entries gathered straight into the output. */
    if ((enc == TL_PQ_ENC_RLE_DICTIONARY || enc == TL_PQ_ENC_PLAIN_DICTIONARY) && (int64_t)k == n &&
        c->values && (t == TL_PQ_INT64 || t == TL_PQ_DOUBLE) && conv == TL_PQ_CONV_COPY64 &&
        c->width == 8) {
        TL_TRY(decode_indices(c, p, len, k, err));
        uint8_t *dst = c->values + (size_t)c->done * 8;
        for (size_t i = 0; i < k; i++) memcpy(dst + i * 8, c->dict_page + (size_t)c->idx[i] * 8, 8);
        c->done += n;
        return TL_OK;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Deltas of int64 values with no null (times), stored as they are:
     * decoded straight into the output too. */
    if (enc == TL_PQ_ENC_DELTA_BINARY_PACKED && (int64_t)k == n && c->values && t == TL_PQ_INT64 &&
        conv == TL_PQ_CONV_COPY64 && c->width == 8) {
        size_t got = 0, used = 0;
        TL_TRY(tl_pq_delta_decode(p, len, false, (int64_t *)(void *)(c->values + c->done * 8), k,
                                  &got, &used, err));
        if (got != k)
            return tl_error_set(err, TL_ERR_INVALID,
                                "DELTA_BINARY_PACKED holds %zu values, expected %zu", got, k);
        c->done += n;
        return TL_OK;
    }
#endif
    phys_values pv;
    TL_TRY(decode_values(c, enc, p, len, k, &pv, err));
    TL_TRY(store_values(c, c->done, n, &pv, (int64_t)k < n ? c->validity : NULL, err));
    c->done += n;
    return TL_OK;
}

static tl_status read_data_v1(colread *c, const tl_pq_page_header *h, const uint8_t *body,
                              tl_error *err)
{
    if (!h->has_data) return invalid(err, "data page without its header");
    TL_TRY(check_rows(c, h->data.num_values, err));
    const uint8_t *p = NULL;
    size_t len = (size_t)h->uncompressed_page_size, k;
    TL_TRY(page_body(c, true, body, (size_t)h->compressed_page_size, len, &p, err));
    int64_t n = h->data.num_values;
    if (c->d->levels && c->d->max_rep > 0) {
        if (h->data.rep_encoding != TL_PQ_ENC_RLE)
            return tl_error_set(err, TL_ERR_INVALID, "repetition level encoding %d",
                                (int)h->data.rep_encoding);
        if (len < 4 || tl_load_le32(p) > len - 4)
            return invalid(err, "repetition levels truncated");
        size_t rl = tl_load_le32(p);
        TL_TRY(read_reps(c, p + 4, rl, n, err));
        p += 4 + rl;
        len -= 4 + rl;
    }
    if (has_def(c)) {
        if (h->data.def_encoding != TL_PQ_ENC_RLE)
            return tl_error_set(err, TL_ERR_INVALID, "definition level encoding %d",
                                (int)h->data.def_encoding);
        if (len < 4 || tl_load_le32(p) > len - 4)
            return invalid(err, "definition levels truncated");
        size_t dl = tl_load_le32(p);
        TL_TRY(read_levels(c, p + 4, dl, n, &k, err));
        p += 4 + dl;
        len -= 4 + dl;
    } else {
        k = (size_t)n;
    }
    return finish_page(c, h->data.encoding, p, len, n, k, err);
}

static tl_status read_data_v2(colread *c, const tl_pq_page_header *h, const uint8_t *body,
                              tl_error *err)
{
    if (!h->has_data_v2) return invalid(err, "data page v2 without its header");
    TL_TRY(check_rows(c, h->data_v2.num_values, err));
    int64_t def = h->data_v2.def_length, rep = h->data_v2.rep_length;
    int64_t clen = h->compressed_page_size, ulen = h->uncompressed_page_size;
    bool reps = c->d->levels && c->d->max_rep > 0;
    if (def < 0 || rep < 0 || (rep != 0 && !reps) || def + rep > clen || def + rep > ulen)
        return invalid(err, "bad level lengths in data page v2");
    int64_t n = h->data_v2.num_values;
    size_t k = (size_t)n;
    if (reps) TL_TRY(read_reps(c, body, (size_t)rep, n, err));
    if (has_def(c)) TL_TRY(read_levels(c, body + rep, (size_t)def, n, &k, err));
    const uint8_t *p = NULL;
    size_t vlen = (size_t)(ulen - def - rep);
    TL_TRY(page_body(c, h->data_v2.is_compressed, body + def + rep, (size_t)(clen - def - rep),
                     vlen, &p, err));
    return finish_page(c, h->data_v2.encoding, p, vlen, n, k, err);
}

static tl_status read_page(colread *c, const uint8_t *chunk, size_t len, size_t *pos, tl_error *err)
{
    tl_pq_page_header h;
    size_t used = 0;
    TL_TRY(tl_pq_parse_page_header(chunk + *pos, len - *pos, &h, &used, err));
    *pos += used;
    if (h.compressed_page_size < 0 || (size_t)h.compressed_page_size > len - *pos)
        return invalid(err, "page runs past the end of the column chunk");
    if (h.uncompressed_page_size < 0 || h.uncompressed_page_size > TL_PQ_MAX_PAGE_SIZE)
        return invalid(err, "bad uncompressed page size");
    const uint8_t *body = chunk + *pos;
    *pos += (size_t)h.compressed_page_size;
    switch (h.type) {
    case TL_PQ_DICTIONARY_PAGE:
        return read_dictionary(c, &h, body, err);
    case TL_PQ_DATA_PAGE:
        return read_data_v1(c, &h, body, err);
    case TL_PQ_DATA_PAGE_V2:
        return read_data_v2(c, &h, body, err);
    default:
        return TL_OK; /* index pages and unknown pages carry nothing we need */
    }
}

/* ---- The chunk ---- */

static size_t arrow_width(const tl_pq_column_desc *d)
{
    int bits = tl_arrow_type_bit_width(&d->arrow);
    return d->arrow.id == TL_ATYPE_BOOL ? 0 : (size_t)bits / 8;
}

/* Whether store_values writes every slot of the conversion's values, nulls'
 * too (their buffer need not be zeroed first). */
static bool copied(tl_pq_conv conv)
{
    return conv == TL_PQ_CONV_COPY32 || conv == TL_PQ_CONV_COPY64 || conv == TL_PQ_CONV_FIXED;
}

static tl_status alloc_output(colread *c, struct ArrowArray *out, tl_error *err)
{
    bool var = c->d->conv == TL_PQ_CONV_BYTES;
    TL_TRY(tl_array_init(out, var ? 3 : 2, 0, err));
    size_t rows = (size_t)c->rows;
    if (has_def(c) && (c->validity = tl_array_alloc_buffer(out, 0, rows / 8 + 1)) == NULL)
        return tl_error_nomem(err);
    if (var) {
        c->offsets = tl_array_alloc_buffer(out, 1, (rows + 1) * sizeof(int32_t));
        if (c->offsets == NULL) return tl_error_nomem(err);
        return TL_OK;
    }
    size_t size = c->d->conv == TL_PQ_CONV_BOOL ? rows / 8 + 1 : rows * c->width;
    c->values = copied(c->d->conv) ? tl_array_alloc_buffer_uninit(out, 1, size)
                                   : tl_array_alloc_buffer(out, 1, size);
    if (c->values == NULL) return tl_error_nomem(err);
    return TL_OK;
}

static tl_status finish_output(colread *c, struct ArrowArray *out, tl_error *err)
{
    out->length = c->rows;
    out->null_count = c->validity ? c->rows - tl_pq_bits_count(c->validity, 0, c->rows) : 0;
    if (c->validity && out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
    if (c->d->conv != TL_PQ_CONV_BYTES) return TL_OK;
    uint8_t *data = tl_buf_detach(&c->data, NULL);
    if (data == NULL && (data = malloc(1)) == NULL) return tl_error_nomem(err);
    tl_array_set_buffer(out, 2, data);
    return TL_OK;
}

static void colread_free(colread *c)
{
    tl_buf_free(&c->data);
    free(c->dict_page);
    free(c->dict_views);
    free(c->page);
    free(c->phys);
    free(c->views);
    free(c->idx);
    free(c->tmp64);
    free(c->storage);
    free(c->def);
    free(c->rep);
}

/* Reads pages from the parts in turn until every row is decoded: a chunk is
 * one part; a page subset is its dictionary page and runs of data pages. */
static tl_status read_pages(colread *c, const tl_pq_span *parts, size_t n_parts, tl_error *err)
{
    size_t part = 0, pos = 0;
    for (int64_t page = 0; c->done < c->rows; page++) {
        while (part < n_parts && pos >= parts[part].len) {
            part++;
            pos = 0;
        }
        tl_status st = part < n_parts ? read_page(c, parts[part].data, parts[part].len, &pos, err)
                                      : tl_error_set(err, TL_ERR_INVALID,
                                                     "column chunk ends after %lld of %lld rows",
                                                     (long long)c->done, (long long)c->rows);
        if (st != TL_OK) return tl_error_prefix(err, "page %lld", (long long)page);
    }
    return TL_OK;
}

tl_status tl_pq_read_column_pages(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                  const tl_pq_span *parts, size_t n_parts, int64_t rows,
                                  tl_pq_codec_ctx *cctx, struct ArrowArray *out, tl_error *err)
{
    colread c = {.d = desc, .codec = codec, .cctx = cctx, .rows = rows, .width = arrow_width(desc)};
    memset(out, 0, sizeof *out);
    tl_status st = tl_pq_codec_supported(codec)
                       ? TL_OK
                       : tl_error_set(err, TL_ERR_INVALID, "unsupported compression codec %s",
                                      tl_pq_codec_name(codec));
    if (st == TL_OK) st = alloc_output(&c, out, err);
    if (st == TL_OK) st = read_pages(&c, parts, n_parts, err);
    if (st == TL_OK) st = finish_output(&c, out, err);
    colread_free(&c);
    if (st != TL_OK) tl_array_release(out);
    return st;
}

/* The dictionary's entries as a utf8 (or binary) array, malloc'd into *out. */
static tl_status dictionary_array(const colread *c, struct ArrowArray **out, tl_error *err)
{
    size_t bytes = 0;
    for (size_t i = 0; i < c->dict_n; i++) bytes += c->dict_views[i].len;
    if (bytes > INT32_MAX || c->dict_n > INT32_MAX)
        return invalid(err, "dictionary holds over 2 GiB of values");
    struct ArrowArray *a = calloc(1, sizeof *a);
    if (a == NULL) return tl_error_nomem(err);
    *out = a;
    TL_TRY(tl_array_init(a, 3, 0, err));
    a->length = (int64_t)c->dict_n;
    int32_t *off = tl_array_alloc_buffer(a, 1, (c->dict_n + 1) * sizeof *off);
    uint8_t *data = tl_array_alloc_buffer(a, 2, bytes + 1);
    if (off == NULL || data == NULL) return tl_error_nomem(err);
    int32_t at = 0;
    for (size_t i = 0; i < c->dict_n; i++) {
        off[i] = at;
        if (c->dict_views[i].len) memcpy(data + at, c->dict_views[i].data, c->dict_views[i].len);
        at += (int32_t)c->dict_views[i].len;
    }
    off[c->dict_n] = at;
    return TL_OK;
}

tl_status tl_pq_read_column_codes(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                  const tl_pq_span *parts, size_t n_parts, int64_t rows,
                                  tl_pq_codec_ctx *cctx, struct ArrowArray *out, tl_error *err)
{
    colread c = {.d = desc, .codec = codec, .cctx = cctx, .rows = rows, .width = 4, .codes = true};
    memset(out, 0, sizeof *out);
    tl_status st = TL_OK;
    if (desc->levels || desc->elem.type != TL_PQ_BYTE_ARRAY || desc->conv != TL_PQ_CONV_BYTES)
        st = tl_error_set(err, TL_ERR_NOT_FOUND, "column \"%s\" holds no dictionary strings",
                          desc->name);
    else if (!tl_pq_codec_supported(codec))
        st = tl_error_set(err, TL_ERR_INVALID, "unsupported compression codec %s",
                          tl_pq_codec_name(codec));
    if (st == TL_OK) st = tl_array_init(out, 2, 0, err);
    size_t size = (size_t)rows * sizeof(int32_t) + 1;
    if (st == TL_OK && has_def(&c) &&
        (c.validity = tl_array_alloc_buffer(out, 0, (size_t)rows / 8 + 1)) == NULL)
        st = tl_error_nomem(err);
    if (st == TL_OK && (c.values = tl_array_alloc_buffer(out, 1, size)) == NULL)
        st = tl_error_nomem(err);
    if (st == TL_OK) st = read_pages(&c, parts, n_parts, err);
    if (st == TL_OK && !c.has_dict)
        st = tl_error_set(err, TL_ERR_NOT_FOUND, "column \"%s\" has no dictionary", desc->name);
    if (st == TL_OK) {
        out->length = rows;
        out->null_count = c.validity ? rows - tl_pq_bits_count(c.validity, 0, rows) : 0;
        if (c.validity && out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
        st = dictionary_array(&c, &out->dictionary, err);
    }
    colread_free(&c);
    if (st != TL_OK) tl_array_release(out);
    return st;
}

tl_status tl_pq_count_column_pages(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                   const tl_pq_span *parts, size_t n_parts, int64_t rows,
                                   tl_pq_codec_ctx *cctx, int64_t lo, int64_t hi, int64_t *count,
                                   tl_error *err)
{
    int64_t range[2] = {lo, hi};
    colread c = {.d = desc, .codec = codec, .cctx = cctx, .rows = rows, .range = range};
    *count = 0;
    if (desc->levels || desc->elem.type != TL_PQ_INT64 || desc->conv != TL_PQ_CONV_COPY64)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is not counted by value",
                            desc->name);
    if (!tl_pq_codec_supported(codec))
        return tl_error_set(err, TL_ERR_INVALID, "unsupported compression codec %s",
                            tl_pq_codec_name(codec));
    tl_status st = TL_OK;
    if (has_def(&c) && (c.validity = calloc((size_t)rows / 8 + 1, 1)) == NULL)
        st = tl_error_nomem(err);
    if (st == TL_OK) st = read_pages(&c, parts, n_parts, err);
    if (st == TL_OK) *count = c.counted;
    free(c.validity);
    colread_free(&c);
    return st;
}

tl_status tl_pq_read_column_levels(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                   const uint8_t *chunk, size_t len, int64_t entries,
                                   tl_pq_codec_ctx *cctx, struct ArrowArray *out,
                                   tl_pq_levels *levels, tl_error *err)
{
    memset(levels, 0, sizeof *levels);
    memset(out, 0, sizeof *out);
    if (!desc->levels || entries < 0 || entries > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "bad leaf of a nested column");
    colread c = {
        .d = desc, .codec = codec, .cctx = cctx, .rows = entries, .width = arrow_width(desc)};
    size_t n = (size_t)entries + 1;
    c.def = calloc(n, sizeof *c.def);
    c.rep = calloc(n, sizeof *c.rep);
    tl_status st = c.def && c.rep ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK && !tl_pq_codec_supported(codec))
        st = tl_error_set(err, TL_ERR_INVALID, "unsupported compression codec %s",
                          tl_pq_codec_name(codec));
    tl_pq_span part = {chunk, len};
    if (st == TL_OK) st = alloc_output(&c, out, err);
    if (st == TL_OK) st = read_pages(&c, &part, 1, err);
    if (st == TL_OK) st = finish_output(&c, out, err);
    if (st == TL_OK) {
        *levels = (tl_pq_levels){c.def, c.rep, entries};
        c.def = c.rep = NULL;
    }
    colread_free(&c);
    if (st != TL_OK) tl_array_release(out);
    return st;
}

tl_status tl_pq_read_column_chunk(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                  const uint8_t *chunk, size_t len, int64_t rows,
                                  tl_pq_codec_ctx *cctx, struct ArrowArray *out, tl_error *err)
{
    tl_pq_span part = {chunk, len};
    return tl_pq_read_column_pages(desc, codec, &part, 1, rows, cctx, out, err);
}
