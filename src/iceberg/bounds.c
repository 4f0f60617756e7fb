#include "iceberg/bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static bool is_long_like(tl_ice_type_id id)
{
    return id == TL_ICE_LONG || id == TL_ICE_TIME || id == TL_ICE_TIMESTAMP ||
           id == TL_ICE_TIMESTAMPTZ || id == TL_ICE_TIMESTAMP_NS || id == TL_ICE_TIMESTAMPTZ_NS;
}

static tl_status type_error(const tl_ice_type *t, const char *what, tl_error *err)
{
    char name[TL_ICE_TYPE_STR_MAX];
    tl_ice_type_format(t, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "a %s bound %s", name, what);
}

static tl_status length_error(const tl_ice_type *t, size_t len, tl_error *err)
{
    char name[TL_ICE_TYPE_STR_MAX];
    tl_ice_type_format(t, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "a %s bound cannot be %zu bytes long", name, len);
}

tl_status tl_ice_bound_check(const tl_ice_type *t, const uint8_t *b, size_t len, tl_error *err)
{
    (void)b;
    bool ok;
    switch (t->id) {
    case TL_ICE_BOOLEAN:
        ok = len == 1;
        break;
    case TL_ICE_INT:
    case TL_ICE_DATE:
    case TL_ICE_FLOAT:
        ok = len == 4;
        break;
    case TL_ICE_LONG:
    case TL_ICE_DOUBLE:
        ok = len == 8 || len == 4;
        break; /* 4: promoted from int/float */
    case TL_ICE_DECIMAL:
        ok = len >= 1 && len <= 16;
        break;
    case TL_ICE_UUID:
        ok = len == 16;
        break;
    case TL_ICE_FIXED:
        ok = len == (size_t)t->length;
        break;
    case TL_ICE_STRING:
    case TL_ICE_BINARY:
        ok = true;
        break;
    default:
        ok = is_long_like(t->id) && len == 8;
        break;
    }
    return ok ? TL_OK : length_error(t, len, err);
}

/* ---- Encoding ---- */

/* Offset of the shortest suffix of a big-endian two's-complement number with its value. */
static size_t minimal_be_start(const uint8_t *be, size_t len)
{
    size_t i = 0;
    while (i + 1 < len &&
           ((be[i] == 0x00 && !(be[i + 1] & 0x80)) || (be[i] == 0xFF && (be[i + 1] & 0x80))))
        i++;
    return i;
}

static void decimal_from_i64(int64_t v, uint8_t *out, size_t *out_len)
{
    uint8_t be[8];
    for (int i = 0; i < 8; i++) be[i] = (uint8_t)((uint64_t)v >> (56 - 8 * i));
    size_t start = minimal_be_start(be, 8);
    *out_len = 8 - start;
    memcpy(out, be + start, *out_len);
}

void tl_ice_bound_from_decimal128(const uint8_t le[16], uint8_t out[TL_ICE_BOUND_FIXED_MAX],
                                  size_t *out_len)
{
    uint8_t be[16];
    for (int i = 0; i < 16; i++) be[i] = le[15 - i];
    size_t start = minimal_be_start(be, 16);
    *out_len = 16 - start;
    memcpy(out, be + start, *out_len);
}

tl_status tl_ice_bound_from_int(const tl_ice_type *t, int64_t v,
                                uint8_t out[TL_ICE_BOUND_FIXED_MAX], size_t *out_len, tl_error *err)
{
    switch (t->id) {
    case TL_ICE_BOOLEAN:
        out[0] = v != 0;
        *out_len = 1;
        return TL_OK;
    case TL_ICE_INT:
    case TL_ICE_DATE:
        if (v < INT32_MIN || v > INT32_MAX) return type_error(t, "must fit 32 bits", err);
        tl_store_le32(out, (uint32_t)v);
        *out_len = 4;
        return TL_OK;
    case TL_ICE_DECIMAL:
        decimal_from_i64(v, out, out_len);
        return TL_OK;
    default:
        if (!is_long_like(t->id)) return type_error(t, "is not an integer", err);
        tl_store_le64(out, (uint64_t)v);
        *out_len = 8;
        return TL_OK;
    }
}

