#include "arrow/take.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/builder.h"
#include "arrow/nested.h"
#include "core/parallel.h"

/* Rows ahead to prefetch in gathers: random rows miss the cache. */
#define TL_TAKE_AHEAD 16

static tl_status check_indices(const int64_t *idx, int64_t n, int64_t length, bool *has_null,
                               tl_error *err)
{
    bool bad = false, neg = false;
    for (int64_t i = 0; i < n; i++) {
        bad |= (idx[i] < -1) | (idx[i] >= length);
        neg |= idx[i] < 0;
    }
    *has_null = neg;
    if (!bad) return TL_OK;
    int64_t i = 0;
    while (idx[i] >= -1 && idx[i] < length) i++;
    return tl_error_set(err, TL_ERR_INVALID,
                        "take: index %lld (position %lld) is out of range for %lld rows",
                        (long long)idx[i], (long long)i, (long long)length);
}

/* dst bit i = index i is not -1 and bit (off + index) of src is set (src NULL: all set). */
static void gather_bits(uint8_t *dst, const uint8_t *src, int64_t off, const int64_t *idx,
                        int64_t n)
{
    for (int64_t b = 0; b * 8 < n; b++) {
        int64_t base = b * 8, count = n - base < 8 ? n - base : 8;
        unsigned byte = 0;
        for (int64_t k = 0; k < count; k++) {
            int64_t j = idx[base + k];
            bool set = j >= 0 && (src == NULL || tl_bit_get(src, off + j));
            byte |= (unsigned)set << k;
        }
        dst[b] = (uint8_t)byte;
    }
}

static tl_status take_validity(const uint8_t *validity, int64_t off, const int64_t *idx, int64_t n,
                               bool has_neg, struct ArrowArray *out, tl_error *err)
{
    out->null_count = 0;
    if (validity == NULL && !has_neg) return TL_OK;
    uint8_t *bits = tl_buffer_alloc(out, 0, (size_t)(n + 7) / 8);
    if (bits == NULL) return tl_error_nomem(err);
    gather_bits(bits, validity, off, idx, n);
    out->null_count = n - tl_bitmap_count(bits, 0, n);
    if (out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
    return TL_OK;
}

#define TL_GATHER(T)                                                                               \
    do {                                                                                           \
        const T *s = (const T *)values + offset;                                                   \
        T *d = dst;                                                                                \
        if (!has_neg) {                                                                            \
            int64_t i = 0;                                                                         \
            for (; i + TL_TAKE_AHEAD < n; i++) {                                                   \
                __builtin_prefetch(&s[idx[i + TL_TAKE_AHEAD]]);                                    \
                d[i] = s[idx[i]];                                                                  \
            }                                                                                      \
            for (; i < n; i++) d[i] = s[idx[i]];                                                   \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++) d[i] = idx[i] >= 0 ? s[idx[i]] : 0;                    \
        }                                                                                          \
    } while (0)

static void gather_wide(uint8_t *dst, const uint8_t *values, int64_t offset, size_t width,
                        const int64_t *idx, int64_t n)
{
    const uint8_t *s = values + (size_t)offset * width;
    for (int64_t i = 0; i < n; i++) {
        if (idx[i] >= 0)
            memcpy(dst + (size_t)i * width, s + (size_t)idx[i] * width, width);
        else
            memset(dst + (size_t)i * width, 0, width);
    }
}

static tl_status take_fixed(const void *values, int64_t offset, int width, const int64_t *idx,
                            int64_t n, bool has_neg, struct ArrowArray *out, tl_error *err)
{
    void *dst = tl_buffer_alloc(out, 1, (size_t)n * (size_t)width);
    if (dst == NULL) return tl_error_nomem(err);
    switch (width) {
    case 1:
        TL_GATHER(uint8_t);
        break;
    case 2:
        TL_GATHER(uint16_t);
        break;
    case 4:
        TL_GATHER(uint32_t);
        break;
    case 8:
        TL_GATHER(uint64_t);
        break;
    default:
        gather_wide(dst, values, offset, (size_t)width, idx, n);
        break;
    }
    return TL_OK;
}

