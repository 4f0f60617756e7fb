#include "query/sql_statement.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_session.h"
#include "query/sql_token.h"
#include "table/settings.h"

static tl_status syntax(tl_error *err, const char *what)
{
    return tl_error_set(err, TL_ERR_QUERY, "syntax error: %s", what);
}

/* After tl_sql_read_name failed at p: a name it could not copy is out of
 * memory, anything else the syntax error `what`. */
static tl_status no_name(const char *p, tl_error *err, const char *what)
{
    return tl_sql_at_name(p) ? tl_error_nomem(err) : syntax(err, what);
}

/* A setting written as in the table properties, `timelake.newest-first`:
 * SQL reads the hyphen as a minus, so name (read up to it) is followed at
 * p by "-word...". Returns the error naming the spelling SQL takes, or
 * TL_OK when p holds no such thing or it names no setting. */
static tl_status hyphenated(const char *name, const char *p, tl_error *err)
{
    const char *q = p;
    if (!tl_sql_is_char(tl_sql_next(&q), '-')) return TL_OK;
    tl_sql_token t = tl_sql_next(&q);
    if (t.kind != 'w') return TL_OK;
    char shown[160];
    int n = snprintf(shown, sizeof shown, "%s", name);
    for (;;) {
        if (n > 0 && (size_t)n < sizeof shown)
            n += snprintf(shown + n, sizeof shown - (size_t)n, "_%.*s", (int)t.n, t.p);
        const char *r = q;
        if (!tl_sql_is_char(tl_sql_next(&r), '-')) break;
        t = tl_sql_next(&r);
        if (t.kind != 'w') break;
        q = r;
    }
    if (n <= 0 || (size_t)n >= sizeof shown || !tl_sql_setting_known(shown)) return TL_OK;
    return tl_error_set(err, TL_ERR_QUERY,
                        "a setting's name takes underscores in SQL: write %s (SQL reads '-' as a "
                        "minus; the table properties take either spelling)",
                        shown);
}

/* ---- SET and RESET ---- */

static tl_status run_set(tl_query_engine *e, const char *ns, const char *p, tl_error *err)
{
    const char *q = p;
    tl_sql_token t = tl_sql_next(&q);
    if (tl_sql_is_word(t, "SESSION") || tl_sql_is_word(t, "LOCAL")) p = q;
    char *name = NULL;
    if (!tl_sql_read_name(&p, &name))
        return no_name(p, err, "SET needs a setting: SET timelake.<setting> = value");
    if (strncasecmp(name, TL_SETTING_PREFIX, strlen(TL_SETTING_PREFIX)) != 0) {
        tl_status st = tl_sql_session_set(e, ns, name, "", err); /* refused, whatever the value */
        free(name);
        return st;
    }
    tl_status st = hyphenated(name, p, err);
    t = tl_sql_next(&p);
    if (st == TL_OK && !tl_sql_is_char(t, '=') && !tl_sql_is_word(t, "TO"))
        st = syntax(err, "SET needs = or TO after the setting: SET timelake.<setting> = value");
    const char *start = tl_sql_skip_blanks(p);
    t = tl_sql_next(&p);
    bool negative = tl_sql_is_char(t, '-');
    if (negative) t = tl_sql_next(&p);
    char *value = NULL;
    if (st == TL_OK && (t.kind == 'w' || t.kind == 's' || t.kind == 'n' || t.kind == 'q'))
        value = negative ? strndup(start, (size_t)(t.p + t.n - start)) : tl_sql_text_of(t);
    else if (st == TL_OK)
        st = syntax(err, "SET needs a value: SET timelake.<setting> = value");
    if (st == TL_OK && value == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && !tl_sql_at_end(p)) st = syntax(err, "SET takes one setting and one value");
    bool reset = st == TL_OK && t.kind == 'w' && strcasecmp(value, "DEFAULT") == 0;
    if (st == TL_OK) st = tl_sql_session_set(e, ns, name, reset ? NULL : value, err);
    free(name);
    free(value);
    return st;
}

