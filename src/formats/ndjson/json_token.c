#include "formats/ndjson/json_token.h"

#include <stdint.h>
#include <string.h>

#include "formats/input/text_batch.h"

void tl_json_skip_ws(tl_json_cursor *c)
{
    while (c->i < c->len &&
           (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\r' || c->s[c->i] == '\n'))
        c->i++;
}

tl_status tl_json_syntax(const tl_json_cursor *c, const char *what, tl_error *err)
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
    return b ? tl_buf_append(b, u, (size_t)n) : 0;
}

/* A \uXXXX escape at c->i (on the 'u'), with a following low surrogate if needed. */
static tl_status unicode_escape(tl_json_cursor *c, tl_buf *out, tl_error *err)
{
    if (c->i + 5 > c->len) return tl_json_syntax(c, "truncated \\u escape", err);
    int cp = hex4(c->s + c->i + 1);
    if (cp < 0) return tl_json_syntax(c, "bad \\u escape", err);
    c->i += 5;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        int lo = c->i + 6 <= c->len && c->s[c->i] == '\\' && c->s[c->i + 1] == 'u'
                     ? hex4(c->s + c->i + 2)
                     : -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return tl_json_syntax(c, "unpaired surrogate in \\u escape", err);
        c->i += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return tl_json_syntax(c, "unpaired surrogate in \\u escape", err);
    }
    return put_utf8(out, (uint32_t)cp) == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status escape(tl_json_cursor *c, tl_buf *out, tl_error *err)
{
    if (++c->i >= c->len) return tl_json_syntax(c, "unterminated string", err);
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e = c->s[c->i] ? strchr(from, c->s[c->i]) : NULL;
    if (e) {
        if (out && tl_buf_append_byte(out, (uint8_t)to[e - from]) != 0) return tl_error_nomem(err);
        c->i++;
        return TL_OK;
    }
    if (c->s[c->i] == 'u') return unicode_escape(c, out, err);
    return tl_json_syntax(c, "bad escape in string", err);
}

/* Bytes of w equal to b have their high bit set in the result (SWAR). */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t bytes_equal(uint64_t w, uint8_t b)
{
    uint64_t x = w ^ (ONES * b);
    return (x - ONES) & ~x & HIGHS;
}

/* Skips the plain bytes of a string (not '"', '\\' or a control byte), eight
 * at a time while they last; *high is set when one is not ASCII. */
static void plain_run(tl_json_cursor *c, bool *high)
{
    const char *s = c->s;
    size_t i = c->i, n = c->len;
    uint64_t seen = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (bytes_equal(w, '"') | bytes_equal(w, '\\') | ((w - ONES * 0x20) & ~w & HIGHS)) break;
        seen |= w;
    }
    while (i < n && s[i] != '"' && s[i] != '\\' && (unsigned char)s[i] >= 0x20)
        seen |= (unsigned char)s[i++];
    *high |= (seen & HIGHS) != 0;
    c->i = i;
}

tl_status tl_json_string(tl_json_cursor *c, tl_buf *out, tl_json_text *text, tl_error *err)
{
    size_t open = ++c->i, out_start = out ? out->len : 0;
    bool escaped = false, high = false;
    for (;;) {
        size_t start = c->i;
        plain_run(c, &high);
        if (escaped && out && tl_buf_append(out, c->s + start, c->i - start) != 0)
            return tl_error_nomem(err);
        if (c->i >= c->len) return tl_json_syntax(c, "unterminated string", err);
        char ch = c->s[c->i];
        if (ch == '"') break;
        if (ch != '\\') return tl_json_syntax(c, "control character in string", err);
        if (!escaped && out && tl_buf_append(out, c->s + open, c->i - open) != 0)
            return tl_error_nomem(err);
        escaped = true;
        TL_TRY(escape(c, out, err));
    }
    /* Escapes are ASCII: the raw text is valid UTF-8 exactly when the value is. */
    if (high && !tl_utf8_valid((const uint8_t *)c->s + open, c->i - open))
        return tl_json_syntax(c, "invalid UTF-8 in string", err);
    if (escaped && out)
        *text = (tl_json_text){out_start, out->len - out_start, true};
    else
        *text = (tl_json_text){open, c->i - open, false};
    c->i++;
    return TL_OK;
}

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static size_t digits(tl_json_cursor *c)
{
    size_t start = c->i;
    while (c->i < c->len && is_digit(c->s[c->i])) c->i++;
    return c->i - start;
}

tl_status tl_json_number(tl_json_cursor *c, tl_error *err)
{
    if (c->i < c->len && c->s[c->i] == '-') c->i++;
    size_t int_start = c->i, n = digits(c);
    if (n == 0 || (n > 1 && c->s[int_start] == '0')) return tl_json_syntax(c, "bad number", err);
    if (c->i < c->len && c->s[c->i] == '.') {
        c->i++;
        if (digits(c) == 0) return tl_json_syntax(c, "bad number", err);
    }
    if (c->i < c->len && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->len && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (digits(c) == 0) return tl_json_syntax(c, "bad number", err);
    }
    return TL_OK;
}

bool tl_json_word(tl_json_cursor *c, const char *w)
{
    size_t n = strlen(w);
    if (c->len - c->i < n || memcmp(c->s + c->i, w, n) != 0) return false;
    c->i += n;
    return true;
}
