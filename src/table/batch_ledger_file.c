/* The batch ledger's Avro file (see batch_ledger_file.h). */
#include "table/batch_ledger_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/avro/avro_binary.h"
#include "formats/avro/avro_file.h"

#define META_LINEAGES "timelake.lineages"

static const char ledger_schema[] =
    "{\"type\":\"record\",\"name\":\"batch_ledger_entry\",\"fields\":["
    "{\"name\":\"batch_id\",\"type\":\"string\"},"
    "{\"name\":\"committed_ms\",\"type\":\"long\"},"
    "{\"name\":\"lineage\",\"type\":[\"null\",\"long\"],\"default\":null}]}";

void tl_ledger_entries_free(tl_ledger_entry *e, size_t n)
{
    for (size_t i = 0; e && i < n; i++) free(e[i].batch_id);
    free(e);
}

void tl_ledger_free(tl_ledger *l)
{
    free(l->url);
    tl_ledger_entries_free(l->entries, l->n);
    free(l->lineages);
    memset(l, 0, sizeof *l);
}

/* Untagged entries first among those of one id. */
static int by_id_and_lineage(const void *a, const void *b)
{
    const tl_ledger_entry *x = a, *y = b;
    int c = strcmp(x->batch_id, y->batch_id);
    if (c != 0) return c;
    if (x->tagged != y->tagged) return x->tagged ? 1 : -1;
    return x->lineage < y->lineage ? -1 : x->lineage > y->lineage;
}

size_t tl_ledger_sort_unique(tl_ledger_entry *e, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!e[i].tagged) e[i].lineage = 0; /* one key for untagged entries */
    qsort(e, n, sizeof *e, by_id_and_lineage);
    size_t m = 1;
    for (size_t i = 1; i < n; i++) {
        if (by_id_and_lineage(&e[i], &e[m - 1]) == 0) {
            if (e[i].committed_ms > e[m - 1].committed_ms)
                e[m - 1].committed_ms = e[i].committed_ms;
            free(e[i].batch_id);
        } else {
            e[m++] = e[i];
        }
    }
    return m;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

size_t tl_ledger_sort_lineages(int64_t *ids, size_t n)
{
    if (n == 0) return 0;
    qsort(ids, n, sizeof *ids, by_value);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (ids[i] != ids[m - 1]) ids[m++] = ids[i];
    return m;
}

static int by_batch_id(const void *a, const void *b)
{
    return strcmp(((const tl_ledger_entry *)a)->batch_id, ((const tl_ledger_entry *)b)->batch_id);
}

void tl_ledger_find(const tl_ledger *l, const char *batch_id, const tl_ledger_entry **first,
                    size_t *count)
{
    tl_ledger_entry key = {.batch_id = (char *)batch_id};
    *first = NULL;
    *count = 0;
    if (l->n == 0) return;
    const tl_ledger_entry *hit = bsearch(&key, l->entries, l->n, sizeof key, by_batch_id);
    if (hit == NULL) return;
    const tl_ledger_entry *lo = hit, *hi = hit + 1, *end = l->entries + l->n;
    while (lo > l->entries && strcmp(lo[-1].batch_id, batch_id) == 0) lo--;
    while (hi < end && strcmp(hi->batch_id, batch_id) == 0) hi++;
    *first = lo;
    *count = (size_t)(hi - lo);
}

bool tl_ledger_has_lineage(const tl_ledger *l, int64_t root)
{
    return l->n_lineages && bsearch(&root, l->lineages, l->n_lineages, sizeof root, by_value);
}

/* ---- Reading ---- */

static tl_status entry_record(const tl_avro_value *rec, void *elem, tl_error *err)
{
    tl_ledger_entry *e = elem;
    const uint8_t *id;
    size_t len;
    TL_TRY(tl_avro_get_bytes(rec, -1, "batch_id", NULL, &id, &len, err));
    TL_TRY(tl_avro_get_long(rec, -1, "committed_ms", NULL, &e->committed_ms, err));
    TL_TRY(tl_avro_get_long(rec, -1, "lineage", &e->tagged, &e->lineage, err));
    e->batch_id = strndup((const char *)id, len);
    return e->batch_id ? TL_OK : tl_error_nomem(err);
}

