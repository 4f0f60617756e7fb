/* Building the SQL of mappings and dimensions from the model. */
#include "compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "timelake.h"

/* One relation row per pattern of each inline row, in definition order. */
bool kdim_rows_inline(const kdimension *d, kdim_rows *out)
{
    memset(out, 0, sizeof *out);
    size_t w = 1 + d->nvalues, n = 0;
    for (size_t r = 0; r < json_array_size(d->rows); r++)
        n += json_array_size(json_object_get(json_array_get(d->rows, r), "patterns"));
    out->width = w;
    if (n == 0) return true;
    out->cells = calloc(n * w, sizeof *out->cells);
    out->priority = calloc(n, sizeof *out->priority);
    out->order = calloc(n, sizeof *out->order);
    if (out->cells == NULL || out->priority == NULL || out->order == NULL) {
        kdim_rows_free(out);
        return false;
    }
    for (size_t r = 0; r < json_array_size(d->rows); r++) {
        const json_t *row = json_array_get(d->rows, r);
        const json_t *pats = json_object_get(row, "patterns"),
                     *vals = json_object_get(row, "values");
        for (size_t k = 0; k < json_array_size(pats); k++) {
            size_t i = out->nrows++;
            out->cells[i * w] = strdup(json_string_value(json_array_get(pats, k)));
            for (size_t v = 0; v < d->nvalues; v++) {
                const char *text = json_string_value(json_array_get(vals, v));
                out->cells[i * w + 1 + v] = text ? strdup(text) : NULL;
            }
            out->priority[i] = (double)json_integer_value(json_object_get(row, "priority"));
            out->order[i] = (int64_t)r;
        }
    }
    return true;
}

void kdim_rows_free(kdim_rows *r)
{
    for (size_t i = 0; r->cells && i < r->nrows * r->width; i++) free(r->cells[i]);
    free(r->cells);
    free(r->priority);
    free(r->order);
    memset(r, 0, sizeof *r);
}

static void sql_cell(kbuf *out, const char *s)
{
    if (s == NULL) {
        kbuf_puts(out, "CAST(NULL AS VARCHAR)");
        return;
    }
    kbuf_puts(out, "CAST(");
    ksql_string(out, s);
    kbuf_puts(out, " AS VARCHAR)");
}

/* The column list "__karet_k, __karet_v0.., __karet_p, __karet_o". */
static void dim_columns(kbuf *out, const kdimension *d, bool lower_key)
{
    kbuf_puts(out, lower_key ? "lower(__karet_k) AS __karet_k" : "__karet_k");
    for (size_t v = 0; v < d->nvalues; v++) kbuf_printf(out, ", __karet_v%zu", v);
    kbuf_puts(out, ", __karet_p, __karet_o");
}

void kcompile_dimension(const kdimension *d, const kdim_rows *rows, kbuf *out)
{
    size_t w = 1 + d->nvalues;
    kexpr_dim_relation(out, d);
    kbuf_puts(out, " AS (SELECT ");
    dim_columns(out, d, d->case_insensitive);
    kbuf_puts(out, " FROM ");
    if (rows == NULL || rows->nrows == 0) {
        kbuf_puts(out, "(SELECT CAST(NULL AS VARCHAR) AS __karet_k");
        for (size_t v = 0; v < d->nvalues; v++)
            kbuf_printf(out, ", CAST(NULL AS VARCHAR) AS __karet_v%zu", v);
        kbuf_puts(out, ", CAST(NULL AS DOUBLE) AS __karet_p, CAST(NULL AS BIGINT) AS __karet_o "
                       "WHERE false))");
        return;
    }
    kbuf_puts(out, "(VALUES ");
    for (size_t r = 0; r < rows->nrows; r++) {
        kbuf_puts(out, r ? ", (" : "(");
        for (size_t c = 0; c < w; c++) {
            sql_cell(out, rows->cells[r * w + c]);
            kbuf_puts(out, ", ");
        }
        ksql_double(out, rows->priority[r]);
        kbuf_printf(out, ", CAST(%lld AS BIGINT))",
                    (long long)(rows->order ? rows->order[r] : (int64_t)r));
    }
    kbuf_puts(out, ") AS __karet_t(");
    dim_columns(out, d, false);
    kbuf_puts(out, "))");
}

/* CASE WHEN <broken> THEN '<message>' END, for each assertion of a column
 * of relation `rel`. */
static void checks(kbuf *out, const kcolumn *col, const char *rel, const char *where)
{
    kbuf id = {0}, msg = {0};
    ksql_ident(&id, rel);
    kbuf_putc(&id, '.');
    ksql_ident(&id, col->name);
    if (col->not_null) {
        kbuf_printf(&msg, "%s column \"%s\" is null (not_null)", where, col->name);
        kbuf_printf(out, ", CASE WHEN %s IS NULL THEN ", kbuf_cstr(&id));
        ksql_string(out, kbuf_cstr(&msg));
        kbuf_puts(out, " END");
    }
    for (int i = 0; i < 2; i++) {
        if (!(i ? col->has_max : col->has_min)) continue;
        double limit = i ? col->max : col->min;
        char text[TL_DOUBLE_TEXT_SIZE];
        tl_double_text(limit, text, sizeof text);
        kbuf_truncate(&msg, 0);
        kbuf_printf(&msg, "%s column \"%s\" = ", where, col->name);
        kbuf_printf(out, ", CASE WHEN CAST(%s AS DOUBLE) %s ", kbuf_cstr(&id), i ? ">" : "<");
        ksql_double(out, limit);
        kbuf_puts(out, " THEN ");
        ksql_string(out, kbuf_cstr(&msg));
        kbuf_printf(out, " || CAST(%s AS VARCHAR) || ", kbuf_cstr(&id));
        kbuf_truncate(&msg, 0);
        kbuf_printf(&msg, " is %s %s %s", i ? "above" : "below", i ? "max" : "min", text);
        ksql_string(out, kbuf_cstr(&msg));
        kbuf_puts(out, " END");
    }
    kbuf_free(&id);
    kbuf_free(&msg);
}