static void store_float(uint8_t *out, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    tl_store_le32(out, bits);
}

static void store_double(uint8_t *out, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    tl_store_le64(out, bits);
}

tl_status tl_ice_bound_from_double(const tl_ice_type *t, double v,
                                   uint8_t out[TL_ICE_BOUND_FIXED_MAX], size_t *out_len,
                                   tl_error *err)
{
    if (isnan(v)) return type_error(t, "cannot be NaN", err);
    if (t->id == TL_ICE_FLOAT) {
        store_float(out, (float)v);
        *out_len = 4;
        return TL_OK;
    }
    if (t->id != TL_ICE_DOUBLE) return type_error(t, "is not a floating-point number", err);
    store_double(out, v);
    *out_len = 8;
    return TL_OK;
}

/* ---- Decoding ---- */

static float load_float(const uint8_t *p)
{
    uint32_t bits = tl_load_le32(p);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static double load_double(const uint8_t *p)
{
    uint64_t bits = tl_load_le64(p);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

tl_status tl_ice_bound_to_decimal128(const uint8_t *b, size_t len, uint8_t out[16], tl_error *err)
{
    if (len < 1 || len > 16)
        return tl_error_set(err, TL_ERR_INVALID, "a decimal bound cannot be %zu bytes long", len);
    uint8_t sign = (b[0] & 0x80) ? 0xFF : 0x00;
    for (size_t i = 0; i < 16; i++) out[i] = i < len ? b[len - 1 - i] : sign;
    return TL_OK;
}

static tl_status decimal_to_i64(const uint8_t *b, size_t len, int64_t *out, tl_error *err)
{
    uint8_t le[16];
    TL_TRY(tl_ice_bound_to_decimal128(b, len, le, err));
    uint8_t sign = (le[7] & 0x80) ? 0xFF : 0x00;
    for (int i = 8; i < 16; i++)
        if (le[i] != sign)
            return tl_error_set(err, TL_ERR_INVALID, "decimal bound does not fit 64 bits");
    *out = (int64_t)tl_load_le64(le);
    return TL_OK;
}

tl_status tl_ice_bound_to_int(const tl_ice_type *t, const uint8_t *b, size_t len, int64_t *out,
                              tl_error *err)
{
    TL_TRY(tl_ice_bound_check(t, b, len, err));
    switch (t->id) {
    case TL_ICE_BOOLEAN:
        *out = b[0] != 0;
        return TL_OK;
    case TL_ICE_INT:
    case TL_ICE_DATE:
        *out = (int32_t)tl_load_le32(b);
        return TL_OK;
    case TL_ICE_DECIMAL:
        return decimal_to_i64(b, len, out, err);
    default:
        if (!is_long_like(t->id)) return type_error(t, "is not an integer", err);
        *out = len == 4 ? (int64_t)(int32_t)tl_load_le32(b) : (int64_t)tl_load_le64(b);
        return TL_OK;
    }
}

tl_status tl_ice_bound_to_double(const tl_ice_type *t, const uint8_t *b, size_t len, double *out,
                                 tl_error *err)
{
    if (t->id != TL_ICE_FLOAT && t->id != TL_ICE_DOUBLE)
        return type_error(t, "is not a floating-point number", err);
    TL_TRY(tl_ice_bound_check(t, b, len, err));
    *out = len == 4 ? (double)load_float(b) : load_double(b);
    return TL_OK;
}

/* ---- From Parquet statistics ---- */

static tl_status copy_out(const uint8_t *v, size_t len, uint8_t **out, size_t *out_len,
                          tl_error *err)
{
    *out = malloc(len ? len : 1);
    if (*out == NULL) return tl_error_nomem(err);
    if (len) memcpy(*out, v, len);
    *out_len = len;
    return TL_OK;
}

static tl_status decimal_from_be(const uint8_t *v, size_t len, uint8_t **out, size_t *out_len,
                                 tl_error *err)
{
    if (len == 0) return tl_error_set(err, TL_ERR_INVALID, "an empty decimal statistics value");
    size_t start = minimal_be_start(v, len);
    if (len - start > 16)
        return tl_error_set(err, TL_ERR_INVALID, "a decimal statistics value of %zu bytes",
                            len - start);
    return copy_out(v + start, len - start, out, out_len, err);
}

/* Integer statistics (INT32/INT64 LE) re-encoded for the column type. */
static tl_status from_parquet_int(const tl_ice_type *t, int64_t v, uint8_t **out, size_t *out_len,
                                  tl_error *err)
{
    uint8_t tmp[TL_ICE_BOUND_FIXED_MAX];
    size_t n;
    TL_TRY(tl_ice_bound_from_int(t, v, tmp, &n, err));
    return copy_out(tmp, n, out, out_len, err);
}

static tl_status from_parquet_float(const tl_ice_type *t, double v, uint8_t **out, size_t *out_len,
                                    tl_error *err)
{
    if (isnan(v)) return TL_OK; /* no bound */
    uint8_t tmp[TL_ICE_BOUND_FIXED_MAX];
    size_t n;
    TL_TRY(tl_ice_bound_from_double(t, v, tmp, &n, err));
    return copy_out(tmp, n, out, out_len, err);
}

static bool physical_fits(const tl_ice_type *t, tl_ice_parquet_physical p, size_t len)
{
    switch (t->id) {
    case TL_ICE_BOOLEAN:
        return p == TL_ICE_PQ_BOOLEAN && len == 1;
    case TL_ICE_INT:
    case TL_ICE_DATE:
        return p == TL_ICE_PQ_INT32 && len == 4;
    case TL_ICE_LONG:
        return (p == TL_ICE_PQ_INT64 && len == 8) || (p == TL_ICE_PQ_INT32 && len == 4);
    case TL_ICE_FLOAT:
        return p == TL_ICE_PQ_FLOAT && len == 4;
    case TL_ICE_DOUBLE:
        return (p == TL_ICE_PQ_DOUBLE && len == 8) || (p == TL_ICE_PQ_FLOAT && len == 4);
    case TL_ICE_DECIMAL:
        return (p == TL_ICE_PQ_INT32 && len == 4) || (p == TL_ICE_PQ_INT64 && len == 8) ||
               p == TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY || p == TL_ICE_PQ_BYTE_ARRAY;
    case TL_ICE_STRING:
    case TL_ICE_BINARY:
        return p == TL_ICE_PQ_BYTE_ARRAY || p == TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY;
    case TL_ICE_UUID:
        return p == TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY && len == 16;
    case TL_ICE_FIXED:
        return p == TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY && len == (size_t)t->length;
    default:
        return p == TL_ICE_PQ_INT64 && len == 8;
    }
}

tl_status tl_ice_bound_from_parquet_typed(const tl_ice_type *t, tl_ice_parquet_physical physical,
                                          const uint8_t *v, size_t len, uint8_t **out,
                                          size_t *out_len, tl_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (!physical_fits(t, physical, len) || (len > 0 && v == NULL)) {
        char name[TL_ICE_TYPE_STR_MAX];
        tl_ice_type_format(t, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID,
                            "a %s column cannot have statistics of physical type %d and %zu bytes",
                            name, (int)physical, len);
    }
    switch (physical) {
    case TL_ICE_PQ_BOOLEAN:
        return from_parquet_int(t, v[0] != 0, out, out_len, err);
    case TL_ICE_PQ_INT32:
        return from_parquet_int(t, (int32_t)tl_load_le32(v), out, out_len, err);
    case TL_ICE_PQ_INT64:
        return from_parquet_int(t, (int64_t)tl_load_le64(v), out, out_len, err);
    case TL_ICE_PQ_FLOAT:
        return from_parquet_float(t, load_float(v), out, out_len, err);
    case TL_ICE_PQ_DOUBLE:
        return from_parquet_float(t, load_double(v), out, out_len, err);
    default:
        if (t->id == TL_ICE_DECIMAL) return decimal_from_be(v, len, out, out_len, err);
        return copy_out(v, len, out, out_len, err);
    }
}

/* The physical type Iceberg writers use for t, allowing the promoted 4-byte forms. */
static tl_ice_parquet_physical default_physical(const tl_ice_type *t, size_t len)
{
    switch (t->id) {
    case TL_ICE_BOOLEAN:
        return TL_ICE_PQ_BOOLEAN;
    case TL_ICE_INT:
    case TL_ICE_DATE:
        return TL_ICE_PQ_INT32;
    case TL_ICE_LONG:
        return len == 4 ? TL_ICE_PQ_INT32 : TL_ICE_PQ_INT64;
    case TL_ICE_FLOAT:
        return TL_ICE_PQ_FLOAT;
    case TL_ICE_DOUBLE:
        return len == 4 ? TL_ICE_PQ_FLOAT : TL_ICE_PQ_DOUBLE;
    case TL_ICE_DECIMAL:
        return t->precision <= 9    ? TL_ICE_PQ_INT32
               : t->precision <= 18 ? TL_ICE_PQ_INT64
                                    : TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY;
    case TL_ICE_STRING:
    case TL_ICE_BINARY:
        return TL_ICE_PQ_BYTE_ARRAY;
    case TL_ICE_UUID:
    case TL_ICE_FIXED:
        return TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY;
    default:
        return TL_ICE_PQ_INT64;
    }
}

tl_status tl_ice_bound_from_parquet(const tl_ice_type *t, const uint8_t *parquet_plain, size_t len,
                                    uint8_t **out, size_t *out_len, tl_error *err)
{
    return tl_ice_bound_from_parquet_typed(t, default_physical(t, len), parquet_plain, len, out,
                                           out_len, err);
}

/* ---- Truncation ---- */

/* Length of the UTF-8 sequence starting with `lead` (1 for stray bytes, so a malformed
 * string still advances). */
static size_t utf8_seq_len(uint8_t lead)
{
    if (lead < 0xC0) return 1;
    if (lead < 0xE0) return 2;
    if (lead < 0xF0) return 3;
    return 4;
}

/* Byte length of the first max_chars code points (all of v when it is shorter). */
static size_t utf8_prefix(const uint8_t *v, size_t len, size_t max_chars, size_t *chars)
{
    size_t pos = 0, n = 0;
    while (pos < len && n < max_chars) {
        size_t step = utf8_seq_len(v[pos]);
        pos = step > len - pos ? len : pos + step;
        n++;
    }
    *chars = n;
    return pos;
}

static uint32_t utf8_decode(const uint8_t *p, size_t n)
{
    static const uint8_t lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t cp = p[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++) cp = cp << 6 | (p[i] & 0x3F);
    return cp;
}

static size_t utf8_encode(uint32_t cp, uint8_t *out)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | cp >> 18);
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Start of the code point that ends at `end` (continuation bytes are skipped back). */
static size_t utf8_last_start(const uint8_t *v, size_t end)
{
    size_t i = end - 1;
    while (i > 0 && end - i < 4 && (v[i] & 0xC0) == 0x80) i--;
    return i;
}

/* Increments the last code point of buf[0..*len) that can be incremented, dropping the
 * ones after it. Returns false when none can. buf has room for 4 more bytes. */
static bool utf8_increment(uint8_t *buf, size_t *len)
{
    size_t end = *len;
    while (end > 0) {
        size_t start = utf8_last_start(buf, end);
        uint32_t cp = utf8_decode(buf + start, end - start) + 1;
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xE000;
        if (cp <= 0x10FFFF) {
            *len = start + utf8_encode(cp, buf + start);
            return true;
        }
        end = start;
    }
    return false;
}

static bool bytes_increment(uint8_t *buf, size_t *len)
{
    for (size_t i = *len; i > 0; i--)
        if (buf[i - 1] != 0xFF) {
            buf[i - 1]++;
            *len = i;
            return true;
        }
    return false;
}

tl_status tl_ice_bound_truncate(const tl_ice_type *t, const uint8_t *v, size_t len,
                                size_t max_chars, bool upper, uint8_t **out, size_t *out_len,
                                tl_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (t->id != TL_ICE_STRING && t->id != TL_ICE_BINARY)
        return type_error(t, "cannot be truncated", err);
    if (max_chars == 0)
        return tl_error_set(err, TL_ERR_INVALID, "bounds cannot be truncated to 0 characters");
    size_t chars = 0, cut = t->id == TL_ICE_STRING ? utf8_prefix(v, len, max_chars, &chars)
                                                   : (len < max_chars ? len : max_chars);
    if (cut == len) return copy_out(v, len, out, out_len, err);
    uint8_t *buf = malloc(cut + 4);
    if (buf == NULL) return tl_error_nomem(err);
    memcpy(buf, v, cut);
    size_t n = cut;
    if (upper && !(t->id == TL_ICE_STRING ? utf8_increment(buf, &n) : bytes_increment(buf, &n))) {
        free(buf);
        return TL_OK; /* no upper bound exists */
    }
    *out = buf;
    *out_len = n;
    return TL_OK;
}

/* ---- Ordering ---- */

static int compare_bytes(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0) return c < 0 ? -1 : 1;
    return (al > bl) - (al < bl);
}

