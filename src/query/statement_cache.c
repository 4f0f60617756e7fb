#include "query/statement_cache.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "query/rows_function.h"

bool tl_statement_cache_off = false;

struct tl_statement_cache {
    struct cached_statement {
        char *key; /* rowset signature, a NUL, then the query's text */
        size_t key_len;
        uint64_t catalog; /* e->catalog_changes when prepared */
        unsigned runs;    /* executions handed out */
        duckdb_prepared_statement ps;
    } slots[TL_STATEMENT_CACHE_SIZE];
    size_t next; /* slot to replace next */
};

static void slot_clear(struct cached_statement *c)
{
    free(c->key);
    if (c->ps) duckdb_destroy_prepare(&c->ps);
    memset(c, 0, sizeof *c);
}

static tl_status make_key(const tl_query_engine *e, const char *query, tl_buf *key, tl_error *err)
{
    if (tl_rowsets_signature(e, key) != 0 || tl_buf_append_byte(key, 0) != 0 ||
        tl_buf_append(key, query, strlen(query)) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

tl_status tl_statement_get(tl_query_engine *e, const char *query, duckdb_prepared_statement *out,
                           tl_error *err)
{
    *out = NULL;
    if (tl_statement_cache_off) return TL_OK;
    if (e->statements == NULL && (e->statements = calloc(1, sizeof *e->statements)) == NULL)
        return tl_error_nomem(err);
    struct tl_statement_cache *sc = e->statements;
    tl_buf key = {0};
    tl_status st = make_key(e, query, &key, err);
    for (size_t i = 0; st == TL_OK && i < TL_STATEMENT_CACHE_SIZE; i++) {
        struct cached_statement *c = &sc->slots[i];
        if (c->key && (c->catalog != e->catalog_changes || c->runs >= TL_STATEMENT_RUNS_MAX))
            slot_clear(c);
        if (c->key && c->key_len == key.len && memcmp(c->key, key.data, key.len) == 0) {
            *out = c->ps;
            c->runs++;
            tl_buf_free(&key);
            return TL_OK;
        }
    }
    duckdb_prepared_statement ps = NULL;
    if (st == TL_OK && duckdb_prepare(e->conn, query, &ps) == DuckDBError) {
        duckdb_destroy_prepare(&ps);
        tl_buf_free(&key);
        return TL_OK;
    }
    if (st == TL_OK) {
        struct cached_statement *c = &sc->slots[sc->next];
        sc->next = (sc->next + 1) % TL_STATEMENT_CACHE_SIZE;
        slot_clear(c);
        c->key_len = key.len;
        c->key = (char *)tl_buf_detach(&key, NULL);
        c->catalog = e->catalog_changes;
        c->ps = *out = ps;
        c->runs = 1;
    }
    tl_buf_free(&key);
    return st;
}

void tl_statement_cache_free(tl_query_engine *e)
{
    if (e->statements == NULL) return;
    for (size_t i = 0; i < TL_STATEMENT_CACHE_SIZE; i++) slot_clear(&e->statements->slots[i]);
    free(e->statements);
    e->statements = NULL;
}