/* The data buffer of a var-width take, grown as rows are copied (one pass
 * over the source: each taken row's offsets are read once). `pad` spare bytes
 * let short values be copied as one 16-byte move. */
typedef struct tl_take_data {
    uint8_t *bytes;
    size_t cap;
} tl_take_data;

#define TL_TAKE_PAD 16

static bool take_data_reserve(tl_take_data *d, size_t need)
{
    if (need + TL_TAKE_PAD <= d->cap) return true;
    size_t cap = d->cap * 2 > need + TL_TAKE_PAD ? d->cap * 2 : need + TL_TAKE_PAD;
    uint8_t *bytes = realloc(d->bytes, cap);
    if (bytes == NULL) return false;
    d->bytes = bytes;
    d->cap = cap;
    return true;
}

/* Copies row values [s, s + len) to dst. When 16 bytes are readable at s a
 * short value is one fixed-size move instead of a memcpy call. */
static inline void copy_value(uint8_t *dst, const uint8_t *s, size_t len, const uint8_t *src_end)
{
    if (len <= 16 && src_end - s >= 16)
        memcpy(dst, s, 16);
    else if (len > 0)
        memcpy(dst, s, len);
}

/* Writes the offsets (n + 1 entries) and bytes of the taken rows. Each source
 * row is checked to lie inside the view's data range, so hostile offsets
 * cannot make the copy read outside it. */
#define TL_DEFINE_TAKE_VARWIDTH(NAME, OT, LIMIT)                                                   \
    static tl_status NAME(const tl_array_view *src, const int64_t *idx, int64_t n, OT *o,          \
                          tl_take_data *d, tl_error *err)                                          \
    {                                                                                              \
        const OT *so = (const OT *)src->values + src->offset;                                      \
        OT first = so[0], last = so[src->length];                                                  \
        const uint8_t *src_end = src->data + last;                                                 \
        size_t total = 0;                                                                          \
        o[0] = 0;                                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                          \
            /* Random rows miss the cache: fetch offsets, then bytes, ahead of use. */             \
            if (i + 2 * TL_TAKE_AHEAD < n && idx[i + 2 * TL_TAKE_AHEAD] >= 0)                      \
                __builtin_prefetch(&so[idx[i + 2 * TL_TAKE_AHEAD]]);                               \
            if (i + TL_TAKE_AHEAD < n && idx[i + TL_TAKE_AHEAD] >= 0)                              \
                __builtin_prefetch(src->data + so[idx[i + TL_TAKE_AHEAD]]);                        \
            if (idx[i] >= 0) {                                                                     \
                OT start = so[idx[i]], end = so[idx[i] + 1];                                       \
                if (start < first || end > last || end < start)                                    \
                    return tl_error_set(err, TL_ERR_INVALID,                                       \
                                        "take: the offsets of row %lld are invalid",               \
                                        (long long)idx[i]);                                        \
                size_t len = (size_t)(end - start);                                                \
                if (total + len > (size_t)(LIMIT))                                                 \
                    return tl_error_set(                                                           \
                        err, TL_ERR_INVALID, "take: more than %lld bytes of data for %s offsets",  \
                        (long long)(LIMIT), sizeof(OT) == 4 ? "32-bit" : "64-bit");                \
                if (!take_data_reserve(d, total + len)) return tl_error_nomem(err);                \
                copy_value(d->bytes + total, src->data + start, len, src_end);                     \
                total += len;                                                                      \
            }                                                                                      \
            o[i + 1] = (OT)total;                                                                  \
        }                                                                                          \
        return TL_OK;                                                                              \
    }

TL_DEFINE_TAKE_VARWIDTH(take_varwidth32, int32_t, INT32_MAX)
TL_DEFINE_TAKE_VARWIDTH(take_varwidth64, int64_t, INT64_MAX)

