/* The rollup statements: CREATE, REFRESH and DROP MATERIALIZED ROLLUP, read
 * with Timelake's own tokenizer (the SELECT of a CREATE is a fixed shape:
 * series-key columns, one time_bucket of the time column, storable
 * aggregates, FROM the raw table, GROUP BY the keys and the bucket). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrow/array.h"
#include "arrow/builder.h"
#include "arrow/stream.h"
#include "core/clock.h"
#include "query/engine.h"
#include "query/rollup.h"
#include "query/sql_token.h"
#include "table/metadata_commit.h"
#include "table/settings.h"

/* ---- The result: one row {rollup, rows} ---- */

static tl_status column(const char *format, const char *name, uint64_t rows, struct ArrowArray *out,
                        tl_error *err)
{
    tl_arrow_type type;
    tl_builder b;
    TL_TRY(tl_arrow_type_parse(format, &type, err));
    TL_TRY(tl_builder_init(&b, &type, err));
    tl_status st = *format == 'u' ? tl_builder_append_bytes(&b, name, strlen(name), err)
                                  : tl_builder_append_uint(&b, rows, err);
    if (st == TL_OK) st = tl_builder_finish(&b, out, err);
    tl_builder_free(&b);
    return st;
}

static tl_status result_row(const char *rollup, int64_t rows, struct ArrowArrayStream *out,
                            tl_error *err)
{
    struct ArrowSchema schema = {0};
    struct ArrowArray batch = {0}, cols[2] = {{0}};
    tl_status st = tl_schema_init(&schema, "+s", NULL, 0, 2, err);
    if (st == TL_OK) st = tl_schema_init(schema.children[0], "u", "rollup", 0, 0, err);
    if (st == TL_OK) st = tl_schema_init(schema.children[1], "L", "rows", 0, 0, err);
    if (st == TL_OK) st = column("u", rollup, 0, &cols[0], err);
    if (st == TL_OK) st = column("L", NULL, (uint64_t)rows, &cols[1], err);
    if (st == TL_OK) st = tl_array_init(&batch, 1, 2, err);
    if (st == TL_OK) {
        batch.length = 1;
        tl_array_move(&cols[0], batch.children[0]);
        tl_array_move(&cols[1], batch.children[1]);
        st = tl_stream_from_batches(&schema, &batch, 1, out, err);
    }
    tl_array_release(&cols[0]);
    tl_array_release(&cols[1]);
    tl_array_release(&batch);
    tl_schema_release(&schema);
    return st;
}

/* ---- Reading the CREATE ---- */

/* One item of a comma list: its text [p, end). */
typedef struct span {
    const char *p, *end;
} span;

/* Splits [p, end) at top-level commas (outside parentheses) into *out
 * (at most max); the count, or -1 when there are more. */
static int split_top(const char *p, const char *end, span *out, int max)
{
    int n = 0, depth = 0;
    const char *start = p;
    while (p < end) {
        const char *at = p;
        tl_sql_token t = tl_sql_next(&p);
        if (t.kind == 0 || p > end) break;
        if (tl_sql_is_char(t, '(')) depth++;
        if (tl_sql_is_char(t, ')')) depth--;
        if (depth == 0 && tl_sql_is_char(t, ',')) {
            if (n == max) return -1;
            out[n++] = (span){start, at};
            start = p;
        }
    }
    if (n == max) return -1;
    out[n++] = (span){start, end};
    return n;
}

/* The position of the first top-level word w in [p, end), or NULL. */
static const char *find_word(const char *p, const char *end, const char *w)
{
    int depth = 0;
    while (p < end) {
        const char *at = tl_sql_skip_blanks(p);
        tl_sql_token t = tl_sql_next(&p);
        if (t.kind == 0 || at >= end) break;
        if (tl_sql_is_char(t, '(')) depth++;
        if (tl_sql_is_char(t, ')')) depth--;
        if (depth == 0 && tl_sql_is_word(t, w)) return at;
    }
    return NULL;
}

/* Set when the definition's parse could not allocate a copy it needed (a
 * name, a width's text): it then reads as something else (no column, no
 * fixed width), and read_select turns whatever it concluded into out of
 * memory. One statement is parsed at a time on a thread. */
static _Thread_local bool parse_nomem;

/* A lone column name (maybe qualified: the last part counts) spanning all
 * of s, malloc'd; NULL when s is anything else (or out of memory:
 * parse_nomem). */
static char *column_of(span s)
{
    const char *p = s.p;
    char *name = NULL;
    if (!tl_sql_read_name(&p, &name) || tl_sql_skip_blanks(p) < s.end) {
        parse_nomem |= name == NULL && tl_sql_at_name(p);
        free(name);
        return NULL;
    }
    char *dot = strrchr(name, '.');
    if (dot) memmove(name, dot + 1, strlen(dot));
    return name;
}

typedef struct item {
    span expr;
    char *alias; /* AS alias, or NULL */
} item;

