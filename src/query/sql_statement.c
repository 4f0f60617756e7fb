#include "query/sql_statement.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_session.h"
#include "table/settings.h"

/* ---- A few tokens of SQL ---- */

typedef struct token {
    const char *p;
    size_t n;
    char kind; /* 'w' word, 'q' quoted identifier, 's' string, 'n' number, 'c' other, 0 end */
} token;

static const char *skip_blanks(const char *p)
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

static token next(const char **at)
{
    const char *p = skip_blanks(*at);
    token t = {p, 0, 0};
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

static bool is_word(token t, const char *w)
{
    return t.kind == 'w' && strlen(w) == t.n && strncasecmp(t.p, w, t.n) == 0;
}

static bool is_char(token t, char c)
{
    return t.kind == 'c' && *t.p == c;
}

/* The text of a word, quoted identifier or string (unquoted), malloc'd. */
static char *text_of(token t)
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
static bool read_name(const char **at, char **out)
{
    *out = NULL;
    tl_strlist parts = {0};
    const char *p = *at;
    for (;;) {
        token t = next(&p);
        if (t.kind != 'w' && t.kind != 'q') break;
        char *part = text_of(t);
        if (part == NULL || tl_strlist_push_owned(&parts, part) != 0) break;
        const char *q = p;
        if (!is_char(next(&q), '.')) {
            *at = p;
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
    return *out != NULL;
}

/* Whether only blanks and semicolons are left. */
static bool at_end(const char *p)
{
    token t;
    while (is_char(t = next(&p), ';')) {
    }
    return t.kind == 0;
}

static tl_status syntax(tl_error *err, const char *what)
{
    return tl_error_set(err, TL_ERR_QUERY, "syntax error: %s", what);
}

/* ---- SET and RESET ---- */

static tl_status run_set(tl_query_engine *e, const char *ns, const char *p, tl_error *err)
{
    const char *q = p;
    token t = next(&q);
    if (is_word(t, "SESSION") || is_word(t, "LOCAL")) p = q;
    char *name = NULL;
    if (!read_name(&p, &name))
        return syntax(err, "SET needs a setting: SET timelake.<setting> = value");
    if (strncasecmp(name, TL_SETTING_PREFIX, strlen(TL_SETTING_PREFIX)) != 0) {
        tl_status st = tl_sql_session_set(e, ns, name, "", err); /* refused, whatever the value */
        free(name);
        return st;
    }
    t = next(&p);
    tl_status st = TL_OK;
    if (!is_char(t, '=') && !is_word(t, "TO"))
        st = syntax(err, "SET needs = or TO after the setting: SET timelake.<setting> = value");
    const char *start = skip_blanks(p);
    t = next(&p);
    bool negative = is_char(t, '-');
    if (negative) t = next(&p);
    char *value = NULL;
    if (st == TL_OK && (t.kind == 'w' || t.kind == 's' || t.kind == 'n' || t.kind == 'q'))
        value = negative ? strndup(start, (size_t)(t.p + t.n - start)) : text_of(t);
    else if (st == TL_OK)
        st = syntax(err, "SET needs a value: SET timelake.<setting> = value");
    if (st == TL_OK && value == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && !at_end(p)) st = syntax(err, "SET takes one setting and one value");
    bool reset = st == TL_OK && t.kind == 'w' && strcasecmp(value, "DEFAULT") == 0;
    if (st == TL_OK) st = tl_sql_session_set(e, ns, name, reset ? NULL : value, err);
    free(name);
    free(value);
    return st;
}

static tl_status run_reset(tl_query_engine *e, const char *ns, const char *p, tl_error *err)
{
    const char *q = p;
    if (is_word(next(&q), "ALL") && at_end(q)) return tl_sql_session_set(e, ns, NULL, NULL, err);
    char *name = NULL;
    if (!read_name(&p, &name) || !at_end(p)) {
        free(name);
        return syntax(err, "RESET takes a setting (RESET timelake.<setting>) or ALL");
    }
    tl_status st = tl_sql_session_set(e, ns, name, NULL, err);
    free(name);
    return st;
}

/* ---- SHOW and DESCRIBE, as SELECTs of information_schema ---- */

/* "table_schema = 'ns' AND table_name = 't'" for a table name as written. */
static char *table_condition(const char *name, const char *ns)
{
    const char *dot = strrchr(name, '.');
    char *schema = dot ? strndup(name, (size_t)(dot - name)) : strdup(ns);
    char *s = schema ? tl_sql_literal(schema) : NULL, *t = tl_sql_literal(dot ? dot + 1 : name);
    char *cond = s && t
                     ? tl_strdup_printf("lower(table_schema) = lower(%s) AND lower(table_name) = "
                                        "lower(%s)",
                                        s, t)
                     : NULL;
    free(schema);
    free(s);
    free(t);
    return cond;
}

/* SHOW COLUMNS (all six columns) or DESCRIBE (the last three), as the
 * reference's. */
static tl_status show_columns(const char *p, const char *ns, bool describe, char **out,
                              tl_error *err)
{
    char *name = NULL;
    if (!read_name(&p, &name) || !at_end(p)) {
        free(name);
        return syntax(err, describe ? "DESCRIBE <table>" : "SHOW COLUMNS FROM <table>");
    }
    char *cond = table_condition(name, ns);
    free(name);
    *out = cond
               ? tl_strdup_printf("SELECT %scolumn_name, data_type, is_nullable FROM "
                                  "information_schema.columns WHERE %s ORDER BY ordinal_position",
                                  describe ? "" : "table_catalog, table_schema, table_name, ", cond)
               : NULL;
    free(cond);
    return *out ? TL_OK : tl_error_nomem(err);
}

static tl_status show(const char *p, const char *ns, char **out, tl_error *err)
{
    const char *q = p;
    token t = next(&q);
    if (is_word(t, "ALL") && at_end(q)) {
        *out = strdup("SELECT name, value FROM information_schema.df_settings ORDER BY name");
    } else if (is_word(t, "TABLES") && at_end(q)) {
        *out = strdup("SELECT table_catalog, table_schema, table_name, table_type FROM "
                      "information_schema.tables ORDER BY table_schema = 'information_schema', "
                      "table_schema, table_name");
    } else if (is_word(t, "COLUMNS")) {
        t = next(&q);
        if (!is_word(t, "FROM") && !is_word(t, "IN"))
            return syntax(err, "SHOW COLUMNS FROM <table>");
        return show_columns(q, ns, false, out, err);
    } else {
        char *name = NULL;
        if (!read_name(&p, &name) || !at_end(p)) {
            free(name);
            return syntax(err, "SHOW ALL, SHOW TABLES, SHOW COLUMNS FROM <table> or SHOW "
                               "timelake.<setting>");
        }
        char *shown = strncasecmp(name, TL_SETTING_PREFIX, strlen(TL_SETTING_PREFIX)) == 0
                          ? tl_sql_setting_show_name(name)
                          : NULL;
        tl_status st = shown ? TL_OK
                             : tl_error_set(err, TL_ERR_QUERY,
                                            "'%s' is not a variable which can be viewed with "
                                            "'SHOW': SHOW ALL lists Timelake's settings "
                                            "(timelake.<setting>), SHOW TABLES and SHOW COLUMNS "
                                            "FROM <table> the lake's tables",
                                            name);
        char *lit = shown ? tl_sql_literal(shown) : NULL;
        *out = lit ? tl_strdup_printf("SELECT name, value FROM information_schema.df_settings "
                                      "WHERE name = %s",
                                      lit)
                   : NULL;
        free(lit);
        free(shown);
        free(name);
        TL_TRY(st);
    }
    return *out ? TL_OK : tl_error_nomem(err);
}

/* SHOW or DESCRIBE <table> (t, its first word, read up to p): *select
 * answers it; anything else stays as it is. */
static tl_status read_show(token t, const char *p, const char *ns, char **select, tl_error *err)
{
    if (is_word(t, "SHOW")) return show(p, ns, select, err);
    if (!is_word(t, "DESCRIBE") && !is_word(t, "DESC")) return TL_OK;
    const char *q = p;
    token u = next(&q);
    if (u.kind != 'w' && u.kind != 'q') return TL_OK;
    /* DESCRIBE SELECT ... is DuckDB's */
    if (is_word(u, "SELECT") || is_word(u, "WITH") || is_word(u, "FROM")) return TL_OK;
    token v = next(&q);
    if (!is_char(v, '.') && v.kind != 0 && !is_char(v, ';')) return TL_OK;
    return show_columns(p, ns, true, select, err);
}

/* ---- The statement ---- */

tl_status tl_sql_statement_read(tl_query_engine *e, const char *ns, const char *text,
                                tl_sql_statement *out, tl_error *err)
{
    *out = (tl_sql_statement){TL_STMT_QUERY, false, text, NULL};
    const char *p = text;
    token t = next(&p);
    if (is_word(t, "SET")) {
        out->kind = TL_STMT_DONE;
        return run_set(e, ns, p, err);
    }
    if (is_word(t, "RESET")) {
        out->kind = TL_STMT_DONE;
        return run_reset(e, ns, p, err);
    }
    if (is_word(t, "EXPLAIN")) {
        const char *q = p;
        if (is_word(next(&q), "ANALYZE")) {
            out->analyze = true;
            p = q;
        }
        out->kind = TL_STMT_EXPLAIN;
        out->query = skip_blanks(p);
        t = next(&p);
        if (t.kind == 0 || is_char(t, ';'))
            return syntax(err, "EXPLAIN needs a query: EXPLAIN [ANALYZE] SELECT ...");
        if (is_word(t, "SET") || is_word(t, "RESET") || is_word(t, "EXPLAIN"))
            return tl_error_set(err, TL_ERR_QUERY,
                                "EXPLAIN takes a query (SELECT, WITH, VALUES, FROM, SHOW or "
                                "DESCRIBE <table>), not %.*s",
                                (int)t.n, t.p);
    }
    return read_show(t, p, ns, &out->select, err);
}

void tl_sql_statement_free(tl_sql_statement *s)
{
    free(s->select);
    s->select = NULL;
}
