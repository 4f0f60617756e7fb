#include "formats/csv/value_print.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrow/parse.h"
#include "formats/csv/value_text.h"

typedef enum {
    P_SCALAR,     /* through a tl_array_view and tl_value_text */
    P_NULL,       /* "n": every value is null */
    P_STRUCT,     /* "+s" */
    P_LIST,       /* "+l": int32 offsets */
    P_LARGE_LIST, /* "+L": int64 offsets */
    P_FIXED_LIST, /* "+w:N" */
    P_MAP,        /* "+m": a list of {key, value} structs */
    P_UNION,      /* "+us:..." and "+ud:..." */
    P_INTERVAL,   /* "tiM", "tiD", "tin" */
    P_DURATION,   /* "tDs", "tDm", "tDu", "tDn" */
    P_UHUGEINT,   /* DuckDB's opaque uhugeint: 16 little-endian bytes, unsigned */
    P_BIGNUM,     /* DuckDB's opaque bignum (VARINT), binary: see bignum_text */
} print_kind;

struct tl_value_printer {
    print_kind kind;
    const char *name; /* the field's name (borrowed from the schema) */
    const struct ArrowArray *array;
    tl_array_view view; /* P_SCALAR */
    bool has_view;
    int64_t n_children;
    tl_value_printer *children; /* owned */
    int32_t list_size;          /* P_FIXED_LIST */
    bool dense;                 /* P_UNION */
    int8_t child_of_code[128];  /* P_UNION: type code -> child, or -1 */
    char interval;              /* P_INTERVAL: 'M', 'D' or 'n' */
    tl_time_unit unit;          /* P_DURATION */
};

__extension__ typedef unsigned __int128 u128;

static const int64_t nanos_per[] = {1000000000, 1000000, 1000, 1}; /* per unit */

static tl_status init_node(tl_value_printer *p, const char *name, const struct ArrowSchema *s,
                           const struct ArrowArray *a, tl_error *err);

static void free_node(tl_value_printer *p)
{
    if (p->has_view) tl_array_view_free(&p->view);
    for (int64_t c = 0; c < p->n_children; c++) free_node(&p->children[c]);
    free(p->children);
}

static tl_status bad(const tl_value_printer *p, const char *what, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": %s", p->name, what);
}

/* Whether s is DuckDB's opaque extension type `type_name`. */
static bool is_duckdb_opaque(const struct ArrowSchema *s, const char *type_name)
{
    int32_t len = 0;
    const char *ext = tl_metadata_find(s->metadata, "ARROW:extension:name", &len);
    if (ext == NULL || len != 12 || memcmp(ext, "arrow.opaque", 12) != 0) return false;
    const char *meta = tl_metadata_find(s->metadata, "ARROW:extension:metadata", &len);
    char quoted[40];
    int n = snprintf(quoted, sizeof quoted, "\"%s\"", type_name);
    for (int32_t k = 0; meta && k + n <= len; k++)
        if (memcmp(meta + k, quoted, (size_t)n) == 0) return true;
    return false;
}

/* The kind of a format string that tl_array_view does not read itself. */
static bool nested_kind(const struct ArrowSchema *s, tl_value_printer *p)
{
    const char *f = s->format;
    if (s->dictionary) return false;
    if (strcmp(f, "n") == 0)
        p->kind = P_NULL;
    else if (strcmp(f, "+s") == 0)
        p->kind = P_STRUCT;
    else if (strcmp(f, "+l") == 0)
        p->kind = P_LIST;
    else if (strcmp(f, "+L") == 0)
        p->kind = P_LARGE_LIST;
    else if (strcmp(f, "+m") == 0)
        p->kind = P_MAP;
    else if (strncmp(f, "+w:", 3) == 0)
        p->kind = P_FIXED_LIST;
    else if (strncmp(f, "+us:", 4) == 0 || strncmp(f, "+ud:", 4) == 0)
        p->kind = P_UNION;
    else if (strncmp(f, "ti", 2) == 0 && f[2] && strchr("MDn", f[2]) && !f[3])
        p->kind = P_INTERVAL;
    else if (strncmp(f, "tD", 2) == 0 && f[2] && strchr("smun", f[2]) && !f[3])
        p->kind = P_DURATION;
    else if (strcmp(f, "w:16") == 0 && is_duckdb_opaque(s, "uhugeint"))
        p->kind = P_UHUGEINT;
    else if (strcmp(f, "z") == 0 && is_duckdb_opaque(s, "bignum"))
        p->kind = P_BIGNUM;
    else
        return false;
    return true;
}

