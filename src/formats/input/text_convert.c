/* Typing raw text columns into Arrow arrays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "arrow/parse.h"
#include "core/parallel.h"
#include "formats/input/text_batch.h"

bool tl_text_is_csv_null(const char *s, size_t len)
{
    static const char *const spellings[] = {
        "#N/A",    "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
        "1.#QNAN", "N/A",      "NA",  "NULL",    "NaN",      "n/a",  "nan",  "null"};
    if (len == 0) return true;
    if (len > 8) return false;
    for (size_t i = 0; i < sizeof spellings / sizeof *spellings; i++)
        if (strlen(spellings[i]) == len && memcmp(spellings[i], s, len) == 0) return true;
    return false;
}

bool tl_utf8_valid(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint64_t w;
        if (i + 8 <= len && (memcpy(&w, s + i, 8), (w & 0x8080808080808080ull) == 0)) {
            i += 8; /* eight ASCII bytes */
            continue;
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int n = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0 || i + (size_t)n >= len) return false;
        uint32_t cp = c & (0x3F >> n);
        for (int k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        static const uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += (size_t)n + 1;
    }
    return true;
}

tl_status tl_text_type_supported(const tl_arrow_type *type, const char *column, tl_error *err)
{
    switch (type->id) {
    case TL_ATYPE_NULL:
    case TL_ATYPE_FLOAT16:
    case TL_ATYPE_STRUCT:
    case TL_ATYPE_TIME32:
    case TL_ATYPE_TIME64:
    case TL_ATYPE_FIXED_BINARY: {
        char name[96];
        tl_arrow_type_describe(type, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": type %s cannot be read from text",
                            column, name);
    }
    default:
        return TL_OK;
    }
}

static bool is_text_type(tl_atype id)
{
    return tl_atype_is_varbinary(id);
}

/* Parses one value into the builder; err is NULL so the caller writes the
 * message. memo: the column's last date, for timestamps. */
static tl_status append_value(tl_builder *bld, const char *s, size_t len, tl_date_memo *memo)
{
    const tl_arrow_type *t = &bld->type;
    switch (t->id) {
    case TL_ATYPE_BOOL: {
        bool v;
        TL_TRY(tl_parse_bool(s, len, &v, NULL));
        return tl_builder_append_bool(bld, v, NULL);
    }
    case TL_ATYPE_UINT8:
    case TL_ATYPE_UINT16:
    case TL_ATYPE_UINT32:
    case TL_ATYPE_UINT64: {
        uint64_t v;
        TL_TRY(tl_parse_uint64(s, len, &v, NULL));
        return tl_builder_append_uint(bld, v, NULL);
    }
    case TL_ATYPE_INT8:
    case TL_ATYPE_INT16:
    case TL_ATYPE_INT32:
    case TL_ATYPE_INT64: {
        int64_t v;
        TL_TRY(tl_parse_int64(s, len, &v, NULL));
        if (t->id == TL_ATYPE_INT64 && tl_builder_push8(bld, &v)) return TL_OK;
        return tl_builder_append_int(bld, v, NULL);
    }
    case TL_ATYPE_FLOAT32:
    case TL_ATYPE_FLOAT64: {
        double v;
        TL_TRY(tl_parse_double(s, len, &v, NULL));
        if (t->id == TL_ATYPE_FLOAT64 && tl_builder_push8(bld, &v)) return TL_OK;
        return tl_builder_append_double(bld, v, NULL);
    }
    case TL_ATYPE_DECIMAL128: {
        tl_i128 v;
        TL_TRY(tl_parse_decimal128(s, len, t->precision, t->scale, &v, NULL));
        return tl_builder_append_decimal(bld, v, NULL);
    }
    case TL_ATYPE_DATE32: {
        int32_t v;
        TL_TRY(tl_parse_date32(s, len, &v, NULL));
        return tl_builder_append_int(bld, v, NULL);
    }
    case TL_ATYPE_DATE64: {
        int32_t v;
        TL_TRY(tl_parse_date32(s, len, &v, NULL));
        return tl_builder_append_int(bld, (int64_t)v * 86400000, NULL);
    }
    case TL_ATYPE_TIMESTAMP: {
        int64_t v;
        TL_TRY(tl_parse_timestamp_memo(s, len, t->unit, memo, &v, NULL));
        if (tl_builder_push8(bld, &v)) return TL_OK;
        return tl_builder_append_int(bld, v, NULL);
    }
    case TL_ATYPE_STRING:
    case TL_ATYPE_LARGE_STRING:
        if (!tl_utf8_valid((const uint8_t *)s, len)) return TL_ERR_INVALID;
        return tl_builder_append_bytes(bld, s, len, NULL);
    case TL_ATYPE_BINARY:
    case TL_ATYPE_LARGE_BINARY:
        return tl_builder_append_bytes(bld, s, len, NULL);
    default:
        return TL_ERR_INVALID;
    }
}