static tl_status take_varwidth(const tl_array_view *src, const int64_t *idx, int64_t n,
                               struct ArrowArray *out, tl_error *err)
{
    bool large = tl_atype_is_large(src->type.id);
    void *offsets = tl_buffer_alloc(out, 1, (size_t)(n + 1) * (large ? 8 : 4));
    if (offsets == NULL) return tl_error_nomem(err);
    /* Start from the average row size; a take of a permutation needs exactly that. */
    int64_t span =
        src->length ? tl_offset_at(src, src->offset + src->length) - tl_offset_at(src, src->offset)
                    : 0;
    double estimate = src->length ? (double)span / (double)src->length * (double)n : 0;
    tl_take_data d = {NULL, 0};
    if (!take_data_reserve(&d, (size_t)(estimate < 1e12 ? estimate : 1e12) + 64))
        return tl_error_nomem(err);
    tl_status st = large ? take_varwidth64(src, idx, n, offsets, &d, err)
                         : take_varwidth32(src, idx, n, offsets, &d, err);
    if (st != TL_OK) {
        free(d.bytes);
        return st;
    }
    tl_array_set_buffer(out, 2, d.bytes);
    return TL_OK;
}

/* The output keeps the indices as they are: check them against the dictionary first. */
static tl_status check_dict_indices(const tl_array_view *src, tl_error *err)
{
    int64_t *idx;
    TL_TRY(tl_arrow_dict_indices(src, &idx, err));
    free(idx);
    return TL_OK;
}

static tl_status take_dictionary(const tl_array_view *src, const int64_t *idx, int64_t n,
                                 bool has_neg, struct ArrowArray *out, tl_error *err)
{
    TL_TRY(check_dict_indices(src, err));
    int width = tl_type_byte_width(&src->index_type);
    TL_TRY(take_fixed(src->values, src->offset, width, idx, n, has_neg, out, err));
    out->dictionary = calloc(1, sizeof *out->dictionary);
    if (out->dictionary == NULL) return tl_error_nomem(err);
    return tl_arrow_copy(src->dictionary, out->dictionary, err);
}

static tl_status take_values(const tl_array_view *src, const int64_t *idx, int64_t n, bool has_neg,
                             struct ArrowArray *out, tl_error *err)
{
    if (src->is_dictionary) return take_dictionary(src, idx, n, has_neg, out, err);
    if (tl_atype_is_varbinary(src->type.id)) return take_varwidth(src, idx, n, out, err);
    if (src->type.id == TL_ATYPE_BOOL) {
        uint8_t *bits = tl_buffer_alloc(out, 1, (size_t)(n + 7) / 8);
        if (bits == NULL) return tl_error_nomem(err);
        gather_bits(bits, src->values, src->offset, idx, n);
        return TL_OK;
    }
    int width = tl_type_byte_width(&src->type);
    if (width == 0) {
        char name[96];
        tl_arrow_type_describe(&src->type, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID, "take: unsupported type %s", name);
    }
    return take_fixed(src->values, src->offset, width, idx, n, has_neg, out, err);
}

tl_status tl_arrow_take(const tl_array_view *src, const int64_t *indices, int64_t n,
                        struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    bool has_neg;
    TL_TRY(check_indices(indices, n, src->length, &has_neg, err));
    if (src->type.id == TL_ATYPE_NULL && !src->is_dictionary)
        return tl_arrow_nulls(&src->type, n, out, err);
    bool var = tl_atype_is_varbinary(src->type.id) && !src->is_dictionary;
    TL_TRY(tl_array_init(out, var ? 3 : 2, 0, err));
    out->length = n;
    tl_status st = take_validity(src->validity, src->offset, indices, n, has_neg, out, err);
    if (st == TL_OK) st = take_values(src, indices, n, has_neg, out, err);
    if (st != TL_OK) tl_array_release(out);
    return st;
}