/* Union type codes ("+us:0,1,5") to children. */
static tl_status init_union(tl_value_printer *p, const struct ArrowSchema *s, tl_error *err)
{
    p->dense = s->format[2] == 'd';
    memset(p->child_of_code, -1, sizeof p->child_of_code);
    const char *c = s->format + 4;
    for (int64_t k = 0; k < s->n_children; k++) {
        char *end;
        long code = strtol(c, &end, 10);
        if (end == c || code < 0 || code > 127 || (*end != ',' && *end != '\0'))
            return bad(p, "bad union type codes", err);
        p->child_of_code[code] = (int8_t)k;
        c = *end ? end + 1 : end;
    }
    const struct ArrowArray *a = p->array;
    if (a->length > 0 && (a->n_buffers < (p->dense ? 2 : 1) || a->buffers[0] == NULL ||
                          (p->dense && a->buffers[1] == NULL)))
        return bad(p, "union without its buffers", err);
    const int8_t *codes = p->array->buffers[0];
    for (int64_t i = 0; i < p->array->length; i++) {
        int8_t code = codes[p->array->offset + i];
        int child = code >= 0 ? p->child_of_code[code] : -1;
        if (child < 0) return bad(p, "union value of an unknown type code", err);
        int64_t j = p->dense ? ((const int32_t *)p->array->buffers[1])[p->array->offset + i]
                             : p->array->offset + i;
        if (j < 0 || j >= p->array->children[child]->length)
            return bad(p, "union value out of its member's range", err);
    }
    return TL_OK;
}

/* Start and end of list i in its child. */
static void list_range(const tl_value_printer *p, int64_t i, int64_t *start, int64_t *end)
{
    int64_t k = p->array->offset + i;
    if (p->kind == P_FIXED_LIST) {
        *start = k * p->list_size;
        *end = *start + p->list_size;
    } else if (p->kind == P_LARGE_LIST) {
        *start = ((const int64_t *)p->array->buffers[1])[k];
        *end = ((const int64_t *)p->array->buffers[1])[k + 1];
    } else {
        *start = ((const int32_t *)p->array->buffers[1])[k];
        *end = ((const int32_t *)p->array->buffers[1])[k + 1];
    }
}

static tl_status check_lists(tl_value_printer *p, const struct ArrowSchema *s, tl_error *err)
{
    if (p->kind == P_FIXED_LIST) {
        long n = strtol(s->format + 3, NULL, 10);
        if (n < 0 || n > INT32_MAX) return bad(p, "bad fixed-size list", err);
        p->list_size = (int32_t)n;
    } else if (p->array->length > 0 && (p->array->n_buffers < 2 || !p->array->buffers[1])) {
        return bad(p, "list without offsets", err);
    }
    int64_t child_len = p->array->children[0]->length;
    for (int64_t i = 0; i < p->array->length; i++) {
        int64_t start, end;
        list_range(p, i, &start, &end);
        if (start < 0 || end < start || end > child_len) return bad(p, "list out of range", err);
    }
    if (p->kind == P_MAP && s->children[0]->n_children != 2)
        return bad(p, "map entries are not {key, value}", err);
    return TL_OK;
}

static tl_status init_children(tl_value_printer *p, const struct ArrowSchema *s,
                               const struct ArrowArray *a, tl_error *err)
{
    if (a->n_children != s->n_children) return bad(p, "children differ from the schema's", err);
    if ((p->kind == P_LIST || p->kind == P_LARGE_LIST || p->kind == P_MAP ||
         p->kind == P_FIXED_LIST) &&
        s->n_children != 1)
        return bad(p, "a list needs one child", err);
    /* All children are counted at once: free_node frees one that failed half made. */
    p->children = calloc(s->n_children ? (size_t)s->n_children : 1, sizeof *p->children);
    if (p->children == NULL) return tl_error_nomem(err);
    p->n_children = s->n_children;
    for (int64_t c = 0; c < s->n_children; c++) {
        const struct ArrowSchema *cs = s->children[c];
        TL_TRY(init_node(&p->children[c], cs->name ? cs->name : "", cs, a->children[c], err));
        if (p->kind == P_STRUCT && a->children[c]->length < a->offset + a->length)
            return bad(p, "struct field shorter than the struct", err);
    }
    if (p->kind == P_UNION) return init_union(p, s, err);
    if (p->kind != P_STRUCT) return check_lists(p, s, err);
    return TL_OK;
}

