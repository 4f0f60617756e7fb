/* The last-value index less the series whose newest row a commit removed
 * (retention): tl_lvi_filter keeps the rows its predicate keeps, and leaves
 * the parent's index in place when nothing goes. An index that is lost or
 * garbage is rebuilt from the data files, with a warning. */
#include <stdlib.h>

#include "formats/parquet/parquet_reader.h"
#include "iceberg/metadata.h"
#include "table/lvi.h"
#include "table/table_internal.h"
#include "test_table_helpers.h"

static struct ArrowSchema schema;

static bool newer_than(const tl_table *t, int64_t time_us, void *ctx)
{
    (void)t;
    return time_us > *(int64_t *)ctx;
}

static int64_t rows_of(const tl_buf *file)
{
    tl_parquet_source src;
    tl_parquet_reader *r = NULL;
    tl_error err;
    tl_parquet_source_from_memory(&src, file->data, file->len);
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    int64_t n = r ? tl_parquet_reader_num_rows(r) : -1;
    tl_parquet_reader_free(r);
    return n;
}

static void test_filter_drops_series_by_time(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "lvi-filter", "t", "device", "u", false, &schema);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    tl_error err;
    /* Newest rows: a at 100 s, b at 5000 s, c at 9000 s. */
    CHECK_OK(ttable_append_key(t, &schema, "a", 100, &o, &r, &err), &err);
    CHECK_OK(ttable_append_key(t, &schema, "b", 50, &o, &r, &err), &err);
    CHECK_OK(ttable_append_key(t, &schema, "b", 5000, &o, &r, &err), &err);
    CHECK_OK(ttable_append_key(t, &schema, "c", 9000, &o, &r, &err), &err);
    char *key = NULL;
    tl_buf file = {0};
    int64_t cutoff = 1714557600000000LL + 1000 * 1000000LL;
    CHECK_OK(tl_lvi_filter(t, newer_than, &cutoff, 42, &key, &file, &err), &err);
    CHECK(key != NULL && strstr(key, "/metadata/lvi-42-") != NULL);
    CHECK_INT(rows_of(&file), 2); /* b and c */
    free(key);
    tl_buf_free(&file);
    key = NULL;
    cutoff = 0; /* everything stays: the parent's index serves */
    CHECK_OK(tl_lvi_filter(t, newer_than, &cutoff, 43, &key, &file, &err), &err);
    CHECK(key == NULL && file.len == 0);
    tl_schema_release(&schema);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_lost_index_is_rebuilt(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "lvi-rebuild", "t", "device", "u", false, &schema);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    tl_error err;
    CHECK_OK(ttable_append_key(t, &schema, "a", 100, &o, &r, &err), &err);
    CHECK_OK(ttable_append_key(t, &schema, "b", 50, &o, &r, &err), &err);
    CHECK_OK(ttable_append_key(t, &schema, "a", 10, &o, &r, &err),
             &err); /* older: not a's newest */
    char warning[TL_ERROR_MESSAGE_MAX] = "";
    tl_rows index;
    bool found = false;
    CHECK_OK(tl_lvi_parent(t, &index, &found, warning, &err), &err);
    CHECK(found && warning[0] == 0);
    if (found) tl_rows_free(&index);
    /* Garbage in place of the index file. */
    const tl_ice_snapshot *snap = tl_ice_metadata_current_snapshot(t->md);
    const char *url = tl_ice_snapshot_summary(snap, "timelake.last-value-index");
    FILE *f = url ? fopen(url + strlen("file://"), "wb") : NULL;
    CHECK(f != NULL);
    if (f) fputs("not parquet", f), fclose(f);
    CHECK_OK(tl_lvi_parent(t, &index, &found, warning, &err), &err);
    CHECK(found && strstr(warning, "could not be read") && strstr(warning, "rebuilt"));
    CHECK_INT(found ? index.array.length : -1, 2);
    if (found) tl_rows_free(&index);
    /* The next append writes a whole index again, and says so. */
    CHECK_OK(ttable_append_key(t, &schema, "c", 70, &o, &r, &err), &err);
    CHECK(strstr(r.warning, "rebuilt") != NULL);
    CHECK_OK(tl_lvi_parent(t, &index, &found, warning, &err), &err);
    CHECK(found && warning[0] == 0);
    CHECK_INT(found ? index.array.length : -1, 3);
    if (found) tl_rows_free(&index);
    tl_schema_release(&schema);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_filter_drops_series_by_time), UNIT(test_lost_index_is_rebuilt))