/* ---- Copy ---- */

static tl_status copy_fixed(const void *values, int64_t offset, int64_t n, int width,
                            struct ArrowArray *out, tl_error *err)
{
    void *dst = tl_buffer_alloc(out, 1, (size_t)n * (size_t)width);
    if (dst == NULL) return tl_error_nomem(err);
    if (n > 0)
        memcpy(dst, (const uint8_t *)values + (size_t)offset * (size_t)width,
               (size_t)n * (size_t)width);
    return TL_OK;
}

#define TL_DEFINE_REBASE(NAME, OT)                                                                 \
    static void NAME(const OT *src, int64_t n, OT *dst)                                            \
    {                                                                                              \
        OT first = src[0];                                                                         \
        for (int64_t i = 0; i <= n; i++) dst[i] = (OT)(src[i] - first);                            \
    }

TL_DEFINE_REBASE(rebase32, int32_t)
TL_DEFINE_REBASE(rebase64, int64_t)

static tl_status copy_varwidth(const tl_array_view *src, struct ArrowArray *out, tl_error *err)
{
    TL_TRY(tl_offsets_check(src, err));
    bool large = tl_atype_is_large(src->type.id);
    int64_t n = src->length, first = tl_offset_at(src, src->offset);
    int64_t size = tl_offset_at(src, src->offset + n) - first;
    void *offsets = tl_buffer_alloc(out, 1, (size_t)(n + 1) * (large ? 8 : 4));
    uint8_t *data = offsets ? tl_buffer_alloc(out, 2, (size_t)size) : NULL;
    if (data == NULL) return tl_error_nomem(err);
    if (large)
        rebase64((const int64_t *)src->values + src->offset, n, offsets);
    else
        rebase32((const int32_t *)src->values + src->offset, n, offsets);
    if (size > 0) memcpy(data, src->data + first, (size_t)size);
    return TL_OK;
}

static tl_status copy_values(const tl_array_view *src, struct ArrowArray *out, tl_error *err)
{
    int64_t n = src->length;
    if (src->is_dictionary) {
        TL_TRY(check_dict_indices(src, err));
        int width = tl_type_byte_width(&src->index_type);
        TL_TRY(copy_fixed(src->values, src->offset, n, width, out, err));
        out->dictionary = calloc(1, sizeof *out->dictionary);
        if (out->dictionary == NULL) return tl_error_nomem(err);
        return tl_arrow_copy(src->dictionary, out->dictionary, err);
    }
    if (tl_atype_is_varbinary(src->type.id)) return copy_varwidth(src, out, err);
    if (src->type.id == TL_ATYPE_BOOL) {
        uint8_t *bits = tl_buffer_alloc(out, 1, (size_t)(n + 7) / 8);
        if (bits == NULL) return tl_error_nomem(err);
        tl_bitmap_copy(bits, 0, src->values, src->offset, n);
        return TL_OK;
    }
    int width = tl_type_byte_width(&src->type);
    if (width == 0) {
        char name[96];
        tl_arrow_type_describe(&src->type, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID, "copy: unsupported type %s", name);
    }
    return copy_fixed(src->values, src->offset, n, width, out, err);
}

tl_status tl_arrow_copy(const tl_array_view *src, struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (src->type.id == TL_ATYPE_NULL && !src->is_dictionary)
        return tl_arrow_nulls(&src->type, src->length, out, err);
    bool var = tl_atype_is_varbinary(src->type.id) && !src->is_dictionary;
    TL_TRY(tl_array_init(out, var ? 3 : 2, 0, err));
    out->length = src->length;
    tl_status st = tl_validity_copy(src, out, err);
    if (st == TL_OK) st = copy_values(src, out, err);
    if (st != TL_OK) tl_array_release(out);
    return st;
}

/* ---- Dictionaries ---- */