/* An item "expr [AS] [alias]". */
static tl_status read_item(span s, item *out, tl_error *err)
{
    s.p = tl_sql_skip_blanks(s.p);
    out->expr = s;
    out->alias = NULL;
    const char *as = find_word(s.p, s.end, "AS");
    const char *alias_at = NULL;
    if (as) {
        out->expr.end = as;
        alias_at = as + 2;
    } else {
        /* a bare alias: a last word after the expression's closing parenthesis */
        const char *p = s.p, *prev_end = NULL;
        tl_sql_token last = {0}, before = {0};
        while (p < s.end) {
            tl_sql_token t = tl_sql_next(&p);
            if (t.kind == 0 || p > s.end) break;
            before = last;
            last = t;
            prev_end = t.p;
        }
        if ((last.kind == 'w' || last.kind == 'q') && tl_sql_is_char(before, ')')) {
            out->expr.end = prev_end;
            alias_at = prev_end;
        }
    }
    if (alias_at) {
        char *alias = column_of((span){alias_at, s.end});
        if (alias == NULL) return tl_error_set(err, TL_ERR_QUERY, "syntax error: a bad alias");
        out->alias = alias;
    }
    while (out->expr.end > out->expr.p &&
           (out->expr.end[-1] == ' ' || out->expr.end[-1] == '\n' || out->expr.end[-1] == '\t'))
        out->expr.end--;
    return TL_OK;
}

/* A call "name(args)" spanning all of s: its lower-case name and argument
 * spans; false when s is no call. */
static bool read_call(span s, char *name, size_t size, span *args, int max, int *n_args)
{
    const char *p = s.p;
    tl_sql_token t = tl_sql_next(&p);
    if (t.kind != 'w' || t.n >= size) return false;
    for (size_t i = 0; i < t.n; i++) name[i] = (char)tolower((unsigned char)t.p[i]);
    name[t.n] = 0;
    if (!tl_sql_is_char(tl_sql_next(&p), '(')) return false;
    const char *open = p;
    int depth = 1;
    const char *close = NULL;
    while (p < s.end) {
        tl_sql_token u = tl_sql_next(&p);
        if (u.kind == 0) return false;
        if (tl_sql_is_char(u, '(')) depth++;
        if (tl_sql_is_char(u, ')') && --depth == 0) {
            close = u.p;
            break;
        }
    }
    if (close == NULL || tl_sql_skip_blanks(p) < s.end) return false;
    *n_args = tl_sql_skip_blanks(open) == close ? 0 : split_top(open, close, args, max);
    return *n_args >= 0;
}

typedef struct create_stmt {
    tl_qname name, source;
    bool if_not_exists;
    tl_rollup_def def;
    const char *raw_time; /* the raw table's time column */
    tl_strlist with;      /* key, value pairs of WITH (...) */
} create_stmt;

static tl_status not_storable(const create_stmt *c, span s, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID,
                        "rollup %s: %.*s isn't an aggregate a rollup stores: count, sum, min, "
                        "max, avg, first_value / last_value ORDER BY time, m4(time, x) or "
                        "time_weighted_mean(time, x [, 'linear'])",
                        c->name.full, (int)(s.end - s.p), s.p);
}

static bool is_raw_time(const create_stmt *c, span s)
{
    char *col = column_of(s);
    bool yes = col && strcmp(col, c->raw_time) == 0;
    free(col);
    return yes;
}

/* first_value/last_value's argument "x ORDER BY time [ASC]": x's column. */
static char *ordered_column(const create_stmt *c, span arg)
{
    const char *order = find_word(arg.p, arg.end, "ORDER");
    if (order == NULL) return NULL;
    const char *p = order + 5;
    if (!tl_sql_is_word(tl_sql_next(&p), "BY")) return NULL;
    span by = {p, arg.end};
    const char *asc = find_word(p, arg.end, "ASC");
    if (asc) by.end = asc;
    if (!is_raw_time(c, by) || (asc && tl_sql_skip_blanks(asc + 3) < arg.end)) return NULL;
    return column_of((span){arg.p, order});
}

/* An aggregate item into agg; TL_ERR_INVALID naming it when not storable. */
static tl_status read_agg(const create_stmt *c, const item *it, tl_rollup_agg *agg, tl_error *err)
{
    char fname[32];
    span args[4];
    int n = 0;
    if (!read_call(it->expr, fname, sizeof fname, args, 4, &n))
        return not_storable(c, it->expr, err);
    agg->column = NULL;
    static const struct {
        const char *name;
        tl_rollup_fn fn;
    } simple[] = {{"count", TL_ROLLUP_COUNT}, {"sum", TL_ROLLUP_SUM}, {"min", TL_ROLLUP_MIN},
                  {"max", TL_ROLLUP_MAX},     {"avg", TL_ROLLUP_AVG}, {"mean", TL_ROLLUP_AVG}};
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (strcmp(fname, simple[i].name) == 0 && n == 1) {
            agg->fn = simple[i].fn;
            const char *p = args[0].p;
            if (agg->fn == TL_ROLLUP_COUNT && tl_sql_is_char(tl_sql_next(&p), '*') &&
                tl_sql_skip_blanks(p) >= args[0].end)
                return TL_OK;
            agg->column = column_of(args[0]);
            return agg->column ? TL_OK : not_storable(c, it->expr, err);
        }
    if ((strcmp(fname, "first_value") == 0 || strcmp(fname, "last_value") == 0) && n == 1) {
        agg->fn = fname[0] == 'f' ? TL_ROLLUP_FIRST : TL_ROLLUP_LAST;
        agg->column = ordered_column(c, args[0]);
        return agg->column ? TL_OK : not_storable(c, it->expr, err);
    }
    bool twm = strcmp(fname, "time_weighted_mean") == 0 && (n == 2 || n == 3);
    if ((strcmp(fname, "m4") == 0 && n == 2) || twm) {
        agg->fn = twm ? TL_ROLLUP_TWM : TL_ROLLUP_M4;
        if (n == 3) {
            const char *p = args[2].p;
            tl_sql_token t = tl_sql_next(&p);
            char *mode = t.kind == 's' ? tl_sql_text_of(t) : NULL;
            parse_nomem |= t.kind == 's' && mode == NULL;
            bool linear = mode && strcasecmp(mode, "linear") == 0;
            bool ffill =
                mode && (strcasecmp(mode, "forward_fill") == 0 || strcasecmp(mode, "ffill") == 0);
            free(mode);
            if (!linear && !ffill) return not_storable(c, it->expr, err);
            if (linear) agg->fn = TL_ROLLUP_TWM_LINEAR;
        }
        if (!is_raw_time(c, args[0])) return not_storable(c, it->expr, err);
        agg->column = column_of(args[1]);
        return agg->column ? TL_OK : not_storable(c, it->expr, err);
    }
    return not_storable(c, it->expr, err);
}

