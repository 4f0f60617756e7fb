#include "formats/input/value_coerce.h"

#include "arrow/parse.h"
#include "formats/input/text_batch.h"

static void trim(const char **s, size_t *len)
{
    while (*len && (**s == ' ' || **s == '\t')) (*s)++, (*len)--;
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t')) (*len)--;
}

/* An optional minus and 1 to 18 digits (no overflow possible): the usual
 * integer, read inline; anything else (a plus, a point, an exponent, more
 * digits) goes through tl_parse_integral. */
static inline bool plain_int(const char *s, size_t len, int64_t *out)
{
    size_t i = len > 0 && s[0] == '-';
    if (len - i == 0 || len - i > 18) return false;
    int64_t v = 0;
    for (; i < len; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9) return false;
        v = v * 10 + (int64_t)d;
    }
    *out = s[0] == '-' ? -v : v;
    return true;
}

/* The value as the column's type, or TL_ERR_INVALID when it does not fit. */
static tl_status coerce(tl_builder *b, tl_value_kind kind, const char *s, size_t len, tl_error *err)
{
    if (b->type.id == TL_ATYPE_STRING || b->type.id == TL_ATYPE_LARGE_STRING) {
        if (kind == TL_VALUE_TEXT && !tl_utf8_valid((const uint8_t *)s, len)) return TL_ERR_INVALID;
        return tl_builder_append_bytes(b, s, len, err);
    }
    if (kind == TL_VALUE_JSON) return TL_ERR_INVALID;
    if (kind == TL_VALUE_TEXT) trim(&s, &len);
    switch (b->type.id) {
    case TL_ATYPE_INT64: {
        int64_t v;
        if (kind == TL_VALUE_BOOL ||
            (!plain_int(s, len, &v) && tl_parse_integral(s, len, &v, NULL) != TL_OK))
            return TL_ERR_INVALID;
        return tl_builder_push8(b, &v) ? TL_OK : tl_builder_append_int(b, v, err);
    }
    case TL_ATYPE_FLOAT64: {
        double v;
        if (kind == TL_VALUE_BOOL || tl_parse_double(s, len, &v, NULL) != TL_OK)
            return TL_ERR_INVALID;
        return tl_builder_push8(b, &v) ? TL_OK : tl_builder_append_double(b, v, err);
    }
    case TL_ATYPE_BOOL: {
        bool v;
        int64_t n;
        if (kind == TL_VALUE_NUMBER) {
            if (tl_parse_integral(s, len, &n, NULL) != TL_OK || (n != 0 && n != 1))
                return TL_ERR_INVALID;
            v = n == 1;
        } else if (tl_parse_bool(s, len, &v, NULL) != TL_OK) {
            return TL_ERR_INVALID;
        }
        return tl_builder_append_bool(b, v, err);
    }
    case TL_ATYPE_DATE32: {
        int32_t v;
        if (kind != TL_VALUE_TEXT || tl_parse_date32(s, len, &v, NULL) != TL_OK)
            return TL_ERR_INVALID;
        return tl_builder_append_int(b, v, err);
    }
    default:
        return tl_error_set(err, TL_ERR_INTERNAL, "no lenient typing for this column type");
    }
}

tl_status tl_value_coerce(tl_builder *b, tl_value_kind kind, const char *s, size_t len, bool *fits,
                          tl_error *err)
{
    tl_error e;
    tl_status st = coerce(b, kind, s, len, &e);
    *fits = st == TL_OK;
    if (st == TL_ERR_INVALID) return TL_OK;
    if (st != TL_OK && err) *err = e;
    return st;
}
