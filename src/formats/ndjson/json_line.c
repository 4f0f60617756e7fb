#include "formats/ndjson/json_line.h"

#include <stdbool.h>
#include <string.h>

#include "formats/input/text_batch.h"

typedef struct cursor {
    const char *s;
    size_t len, i;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->i < c->len &&
           (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\r' || c->s[c->i] == '\n'))
        c->i++;
}

static tl_status syntax(cursor *c, const char *what, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "%s at byte %zu", what, c->i + 1);
}

static int hex4(const char *p)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char ch = p[k];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0) return -1;
        v = v << 4 | d;
    }
    return v;
}

static int put_utf8(tl_buf *b, uint32_t cp)
{
    uint8_t u[4];
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n == 1) u[0] = (uint8_t)cp;
    if (n == 2) u[0] = (uint8_t)(0xC0 | cp >> 6);
    if (n == 3) u[0] = (uint8_t)(0xE0 | cp >> 12);
    if (n == 4) u[0] = (uint8_t)(0xF0 | cp >> 18);
    for (int k = 1; k < n; k++) u[k] = (uint8_t)(0x80 | ((cp >> (6 * (n - 1 - k))) & 0x3F));
    return tl_buf_append(b, u, (size_t)n);
}

/* A \uXXXX escape at c->i (on the 'u'), with a following low surrogate if needed. */
static tl_status unicode_escape(cursor *c, tl_buf *out, tl_error *err)
{
    if (c->i + 5 > c->len) return syntax(c, "truncated \\u escape", err);
    int cp = hex4(c->s + c->i + 1);
    if (cp < 0) return syntax(c, "bad \\u escape", err);
    c->i += 5;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        int lo = c->i + 6 <= c->len && c->s[c->i] == '\\' && c->s[c->i + 1] == 'u'
                     ? hex4(c->s + c->i + 2)
                     : -1;
        if (lo < 0xDC00 || lo > 0xDFFF) return syntax(c, "unpaired surrogate in \\u escape", err);
        c->i += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return syntax(c, "unpaired surrogate in \\u escape", err);
    }
    return put_utf8(out, (uint32_t)cp) == 0 ? TL_OK : tl_error_nomem(err);
}

/* A string at c->i (on the opening quote), unescaped into out. */
static tl_status string(cursor *c, tl_buf *out, tl_error *err)
{
    out->len = 0;
    c->i++;
    for (;;) {
        size_t start = c->i;
        while (c->i < c->len && c->s[c->i] != '"' && c->s[c->i] != '\\' &&
               (unsigned char)c->s[c->i] >= 0x20)
            c->i++;
        if (tl_buf_append(out, c->s + start, c->i - start) != 0) return tl_error_nomem(err);
        if (c->i >= c->len) return syntax(c, "unterminated string", err);
        char ch = c->s[c->i];
        if (ch == '"') break;
        if (ch != '\\') return syntax(c, "control character in string", err);
        if (++c->i >= c->len) return syntax(c, "unterminated string", err);
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *e = c->s[c->i] ? strchr(from, c->s[c->i]) : NULL;
        if (e) {
            if (tl_buf_append_byte(out, (uint8_t)to[e - from]) != 0) return tl_error_nomem(err);
            c->i++;
        } else if (c->s[c->i] == 'u') {
            TL_TRY(unicode_escape(c, out, err));
        } else {
            return syntax(c, "bad escape in string", err);
        }
    }
    c->i++;
    if (!tl_utf8_valid(out->data, out->len)) return syntax(c, "invalid UTF-8 in string", err);
    return TL_OK;
}

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static size_t digits(cursor *c)
{
    size_t start = c->i;
    while (c->i < c->len && is_digit(c->s[c->i])) c->i++;
    return c->i - start;
}

/* A number per the JSON grammar; its text is the value. */
static tl_status number(cursor *c, tl_error *err)
{
    if (c->s[c->i] == '-') c->i++;
    size_t int_start = c->i, n = digits(c);
    if (n == 0 || (n > 1 && c->s[int_start] == '0')) return syntax(c, "bad number", err);
    if (c->i < c->len && c->s[c->i] == '.') {
        c->i++;
        if (digits(c) == 0) return syntax(c, "bad number", err);
    }
    if (c->i < c->len && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->len && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (digits(c) == 0) return syntax(c, "bad number", err);
    }
    return TL_OK;
}

static bool word(cursor *c, const char *w)
{
    size_t n = strlen(w);
    if (c->len - c->i < n || memcmp(c->s + c->i, w, n) != 0) return false;
    c->i += n;
    return true;
}

/* A value at c->i: sets its text (*v, *vlen) and kind. */
static tl_status value(cursor *c, tl_buf *scratch, const char **v, size_t *vlen, int *kind,
                       tl_error *err)
{
    if (c->i >= c->len) return syntax(c, "missing value", err);
    char ch = c->s[c->i];
    size_t start = c->i;
    if (ch == '"') {
        TL_TRY(string(c, scratch, err));
        *v = (const char *)scratch->data;
        *vlen = scratch->len;
        *kind = TL_TEXT_STRING;
        return TL_OK;
    }
    if (ch == '{' || ch == '[')
        return syntax(c, "nested objects and arrays are not supported", err);
    if (ch == '-' || is_digit(ch)) {
        TL_TRY(number(c, err));
        *kind = TL_TEXT_LITERAL;
    } else if (word(c, "true") || word(c, "false")) {
        *kind = TL_TEXT_LITERAL;
    } else if (word(c, "null")) {
        *kind = TL_TEXT_NULL;
    } else {
        return syntax(c, "unexpected character", err);
    }
    *v = c->s + start;
    *vlen = c->i - start;
    return TL_OK;
}

tl_status tl_json_line_parse(const char *s, size_t len, tl_buf scratch[2], tl_json_member_fn fn,
                             void *ctx, int *blank, tl_error *err)
{
    cursor c = {s, len, 0};
    skip_ws(&c);
    *blank = c.i == len;
    if (*blank) return TL_OK;
    if (s[c.i] != '{') return syntax(&c, "expected an object", err);
    c.i++;
    skip_ws(&c);
    if (c.i < len && s[c.i] == '}') {
        c.i++;
    } else {
        for (;;) {
            skip_ws(&c);
            if (c.i >= len || s[c.i] != '"') return syntax(&c, "expected a key", err);
            TL_TRY(string(&c, &scratch[0], err));
            skip_ws(&c);
            if (c.i >= len || s[c.i] != ':') return syntax(&c, "expected ':'", err);
            c.i++;
            skip_ws(&c);
            const char *v = NULL;
            size_t vlen = 0;
            int kind = TL_TEXT_NULL;
            TL_TRY(value(&c, &scratch[1], &v, &vlen, &kind, err));
            TL_TRY(fn(ctx, (const char *)scratch[0].data, scratch[0].len, v, vlen, kind, err));
            skip_ws(&c);
            if (c.i < len && s[c.i] == ',') {
                c.i++;
                continue;
            }
            if (c.i < len && s[c.i] == '}') {
                c.i++;
                break;
            }
            return syntax(&c, "expected ',' or '}'", err);
        }
    }
    skip_ws(&c);
    if (c.i != len) return syntax(&c, "text after the object", err);
    return TL_OK;
}