static tl_status init_node(tl_value_printer *p, const char *name, const struct ArrowSchema *s,
                           const struct ArrowArray *a, tl_error *err)
{
    memset(p, 0, sizeof *p);
    p->name = name;
    p->array = a;
    bool nested = nested_kind(s, p);
    if (!nested || p->kind == P_BIGNUM) {
        tl_status st = tl_array_view_init(&p->view, s, a, err);
        if (st != TL_OK) return tl_error_prefix(err, "cannot print column \"%s\"", name);
        p->has_view = true;
        return TL_OK;
    }
    if (p->kind == P_INTERVAL) p->interval = s->format[2];
    if (p->kind == P_DURATION)
        p->unit = s->format[2] == 's'   ? TL_UNIT_SECOND
                  : s->format[2] == 'm' ? TL_UNIT_MILLI
                  : s->format[2] == 'u' ? TL_UNIT_MICRO
                                        : TL_UNIT_NANO;
    bool fixed = p->kind == P_INTERVAL || p->kind == P_DURATION || p->kind == P_UHUGEINT;
    if (fixed && a->length > 0 && (a->n_buffers < 2 || a->buffers[1] == NULL))
        return bad(p, "values buffer missing", err);
    if (p->kind == P_NULL || fixed) return TL_OK;
    return init_children(p, s, a, err);
}