/* A null in a required column: what the file held there, and what to do. */
static tl_status required_error(const tl_text_batch *b, int64_t row, const tl_text_source *src,
                                const char *name, const char *s, size_t len, int kind,
                                tl_error *err)
{
    char quoted[64];
    tl_text_quote((const uint8_t *)s, (int64_t)len, quoted, sizeof quoted);
    return tl_error_set(err, TL_ERR_INVALID,
                        "%s: line %lld, column \"%s\": %s%s, but the table requires a value in "
                        "this column (it is not nullable): give one in every row",
                        src->name, (long long)((const int64_t *)b->lines.data)[row], name,
                        kind == TL_TEXT_NULL ? "null or missing"
                        : len == 0           ? "empty"
                                             : quoted,
                        kind != TL_TEXT_NULL && len > 0 ? " (read as null)" : "");
}

/* A JSON object or array where a flat value is due, or the reverse. */
static tl_status json_error(const tl_text_batch *b, int64_t row, const tl_text_source *src,
                            const char *name, const char *s, size_t len, bool nested, tl_error *err)
{
    char quoted[64];
    tl_text_quote((const uint8_t *)s, (int64_t)len, quoted, sizeof quoted);
    long long line = (long long)((const int64_t *)b->lines.data)[row];
    if (nested)
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: line %lld, column \"%s\": %s is not a JSON object or array, "
                            "which this struct, list or map column takes",
                            src->name, line, name, quoted);
    return tl_error_set(err, TL_ERR_INVALID,
                        "%s: line %lld, column \"%s\": a JSON %s (%s) where a single value is "
                        "due: only struct, list and map columns take objects and arrays",
                        src->name, line, name, len && s[0] == '{' ? "object" : "array", quoted);
}

/* Rows from r on of a float64, int64 or timestamp column that holds no
 * JSON, converted by a loop of their own: the general loop's type switch,
 * JSON and null tests and calls cost about as much as parsing a number.
 * Returns the first row it does not take plainly (a null, text that does not
 * parse, a full builder): the general loop goes on from there, and writes
 * the messages. */
static int64_t convert_plain(const tl_text_column *c, int64_t r, int64_t rows, bool csv_nulls,
                             tl_builder *bld, tl_date_memo *memo)
{
    tl_atype id = bld->type.id;
    for (; r < rows; r++) {
        size_t len;
        int kind;
        const char *s = tl_text_value(c, r, &len, &kind);
        if (kind == TL_TEXT_NULL || kind == TL_TEXT_JSON || len == 0) return r;
        if (csv_nulls && len <= 8 && tl_text_is_csv_null(s, len)) return r;
        union {
            double d;
            int64_t i;
        } v;
        tl_status st = id == TL_ATYPE_FLOAT64 ? tl_parse_double(s, len, &v.d, NULL)
                       : id == TL_ATYPE_INT64
                           ? tl_parse_int64(s, len, &v.i, NULL)
                           : tl_parse_timestamp_memo(s, len, bld->type.unit, memo, &v.i, NULL);
        if (st != TL_OK || !tl_builder_push8(bld, &v)) return r;
    }
    return r;
}

static bool plain_column(const tl_builder *bld, const tl_text_source *src, int col)
{
    tl_atype id = bld->type.id;
    return (id == TL_ATYPE_FLOAT64 || id == TL_ATYPE_INT64 || id == TL_ATYPE_TIMESTAMP) &&
           !(src->json && src->json[col]);
}

