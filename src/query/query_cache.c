#include "query/query_cache.h"

#include <stdlib.h>
#include <string.h>

static tl_query_cached *find(tl_query_engine *e, const char *table, tl_error *err)
{
    for (size_t i = 0; i < e->n_cached; i++)
        if (strcmp(e->cached[i].table, table) == 0) return &e->cached[i];
    tl_query_cached *c = realloc(e->cached, (e->n_cached + 1) * sizeof *c);
    if (c == NULL) {
        tl_error_nomem(err);
        return NULL;
    }
    e->cached = c;
    c = &c[e->n_cached];
    memset(c, 0, sizeof *c);
    c->table = strdup(table);
    if (c->table == NULL) {
        tl_error_nomem(err);
        return NULL;
    }
    e->n_cached++;
    return c;
}

tl_status tl_query_live_files(tl_query_engine *e, const tl_table *t, const tl_live_files **out,
                              tl_error *err)
{
    tl_query_cached *c = find(e, t->name.full, err);
    if (c == NULL) return TL_ERR_NOMEM;
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    const char *key = s && s->manifest_list ? s->manifest_list : "";
    if (c->manifest_list && strcmp(c->manifest_list, key) == 0) {
        *out = &c->lf;
        return TL_OK;
    }
    tl_live_files lf;
    if (tl_live_files_read(t, NULL, &lf, err) != TL_OK)
        return tl_error_prefix(err, "table %s cannot be read", t->name.full);
    char *copy = strdup(key);
    if (copy == NULL) {
        tl_live_files_free(&lf);
        return tl_error_nomem(err);
    }
    if (c->manifest_list) tl_live_files_free(&c->lf);
    free(c->manifest_list);
    c->manifest_list = copy;
    c->lf = lf;
    *out = &c->lf;
    return TL_OK;
}

tl_status tl_query_register(tl_query_engine *e, const tl_table *t, const char *body, tl_error *err)
{
    tl_query_cached *c = find(e, t->name.full, err);
    if (c == NULL) return TL_ERR_NOMEM;
    if (c->view && strcmp(c->view, body) == 0) return TL_OK;
    free(c->view);
    c->view = NULL;
    char *ns = tl_sql_ident(t->name.namespace_), *tb = tl_sql_ident(t->name.table);
    char *ddl = ns && tb ? tl_strdup_printf("CREATE SCHEMA IF NOT EXISTS %s; CREATE OR REPLACE "
                                            "VIEW %s.%s AS %s",
                                            ns, ns, tb, body)
                         : NULL;
    tl_status st = ddl ? tl_query_exec(e, ddl, err) : tl_error_nomem(err);
    if (st == TL_OK && (c->view = strdup(body)) == NULL) st = tl_error_nomem(err);
    free(ns);
    free(tb);
    free(ddl);
    return st;
}

tl_status tl_query_use_namespace(tl_query_engine *e, const char *ns, tl_error *err)
{
    if (e->search_path && strcmp(e->search_path, ns) == 0) return TL_OK;
    free(e->search_path);
    e->search_path = NULL;
    char *id = tl_sql_ident(ns);
    char *lit = NULL, *sql = NULL;
    if (id) lit = tl_sql_literal(id);
    if (lit)
        sql = tl_strdup_printf("CREATE SCHEMA IF NOT EXISTS %s; SET search_path = %s", id, lit);
    tl_status st = sql ? tl_query_exec(e, sql, err) : tl_error_nomem(err);
    if (st == TL_OK && (e->search_path = strdup(ns)) == NULL) st = tl_error_nomem(err);
    free(id);
    free(lit);
    free(sql);
    return st;
}

void tl_query_cache_free(tl_query_engine *e)
{
    for (size_t i = 0; i < e->n_cached; i++) {
        tl_query_cached *c = &e->cached[i];
        if (c->manifest_list) tl_live_files_free(&c->lf);
        free(c->manifest_list);
        free(c->view);
        free(c->table);
    }
    free(e->cached);
    free(e->search_path);
    e->cached = NULL;
    e->n_cached = 0;
    e->search_path = NULL;
}