/* The width of time_bucket's first argument (INTERVAL '1 hour', '90
 * minutes', INTERVAL 2 HOUR), asked of DuckDB; 0 when not a fixed width. */
static tl_status bucket_width(tl_query_engine *e, span arg, int64_t *out, tl_error *err)
{
    *out = 0;
    const char *p = arg.p;
    tl_sql_token t = tl_sql_next(&p);
    if (tl_sql_is_word(t, "INTERVAL")) t = tl_sql_next(&p);
    char *text = NULL;
    bool wanted = t.kind == 's';
    if (t.kind == 's') {
        text = tl_sql_text_of(t);
    } else if (t.kind == 'n') {
        tl_sql_token unit = tl_sql_next(&p);
        wanted = unit.kind == 'w';
        if (wanted) text = tl_strdup_printf("%.*s %.*s", (int)t.n, t.p, (int)unit.n, unit.p);
    }
    parse_nomem |= wanted && text == NULL;
    if (text == NULL || tl_sql_skip_blanks(p) < arg.end) {
        free(text);
        return TL_OK;
    }
    char *us = NULL;
    tl_error ignored = {0};
    tl_status st = tl_query_scalar_text(
        e,
        "SELECT CASE WHEN datepart('year', i) = 0 AND datepart('month', i) = 0 THEN "
        "CAST(epoch_us(TIMESTAMP '1970-01-01' + i) AS VARCHAR) END FROM (SELECT CAST(? AS "
        "INTERVAL) AS i)",
        text, &us, &ignored);
    free(text);
    if (st == TL_OK && us) *out = strtoll(us, NULL, 10);
    free(us);
    return st == TL_ERR_NOMEM ? tl_error_nomem(err) : TL_OK;
}

/* The bucket item, time_bucket(width, time): its width into c->def. */
static tl_status read_bucket(tl_query_engine *e, create_stmt *c, const item *it, bool *is_bucket,
                             tl_error *err)
{
    char fname[32];
    span args[3];
    int n = 0;
    *is_bucket = read_call(it->expr, fname, sizeof fname, args, 3, &n) &&
                 (strcmp(fname, "time_bucket") == 0 || strcmp(fname, "date_bin") == 0);
    if (!*is_bucket) return TL_OK;
    int64_t width = 0;
    if (n == 2) TL_TRY(bucket_width(e, args[0], &width, err));
    if (n != 2 || width <= 0 || !is_raw_time(c, args[1]))
        return tl_error_set(
            err, TL_ERR_INVALID, "rollup %s: group by time_bucket(<fixed width>, %s), not %.*s",
            c->name.full, c->raw_time, (int)(it->expr.end - it->expr.p), it->expr.p);
    c->def.bucket_us = width;
    c->def.bucket_column = strdup(it->alias ? it->alias : "bucket");
    return c->def.bucket_column ? TL_OK : tl_error_nomem(err);
}

static bool is_series_key(const tl_table *raw, const char *col)
{
    return tl_strlist_contains(&raw->contract.series_key, col);
}

static tl_status keys_error(const create_stmt *c, const tl_table *raw, span s, tl_error *err)
{
    char keys[512] = "";
    for (size_t i = 0; i < raw->contract.series_key.len; i++)
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", i ? ", " : "",
                 raw->contract.series_key.items[i]);
    return tl_error_set(err, TL_ERR_INVALID,
                        "rollup %s: group by time_bucket(<fixed width>, %s) and series-key "
                        "columns (%s), not %.*s",
                        c->name.full, c->raw_time, keys, (int)(s.end - s.p), s.p);
}

/* An aggregate's default name, as the reference's: count, sum_temp, ... */
static char *default_name(const tl_rollup_agg *a)
{
    const char *fn =
        a->fn == TL_ROLLUP_TWM_LINEAR ? "time_weighted_mean" : tl_rollup_fn_name(a->fn);
    return a->column ? tl_strdup_printf("%s_%s", fn, a->column) : strdup(fn);
}

/* m4 and the time-weighted means store their values as doubles: a column
 * of another type (a string) is refused by name. A column raw lacks is
 * left to the query's own error. */
static tl_status check_numeric(const create_stmt *c, const tl_table *raw, const item *it,
                               const tl_rollup_agg *a, tl_error *err)
{
    if (a->fn != TL_ROLLUP_M4 && a->fn != TL_ROLLUP_TWM && a->fn != TL_ROLLUP_TWM_LINEAR)
        return TL_OK;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(raw->md);
    for (size_t i = 0; s && i < s->n_fields; i++) {
        const tl_ice_field *f = &s->fields[i];
        if (strcmp(f->name, a->column) != 0) continue;
        tl_ice_type_id t = f->type.id;
        if (t == TL_ICE_INT || t == TL_ICE_LONG || t == TL_ICE_FLOAT || t == TL_ICE_DOUBLE)
            return TL_OK;
        return tl_error_set(err, TL_ERR_INVALID,
                            "rollup %s: %.*s needs a numeric column (int, long, float or double), "
                            "and %s is not one",
                            c->name.full, (int)(it->expr.end - it->expr.p), it->expr.p, a->column);
    }
    return TL_OK;
}

