#include "query/sql_catalog.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "query/scan.h"
#include "query/sql_session.h"
#include "table/settings.h"
#include "table/table_internal.h"

#define CATALOG "timelake"

/* One view: its columns (name and SQL type) and how to fill its rows. */
typedef struct view {
    const char *name;
    const char *const *columns; /* "name TYPE", NULL-terminated */
    tl_status (*rows)(const tl_sql_scope *s, tl_buf *values, size_t *n, tl_error *err);
} view;

/* Appends one row of SQL values (each already a literal or NULL). */
static int add_row(tl_buf *b, size_t *n, const char *const *cells, size_t n_cells)
{
    int rc = tl_buf_append_str(b, *n ? ", (" : "(");
    for (size_t i = 0; i < n_cells; i++)
        rc |= tl_buf_printf(b, "%s%s", i ? ", " : "", cells[i] ? cells[i] : "NULL");
    (*n)++;
    return rc | tl_buf_append_str(b, ")");
}

/* The lake's tables the scope sees, as "ns.table" (NULL-terminated). */
static tl_status scope_tables(const tl_sql_scope *s, char ***out, tl_error *err)
{
    TL_TRY(tl_lake_list_tables(s->lake, out, err));
    if (!s->only_namespace) return TL_OK;
    size_t keep = 0, ns_len = strlen(s->ns);
    for (char **n = *out; *n; n++) {
        if (strncmp(*n, s->ns, ns_len) == 0 && (*n)[ns_len] == '.')
            (*out)[keep++] = *n;
        else
            free(*n);
    }
    (*out)[keep] = NULL;
    return TL_OK;
}

/* In the reference's order (it also lists routines and parameters). */
static const char *const internal_views[] = {"tables",      "views",    "columns",
                                             "df_settings", "schemata", NULL};

static tl_status table_rows(const tl_sql_scope *s, tl_buf *b, size_t *n, tl_error *err)
{
    char **names = NULL;
    TL_TRY(scope_tables(s, &names, err));
    int rc = 0;
    for (char **name = names; rc == 0 && *name; name++) {
        char *dot = strchr(*name, '.');
        *dot = 0;
        char *ns = tl_sql_literal(*name), *t = tl_sql_literal(dot + 1);
        const char *cells[4] = {"'" CATALOG "'", ns, t, "'BASE TABLE'"};
        rc = ns && t ? add_row(b, n, cells, 4) : -1;
        free(ns);
        free(t);
    }
    for (size_t i = 0; rc == 0 && internal_views[i]; i++) {
        char *t = tl_sql_literal(internal_views[i]);
        const char *cells[4] = {"'" CATALOG "'", "'information_schema'", t, "'VIEW'"};
        rc = t ? add_row(b, n, cells, 4) : -1;
        free(t);
    }
    tl_strings_free(names);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

/* numeric_precision, numeric_precision_radix, numeric_scale and
 * datetime_precision of a column, as SQL values. */
static void numeric_cells(const tl_ice_type *t, char cells[4][16])
{
    for (int i = 0; i < 4; i++) snprintf(cells[i], sizeof cells[i], "NULL");
    int bits = t->id == TL_ICE_INT      ? 32
               : t->id == TL_ICE_LONG   ? 64
               : t->id == TL_ICE_FLOAT  ? 24
               : t->id == TL_ICE_DOUBLE ? 53
                                        : 0;
    if (bits) {
        snprintf(cells[0], sizeof cells[0], "%d", bits);
        snprintf(cells[1], sizeof cells[1], "2");
        if (t->id == TL_ICE_INT || t->id == TL_ICE_LONG) snprintf(cells[2], sizeof cells[2], "0");
    } else if (t->id == TL_ICE_DECIMAL) {
        snprintf(cells[0], sizeof cells[0], "%d", (int)t->precision);
        snprintf(cells[1], sizeof cells[1], "10");
        snprintf(cells[2], sizeof cells[2], "%d", (int)t->scale);
    }
    if (t->id == TL_ICE_TIMESTAMP || t->id == TL_ICE_TIMESTAMPTZ || t->id == TL_ICE_TIME)
        snprintf(cells[3], sizeof cells[3], "6");
    if (t->id == TL_ICE_TIMESTAMP_NS || t->id == TL_ICE_TIMESTAMPTZ_NS)
        snprintf(cells[3], sizeof cells[3], "9");
    if (t->id == TL_ICE_DATE) snprintf(cells[3], sizeof cells[3], "0");
}

static int column_rows(const tl_table *t, tl_buf *b, size_t *n)
{
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(t->md);
    char *ns = tl_sql_literal(t->name.namespace_), *name = tl_sql_literal(t->name.table);
    int rc = ns && name ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < schema->n_fields; i++) {
        const tl_ice_field *f = &schema->fields[i];
        char buf[TL_SCAN_DUCK_TYPE_MAX], pos[24], num[4][16];
        const char *type = tl_scan_duck_type(f, buf, sizeof buf);
        numeric_cells(&f->type, num);
        snprintf(pos, sizeof pos, "%zu", i);
        char *col = tl_sql_literal(f->name), *ty = tl_sql_literal(type);
        const char *cells[15] = {"'" CATALOG "'",
                                 ns,
                                 name,
                                 col,
                                 pos,
                                 NULL,
                                 f->required ? "'NO'" : "'YES'",
                                 ty,
                                 NULL,
                                 NULL,
                                 num[0],
                                 num[1],
                                 num[2],
                                 num[3],
                                 NULL};
        rc = col && ty ? add_row(b, n, cells, 15) : -1;
        free(col);
        free(ty);
    }
    free(ns);
    free(name);
    return rc;
}

