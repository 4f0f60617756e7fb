/* ktab over the library: a table with the pipeline's columns and partition
 * keys, its record as an attachment committed with its rows, the dedup keys
 * it holds, and commits conditional on its version. */
#include "table_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "json_text.h"

/* The pipeline's columns and partition keys, for a new table or a reshaped one. */
typedef struct shape {
    struct ArrowSchema schema;
    const char *parts[2];
} shape;

static tl_status shape_of(const ktab *k, shape *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!ktable_arrow_schema(k->t, &out->schema)) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return err->code = TL_ERR_NOMEM;
    }
    for (size_t i = 0; i < k->t->npartitions && i < 2; i++)
        out->parts[i] = k->t->partitions[i].spec;
    return TL_OK;
}

static tl_status create(ktab *k, tl_error *err)
{
    shape sh;
    tl_status st = shape_of(k, &sh, err);
    if (st != TL_OK) return st;
    const char *props[] = {"karet.pipeline", k->slug, "karet.table", k->t->id, NULL};
    tl_table_options o = {.dedup = 0,
                          .ingest_time = 0,
                          .properties = props,
                          .partition_by = k->t->npartitions ? sh.parts : NULL,
                          .partition_by_len = k->t->npartitions};
    st = tl_lake_create_table(k->lake->warehouse, k->name, &sh.schema, &o, &k->handle, err);
    sh.schema.release(&sh.schema);
    return st;
}

tl_status ktab_open(ktab *k, bool *created, tl_error *err)
{
    *created = false;
    tl_status st = tl_lake_open_table(k->lake->warehouse, k->name, &k->handle, err);
    if (st != TL_ERR_NOT_FOUND) return st;
    st = create(k, err);
    *created = st == TL_OK;
    if (st == TL_ERR_EXISTS) /* another run created it first */
        st = tl_lake_open_table(k->lake->warehouse, k->name, &k->handle, err);
    return st;
}

void ktab_close(ktab *k)
{
    tl_table_close(k->handle);
    k->handle = NULL;
}

tl_status ktab_record(ktab *k, json_t **out, tl_error *err)
{
    void *data = NULL;
    size_t len = 0;
    *out = NULL;
    tl_status st = tl_table_attachment(k->handle, KARET_RECORD, &data, &len, err);
    if (st == TL_ERR_NOT_FOUND) return TL_OK;
    if (st == TL_OK) {
        json_error_t je;
        *out = kjson_loadb(data, len, 0, &je);
        /* A record that is not JSON makes a full run; want of memory must
         * not. */
        if (*out == NULL && json_error_code(&je) == json_error_out_of_memory) {
            st = TL_ERR_NOMEM;
            if (err) {
                err->code = st;
                snprintf(err->message, sizeof err->message,
                         "out of memory reading the table's Karet record");
            }
        }
    }
    tl_free(data);
    return st;
}

tl_status ktab_new_keys(ktab *k, struct ArrowArrayStream *in, struct ArrowArrayStream *out,
                        int64_t *dropped, tl_error *err)
{
    const char *keys[64];
    size_t n = k->t->ndedup < 64 ? k->t->ndedup : 64;
    for (size_t i = 0; i < n; i++) keys[i] = k->t->columns[k->t->dedup[i]].name;
    return tl_table_filter_new_keys(k->handle, keys, n, in, out, dropped, err);
}

tl_status ktab_commit(ktab *k, struct ArrowArrayStream *rows, kcommit kind, int64_t version,
                      const char *record, const char *const *summary, tl_append_result *out,
                      tl_error *err)
{
    tl_attachment att = {KARET_RECORD, record, strlen(record)};
    tl_append_options ao = {.maintain = -1,
                            .expect_version = version,
                            .summary = summary,
                            .attachments = &att,
                            .attachments_len = 1};
    if (kind == KCOMMIT_APPEND) return tl_table_append(k->handle, rows, &ao, out, err);
    if (kind == KCOMMIT_REPLACE) return tl_table_replace(k->handle, rows, &ao, out, err);
    shape sh;
    tl_status st = shape_of(k, &sh, err);
    if (st != TL_OK) {
        rows->release(rows);
        return st;
    }
    st = tl_table_replace_schema(k->handle, &sh.schema, k->t->npartitions ? sh.parts : NULL,
                                 k->t->npartitions, rows, &ao, out, err);
    sh.schema.release(&sh.schema);
    return st;
}