/* The SELECT's items into c->def (keys, bucket, aggregates). */
static tl_status read_items(tl_query_engine *e, create_stmt *c, const tl_table *raw, span list,
                            item *items, int n, tl_error *err)
{
    c->def.aggs = calloc((size_t)n, sizeof *c->def.aggs);
    if (c->def.aggs == NULL) return tl_error_nomem(err);
    for (int i = 0; i < n; i++) {
        const item *it = &items[i];
        char *col = column_of(it->expr);
        if (col) {
            tl_status st = is_series_key(raw, col) ? TL_OK : keys_error(c, raw, it->expr, err);
            if (st == TL_OK && it->alias && strcmp(it->alias, col) != 0)
                st = tl_error_set(err, TL_ERR_INVALID,
                                  "rollup %s: series-key column %s keeps its name (no AS %s)",
                                  c->name.full, col, it->alias);
            if (st == TL_OK && tl_strlist_push(&c->def.keys, col) != 0) st = tl_error_nomem(err);
            free(col);
            TL_TRY(st);
            continue;
        }
        bool is_bucket;
        TL_TRY(read_bucket(e, c, it, &is_bucket, err));
        if (is_bucket) continue;
        tl_rollup_agg *a = &c->def.aggs[c->def.n_aggs];
        tl_status st = read_agg(c, it, a, err);
        if (st == TL_OK) st = check_numeric(c, raw, it, a, err);
        if (st == TL_OK) {
            c->def.n_aggs++;
            a->name = it->alias ? strdup(it->alias) : default_name(a);
            if (a->name == NULL) st = tl_error_nomem(err);
        } else {
            free(a->column);
            a->column = NULL;
        }
        TL_TRY(st);
    }
    (void)list;
    if (c->def.bucket_column == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "rollup %s: group by time_bucket(<width>, %s)",
                            c->name.full, c->raw_time);
    if (c->def.n_aggs == 0)
        return tl_error_set(err, TL_ERR_INVALID, "rollup %s: needs at least one aggregate",
                            c->name.full);
    return TL_OK;
}

/* Whether GROUP BY item g names select item i (by alias, column, ordinal
 * or the same text). */
static bool group_names(span g, const item *items, int i)
{
    const char *p = g.p;
    tl_sql_token t = tl_sql_next(&p);
    if (t.kind == 'n' && tl_sql_skip_blanks(p) >= g.end) return strtol(t.p, NULL, 10) == i + 1;
    char *col = column_of(g);
    char *own = column_of(items[i].expr);
    bool yes = col && ((items[i].alias && strcmp(col, items[i].alias) == 0) ||
                       (own && strcmp(col, own) == 0));
    free(col);
    free(own);
    size_t len = (size_t)(g.end - g.p);
    return yes || ((size_t)(items[i].expr.end - items[i].expr.p) == len &&
                   strncasecmp(g.p, items[i].expr.p, len) == 0);
}

/* GROUP BY must be the keys and the bucket, each once. */
static tl_status check_group_by(const create_stmt *c, const tl_table *raw, span list,
                                const item *items, int n_items, const bool *grouped, tl_error *err)
{
    span groups[64];
    int n = split_top(list.p, list.end, groups, 64);
    bool covered[256] = {false};
    for (int g = 0; g < n; g++) {
        int hit = -1;
        for (int i = 0; i < n_items && hit < 0; i++)
            if (grouped[i] && group_names(groups[g], items, i)) hit = i;
        if (hit < 0) return keys_error(c, raw, groups[g], err);
        covered[hit] = true;
    }
    for (int i = 0; i < n_items; i++)
        if (grouped[i] && !covered[i])
            return tl_error_set(err, TL_ERR_QUERY,
                                "rollup %s: %.*s must appear in the GROUP BY clause", c->name.full,
                                (int)(items[i].expr.end - items[i].expr.p), items[i].expr.p);
    return TL_OK;
}

/* WITH (key = value, ...) into c->with. */
/* A time-weighted mean holds each reading until the next one, so it means
 * something for one series only: grouped by fewer keys than the series key,
 * the readings of several series interleave in time and each would hold
 * another's value. The reference fails at run time when their runs overlap
 * (RuntimeError); we refuse the statement before anything is written, the
 * data notwithstanding, so that no later refresh can fail the same way. */
static tl_status check_one_series(const create_stmt *c, const tl_table *raw, tl_error *err)
{
    const tl_strlist *sk = &raw->contract.series_key;
    char missing[512] = "", keys[512] = "";
    for (size_t i = 0; i < sk->len; i++) {
        snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", i ? ", " : "",
                 sk->items[i]);
        if (!tl_strlist_contains(&c->def.keys, sk->items[i]))
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", sk->items[i]);
    }
    for (size_t a = 0; missing[0] && a < c->def.n_aggs; a++) {
        tl_rollup_fn fn = c->def.aggs[a].fn;
        if (fn != TL_ROLLUP_TWM && fn != TL_ROLLUP_TWM_LINEAR) continue;
        return tl_error_set(err, TL_ERR_QUERY,
                            "rollup %s: time_weighted_mean(%s, %s) would mix the readings of "
                            "several series, each held until another's reading (series key "
                            "%s; not grouped by %s). Group by the series key (each series is "
                            "one signal): add %s to the SELECT and GROUP BY",
                            c->name.full, c->raw_time, c->def.aggs[a].column, keys, missing,
                            missing);
    }
    return TL_OK;
}

