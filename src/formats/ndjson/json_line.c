#include "formats/ndjson/json_line.h"

#include <stdbool.h>
#include <string.h>

#include "formats/input/text_batch.h"
#include "formats/ndjson/json_token.h"

/* Skips the object or array at c->i, strings included (its syntax is
 * checked where it is parsed, for a nested column). */
static tl_status skip_nested(tl_json_cursor *c, tl_error *err)
{
    int depth = 0;
    bool in_string = false;
    for (; c->i < c->len; c->i++) {
        char ch = c->s[c->i];
        if (in_string) {
            if (ch == '\\')
                c->i++;
            else if (ch == '"')
                in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '{' || ch == '[') {
            if (++depth > 64) return tl_json_syntax(c, "nested more than 64 deep", err);
        } else if ((ch == '}' || ch == ']') && --depth == 0) {
            c->i++;
            return TL_OK;
        }
    }
    return tl_json_syntax(c, "unterminated object or array", err);
}

/* A value at c->i: sets its text (*v, *vlen) and kind. */
static tl_status value(tl_json_cursor *c, tl_buf *scratch, const char **v, size_t *vlen, int *kind,
                       tl_error *err)
{
    if (c->i >= c->len) return tl_json_syntax(c, "missing value", err);
    char ch = c->s[c->i];
    size_t start = c->i;
    if (ch == '"') {
        tl_json_text t;
        scratch->len = 0;
        TL_TRY(tl_json_string(c, scratch, &t, err));
        *v = tl_json_text_ptr(c, scratch, &t);
        *vlen = t.len;
        *kind = TL_TEXT_STRING;
        return TL_OK;
    }
    if (ch == '{' || ch == '[') {
        TL_TRY(skip_nested(c, err));
        *v = c->s + start;
        *vlen = c->i - start;
        *kind = TL_TEXT_JSON;
        return TL_OK;
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        TL_TRY(tl_json_number(c, err));
        *kind = TL_TEXT_LITERAL;
    } else if (tl_json_word(c, "true") || tl_json_word(c, "false")) {
        *kind = TL_TEXT_LITERAL;
    } else if (tl_json_word(c, "null")) {
        *kind = TL_TEXT_NULL;
    } else {
        return tl_json_syntax(c, "unexpected character", err);
    }
    *v = c->s + start;
    *vlen = c->i - start;
    return TL_OK;
}

tl_status tl_json_line_parse(const char *s, size_t len, tl_buf scratch[2], tl_json_member_fn fn,
                             void *ctx, int *blank, tl_error *err)
{
    tl_json_cursor c = {s, len, 0};
    tl_json_skip_ws(&c);
    *blank = c.i == len;
    if (*blank) return TL_OK;
    if (s[c.i] != '{') return tl_json_syntax(&c, "expected an object", err);
    c.i++;
    tl_json_skip_ws(&c);
    if (c.i < len && s[c.i] == '}') {
        c.i++;
    } else {
        for (;;) {
            tl_json_skip_ws(&c);
            if (c.i >= len || s[c.i] != '"') return tl_json_syntax(&c, "expected a key", err);
            tl_json_text key;
            scratch[0].len = 0;
            TL_TRY(tl_json_string(&c, &scratch[0], &key, err));
            tl_json_skip_ws(&c);
            if (c.i >= len || s[c.i] != ':') return tl_json_syntax(&c, "expected ':'", err);
            c.i++;
            tl_json_skip_ws(&c);
            const char *v = NULL;
            size_t vlen = 0;
            int kind = TL_TEXT_NULL;
            TL_TRY(value(&c, &scratch[1], &v, &vlen, &kind, err));
            TL_TRY(fn(ctx, tl_json_text_ptr(&c, &scratch[0], &key), key.len, v, vlen, kind, err));
            tl_json_skip_ws(&c);
            if (c.i < len && s[c.i] == ',') {
                c.i++;
                continue;
            }
            if (c.i < len && s[c.i] == '}') {
                c.i++;
                break;
            }
            return tl_json_syntax(&c, "expected ',' or '}'", err);
        }
    }
    tl_json_skip_ws(&c);
    if (c.i != len) return tl_json_syntax(&c, "text after the object", err);
    return TL_OK;
}