static tl_status run_reset(tl_query_engine *e, const char *ns, const char *p, tl_error *err)
{
    const char *q = p;
    if (tl_sql_is_word(tl_sql_next(&q), "ALL") && tl_sql_at_end(q))
        return tl_sql_session_set(e, ns, NULL, NULL, err);
    char *name = NULL;
    if (!tl_sql_read_name(&p, &name))
        return no_name(p, err, "RESET takes a setting (RESET timelake.<setting>) or ALL");
    if (!tl_sql_at_end(p)) {
        tl_status st = hyphenated(name, p, err);
        free(name);
        return st != TL_OK ? st
                           : syntax(err, "RESET takes a setting (RESET timelake.<setting>) or ALL");
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
    const char *usage = describe ? "DESCRIBE <table>" : "SHOW COLUMNS FROM <table>";
    if (!tl_sql_read_name(&p, &name)) return no_name(p, err, usage);
    if (!tl_sql_at_end(p)) {
        free(name);
        return syntax(err, usage);
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
    tl_sql_token t = tl_sql_next(&q);
    if (tl_sql_is_word(t, "ALL") && tl_sql_at_end(q)) {
        *out = strdup("SELECT name, value FROM information_schema.df_settings ORDER BY name");
    } else if (tl_sql_is_word(t, "TABLES") && tl_sql_at_end(q)) {
        *out = strdup("SELECT table_catalog, table_schema, table_name, table_type FROM "
                      "information_schema.tables ORDER BY table_schema = 'information_schema', "
                      "table_schema, table_name");
    } else if (tl_sql_is_word(t, "COLUMNS")) {
        t = tl_sql_next(&q);
        if (!tl_sql_is_word(t, "FROM") && !tl_sql_is_word(t, "IN"))
            return syntax(err, "SHOW COLUMNS FROM <table>");
        return show_columns(q, ns, false, out, err);
    } else {
        const char *usage =
            "SHOW ALL, SHOW TABLES, SHOW COLUMNS FROM <table> or SHOW timelake.<setting>";
        char *name = NULL;
        if (!tl_sql_read_name(&p, &name)) return no_name(p, err, usage);
        if (!tl_sql_at_end(p)) {
            tl_status st = hyphenated(name, p, err);
            free(name);
            return st != TL_OK ? st : syntax(err, usage);
        }
        bool ours = strncasecmp(name, TL_SETTING_PREFIX, strlen(TL_SETTING_PREFIX)) == 0;
        char *shown = ours ? tl_sql_setting_show_name(name) : NULL;
        /* A setting's name it could not copy is no unknown setting. */
        bool nomem = shown == NULL && ours && tl_sql_setting_known(name);
        tl_status st = shown   ? TL_OK
                       : nomem ? tl_error_nomem(err)
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
static tl_status read_show(tl_sql_token t, const char *p, const char *ns, char **select,
                           tl_error *err)
{
    if (tl_sql_is_word(t, "SHOW")) return show(p, ns, select, err);
    if (!tl_sql_is_word(t, "DESCRIBE") && !tl_sql_is_word(t, "DESC")) return TL_OK;
    const char *q = p;
    tl_sql_token u = tl_sql_next(&q);
    if (u.kind != 'w' && u.kind != 'q') return TL_OK;
    /* DESCRIBE SELECT ... is DuckDB's */
    if (tl_sql_is_word(u, "SELECT") || tl_sql_is_word(u, "WITH") || tl_sql_is_word(u, "FROM"))
        return TL_OK;
    tl_sql_token v = tl_sql_next(&q);
    if (!tl_sql_is_char(v, '.') && v.kind != 0 && !tl_sql_is_char(v, ';')) return TL_OK;
    return show_columns(p, ns, true, select, err);
}

/* ---- The statement ---- */

tl_status tl_sql_statement_read(tl_query_engine *e, const char *ns, const char *text,
                                tl_sql_statement *out, tl_error *err)
{
    *out = (tl_sql_statement){TL_STMT_QUERY, false, text, NULL};
    const char *p = text;
    tl_sql_token t = tl_sql_next(&p);
    if (tl_sql_is_word(t, "SET")) {
        out->kind = TL_STMT_DONE;
        return run_set(e, ns, p, err);
    }
    if (tl_sql_is_word(t, "RESET")) {
        out->kind = TL_STMT_DONE;
        return run_reset(e, ns, p, err);
    }
    if (tl_sql_is_word(t, "EXPLAIN")) {
        const char *q = p;
        if (tl_sql_is_word(tl_sql_next(&q), "ANALYZE")) {
            out->analyze = true;
            p = q;
        }
        out->kind = TL_STMT_EXPLAIN;
        out->query = tl_sql_skip_blanks(p);
        t = tl_sql_next(&p);
        if (t.kind == 0 || tl_sql_is_char(t, ';'))
            return syntax(err, "EXPLAIN needs a query: EXPLAIN [ANALYZE] SELECT ...");
        if (tl_sql_is_word(t, "SET") || tl_sql_is_word(t, "RESET") || tl_sql_is_word(t, "EXPLAIN"))
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