static tl_status read_with(create_stmt *c, const char *p, tl_error *err)
{
    if (!tl_sql_is_char(tl_sql_next(&p), '('))
        return tl_error_set(err, TL_ERR_QUERY, "syntax error: WITH (setting = value, ...)");
    for (;;) {
        char *key = NULL;
        if (!tl_sql_read_name(&p, &key))
            return tl_sql_at_name(p) ? tl_error_nomem(err)
                                     : tl_error_set(err, TL_ERR_QUERY,
                                                    "syntax error: WITH (setting = value, ...)");
        tl_sql_token eq = tl_sql_next(&p), v = tl_sql_next(&p);
        char *value = (v.kind == 's' || v.kind == 'n' || v.kind == 'w') ? tl_sql_text_of(v) : NULL;
        if (!tl_sql_is_char(eq, '=') || value == NULL) {
            free(key);
            free(value);
            return tl_error_set(err, TL_ERR_QUERY,
                                "syntax error: WITH (setting = value, ...) needs a value");
        }
        if (tl_strlist_push_owned(&c->with, key) != 0 ||
            tl_strlist_push_owned(&c->with, value) != 0)
            return tl_error_nomem(err);
        tl_sql_token t = tl_sql_next(&p);
        if (tl_sql_is_char(t, ')')) break;
        if (!tl_sql_is_char(t, ','))
            return tl_error_set(err, TL_ERR_QUERY, "syntax error: WITH (setting = value, ...)");
    }
    if (!tl_sql_at_end(p))
        return tl_error_set(err, TL_ERR_QUERY, "syntax error: nothing may follow WITH (...)");
    return TL_OK;
}

static tl_status raw_not_found(const create_stmt *c, tl_error *err)
{
    return tl_error_set(err, TL_ERR_QUERY, "rollup %s: table '%s' not found", c->name.full,
                        c->source.full);
}

/* "AS SELECT ... FROM raw [GROUP BY ...] [WITH (...)]" after the name. */
static tl_status parse_select(tl_lake *lake, tl_query_engine *e, const char *ns, const char *p,
                              create_stmt *c, tl_table **raw, tl_error *err)
{
    if (!tl_sql_is_word(tl_sql_next(&p), "AS") || !tl_sql_is_word(tl_sql_next(&p), "SELECT"))
        return tl_error_set(err, TL_ERR_QUERY,
                            "syntax error: CREATE MATERIALIZED ROLLUP <name> AS SELECT ...");
    const char *end = p + strlen(p);
    const char *from = find_word(p, end, "FROM");
    if (from == NULL)
        return tl_error_set(err, TL_ERR_QUERY, "syntax error: the rollup's SELECT needs FROM");
    const char *q = from + 4;
    char *source = NULL;
    if (!tl_sql_read_name(&q, &source))
        return tl_sql_at_name(q)
                   ? tl_error_nomem(err)
                   : tl_error_set(err, TL_ERR_QUERY, "syntax error: FROM <raw table>");
    tl_status st = tl_qname_parse(source, ns, &c->source, err);
    free(source);
    TL_TRY(st);
    const char *where = find_word(q, end, "WHERE"), *group = find_word(q, end, "GROUP");
    const char *with = find_word(q, end, "WITH");
    if (where)
        return tl_error_set(err, TL_ERR_INVALID, "rollup %s: WHERE isn't supported in a rollup",
                            c->name.full);
    const char *rest = group ? group : with ? with : end;
    if (!tl_sql_at_end(q) && tl_sql_skip_blanks(q) < rest)
        return tl_error_set(err, TL_ERR_INVALID,
                            "rollup %s: a rollup reads one raw table: FROM <table> GROUP BY ...",
                            c->name.full);
    st = tl_lake_open_table(lake, c->source.full, raw, err);
    if (st == TL_ERR_NOT_FOUND) return raw_not_found(c, err);
    TL_TRY(st);
    if ((*raw)->contract.time_column == NULL)
        return tl_error_set(err, TL_ERR_INVALID,
                            "rollup %s: %s has no time column: a rollup needs a time-series table",
                            c->name.full, c->source.full);
    c->raw_time = (*raw)->contract.time_column;
    span items_s[256];
    int n = split_top(p, from, items_s, 256);
    if (n < 0)
        return tl_error_set(err, TL_ERR_INVALID, "rollup %s: too many columns", c->name.full);
    item items[256];
    bool grouped[256] = {false};
    int read = 0;
    for (; st == TL_OK && read < n; read++) st = read_item(items_s[read], &items[read], err);
    if (st == TL_OK) st = read_items(e, c, *raw, (span){p, from}, items, n, err);
    for (int i = 0; st == TL_OK && i < n; i++) {
        char *col = column_of(items[i].expr);
        char fname[32];
        span a[3];
        int na;
        grouped[i] =
            col != NULL || (read_call(items[i].expr, fname, sizeof fname, a, 3, &na) &&
                            (strcmp(fname, "time_bucket") == 0 || strcmp(fname, "date_bin") == 0));
        free(col);
    }
    if (st == TL_OK && group == NULL)
        st = tl_error_set(err, TL_ERR_INVALID, "rollup %s: group by time_bucket(<width>, %s)",
                          c->name.full, c->raw_time);
    if (st == TL_OK) {
        const char *g = group + 5;
        if (!tl_sql_is_word(tl_sql_next(&g), "BY"))
            st = tl_error_set(err, TL_ERR_QUERY, "syntax error: GROUP BY");
        else
            st = check_group_by(c, *raw, (span){g, with ? with : end}, items, n, grouped, err);
    }
    if (st == TL_OK) st = check_one_series(c, *raw, err);
    if (st == TL_OK && with) st = read_with(c, with + 4, err);
    for (int i = 0; i < read; i++) free(items[i].alias);
    return st;
}