#define TL_LOAD_INDICES(T)                                                                         \
    do {                                                                                           \
        const T *p = (const T *)src->values + src->offset;                                         \
        for (int64_t i = 0; i < n; i++) idx[i] = (int64_t)p[i];                                    \
    } while (0)

static void load_indices(const tl_array_view *src, int64_t *idx)
{
    int64_t n = src->length;
    switch (src->index_type.id) {
    case TL_ATYPE_INT8:
        TL_LOAD_INDICES(int8_t);
        break;
    case TL_ATYPE_UINT8:
        TL_LOAD_INDICES(uint8_t);
        break;
    case TL_ATYPE_INT16:
        TL_LOAD_INDICES(int16_t);
        break;
    case TL_ATYPE_UINT16:
        TL_LOAD_INDICES(uint16_t);
        break;
    case TL_ATYPE_INT32:
        TL_LOAD_INDICES(int32_t);
        break;
    case TL_ATYPE_UINT32:
        TL_LOAD_INDICES(uint32_t);
        break;
    default:
        TL_LOAD_INDICES(int64_t);
        break; /* uint64 beyond INT64_MAX turns negative: rejected */
    }
}

tl_status tl_arrow_dict_indices(const tl_array_view *src, int64_t **out, tl_error *err)
{
    int64_t n = src->length, dict_len = src->dictionary->length;
    int64_t *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    if (idx == NULL) return tl_error_nomem(err);
    load_indices(src, idx);
    bool bad = false;
    for (int64_t i = 0; i < n; i++) bad |= (idx[i] < 0) | (idx[i] >= dict_len);
    for (int64_t i = 0; bad && i < n; i++) {
        if (tl_view_is_null(src, i) || (idx[i] >= 0 && idx[i] < dict_len)) continue;
        tl_status st = tl_error_set(err, TL_ERR_INVALID,
                                    "dictionary index %lld (row %lld) is out of range for a "
                                    "dictionary of %lld values",
                                    (long long)idx[i], (long long)i, (long long)dict_len);
        free(idx);
        return st;
    }
    if (src->validity)
        for (int64_t i = 0; i < n; i++)
            if (!tl_bit_get(src->validity, src->offset + i)) idx[i] = -1;
    *out = idx;
    return TL_OK;
}

tl_status tl_arrow_dict_decode(const tl_array_view *src, struct ArrowArray *out, tl_error *err)
{
    if (!src->is_dictionary) return tl_arrow_copy(src, out, err);
    memset(out, 0, sizeof *out);
    int64_t *idx;
    TL_TRY(tl_arrow_dict_indices(src, &idx, err));
    tl_status st = tl_arrow_take(src->dictionary, idx, src->length, out, err);
    free(idx);
    return st;
}

/* ---- Slices ---- */

tl_status tl_arrow_view_slice(const tl_array_view *src, int64_t start, int64_t length,
                              tl_array_view *out, tl_error *err)
{
    if (start < 0 || length < 0 || start > src->length || length > src->length - start)
        return tl_error_set(err, TL_ERR_INVALID, "slice [%lld, +%lld) is outside %lld rows",
                            (long long)start, (long long)length, (long long)src->length);
    *out = *src;
    out->offset = src->offset + start;
    out->length = length;
    out->null_count = src->validity ? -1 : 0;
    return TL_OK;
}

/* ---- Struct batches ---- */

static tl_status take_child(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                            const int64_t *idx, int64_t n, struct ArrowArray *out, int64_t c,
                            tl_error *err)
{
    const struct ArrowSchema *cs = schema->children[c];
    const struct ArrowArray *ca = batch->children[c];
    const char *name = cs->name ? cs->name : "";
    if (tl_arrow_is_nested(cs)) {
        if (tl_arrow_take_nested(cs, ca, idx, n, out->children[c], err) != TL_OK)
            return tl_error_prefix(err, "column \"%s\"", name);
        return TL_OK;
    }
    tl_array_view v;
    tl_status st = tl_array_view_init(&v, cs, ca, err);
    if (st == TL_OK && v.length < batch->offset + batch->length)
        st = tl_error_set(err, TL_ERR_INVALID, "has %lld rows, the batch %lld", (long long)v.length,
                          (long long)(batch->offset + batch->length));
    if (st == TL_OK) st = tl_arrow_take(&v, idx, n, out->children[c], err);
    tl_array_view_free(&v);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", name);
    return TL_OK;
}