static tl_status columns_rows(const tl_sql_scope *s, tl_buf *b, size_t *n, tl_error *err)
{
    char **names = NULL;
    TL_TRY(scope_tables(s, &names, err));
    tl_status st = TL_OK;
    for (char **name = names; st == TL_OK && *name; name++) {
        tl_qname qn;
        tl_table *t = NULL;
        st = tl_qname_parse(*name, "default", &qn, err);
        if (st == TL_OK) st = tl_table_load(s->lake, &qn, 0, &t, err);
        if (st == TL_ERR_NOT_FOUND) { /* dropped meanwhile */
            st = TL_OK;
            continue;
        }
        if (st == TL_OK && column_rows(t, b, n) != 0) st = tl_error_nomem(err);
        tl_table_close(t);
    }
    tl_strings_free(names);
    return st;
}

static tl_status schemata_rows(const tl_sql_scope *s, tl_buf *b, size_t *n, tl_error *err)
{
    char **names = NULL;
    TL_TRY(scope_tables(s, &names, err));
    tl_strlist seen = {0};
    int rc = 0;
    for (char **name = names; rc == 0 && *name; name++) {
        char *dot = strchr(*name, '.');
        *dot = 0;
        if (tl_strlist_contains(&seen, *name)) continue;
        char *ns = tl_sql_literal(*name);
        const char *cells[7] = {"'" CATALOG "'", ns};
        rc = ns && tl_strlist_push(&seen, *name) == 0 ? add_row(b, n, cells, 7) : -1;
        free(ns);
    }
    tl_strlist_free(&seen);
    tl_strings_free(names);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

/* The lake has no views: information_schema.views is there, empty. */
static tl_status no_rows(const tl_sql_scope *s, tl_buf *b, size_t *n, tl_error *err)
{
    (void)s, (void)b, (void)n, (void)err;
    return TL_OK;
}

static tl_status settings_rows(const tl_sql_scope *s, tl_buf *b, size_t *n, tl_error *err)
{
    const tl_setting_info *info;
    int rc = 0;
    for (size_t i = 0; rc == 0 && (info = tl_setting_at(i)) != NULL; i++) {
        if (!strstr(info->levels, "session")) continue;
        char *shown = tl_sql_setting_show_name(info->name);
        const char *v = tl_setting_value(NULL, s->settings, info->name);
        char *name = shown ? tl_sql_literal(shown) : NULL;
        char *value = v ? tl_sql_literal(v) : NULL, *doc = tl_sql_literal(info->description);
        const char *cells[3] = {name, value, doc};
        rc = name && doc && (value || !v) ? add_row(b, n, cells, 3) : -1;
        free(shown);
        free(name);
        free(value);
        free(doc);
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

static const char *const tables_cols[] = {"table_catalog VARCHAR", "table_schema VARCHAR",
                                          "table_name VARCHAR", "table_type VARCHAR", NULL};
static const char *const columns_cols[] = {"table_catalog VARCHAR",
                                           "table_schema VARCHAR",
                                           "table_name VARCHAR",
                                           "column_name VARCHAR",
                                           "ordinal_position BIGINT",
                                           "column_default VARCHAR",
                                           "is_nullable VARCHAR",
                                           "data_type VARCHAR",
                                           "character_maximum_length BIGINT",
                                           "character_octet_length BIGINT",
                                           "numeric_precision BIGINT",
                                           "numeric_precision_radix BIGINT",
                                           "numeric_scale BIGINT",
                                           "datetime_precision BIGINT",
                                           "interval_type VARCHAR",
                                           NULL};
static const char *const schemata_cols[] = {"catalog_name VARCHAR",
                                            "schema_name VARCHAR",
                                            "schema_owner VARCHAR",
                                            "default_character_set_catalog VARCHAR",
                                            "default_character_set_schema VARCHAR",
                                            "default_character_set_name VARCHAR",
                                            "sql_path VARCHAR",
                                            NULL};
static const char *const views_cols[] = {"table_catalog VARCHAR", "table_schema VARCHAR",
                                         "table_name VARCHAR", "definition VARCHAR", NULL};
static const char *const settings_cols[] = {"name VARCHAR", "value VARCHAR", "description VARCHAR",
                                            NULL};

static const view views[] = {
    {"tables", tables_cols, table_rows},           {"views", views_cols, no_rows},
    {"columns", columns_cols, columns_rows},       {"schemata", schemata_cols, schemata_rows},
    {"df_settings", settings_cols, settings_rows},
};

/* "SELECT CAST(c0 AS T0) AS name0, ... FROM (VALUES ...) v(c0, ...)", or
 * without rows "SELECT CAST(NULL AS T0) AS name0, ... WHERE false". */
static int select_of(const view *v, const tl_buf *values, size_t n, tl_buf *out)
{
    int rc = tl_buf_append_str(out, "SELECT ");
    size_t k = 0;
    for (; v->columns[k]; k++) {
        const char *sp = strchr(v->columns[k], ' ');
        char source[24] = "NULL";
        if (n) snprintf(source, sizeof source, "c%zu", k);
        rc |= tl_buf_printf(out, "%sCAST(%s AS%s) AS %.*s", k ? ", " : "", source, sp,
                            (int)(sp - v->columns[k]), v->columns[k]);
    }
    if (n == 0) return rc | tl_buf_append_str(out, " WHERE false");
    rc |= tl_buf_append_str(out, " FROM (VALUES ");
    rc |= tl_buf_append(out, values->data, values->len);
    rc |= tl_buf_append_str(out, ") AS v(");
    for (size_t i = 0; i < k; i++) rc |= tl_buf_printf(out, "%sc%zu", i ? ", " : "", i);
    return rc | tl_buf_append_str(out, ")");
}

tl_status tl_sql_catalog_view(const tl_sql_scope *s, const char *name, char **out, tl_error *err)
{
    *out = NULL;
    const view *v = NULL;
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        if (strcasecmp(views[i].name, name) == 0) v = &views[i];
    if (v == NULL)
        return tl_error_set(err, TL_ERR_NOT_FOUND,
                            "information_schema.%s does not exist: Timelake's information_schema "
                            "has tables, views, columns, schemata and df_settings",
                            name);
    tl_buf values = {0}, sql = {0};
    size_t n = 0;
    tl_status st = v->rows(s, &values, &n, err);
    if (st == TL_OK && (select_of(v, &values, n, &sql) != 0 || tl_buf_append_byte(&sql, 0) != 0))
        st = tl_error_nomem(err);
    tl_buf_free(&values);
    if (st == TL_OK) *out = (char *)tl_buf_detach(&sql, NULL);
    tl_buf_free(&sql);
    return st;
}