/* Rows [from, to) of the column, each value the general way. */
static tl_status convert_rows(const tl_text_batch *b, int col, const tl_text_source *src,
                              const char *name, tl_builder *bld, tl_date_memo *memo, int64_t from,
                              int64_t to, tl_error *err)
{
    const tl_text_column *c = &b->cols[col];
    bool text_type = is_text_type(bld->type.id);
    for (int64_t r = from; r < to; r++) {
        size_t len;
        int kind;
        const char *s = tl_text_value(c, r, &len, &kind);
        bool json = src->json && src->json[col];
        if ((kind == TL_TEXT_JSON) != json && kind != TL_TEXT_NULL)
            return json_error(b, r, src, name, s, len, json, err);
        bool null = kind == TL_TEXT_NULL ||
                    (!text_type && (src->csv_nulls || kind == TL_TEXT_STRING) && len == 0) ||
                    (!text_type && src->csv_nulls && tl_text_is_csv_null(s, len));
        if (null && src->required && src->required[col])
            return required_error(b, r, src, name, s, len, kind, err);
        tl_status st = null ? tl_builder_append_null(bld, err) : append_value(bld, s, len, memo);
        if (st == TL_OK) continue;
        if (st == TL_ERR_NOMEM) return tl_error_nomem(err);
        tl_error why = {0};
        int64_t ts;
        /* A timestamp finer than the column's unit: say so, it is not malformed. */
        if (bld->type.id == TL_ATYPE_TIMESTAMP &&
            tl_parse_timestamp_floor(s, len, bld->type.unit, &ts, NULL) == TL_OK &&
            tl_parse_timestamp(s, len, bld->type.unit, &ts, &why) != TL_OK)
            return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld, column \"%s\": %s", src->name,
                                (long long)((const int64_t *)b->lines.data)[r], name, why.message);
        char quoted[64], type[96];
        /* Messages stay UTF-8 (they go into JSON answers and Python
         * exceptions): bytes that are not are described, not quoted. */
        if (tl_utf8_valid((const uint8_t *)s, len))
            tl_text_quote((const uint8_t *)s, (int64_t)len, quoted, sizeof quoted);
        else
            snprintf(quoted, sizeof quoted, "text that is not valid UTF-8");
        /* Text read into 64-bit offsets (a table's storage form) is still a
         * string column to the user. */
        tl_arrow_type shown = bld->type;
        if (shown.id == TL_ATYPE_LARGE_STRING) shown.id = TL_ATYPE_STRING;
        tl_arrow_type_describe(&shown, type, sizeof type);
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: line %lld, column \"%s\": %s is not a valid %s", src->name,
                            (long long)((const int64_t *)b->lines.data)[r], name, quoted, type);
    }
    return TL_OK;
}

/* Whether rows [0, to) of a text column are valid UTF-8, all at once: the
 * whole run is, and no value starts inside a character (so each value is
 * whole characters). */
static bool run_utf8(const tl_text_column *c, int64_t to)
{
    const int64_t *off = (const int64_t *)c->offsets.data;
    size_t n = (size_t)off[to];
    const uint8_t *p = c->bytes.data;
    if (n == 0) return true;
    size_t i = 0;
    uint64_t high = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        high |= w;
    }
    for (; i < n; i++) high |= p[i];
    if ((high & 0x8080808080808080ull) == 0) return true; /* ASCII */
    if (!tl_utf8_valid(p, n)) return false;
    for (int64_t r = 0; r < to; r++)
        if ((size_t)off[r] < n && (p[off[r]] & 0xC0) == 0x80) return false;
    return true;
}

/* A string or binary column's rows from the first on, up to its first null
 * or JSON value, appended at once (their bytes are back to back in the
 * batch): a call per value cost more than the copy. Returns the rows taken;
 * none when a value is not valid UTF-8 (the general loop names it). */
static int64_t convert_text_run(const tl_text_column *c, int64_t rows, tl_builder *bld,
                                tl_error *err, tl_status *st)
{
    int64_t to = 0;
    const uint8_t *kinds = c->kinds.data;
    while (to < rows && kinds[to] != TL_TEXT_NULL && kinds[to] != TL_TEXT_JSON) to++;
    tl_atype id = bld->type.id;
    bool text = id == TL_ATYPE_STRING || id == TL_ATYPE_LARGE_STRING;
    if (to == 0 || (text && !run_utf8(c, to))) return 0;
    *st = tl_builder_append_var_run(bld, c->bytes.data, (const int64_t *)c->offsets.data, to, err);
    return *st == TL_OK ? to : 0;
}