/* Parses timelake.lineages ("" for none) into l. */
static tl_status parse_lineages(const char *text, tl_ledger *l, tl_error *err)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++) cap += *p == ',';
    l->lineages = malloc(cap * sizeof *l->lineages);
    if (l->lineages == NULL) return tl_error_nomem(err);
    l->lined = true;
    for (const char *p = text; *p;) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || (*end != ',' && *end != '\0') || l->n_lineages == cap)
            return tl_error_set(err, TL_ERR_INVALID, "bad %s \"%s\"", META_LINEAGES, text);
        l->lineages[l->n_lineages++] = v;
        p = *end ? end + 1 : end;
    }
    l->n_lineages = tl_ledger_sort_lineages(l->lineages, l->n_lineages);
    return TL_OK;
}

static tl_status read_lineages(const uint8_t *data, size_t len, tl_ledger *l, tl_error *err)
{
    tl_avro_reader *r;
    TL_TRY(tl_avro_reader_open(data, len, &r, err));
    size_t n;
    const uint8_t *v = tl_avro_reader_meta(r, META_LINEAGES, &n);
    tl_status st = v ? parse_lineages((const char *)v, l, err) : TL_OK;
    tl_avro_reader_free(r);
    return st;
}

tl_status tl_ledger_decode(const uint8_t *data, size_t len, tl_ledger *out, tl_error *err)
{
    void *items = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    tl_status st = read_lineages(data, len, out, err);
    if (st == TL_OK)
        st = tl_avro_read_records(data, len, sizeof(tl_ledger_entry), entry_record, "batch id",
                                  &items, &n, err);
    if (st != TL_OK) {
        tl_ledger_entries_free(items, n);
        tl_ledger_free(out);
        return st;
    }
    out->entries = items;
    out->n = tl_ledger_sort_unique(items, n); /* written sorted; not trusted to be */
    return TL_OK;
}

/* ---- Writing ---- */

static char *lineages_text(const tl_ledger *l)
{
    size_t cap = l->n_lineages * 21 + 1;
    char *text = malloc(cap), *p = text;
    if (text == NULL) return NULL;
    *p = '\0';
    for (size_t i = 0; i < l->n_lineages; i++)
        p += snprintf(p, cap - (size_t)(p - text), "%s%lld", i ? "," : "",
                      (long long)l->lineages[i]);
    return text;
}

static int write_entry(tl_buf *b, const tl_ledger_entry *e)
{
    int rc = tl_avro_write_string(b, e->batch_id);
    rc |= tl_avro_write_long(b, e->committed_ms);
    rc |= tl_avro_write_long(b, e->tagged ? 1 : 0); /* the union's branch */
    if (e->tagged) rc |= tl_avro_write_long(b, e->lineage);
    return rc;
}

tl_status tl_ledger_encode(const tl_ledger *l, tl_buf *out, tl_error *err)
{
    char count[24];
    snprintf(count, sizeof count, "%zu", l->n);
    char *lineages = lineages_text(l);
    if (lineages == NULL) return tl_error_nomem(err);
    const char *meta[] = {"timelake.batch-count",
                          count,
                          "timelake.min-batch-id",
                          l->n ? l->entries[0].batch_id : "",
                          "timelake.max-batch-id",
                          l->n ? l->entries[l->n - 1].batch_id : "",
                          META_LINEAGES,
                          lineages,
                          NULL};
    tl_avro_schema *schema;
    tl_status st = tl_avro_schema_parse(ledger_schema, strlen(ledger_schema), &schema, err);
    if (st != TL_OK) {
        free(lineages);
        return st;
    }
    tl_avro_writer_options opts = {.codec = TL_AVRO_CODEC_DEFLATE};
    tl_avro_writer w;
    st = tl_avro_writer_begin(&w, schema, meta, &opts, out, err);
    for (size_t i = 0; st == TL_OK && i < l->n; i++) {
        st = write_entry(tl_avro_writer_block(&w), &l->entries[i]) == 0
                 ? tl_avro_writer_end_datum(&w, err)
                 : tl_error_nomem(err);
        if (st != TL_OK) tl_avro_writer_discard(&w);
    }
    if (st == TL_OK) st = tl_avro_writer_finish(&w, err);
    tl_avro_schema_free(schema);
    free(lineages);
    return st;
}