static int compare_doubles(double x, double y)
{
    if (x < y) return -1;
    if (x > y) return 1;
    bool xn = isnan(x), yn = isnan(y);
    if (xn || yn) return (int)xn - (int)yn;
    return (int)(signbit(y) != 0) - (int)(signbit(x) != 0); /* -0.0 < 0.0 */
}

static int compare_decimals(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    uint8_t x[16], y[16];
    if (tl_ice_bound_to_decimal128(a, al, x, NULL) != TL_OK ||
        tl_ice_bound_to_decimal128(b, bl, y, NULL) != TL_OK)
        return compare_bytes(a, al, b, bl);
    if (x[15] != y[15]) return (int8_t)x[15] < (int8_t)y[15] ? -1 : 1;
    for (int i = 14; i >= 0; i--)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

int tl_ice_bound_compare(const tl_ice_type *t, const uint8_t *a, size_t a_len, const uint8_t *b,
                         size_t b_len)
{
    if (t->id == TL_ICE_DECIMAL) return compare_decimals(a, a_len, b, b_len);
    if (t->id == TL_ICE_FLOAT || t->id == TL_ICE_DOUBLE) {
        double x, y;
        if (tl_ice_bound_to_double(t, a, a_len, &x, NULL) == TL_OK &&
            tl_ice_bound_to_double(t, b, b_len, &y, NULL) == TL_OK)
            return compare_doubles(x, y);
    } else if (t->id == TL_ICE_BOOLEAN || t->id == TL_ICE_INT || t->id == TL_ICE_DATE ||
               is_long_like(t->id)) {
        int64_t x, y;
        if (tl_ice_bound_to_int(t, a, a_len, &x, NULL) == TL_OK &&
            tl_ice_bound_to_int(t, b, b_len, &y, NULL) == TL_OK)
            return (x > y) - (x < y);
    }
    return compare_bytes(a, a_len, b, b_len);
}
