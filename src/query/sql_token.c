#include "query/sql_token.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strlist.h"

const char *tl_sql_skip_blanks(const char *p)
{
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (p[0] == '-' && p[1] == '-')
            p += strcspn(p, "\n");
        else if (p[0] == '/' && p[1] == '*' && strstr(p + 2, "*/"))
            p = strstr(p + 2, "*/") + 2;
        else
            return p;
    }
}

/* The closing quote of a quoted token starting at p (quote doubled inside),
 * or NULL when unterminated. */
static const char *closing(const char *p, char q)
{
    for (p++; *p; p++)
        if (*p == q) {
            if (p[1] != q) return p;
            p++;
        }
    return NULL;
}

tl_sql_token tl_sql_next(const char **at)
{
    const char *p = tl_sql_skip_blanks(*at);
    tl_sql_token t = {p, 0, 0};
    if (*p == 0) return t;
    if (isalpha((unsigned char)*p) || *p == '_') {
        while (isalnum((unsigned char)p[t.n]) || p[t.n] == '_' || p[t.n] == '$') t.n++;
        t.kind = 'w';
    } else if (*p == '"' || *p == '\'') {
        const char *end = closing(p, *p);
        t.n = end ? (size_t)(end - p) + 1 : strlen(p);
        t.kind = end ? (*p == '"' ? 'q' : 's') : 'c';
    } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        while (isalnum((unsigned char)p[t.n]) || p[t.n] == '.') t.n++;
        t.kind = 'n';
    } else {
        t.n = 1;
        t.kind = 'c';
    }
    *at = p + t.n;
    return t;
}

bool tl_sql_is_word(tl_sql_token t, const char *w)
{
    return t.kind == 'w' && strlen(w) == t.n && strncasecmp(t.p, w, t.n) == 0;
}

bool tl_sql_is_char(tl_sql_token t, char c)
{
    return t.kind == 'c' && *t.p == c;
}

/* The text of a word, quoted identifier or string (unquoted), malloc'd. */
char *tl_sql_text_of(tl_sql_token t)
{
    if (t.kind != 'q' && t.kind != 's') return strndup(t.p, t.n);
    char *out = malloc(t.n), *w = out;
    for (size_t i = 1; out && i + 1 < t.n; i++) {
        *w++ = t.p[i];
        if (t.p[i] == *t.p) i++; /* a doubled quote */
    }
    if (out) *w = 0;
    return out;
}

/* A dotted name (a.b.c, parts maybe quoted) into *out, malloc'd; false when
 * there is none. */
bool tl_sql_read_name(const char **at, char **out)
{
    *out = NULL;
    tl_strlist parts = {0};
    const char *p = *at, *end = *at;
    for (;;) {
        tl_sql_token t = tl_sql_next(&p);
        if (t.kind != 'w' && t.kind != 'q') break;
        char *part = tl_sql_text_of(t);
        if (part == NULL || tl_strlist_push_owned(&parts, part) != 0) {
            /* Out of memory: no name rather than its first parts. */
            free(part);
            tl_strlist_free(&parts);
            return false;
        }
        const char *q = p;
        if (!tl_sql_is_char(tl_sql_next(&q), '.')) {
            end = p;
            break;
        }
        p = q;
    }
    size_t len = 0;
    for (size_t i = 0; i < parts.len; i++) len += strlen(parts.items[i]) + 1;
    if (parts.len && (*out = malloc(len)) != NULL) {
        **out = 0;
        for (size_t i = 0; i < parts.len; i++) {
            if (i) strcat(*out, ".");
            strcat(*out, parts.items[i]);
        }
    }
    tl_strlist_free(&parts);
    if (*out) *at = end; /* out of memory leaves *at at the name */
    return *out != NULL;
}

bool tl_sql_at_name(const char *p)
{
    tl_sql_token t = tl_sql_next(&p);
    return t.kind == 'w' || t.kind == 'q';
}

/* Whether only blanks and semicolons are left. */
bool tl_sql_at_end(const char *p)
{
    tl_sql_token t;
    while (tl_sql_is_char(t = tl_sql_next(&p), ';')) {
    }
    return t.kind == 0;
}