/* Columns are gathered independently: a large take (a commit's rows, laid
 * out under the table's lock) gathers a few at a time, in threads. The error
 * reported is the same as one at a time: the first failing column's. */
#define TAKE_THREADS 4
#define TAKE_PARALLEL_CELLS ((int64_t)1 << 17)

typedef struct take_job {
    const struct ArrowSchema *schema;
    const struct ArrowArray *batch;
    const int64_t *idx;
    int64_t n;
    struct ArrowArray *out;
    tl_status *status; /* per column */
    tl_error *errs;    /* per column */
} take_job;

static tl_status take_item(void *ctx, size_t c, tl_error *err)
{
    (void)err; /* each column keeps its own status and error */
    take_job *j = ctx;
    j->status[c] = take_child(j->schema, j->batch, j->idx, j->n, j->out, (int64_t)c, &j->errs[c]);
    return TL_OK;
}

static tl_status take_parallel(take_job *j, tl_error *err)
{
    size_t n = (size_t)j->schema->n_children;
    j->status = calloc(n, sizeof *j->status);
    j->errs = calloc(n, sizeof *j->errs);
    tl_status st = j->status && j->errs ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) {
        size_t cpus = tl_cpu_count();
        size_t want = cpus < TAKE_THREADS ? cpus : TAKE_THREADS;
        tl_parallel_run(n, want, false, take_item, j, NULL);
    }
    for (size_t c = 0; st == TL_OK && c < n; c++) {
        st = j->status[c];
        if (st != TL_OK && err) *err = j->errs[c];
    }
    free(j->status);
    free(j->errs);
    return st;
}

static tl_status take_children(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                               const int64_t *idx, int64_t n, struct ArrowArray *out, tl_error *err)
{
    if (schema->n_children > 1 && n * schema->n_children >= TAKE_PARALLEL_CELLS) {
        take_job j = {.schema = schema, .batch = batch, .idx = idx, .n = n, .out = out};
        return take_parallel(&j, err);
    }
    for (int64_t c = 0; c < schema->n_children; c++)
        TL_TRY(take_child(schema, batch, idx, n, out, c, err));
    return TL_OK;
}

tl_status tl_arrow_take_struct(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                               const int64_t *indices, int64_t n, struct ArrowArray *out,
                               tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (schema->format == NULL || strcmp(schema->format, "+s") != 0 ||
        batch->n_children != schema->n_children || batch->length < 0 || batch->offset < 0)
        return tl_error_set(err, TL_ERR_INVALID, "take: the batch is not a struct array");
    bool has_neg;
    TL_TRY(check_indices(indices, n, batch->length, &has_neg, err));
    /* The struct's offset applies to its children on top of their own. */
    int64_t *shifted = malloc((size_t)(n > 0 ? n : 1) * sizeof *shifted);
    if (shifted == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < n; i++) shifted[i] = indices[i] >= 0 ? indices[i] + batch->offset : -1;
    const uint8_t *validity =
        batch->null_count != 0 && batch->n_buffers > 0 ? batch->buffers[0] : NULL;
    tl_status st = tl_array_init(out, 1, schema->n_children, err);
    if (st == TL_OK) {
        out->length = n;
        st = take_validity(validity, batch->offset, indices, n, has_neg, out, err);
    }
    if (st == TL_OK) st = take_children(schema, batch, shifted, n, out, err);
    free(shifted);
    if (st != TL_OK) tl_array_release(out);
    return st;
}