tl_status tl_value_printer_new(const char *name, const struct ArrowSchema *schema,
                               const struct ArrowArray *array, tl_value_printer **out,
                               tl_error *err)
{
    tl_value_printer *p = calloc(1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    tl_status st = init_node(p, name ? name : "", schema, array, err);
    if (st != TL_OK) {
        tl_value_printer_free(p);
        return st;
    }
    *out = p;
    return TL_OK;
}

void tl_value_printer_free(tl_value_printer *p)
{
    if (p == NULL) return;
    free_node(p);
    free(p);
}

tl_status tl_value_printers_new(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                                tl_value_printer ***out, tl_error *err)
{
    int64_t n = schema->n_children;
    if (batch->n_children != n)
        return tl_error_set(err, TL_ERR_INVALID, "a batch of %lld columns for %lld names",
                            (long long)batch->n_children, (long long)n);
    tl_value_printer **p = calloc(n ? (size_t)n : 1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    for (int64_t c = 0; c < n; c++) {
        tl_status st = tl_value_printer_new(schema->children[c]->name, schema->children[c],
                                            batch->children[c], &p[c], err);
        if (st != TL_OK) {
            tl_value_printers_free(p, c);
            return st;
        }
    }
    *out = p;
    return TL_OK;
}

void tl_value_printers_free(tl_value_printer **printers, int64_t n)
{
    for (int64_t c = 0; printers && c < n; c++) tl_value_printer_free(printers[c]);
    free(printers);
}

/* The member and its index that union value i holds. */
static const tl_value_printer *union_member(const tl_value_printer *p, int64_t i, int64_t *j)
{
    int64_t k = p->array->offset + i;
    int8_t code = ((const int8_t *)p->array->buffers[0])[k];
    *j = p->dense ? ((const int32_t *)p->array->buffers[1])[k] : k;
    return &p->children[p->child_of_code[code]];
}

bool tl_value_printer_is_null(const tl_value_printer *p, int64_t i)
{
    int64_t j;
    const tl_value_printer *member;
    switch (p->kind) {
    case P_NULL:
        return true;
    case P_SCALAR:
        return tl_value_is_null(&p->view, i);
    case P_UNION:
        member = union_member(p, i, &j);
        return tl_value_printer_is_null(member, j);
    default: {
        const struct ArrowArray *a = p->array;
        const uint8_t *bits = a->null_count != 0 && a->n_buffers > 0 ? a->buffers[0] : NULL;
        return bits != NULL && !tl_bit_get(bits, a->offset + i);
    }
    }
}

/* ---- Text ---- */

static int put_plural(tl_buf *out, int64_t n, const char *unit)
{
    return tl_buf_printf(out, "%s%" PRId64 " %s%s", out->len ? " " : "", n, unit,
                         n == 1 || n == -1 ? "" : "s");
}

/* An interval as DuckDB prints it: "1 year 2 months 3 days 04:05:06.789",
 * "-1 day", "00:00:05". Written into `text` (empty on entry). */
static int interval_text(int64_t months, int64_t days, tl_i128 nanos, tl_buf *text)
{
    int rc = 0;
    if (months / 12) rc |= put_plural(text, months / 12, "year");
    if (months % 12) rc |= put_plural(text, months % 12, "month");
    if (days) rc |= put_plural(text, days, "day");
    if (nanos == 0 && text->len) return rc;
    u128 u = nanos < 0 ? -(u128)nanos : (u128)nanos;
    uint64_t frac = (uint64_t)(u % 1000000000), secs = (uint64_t)(u / 1000000000);
    rc |= tl_buf_printf(text, "%s%s%02" PRIu64 ":%02d:%02d", text->len ? " " : "",
                        nanos < 0 ? "-" : "", secs / 3600, (int)(secs / 60 % 60), (int)(secs % 60));
    if (frac == 0) return rc;
    int digits = 9;
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    return rc | tl_buf_printf(text, ".%0*" PRIu64, digits, frac);
}

static int interval_value(const tl_value_printer *p, int64_t i, tl_buf *text)
{
    const uint8_t *v = p->array->buffers[1];
    int64_t k = p->array->offset + i;
    int32_t a, b;
    int64_t n;
    if (p->kind == P_DURATION) {
        memcpy(&n, v + 8 * k, 8);
        return interval_text(0, 0, (tl_i128)n * nanos_per[p->unit], text);
    }
    switch (p->interval) {
    case 'M':
        memcpy(&a, v + 4 * k, 4);
        return interval_text(a, 0, 0, text);
    case 'D':
        memcpy(&a, v + 8 * k, 4);
        memcpy(&b, v + 8 * k + 4, 4);
        return interval_text(0, a, (tl_i128)b * 1000000, text);
    default:
        memcpy(&a, v + 16 * k, 4);
        memcpy(&b, v + 16 * k + 4, 4);
        memcpy(&n, v + 16 * k + 8, 8);
        return interval_text(a, b, n, text);
    }
}

/* DuckDB's bignum: a 3-byte big-endian header (top bit set for a value >= 0,
 * then the byte count), then the magnitude's bytes big-endian; a negative
 * value has every bit inverted, header included. Printed in decimal through
 * base-10^9 limbs; a value too short for its header prints as hex. */
static int bignum_text(const tl_value_printer *p, int64_t i, tl_buf *out)
{
    int64_t len;
    const uint8_t *b = tl_view_bytes(&p->view, i, &len);
    if (len < 3) return tl_value_text(&p->view, i, out);
    bool negative = (b[0] & 0x80) == 0;
    size_t cap = (size_t)(len - 3) * 8 / 29 + 2, n = 1; /* 2^29 < 10^9 */
    uint32_t *limbs = calloc(cap, sizeof *limbs);
    if (limbs == NULL) return -1;
    for (int64_t k = 3; k < len; k++) {
        uint64_t carry = (uint8_t)(negative ? ~b[k] : b[k]);
        for (size_t l = 0; l < n; l++) {
            uint64_t v = (uint64_t)limbs[l] * 256 + carry;
            limbs[l] = (uint32_t)(v % 1000000000);
            carry = v / 1000000000;
        }
        if (carry && n < cap) limbs[n++] = (uint32_t)carry;
    }
    while (n > 1 && limbs[n - 1] == 0) n--;
    bool zero = n == 1 && limbs[0] == 0;
    int rc = tl_buf_printf(out, "%s%" PRIu32, negative && !zero ? "-" : "", limbs[n - 1]);
    for (size_t l = n - 1; l-- > 0 && rc == 0;) rc = tl_buf_printf(out, "%09" PRIu32, limbs[l]);
    free(limbs);
    return rc;
}

static int uhugeint_text(const tl_value_printer *p, int64_t i, tl_buf *text)
{
    u128 u;
    memcpy(&u, (const uint8_t *)p->array->buffers[1] + 16 * (p->array->offset + i), 16);
    char digits[48];
    int n = (int)sizeof digits;
    digits[--n] = '\0';
    do {
        digits[--n] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    return tl_buf_append_str(text, digits + n);
}

/* Strings of value i of a scalar view (through its dictionary), or NULL. */
static const uint8_t *string_of(const tl_array_view *v, int64_t i, int64_t *len)
{
    if (v->is_dictionary) {
        i = tl_view_dict_index(v, i);
        v = v->dictionary;
    }
    return v->type.id == TL_ATYPE_STRING || v->type.id == TL_ATYPE_LARGE_STRING
               ? tl_view_bytes(v, i, len)
               : NULL;
}

/* Whether a value's text inside a nested value needs quotes to read back:
 * empty, "NULL", padded, or holding a character of the nesting syntax. */
static bool needs_quotes(const uint8_t *s, int64_t len)
{
    if (len == 0 || isspace(s[0]) || isspace(s[len - 1])) return true;
    if (len == 4 && strncasecmp((const char *)s, "null", 4) == 0) return true;
    for (int64_t k = 0; k < len; k++)
        if (s[k] < 0x20 || strchr(",'\"[]{}():=\\", s[k])) return true;
    return false;
}

static int put_quoted(const uint8_t *s, int64_t len, tl_buf *out)
{
    int rc = tl_buf_append_byte(out, '\'');
    for (int64_t k = 0; k < len && rc == 0; k++)
        rc = (s[k] == '\'' || s[k] == '\\' ? tl_buf_append_byte(out, '\\') : 0) ||
             tl_buf_append_byte(out, s[k]);
    return rc || tl_buf_append_byte(out, '\'');
}

/* Inside a nested value, quotes the text written to out since `start` when
 * it would read ambiguously (as DuckDB does: ['01:00:00', NULL]). */
static int quote_if_needed(tl_buf *out, size_t start)
{
    size_t len = out->len - start;
    if (len == 0) return put_quoted((const uint8_t *)"", 0, out);
    if (!needs_quotes(out->data + start, (int64_t)len)) return 0;
    uint8_t *copy = malloc(len);
    if (copy == NULL) return -1;
    memcpy(copy, out->data + start, len);
    out->len = start;
    int rc = put_quoted(copy, (int64_t)len, out);
    free(copy);
    return rc;
}

/* The text of a value that is no container: a scalar, an interval or a uhugeint. */
static int put_leaf_text(const tl_value_printer *p, int64_t i, bool nested, tl_buf *out)
{
    size_t start = out->len;
    int rc;
    if (p->kind == P_SCALAR) {
        rc = tl_value_text(&p->view, i, out);
    } else if (p->kind == P_UHUGEINT) {
        rc = uhugeint_text(p, i, out);
    } else if (p->kind == P_BIGNUM) {
        rc = bignum_text(p, i, out);
    } else {
        tl_buf text = {0};
        rc = interval_value(p, i, &text) || tl_buf_append(out, text.data, text.len);
        tl_buf_free(&text);
    }
    return rc || (nested ? quote_if_needed(out, start) : 0);
}

/* ---- JSON ---- */

typedef enum { TEXT_TOP, TEXT_NESTED, JSON } print_mode;

static int put(const tl_value_printer *p, int64_t i, print_mode m, tl_buf *out);

int tl_value_json_string(const uint8_t *s, size_t len, tl_buf *out)
{
    if (tl_buf_append_byte(out, '"') != 0) return -1;
    for (size_t k = 0; k < len; k++) {
        uint8_t ch = s[k];
        int rc = ch == '"'    ? tl_buf_append_str(out, "\\\"")
                 : ch == '\\' ? tl_buf_append_str(out, "\\\\")
                 : ch == '\n' ? tl_buf_append_str(out, "\\n")
                 : ch < 0x20  ? tl_buf_printf(out, "\\u%04x", ch)
                              : tl_buf_append_byte(out, ch);
        if (rc != 0) return -1;
    }
    return tl_buf_append_byte(out, '"');
}

/* Appends the text of p's value i as a JSON string: intervals, uhugeints and
 * a map's keys. */
static int put_text_as_json_string(const tl_value_printer *p, int64_t i, tl_buf *out)
{
    tl_buf text = {0};
    int rc = put(p, i, TEXT_TOP, &text) ||
             tl_value_json_string(text.data ? text.data : (const uint8_t *)"", text.len, out);
    tl_buf_free(&text);
    return rc;
}

static int put_scalar_json(const tl_value_printer *p, int64_t i, tl_buf *out)
{
    const tl_array_view *v = &p->view;
    int64_t len;
    const uint8_t *s = string_of(v, i, &len);
    if (s) return tl_value_json_string(s, (size_t)len, out);
    if (tl_value_is_json_literal(v, i)) return tl_value_text(v, i, out);
    if (v->type.id == TL_ATYPE_FLOAT32 || v->type.id == TL_ATYPE_FLOAT64) {
        int64_t j = v->offset + i;
        double x = v->type.id == TL_ATYPE_FLOAT32 ? ((const float *)v->values)[j]
                                                  : ((const double *)v->values)[j];
        return tl_buf_append_str(out, isnan(x) ? "\"NaN\""
                                      : x > 0  ? "\"Infinity\""
                                               : "\"-Infinity\"");
    }
    /* The text of the other scalars (times, decimals, hex) needs no escapes. */
    return tl_buf_append_byte(out, '"') || tl_value_text(v, i, out) || tl_buf_append_byte(out, '"');
}

/* ---- Containers: one walk for both forms ---- */

static int put_struct(const tl_value_printer *p, int64_t i, print_mode m, tl_buf *out)
{
    bool json = m == JSON;
    int rc = tl_buf_append_byte(out, '{');
    for (int64_t c = 0; c < p->n_children && rc == 0; c++) {
        const uint8_t *name = (const uint8_t *)p->children[c].name;
        size_t len = strlen(p->children[c].name);
        rc = (c ? tl_buf_append_str(out, json ? "," : ", ") : 0) ||
             (json ? tl_value_json_string(name, len, out) : put_quoted(name, (int64_t)len, out)) ||
             tl_buf_append_str(out, json ? ":" : ": ") ||
             put(&p->children[c], p->array->offset + i, json ? JSON : TEXT_NESTED, out);
    }
    return rc || tl_buf_append_byte(out, '}');
}

/* A list's elements, or a map's entries ({k=1} in text, {"k":1} in JSON). */
static int put_entries(const tl_value_printer *p, int64_t i, print_mode m, tl_buf *out)
{
    bool json = m == JSON, map = p->kind == P_MAP;
    print_mode inner = json ? JSON : TEXT_NESTED;
    int64_t start, end;
    list_range(p, i, &start, &end);
    const tl_value_printer *e = &p->children[0];
    int rc = tl_buf_append_byte(out, map ? '{' : '[');
    for (int64_t j = start; j < end && rc == 0; j++) {
        rc = j > start ? tl_buf_append_str(out, json ? "," : ", ") : 0;
        if (map) {
            int64_t k = e->array->offset + j;
            rc = rc ||
                 (json ? put_text_as_json_string(&e->children[0], k, out)
                       : put(&e->children[0], k, TEXT_NESTED, out)) ||
                 tl_buf_append_byte(out, json ? ':' : '=') || put(&e->children[1], k, inner, out);
        } else {
            rc = rc || put(e, j, inner, out);
        }
    }
    return rc || tl_buf_append_byte(out, map ? '}' : ']');
}

/* Text: the member's value; JSON: {"member": value}, as DuckDB's to_json. */
static int put_union(const tl_value_printer *p, int64_t i, print_mode m, tl_buf *out)
{
    int64_t j;
    const tl_value_printer *member = union_member(p, i, &j);
    if (m != JSON) return put(member, j, m, out);
    return tl_buf_append_byte(out, '{') ||
           tl_value_json_string((const uint8_t *)member->name, strlen(member->name), out) ||
           tl_buf_append_byte(out, ':') || put(member, j, JSON, out) ||
           tl_buf_append_byte(out, '}');
}

static int put(const tl_value_printer *p, int64_t i, print_mode m, tl_buf *out)
{
    if (tl_value_printer_is_null(p, i)) return tl_buf_append_str(out, m == JSON ? "null" : "NULL");
    switch (p->kind) {
    case P_STRUCT:
        return put_struct(p, i, m, out);
    case P_LIST:
    case P_LARGE_LIST:
    case P_FIXED_LIST:
    case P_MAP:
        return put_entries(p, i, m, out);
    case P_UNION:
        return put_union(p, i, m, out);
    case P_SCALAR:
        if (m == JSON) return put_scalar_json(p, i, out);
        return put_leaf_text(p, i, m == TEXT_NESTED, out);
    default:
        if (m == JSON) return put_text_as_json_string(p, i, out);
        return put_leaf_text(p, i, m == TEXT_NESTED, out);
    }
}

int tl_value_printer_text(const tl_value_printer *p, int64_t i, tl_buf *out)
{
    return put(p, i, TEXT_TOP, out);
}

int tl_value_printer_json(const tl_value_printer *p, int64_t i, tl_buf *out)
{
    return put(p, i, JSON, out);
}