/* parse_select, out of memory whenever a copy it needed could not be made:
 * what it concluded without it (no such column, no fixed width) is not the
 * user's mistake, and a definition it accepted may miss a part. */
static tl_status read_select(tl_lake *lake, tl_query_engine *e, const char *ns, const char *p,
                             create_stmt *c, tl_table **raw, tl_error *err)
{
    parse_nomem = false;
    tl_status st = parse_select(lake, e, ns, p, c, raw, err);
    if (parse_nomem && st != TL_ERR_NOMEM) st = tl_error_nomem(err);
    parse_nomem = false;
    return st;
}

/* ---- Running the statements ---- */

static void create_stmt_free(create_stmt *c)
{
    tl_rollup_def_free(&c->def);
    tl_strlist_free(&c->with);
}

typedef struct list_edit {
    const char *name;
    bool add;
} list_edit;

/* A metadata edit adding a rollup to (or removing one from) timelake.rollups. */
static tl_status edit_list(const tl_table *t, tl_ice_metadata *md, void *ctx, tl_error *err)
{
    (void)t;
    const list_edit *e = ctx;
    tl_strlist names = {0}, kept = {0};
    tl_status st = tl_rollup_list(md, &names, err);
    for (size_t i = 0; st == TL_OK && i < names.len; i++)
        if (strcmp(names.items[i], e->name) != 0 && tl_strlist_push(&kept, names.items[i]) != 0)
            st = tl_error_nomem(err);
    if (st == TL_OK && e->add && tl_strlist_push(&kept, e->name) != 0) st = tl_error_nomem(err);
    char *joined = st == TL_OK ? tl_rollup_list_join(&kept) : NULL;
    if (st == TL_OK && joined == NULL) st = tl_error_nomem(err);
    if (st == TL_OK)
        st = tl_ice_metadata_set_property(md, TL_ROLLUPS_KEY, kept.len ? joined : NULL, err);
    free(joined);
    tl_strlist_free(&names);
    tl_strlist_free(&kept);
    return st;
}

static tl_status edit_raw_list(tl_table *raw, const char *name, bool add, tl_error *err)
{
    list_edit e = {name, add};
    return tl_table_commit_metadata(raw, edit_list, &e, err);
}

/* Clears the nullable flag of the bucket and count columns and of the
 * fields of a time-weighted state's struct (the list and its element stay
 * nullable), as the reference's rollups have them required. */
static void require_columns(struct ArrowSchema *schema, const tl_rollup_def *d)
{
    for (int64_t i = 0; i < schema->n_children; i++) {
        struct ArrowSchema *c = schema->children[i];
        bool required = strcmp(c->name, d->bucket_column) == 0;
        bool state = false;
        for (size_t a = 0; a < d->n_aggs; a++) {
            if (strcmp(c->name, d->aggs[a].name) != 0) continue;
            required = required || d->aggs[a].fn == TL_ROLLUP_COUNT;
            state = d->aggs[a].fn == TL_ROLLUP_TWM || d->aggs[a].fn == TL_ROLLUP_TWM_LINEAR;
        }
        if (required) c->flags &= ~ARROW_FLAG_NULLABLE;
        struct ArrowSchema *element = state && c->n_children == 1 ? c->children[0] : NULL;
        for (int64_t f = 0; element && f < element->n_children; f++)
            element->children[f]->flags &= ~ARROW_FLAG_NULLABLE;
    }
}

/* The create options from WITH: chunk, retention, refresh_interval and
 * table settings (any spelling), into o (pointing into c->with and props). */
static tl_status create_options(create_stmt *c, tl_strlist *props, tl_table_options *o,
                                tl_error *err)
{
    o->time_column = c->def.bucket_column;
    o->series_key = (const char *const *)c->def.keys.items;
    o->series_key_len = c->def.keys.len;
    o->chunk = c->def.bucket_us < 3600 * TL_MICROS_PER_SECOND ? "day" : "month";
    o->dedup = 1;
    o->ingest_time = 0;
    for (size_t i = 0; i + 1 < c->with.len; i += 2) {
        const char *k = c->with.items[i], *v = c->with.items[i + 1];
        const char *key = NULL;
        if (strcasecmp(k, "chunk") == 0 || strcasecmp(k, "chunk_interval") == 0) {
            o->chunk = v;
            continue;
        }
        if (strcasecmp(k, "retention") == 0) {
            o->retention = v;
            continue;
        }
        if (strcasecmp(k, "refresh_interval") == 0) k = TL_ROLLUP_REFRESH_KEY;
        TL_TRY(tl_setting_key(k, TL_LEVEL_TABLE, true, &key, err));
        if (tl_strlist_push(props, key ? key : k) != 0 || tl_strlist_push(props, v) != 0)
            return tl_error_nomem(err);
    }
    const char **pairs = calloc(props->len + 1, sizeof *pairs);
    if (pairs == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < props->len; i++) pairs[i] = props->items[i];
    o->properties = pairs; /* the caller frees it */
    return TL_OK;
}

