/* INTERIM, until tl_table_attachment, tl_table_replace and expect_version
 * land (KARET-API §2, lib-tables): ktab over what the library has today. The
 * record is an object beside the warehouse's tables, put after the append
 * (not atomic with it: a run killed between the two reads its files again); a
 * replace is drop + create + append (readers may see the table empty or
 * missing meanwhile); there is no compare-and-swap (two runs at once may both
 * append); the dedup check is a SQL anti-join over the whole table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "table_io.h"

static void record_key(const ktab *k, char *out, size_t n)
{
    snprintf(out, n, "warehouse/.karet/%s.record.json", k->name);
}

static tl_status create(ktab *k, tl_error *err)
{
    struct ArrowSchema schema = {0};
    if (!ktable_arrow_schema(k->t, &schema)) return err->code = TL_ERR_NOMEM;
    const char *parts[2];
    for (size_t i = 0; i < k->t->npartitions; i++) parts[i] = k->t->partitions[i].spec;
    tl_table_options o = {.dedup = 0,
                          .ingest_time = 0,
                          .partition_by = k->t->npartitions ? parts : NULL,
                          .partition_by_len = k->t->npartitions};
    tl_status st = tl_lake_create_table(k->lake->warehouse, k->name, &schema, &o, &k->handle, err);
    schema.release(&schema);
    return st;
}

tl_status ktab_open(ktab *k, bool *created, tl_error *err)
{
    *created = false;
    tl_status st = tl_lake_open_table(k->lake->warehouse, k->name, &k->handle, err);
    if (st == TL_ERR_NOT_FOUND) {
        *created = true;
        st = create(k, err);
        if (st == TL_ERR_EXISTS)
            st = tl_lake_open_table(k->lake->warehouse, k->name, &k->handle, err);
    }
    return st;
}

tl_status ktab_recreate(ktab *k, tl_error *err)
{
    tl_table_close(k->handle);
    k->handle = NULL;
    tl_status st = tl_lake_drop_table(k->lake->warehouse, k->name, err);
    return st == TL_OK ? create(k, err) : st;
}

void ktab_close(ktab *k)
{
    tl_table_close(k->handle);
    k->handle = NULL;
}

tl_status ktab_record(ktab *k, json_t **out, tl_error *err)
{
    char key[512];
    record_key(k, key, sizeof key);
    void *data = NULL;
    size_t len = 0;
    *out = NULL;
    tl_status st = tl_lake_get_object(k->lake->objects, key, &data, &len, err);
    if (st == TL_ERR_NOT_FOUND) return TL_OK;
    if (st == TL_OK) {
        json_error_t je;
        *out = json_loadb(data, len, 0, &je);
    }
    tl_free(data);
    return st;
}

tl_status ktab_new_keys(ktab *k, struct ArrowArrayStream *in, struct ArrowArrayStream *out,
                        int64_t *dropped, tl_error *err)
{
    kbuf q = {0};
    kbuf_puts(&q, "SELECT i.* FROM __karet_in AS i WHERE NOT EXISTS (SELECT 1 FROM ");
    /* "<slug>"."<table id>", quoted: a slug may hold '-' */
    const char *dot = strchr(k->name, '.');
    char ns[256];
    snprintf(ns, sizeof ns, "%.*s", dot ? (int)(dot - k->name) : 0, k->name);
    ksql_ident(&q, ns);
    kbuf_putc(&q, '.');
    ksql_ident(&q, dot ? dot + 1 : k->name);
    kbuf_puts(&q, " AS x WHERE true");
    for (size_t i = 0; i < k->t->ndedup; i++) {
        const char *c = k->t->columns[k->t->dedup[i]].name;
        kbuf_puts(&q, " AND x.");
        ksql_ident(&q, c);
        kbuf_puts(&q, " IS NOT DISTINCT FROM i.");
        ksql_ident(&q, c);
    }
    kbuf_puts(&q, ")");
    tl_sql_input input = {"__karet_in", in};
    tl_sql_options o = {.inputs = &input, .inputs_len = 1};
    tl_status st = tl_lake_query(k->lake->warehouse, kbuf_cstr(&q), &o, out, NULL, err);
    kbuf_free(&q);
    *dropped = 0;
    return st;
}

tl_status ktab_commit(ktab *k, struct ArrowArrayStream *rows, bool replace, int64_t version,
                      const char *record, const char *const *summary, tl_append_result *out,
                      tl_error *err)
{
    (void)version, (void)summary;
    tl_status st = TL_OK;
    if (replace) st = ktab_recreate(k, err);
    tl_append_options ao = {.maintain = -1};
    if (st == TL_OK)
        st = tl_table_append(k->handle, rows, &ao, out, err);
    else
        rows->release(rows);
    char key[512];
    record_key(k, key, sizeof key);
    if (st == TL_OK) st = tl_lake_put_object(k->lake->objects, key, record, strlen(record), err);
    return st;
}
