/* Row-group pruning from Parquet statistics against a real table's contract:
 * time ranges (inclusive, in the column's unit), series-key lists, several
 * references to one table (any may want a row group), and row groups
 * without statistics (always kept). */
#include <stdio.h>
#include <stdlib.h>

#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_writer.h"
#include "query/row_group_prune.h"
#include "table/table_internal.h"
#include "test_arrow_helpers.h"
#include "test_table_helpers.h"

enum { GROUPS = 10, GROUP = 100 };
static const int64_t T0 = 1767225600000000; /* 2026-01-01, microseconds */

/* Row group g: times T0 + (g * GROUP + j) seconds, host "h<g>". */
static void write_file(const tl_table *t, tl_buf *out)
{
    tl_error err;
    struct ArrowSchema schema;
    struct ArrowArray batch;
    enum { N = GROUPS * GROUP };
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 2, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], "tsu:UTC", "time", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[1], "u", "host", 0, 0, &err), &err);
    static int64_t times[N];
    static char names[N][8];
    static const char *hosts[N];
    for (int i = 0; i < N; i++) {
        times[i] = T0 + (int64_t)i * 1000000;
        snprintf(names[i], sizeof names[i], "h%d", i / GROUP);
        hosts[i] = names[i];
    }
    tbatch_time_key(&batch, times, hosts, N);
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int32_t ids[2] = {-1, -1};
    for (size_t i = 0; i < s->n_fields; i++) {
        if (strcmp(s->fields[i].name, "time") == 0) ids[0] = s->fields[i].id;
        if (strcmp(s->fields[i].name, "host") == 0) ids[1] = s->fields[i].id;
    }
    tl_parquet_write_options o = {
        .codec = TL_PARQUET_UNCOMPRESSED, .row_group_rows = GROUP, .field_ids = ids, .threads = 1};
    tl_parquet_writer *w = NULL;
    CHECK_OK(tl_parquet_writer_open(&schema, &o, &w, &err), &err);
    CHECK_OK(tl_parquet_writer_write(w, &batch, &err), &err);
    CHECK_OK(tl_parquet_writer_finish(w, out, NULL, &err), &err);
    tl_parquet_writer_free(w);
    tl_array_release(&batch);
    tl_schema_release(&schema);
}

static tl_table *make_table(tl_lake **lake)
{
    return ttable_create(lake, "prune-lake", "m.cpu", "host", "u", true, NULL);
}

/* Which row groups the filters keep, as a string of 0/1. */
static void kept(const tl_table *t, const tl_pq_file_meta *m, const tl_scan_filter *f, size_t n,
                 char *out)
{
    for (size_t g = 0; g < m->n_row_groups; g++)
        out[g] = tl_row_group_needed(t, m, g, f, n) ? '1' : '0';
    out[m->n_row_groups] = '\0';
}

static int64_t at(int g, int j)
{
    return T0 + ((int64_t)g * GROUP + j) * 1000000;
}

static void test_prune_by_time_and_key(void)
{
    tl_lake *lake = NULL;
    tl_table *t = make_table(&lake);
    tl_buf file = {0};
    write_file(t, &file);
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r = NULL;
    tl_error err;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    CHECK_INT(m->n_row_groups, GROUPS);
    char got[GROUPS + 1];

    tl_scan_filter none = {0};
    kept(t, m, &none, 1, got);
    CHECK_STR(got, "1111111111");
    kept(t, m, NULL, 0, got);
    CHECK_STR(got, "1111111111");

    /* Inclusive bounds: the last second of group 2 to the first of group 5. */
    tl_scan_filter time = {.has_lo = true, .lo = at(2, GROUP - 1), .has_hi = true, .hi = at(5, 0)};
    kept(t, m, &time, 1, got);
    CHECK_STR(got, "0011110000");
    tl_scan_filter after = {.has_lo = true, .lo = at(9, GROUP - 1) + 1};
    kept(t, m, &after, 1, got);
    CHECK_STR(got, "0000000000");
    tl_scan_filter before = {.has_hi = true, .hi = at(0, 0)};
    kept(t, m, &before, 1, got);
    CHECK_STR(got, "1000000000");

    char *keys[] = {"h7", "h3", "zz"};
    tl_scan_filter key = {.has_keys = true, .keys = keys, .n_keys = 3};
    kept(t, m, &key, 1, got);
    CHECK_STR(got, "0001000100");
    tl_scan_filter both = key;
    both.has_lo = true, both.lo = at(4, 0);
    kept(t, m, &both, 1, got);
    CHECK_STR(got, "0000000100");
    /* Two references: a row group either wants is kept. */
    tl_scan_filter two[2] = {both, time};
    kept(t, m, two, 2, got);
    CHECK_STR(got, "0011110100");
    /* A key that sorts between hosts "h1" and "h2" matches none. */
    char *between[] = {"h15"};
    tl_scan_filter k2 = {.has_keys = true, .keys = between, .n_keys = 1};
    kept(t, m, &k2, 1, got);
    CHECK_STR(got, "0000000000");

    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_prune_by_time_and_key))