/* Creates the rollup table, its definition in its first version, then its
 * first rows and the raw table's list naming it; on failure it is dropped.
 * A failure that the drop cannot undo (the store down) leaves a rollup
 * without its rows or not listed: CREATE again completes it (resume). */
static tl_status make_rollup(tl_lake *lake, create_stmt *c, tl_table *raw, int64_t *written,
                             tl_error *err)
{
    tl_strlist props = {0};
    tl_table_options o = {0};
    struct ArrowArrayStream rows = {0};
    struct ArrowSchema schema = {0};
    tl_table *t = NULL;
    const tl_ice_snapshot *cur = tl_ice_metadata_current_snapshot(raw->md);
    tl_status st = create_options(c, &props, &o, err);
    if (st == TL_OK) st = tl_rollup_compute(lake, &c->def, raw, NULL, 0, &rows, err);
    int rc = st == TL_OK ? rows.get_schema(&rows, &schema) : 0;
    if (rc == ENOMEM)
        st = tl_error_nomem(err);
    else if (rc != 0)
        st = tl_error_set(err, TL_ERR_QUERY, "rollup %s: %s", c->name.full,
                          rows.get_last_error(&rows));
    char width[32];
    tl_duration_format(c->def.bucket_us, width, sizeof width);
    char *aggs = st == TL_OK ? tl_rollup_aggregates_json(c->def.aggs, c->def.n_aggs) : NULL;
    if (st == TL_OK && aggs == NULL) st = tl_error_nomem(err);
    const char *own[] = {TL_ROLLUP_SOURCE_KEY,
                         c->source.full,
                         TL_ROLLUP_BUCKET_KEY,
                         width,
                         TL_ROLLUP_AGGREGATES_KEY,
                         aggs,
                         NULL};
    if (st == TL_OK) {
        require_columns(&schema, &c->def);
        st = tl_table_create_owned(lake, c->name.full, &schema, &o, own, &t, err);
    }
    bool created = st == TL_OK;
    if (st == TL_OK && cur) st = tl_rollup_commit(t, &rows, false, cur, written, err);
    if (st == TL_OK) st = edit_raw_list(raw, c->name.full, true, err);
    if (st != TL_OK && created) {
        tl_error ignored = {0};
        tl_lake_drop_table(lake, c->name.full, &ignored);
    }
    if (rows.release) rows.release(&rows);
    if (schema.release) schema.release(&schema);
    free(aggs);
    tl_table_close(t);
    free((void *)o.properties);
    tl_strlist_free(&props);
    return st;
}

static tl_status open_rollup(tl_lake *lake, const tl_qname *name, tl_table **t, tl_rollup_def *d,
                             tl_error *err);

/* Whether rollup t is half made: a CREATE whose cleanup failed (the store
 * down) left it without rows although its raw table has some, or not in
 * the raw table's list. */
static tl_status half_made(const tl_table *t, const tl_table *raw, bool *out, tl_error *err)
{
    tl_strlist names = {0};
    TL_TRY(tl_rollup_list(raw->md, &names, err));
    bool listed = tl_strlist_contains(&names, t->name.full);
    tl_strlist_free(&names);
    *out = !listed || (tl_ice_metadata_current_snapshot(t->md) == NULL &&
                       tl_ice_metadata_current_snapshot(raw->md) != NULL);
    return TL_OK;
}

static bool same_definition(const create_stmt *c, const tl_rollup_def *d)
{
    char *a = tl_rollup_aggregates_json(c->def.aggs, c->def.n_aggs);
    char *b = tl_rollup_aggregates_json(d->aggs, d->n_aggs);
    bool same = a && b && strcmp(a, b) == 0 && strcmp(c->source.full, d->source) == 0 &&
                c->def.bucket_us == d->bucket_us;
    free(a);
    free(b);
    return same;
}

/* CREATE of an existing rollup that a failed CREATE of the same statement
 * left half made: its rows and its place in the raw table's list are made
 * now (*resumed; *written rows). Anything else that exists is left alone. */
static tl_status resume_rollup(tl_lake *lake, const char *ns, const char *p, create_stmt *c,
                               bool *resumed, int64_t *written, tl_error *err)
{
    tl_table *t = NULL, *raw = NULL;
    tl_rollup_def d;
    tl_error ignored = {0};
    *resumed = false;
    if (open_rollup(lake, &c->name, &t, &d, &ignored) != TL_OK) return TL_OK;
    bool half = false;
    tl_query_engine *e = NULL;
    tl_status st = tl_query_engine_get(lake, &e, err);
    if (st == TL_OK) st = read_select(lake, e, ns, p, c, &raw, err);
    if (st == TL_OK) st = half_made(t, raw, &half, err);
    if (st == TL_OK && half && same_definition(c, &d)) {
        st = tl_rollup_refresh(t, written, err);
        if (st == TL_OK) st = edit_raw_list(raw, c->name.full, true, err);
        *resumed = st == TL_OK;
    }
    tl_table_close(raw);
    tl_table_close(t);
    tl_rollup_def_free(&d);
    return st;
}

