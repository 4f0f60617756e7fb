/* Guessing a query's tables from its text (sql_guess.h): a small lexer, then
 * the names after FROM and JOIN. A wrong guess costs a load in parallel with
 * DuckDB's start, a missed one the round trip it would have cost anyway. */
#include "query/sql_guess.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_TOKENS 4096
#define MAX_PART 256

typedef enum tok_kind { T_WORD, T_QUOTED, T_DOT, T_LPAREN, T_OTHER } tok_kind;

typedef struct tok {
    tok_kind kind;
    const char *at; /* words: the text; quoted: after the opening quote */
    size_t len;
} tok;

static bool word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

/* Skips a comment or a string literal at p; returns p when there is none. */
static const char *skip_noise(const char *p)
{
    if (p[0] == '-' && p[1] == '-') {
        while (*p && *p != '\n') p++;
        return p;
    }
    if (p[0] == '/' && p[1] == '*') {
        const char *end = strstr(p + 2, "*/");
        return end ? end + 2 : p + strlen(p);
    }
    if (*p == '\'') {
        for (p++; *p; p++)
            if (*p == '\'' && *++p != '\'') return p;
        return p;
    }
    return p;
}

/* Splits the query into tokens; returns how many (at most max). */
static size_t lex(const char *p, tok *out, size_t max)
{
    size_t n = 0;
    while (*p && n < max) {
        const char *q = skip_noise(p);
        if (q != p) {
            p = q;
            continue;
        }
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (word_char(*p)) {
            const char *s = p;
            while (word_char(*p)) p++;
            out[n++] = (tok){T_WORD, s, (size_t)(p - s)};
        } else if (*p == '"') {
            const char *s = ++p;
            while (*p && !(*p == '"' && p[1] != '"')) p += *p == '"' ? 2 : 1;
            out[n++] = (tok){T_QUOTED, s, (size_t)(p - s)};
            if (*p) p++;
        } else {
            out[n++] = (tok){*p == '.' ? T_DOT : *p == '(' ? T_LPAREN : T_OTHER, p, 1};
            p++;
        }
    }
    return n;
}

static bool is_kw(const tok *t, const char *kw)
{
    return t->kind == T_WORD && t->len == strlen(kw) && strncasecmp(t->at, kw, t->len) == 0;
}

static bool is_name(const tok *t)
{
    return t->kind == T_WORD || t->kind == T_QUOTED;
}

/* A name part as text; false when it cannot be one of a table's name parts
 * as written here (a quoted part holding quotes or dots). */
static bool part_text(const tok *t, char *buf)
{
    if (t->len == 0 || t->len >= MAX_PART) return false;
    if (t->kind == T_QUOTED && (memchr(t->at, '"', t->len) || memchr(t->at, '.', t->len)))
        return false;
    memcpy(buf, t->at, t->len);
    buf[t->len] = 0;
    return true;
}

static bool same_part(const tok *a, const tok *b)
{
    return a->len == b->len && strncasecmp(a->at, b->at, a->len) == 0;
}

/* Whether the word at i names a common table expression: `name AS (` or
 * `name (columns) AS (`. */
static bool defines_cte(const tok *t, size_t n, size_t i)
{
    size_t j = i + 1;
    if (j < n && t[j].kind == T_LPAREN) {
        while (j < n && !(t[j].kind == T_OTHER && *t[j].at == ')')) j++;
        j++;
    }
    return j + 1 < n && is_kw(&t[j], "AS") && t[j + 1].kind == T_LPAREN;
}

static bool is_cte_name(const tok *t, size_t n, const tok *name)
{
    for (size_t i = 0; i < n; i++)
        if (is_name(&t[i]) && same_part(&t[i], name) && defines_cte(t, n, i)) return true;
    return false;
}

/* The name after FROM/JOIN at t[i]: its parts (1 or 2), or 0 when it is no
 * table's (a subquery, a table function, a catalog-qualified name). */
static size_t name_at(const tok *t, size_t n, size_t i, const tok **parts)
{
    size_t k = 0;
    while (i < n && is_name(&t[i]) && k < 3) {
        parts[k++] = &t[i++];
        if (i < n && t[i].kind == T_DOT)
            i++;
        else
            break;
    }
    if (k == 0 || k > 2 || (i < n && t[i].kind == T_LPAREN)) return 0;
    return k;
}

int tl_sql_guess_tables(const char *query, size_t max, tl_strlist *out)
{
    tok *t = malloc(MAX_TOKENS * sizeof *t);
    if (t == NULL) return -1;
    size_t n = lex(query, t, MAX_TOKENS);
    size_t found = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && found < max && i + 1 < n; i++) {
        if (!is_kw(&t[i], "FROM") && !is_kw(&t[i], "JOIN")) continue;
        const tok *parts[3];
        size_t k = name_at(t, n, i + 1, parts);
        if (k == 0 || (k == 1 && is_cte_name(t, n, parts[0]))) continue;
        char a[MAX_PART], b[MAX_PART], full[2 * MAX_PART + 1];
        if (!part_text(parts[0], a) || (k == 2 && !part_text(parts[1], b))) continue;
        snprintf(full, sizeof full, k == 2 ? "%s.%s" : "%s", a, b);
        if (tl_strlist_contains(out, full)) continue;
        rc = tl_strlist_push(out, full);
        found++;
    }
    free(t);
    return rc;
}
