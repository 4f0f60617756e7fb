#include "query/query_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tl_query_view_name(const tl_table *t)
{
    if (t->pinned_snapshot == 0) return strdup(t->name.table);
    return tl_strdup_printf("%s@%lld", t->name.table, (long long)t->pinned_snapshot);
}

/* The cache's key of t: "namespace.<view name>" and a suffix. */
static void key_of(const tl_table *t, const char *suffix, char *buf, size_t size)
{
    if (t->pinned_snapshot == 0)
        snprintf(buf, size, "%s%s", t->name.full, suffix);
    else
        snprintf(buf, size, "%s@%lld%s", t->name.full, (long long)t->pinned_snapshot, suffix);
}

#define KEY_SIZE (sizeof((tl_table *)0)->name.full + 40)

static tl_query_cached *find_as(tl_query_engine *e, const tl_table *t, const char *suffix,
                                tl_error *err)
{
    char table[KEY_SIZE];
    key_of(t, suffix, table, sizeof table);
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

static tl_query_cached *find(tl_query_engine *e, const tl_table *t, tl_error *err)
{
    return find_as(e, t, "", err);
}

tl_status tl_query_live_files(tl_query_engine *e, const tl_table *t, const tl_live_files **out,
                              tl_error *err)
{
    tl_query_cached *c = find(e, t, err);
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
    return tl_query_register_as(e, t, "", body, err);
}

tl_status tl_query_register_as(tl_query_engine *e, const tl_table *t, const char *suffix,
                               const char *body, tl_error *err)
{
    tl_query_cached *c = find_as(e, t, suffix, err);
    if (c == NULL) return TL_ERR_NOMEM;
    if (c->view && strcmp(c->view, body) == 0) return TL_OK;
    free(c->view);
    c->view = NULL;
    char *name = tl_query_view_name(t);
    char *view = name ? tl_strdup_printf("%s%s", name, suffix) : NULL;
    free(name);
    char *ns = tl_sql_ident(t->name.namespace_), *tb = view ? tl_sql_ident(view) : NULL;
    free(view);
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

static void cached_clear(tl_query_cached *c)
{
    if (c->manifest_list) tl_live_files_free(&c->lf);
    free(c->manifest_list);
    free(c->view);
    free(c->table);
}

void tl_query_forget(tl_query_engine *e, const tl_table *t)
{
    char key[KEY_SIZE];
    key_of(t, "", key, sizeof key);
    for (size_t i = 0; i < e->n_cached; i++) {
        tl_query_cached *c = &e->cached[i];
        if (strcmp(c->table, key) != 0) continue;
        char *view = tl_query_view_name(t);
        char *ns = tl_sql_ident(t->name.namespace_), *tb = view ? tl_sql_ident(view) : NULL;
        char *ddl = ns && tb ? tl_strdup_printf("DROP VIEW IF EXISTS %s.%s", ns, tb) : NULL;
        if (c->view && ddl)
            tl_query_exec(e, ddl, NULL); /* a failure leaves a view no name reaches */
        free(view);
        free(ns);
        free(tb);
        free(ddl);
        cached_clear(c);
        e->cached[i] = e->cached[--e->n_cached];
        return;
    }
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
    for (size_t i = 0; i < e->n_cached; i++) cached_clear(&e->cached[i]);
    free(e->cached);
    free(e->search_path);
    e->cached = NULL;
    e->n_cached = 0;
    e->search_path = NULL;
}