static bool has_checks(const kcolumn *cols, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cols[i].not_null || cols[i].has_min || cols[i].has_max) return true;
    return false;
}

static void compile_expr(const kconfig *c, const kscope *scope, const json_t *e, bool *dims_used,
                         ktype *type, kbuf *out)
{
    kexpr_ctx x = {.config = c, .scope = scope, .dims_used = dims_used};
    *type = kexpr_compile(&x, e, out);
}

void kcompile_mapping(const kconfig *c, const kmapping *m, bool *dims_used, kbuf *out)
{
    const ksource *s = m->source;
    const ktable *t = m->table;
    kcolumn *outs = calloc(m->ncolumns + 1, sizeof *outs);
    /* The inner query reads the file's rows as __karet_s; the outer one its
     * result as __karet_o. */
    kscope src = {s->columns, s->ncolumns, "source", "__karet_s"},
           tab = {outs, outs ? kmapping_outputs(m, outs) : 0, "output", "__karet_o"};
    kbuf_printf(out,
                "SELECT CAST(%zu AS INTEGER) AS \"" KARET_COL_MAPPING
                "\", \"__karet_o\".\"" KARET_COL_ROW "\"",
                m->index);
    for (size_t i = 0; i < t->ncolumns; i++) {
        kbuf_puts(out, ", \"__karet_o\".");
        ksql_ident(out, t->columns[i].name);
    }
    char where[400];
    if (has_checks(t->columns, t->ncolumns) || has_checks(s->columns, s->ncolumns)) {
        kbuf_puts(out, ", nullif(concat_ws('; ', nullif(\"__karet_o\".\"__karet_sviol\", '')");
        snprintf(where, sizeof where, "table \"%s\":", t->id);
        for (size_t i = 0; i < t->ncolumns; i++) checks(out, &t->columns[i], "__karet_o", where);
        kbuf_puts(out, "), '')");
    } else { /* nothing to check: not a string function per row for nothing */
        kbuf_puts(out, ", CAST(NULL AS VARCHAR)");
    }
    kbuf_puts(out,
              " AS \"" KARET_COL_VIOLATION "\" FROM (SELECT \"__karet_s\".\"" KARET_COL_ROW "\"");
    for (size_t i = 0; i < t->ncolumns; i++) {
        const kcolumn *col = &t->columns[i];
        const kmapcol *mc = NULL;
        for (size_t j = 0; j < m->ncolumns; j++)
            if (m->columns[j].table_column == (int)i) mc = &m->columns[j];
        kbuf_puts(out, ", ");
        if (mc) {
            kbuf e = {0};
            ktype type;
            compile_expr(c, &src, mc->expr, dims_used, &type, &e);
            kexpr_convert(out, kbuf_cstr(&e), type, col->type);
            kbuf_free(&e);
        } else {
            kbuf_printf(out, "CAST(NULL AS %s)", ktype_sql(col->type));
        }
        kbuf_puts(out, " AS ");
        ksql_ident(out, col->name);
    }
    kbuf_puts(out, ", ");
    if (has_checks(s->columns, s->ncolumns)) {
        snprintf(where, sizeof where, "source \"%s\":", s->id);
        kbuf_puts(out, "concat_ws('; '");
        for (size_t i = 0; i < s->ncolumns; i++) checks(out, &s->columns[i], "__karet_s", where);
        kbuf_puts(out, ")");
    } else {
        kbuf_puts(out, "CAST(NULL AS VARCHAR)");
    }
    kbuf_puts(out, " AS \"__karet_sviol\" FROM \"" KARET_SRC "\" AS \"__karet_s\"");
    if (s->record_filter) {
        ktype type;
        kbuf_puts(out, " WHERE ");
        compile_expr(c, &src, s->record_filter, dims_used, &type, out);
    }
    kbuf_puts(out, ") AS \"__karet_o\"");
    if (m->where) {
        ktype type;
        kbuf_puts(out, " WHERE ");
        compile_expr(c, &tab, m->where, dims_used, &type, out);
    }
    free(outs);
}

bool kcompile_table(const kconfig *c, const ktable *t, const ksource *s, const kdim_rows *rows,
                    bool ordered, kbuf *out)
{
    bool *used = calloc(c->ndims ? c->ndims : 1, sizeof *used);
    kbuf body = {0};
    size_t n = 0;
    if (used == NULL) {
        out->oom = true;
        return false;
    }
    for (size_t i = 0; i < c->nmappings; i++) {
        const kmapping *m = &c->mappings[i];
        if (m->table != t || m->source != s) continue;
        kbuf_puts(&body, n++ ? " UNION ALL (" : "(");
        kcompile_mapping(c, m, used, &body);
        kbuf_puts(&body, ")");
    }
    if (n) {
        bool first = true;
        for (size_t i = 0; i < c->ndims; i++) {
            if (!used[i]) continue;
            kbuf_puts(out, first ? "WITH " : ", ");
            first = false;
            kcompile_dimension(&c->dims[i], &rows[i], out);
        }
        kbuf_puts(out, first ? "" : " ");
        kbuf_printf(out, "SELECT * FROM (%s)", kbuf_cstr(&body));
        /* A union or a dimension's join has no order to expect: sorted. */
        if (ordered || n > 1 || !first)
            kbuf_puts(out, " ORDER BY \"" KARET_COL_MAPPING "\", \"" KARET_COL_ROW "\"");
    }
    kbuf_free(&body);
    free(used);
    return n > 0;
}