static tl_status convert_column(const tl_text_batch *b, int col, const tl_text_source *src,
                                const char *name, tl_builder *bld, tl_error *err)
{
    const tl_text_column *c = &b->cols[col];
    bool text_type = is_text_type(bld->type.id);
    TL_TRY(tl_builder_reserve(bld, b->rows, text_type ? (int64_t)c->bytes.len : 0, err));
    tl_date_memo memo = {0};
    int64_t from = 0;
    /* The values the reader typed (all of the batch's first rows), at once:
     * the builder was reserved for every row and holds no null yet. */
    if (c->direct > 0) {
        if (!tl_builder_push8_many(bld, c->values.data, c->direct))
            return tl_error_set(err, TL_ERR_INTERNAL, "column \"%s\": typed values do not fit",
                                name);
        from = c->direct;
    }
    if (text_type && !(src->json && src->json[col]) && bld->null_count == 0) {
        tl_status st = TL_OK;
        from = convert_text_run(c, b->rows, bld, err, &st);
        TL_TRY(st);
    }
    /* The plain loop pushes values only while the column has no null. */
    while (from < b->rows && plain_column(bld, src, col) && bld->null_count == 0) {
        from = convert_plain(c, from, b->rows, src->csv_nulls, bld, &memo);
        if (from == b->rows) break;
        /* One row the general way (its null, its error), then plainly again. */
        TL_TRY(convert_rows(b, col, src, name, bld, &memo, from, from + 1, err));
        from++;
    }
    return convert_rows(b, col, src, name, bld, &memo, from, b->rows, err);
}

/* Columns convert independently: a large batch converts a few at a time, in
 * threads. Which error is reported stays the same as one at a time: that of
 * the first failing column. */
#define CONVERT_THREADS 4
#define PARALLEL_CELLS 16384

typedef struct convert_job {
    const tl_text_batch *b;
    const tl_text_source *src;
    const tl_arrow_type *types;
    const char *const *names;
    struct ArrowArray *out;
    tl_status *status; /* per column */
    tl_error *errs;    /* per column */
} convert_job;

static tl_status convert_one(convert_job *j, int i)
{
    tl_builder bld;
    tl_error *err = &j->errs[i];
    tl_status st = tl_builder_init(&bld, &j->types[i], err);
    if (st == TL_OK) st = convert_column(j->b, i, j->src, j->names[i], &bld, err);
    if (st == TL_OK) st = tl_builder_finish(&bld, j->out->children[i], err);
    tl_builder_free(&bld);
    return st;
}

static tl_status convert_item(void *ctx, size_t i, tl_error *err)
{
    (void)err; /* each column keeps its own status and error */
    convert_job *j = ctx;
    j->status[i] = convert_one(j, (int)i);
    return TL_OK;
}

static void convert_parallel(convert_job *j)
{
    size_t cpus = tl_cpu_count();
    size_t want = cpus < CONVERT_THREADS ? cpus : CONVERT_THREADS;
    tl_parallel_run((size_t)j->b->ncols, want, false, convert_item, j, NULL);
}

tl_status tl_text_batch_convert(const tl_text_batch *b, const tl_text_source *src,
                                const tl_arrow_type *types, const char *const *names,
                                struct ArrowArray *out, tl_error *err)
{
    TL_TRY(tl_array_init(out, 1, b->ncols, err));
    out->length = b->rows;
    int n = b->ncols;
    tl_status *status = calloc((size_t)n + 1, sizeof *status);
    tl_error *errs = calloc((size_t)n + 1, sizeof *errs);
    if (status == NULL || errs == NULL) {
        free(status);
        free(errs);
        tl_array_release(out);
        return tl_error_nomem(err);
    }
    convert_job j = {.b = b,
                     .src = src,
                     .types = types,
                     .names = names,
                     .out = out,
                     .status = status,
                     .errs = errs};
    if (n > 1 && b->rows * n >= PARALLEL_CELLS) {
        convert_parallel(&j);
    } else {
        for (int i = 0; i < n; i++)
            if ((status[i] = convert_one(&j, i)) != TL_OK) break;
    }
    tl_status st = TL_OK;
    for (int i = 0; i < n && st == TL_OK; i++) {
        st = status[i];
        if (st != TL_OK && err) *err = errs[i];
    }
    free(status);
    free(errs);
    if (st != TL_OK) tl_array_release(out);
    return st;
}