static tl_status create_rollup(tl_lake *lake, const char *ns, const char *p, create_stmt *c,
                               struct ArrowArrayStream *out, tl_error *err)
{
    tl_table *existing = NULL, *raw = NULL;
    tl_error probe = {0};
    tl_status st = tl_lake_open_table(lake, c->name.full, &existing, &probe);
    tl_table_close(existing);
    if (st == TL_OK) {
        bool resumed = false;
        int64_t written = 0;
        TL_TRY(resume_rollup(lake, ns, p, c, &resumed, &written, err));
        if (resumed) return result_row(c->name.full, written, out, err);
        return c->if_not_exists ? result_row(c->name.full, 0, out, err)
                                : tl_table_exists_error(err, &c->name);
    }
    if (st != TL_ERR_NOT_FOUND) {
        *err = probe;
        return st;
    }
    tl_query_engine *e = NULL;
    st = tl_query_engine_get(lake, &e, err);
    if (st == TL_OK) st = read_select(lake, e, ns, p, c, &raw, err);
    int64_t written = 0;
    if (st == TL_OK) st = make_rollup(lake, c, raw, &written, err);
    if (st == TL_OK) st = result_row(c->name.full, written, out, err);
    tl_table_close(raw);
    return st;
}

/* Opens rollup `name` and reads its definition. */
static tl_status open_rollup(tl_lake *lake, const tl_qname *name, tl_table **t, tl_rollup_def *d,
                             tl_error *err)
{
    TL_TRY(tl_lake_open_table(lake, name->full, t, err));
    tl_status st = tl_rollup_def_parse((*t)->md, name->full, d, err);
    if (st != TL_OK) {
        tl_table_close(*t);
        *t = NULL;
    }
    return st;
}

static tl_status drop_rollup(tl_lake *lake, const tl_qname *name, bool if_exists,
                             struct ArrowArrayStream *out, tl_error *err)
{
    tl_table *t = NULL, *raw = NULL;
    tl_rollup_def d;
    tl_status st = open_rollup(lake, name, &t, &d, err);
    if (st == TL_ERR_NOT_FOUND && if_exists) return result_row(name->full, 0, out, err);
    TL_TRY(st);
    tl_table_close(t);
    st = tl_lake_drop_table(lake, name->full, err);
    tl_error ignored = {0};
    if (st == TL_OK && tl_lake_open_table(lake, d.source, &raw, &ignored) == TL_OK)
        st = edit_raw_list(raw, name->full, false, err);
    tl_table_close(raw);
    tl_rollup_def_free(&d);
    if (st == TL_OK) st = result_row(name->full, 0, out, err);
    return st;
}

static tl_status refresh_rollup(tl_lake *lake, const tl_qname *name, struct ArrowArrayStream *out,
                                tl_error *err)
{
    tl_table *t = NULL;
    TL_TRY(tl_lake_open_table(lake, name->full, &t, err));
    int64_t rows = 0;
    tl_status st = tl_rollup_refresh(t, &rows, err);
    tl_table_close(t);
    if (st == TL_OK) st = result_row(name->full, rows, out, err);
    return st;
}

/* "[IF [NOT] EXISTS] name": the flag and the name, qualified in ns. */
static tl_status read_target(const char **p, const char *ns, bool not_exists, bool *flag,
                             tl_qname *out, tl_error *err)
{
    const char *q = *p;
    *flag = false;
    if (tl_sql_is_word(tl_sql_next(&q), "IF")) {
        if (not_exists && !tl_sql_is_word(tl_sql_next(&q), "NOT"))
            return tl_error_set(err, TL_ERR_QUERY, "syntax error: IF NOT EXISTS");
        if (!tl_sql_is_word(tl_sql_next(&q), "EXISTS"))
            return tl_error_set(err, TL_ERR_QUERY, "syntax error: IF%s EXISTS",
                                not_exists ? " NOT" : "");
        *flag = true;
        *p = q;
    }
    char *name = NULL;
    if (!tl_sql_read_name(p, &name))
        return tl_sql_at_name(*p)
                   ? tl_error_set(err, TL_ERR_NOMEM, "out of memory")
                   : tl_error_set(err, TL_ERR_QUERY, "syntax error: the rollup needs a name");
    tl_status st = tl_qname_parse(name, ns, out, err);
    free(name);
    return st;
}

tl_status tl_rollup_statement(tl_lake *lake, const char *ns, const char *text, bool *handled,
                              struct ArrowArrayStream *out, tl_error *err)
{
    const char *p = text;
    tl_sql_token verb = tl_sql_next(&p), m = tl_sql_next(&p), r = tl_sql_next(&p);
    bool create = tl_sql_is_word(verb, "CREATE"), drop = tl_sql_is_word(verb, "DROP");
    *handled = (create || drop || tl_sql_is_word(verb, "REFRESH")) &&
               tl_sql_is_word(m, "MATERIALIZED") && tl_sql_is_word(r, "ROLLUP");
    if (!*handled) return TL_OK;
    bool flag;
    tl_qname name;
    TL_TRY(read_target(&p, ns, create, &flag, &name, err));
    if (create) {
        create_stmt c = {.name = name, .if_not_exists = flag};
        tl_status st = create_rollup(lake, ns, p, &c, out, err);
        create_stmt_free(&c);
        return st;
    }
    if (!tl_sql_at_end(p))
        return tl_error_set(err, TL_ERR_QUERY, "syntax error: %s MATERIALIZED ROLLUP [%s] <name>",
                            drop ? "DROP" : "REFRESH", drop ? "IF EXISTS" : "");
    if (drop) return drop_rollup(lake, &name, flag, out, err);
    if (flag)
        return tl_error_set(err, TL_ERR_QUERY, "syntax error: REFRESH MATERIALIZED ROLLUP <name>");
    return refresh_rollup(lake, &name, out, err);
}
