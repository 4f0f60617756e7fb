/* Partitions by column values (tl_table_options.partition_by): the spec a
 * create makes, the Hive-style folders of the data files, pruning in SQL,
 * compaction within partitions, and every bad partition_by refused with
 * nothing written. Interop with pyiceberg, DuckDB and the reference is in
 * tests/py/test_partitions.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/stream.h"
#include "test_arrow_helpers.h"
#include "test_table_helpers.h"
#include "timelake.h"

/* The schema (region u, n l, d tdD, v g) and a batch of it. */
static void make_schema(struct ArrowSchema *s)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, "+s", NULL, 0, 4, &err), &err);
    CHECK_OK(tl_schema_init(s->children[0], "u", "region", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(s->children[1], "l", "n", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(s->children[2], "tdD", "d", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(s->children[3], "g", "v", ARROW_FLAG_NULLABLE, 0, &err), &err);
}

/* Appends rows (region[i], n[i], day d[i] since the epoch, v = i). */
static void append_rows(tl_table *t, const char *const *region, const int64_t *n, const int64_t *d,
                        int64_t rows)
{
    tl_error err;
    double v[64];
    for (int64_t i = 0; i < rows; i++) v[i] = (double)i;
    tcol cols[4];
    tcol_strs(&cols[0], "u", region, rows);
    tcol_ints(&cols[1], "l", n, NULL, rows);
    tcol_ints(&cols[2], "tdD", d, NULL, rows);
    tcol_doubles(&cols[3], "g", v, NULL, rows);
    struct ArrowArray batch;
    CHECK_OK(tl_array_init(&batch, 1, 4, &err), &err);
    batch.length = rows;
    for (int c = 0; c < 4; c++) {
        tl_array_move(&cols[c].array, batch.children[c]);
        tcol_free(&cols[c]);
    }
    struct ArrowSchema schema;
    make_schema(&schema);
    struct ArrowArrayStream s;
    CHECK_OK(tl_stream_from_batches(&schema, &batch, 1, &s, &err), &err);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    CHECK_OK(tl_table_append(t, &s, &o, &r, &err), &err);
    CHECK_INT(r.rows, rows);
}

static tl_lake *open_lake(const char *name)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", unit_tmpdir(), name);
    tl_lake *lake = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open(dir, NULL, &lake, &err), &err);
    return lake;
}

static tl_table *create(tl_lake *lake, const char *name, const char *const *by, size_t n_by)
{
    struct ArrowSchema schema;
    make_schema(&schema);
    tl_table_options o = {
        .dedup = -1, .ingest_time = -1, .partition_by = by, .partition_by_len = n_by};
    tl_table *t = NULL;
    tl_error err;
    CHECK_OK(tl_lake_create_table(lake, name, &schema, &o, &t, &err), &err);
    tl_schema_release(&schema);
    return t;
}

/* count(*) of a query and the data files it read. */
static int64_t count(tl_lake *lake, const char *where, int64_t *files_read)
{
    char q[512];
    snprintf(q, sizeof q, "SELECT count(*) FROM sales.p WHERE %s", where);
    struct ArrowArrayStream s;
    tl_query_stats stats;
    tl_error err;
    CHECK_OK(tl_lake_sql(lake, q, NULL, &s, &stats, &err), &err);
    struct ArrowSchema schema;
    struct ArrowArray *batches = NULL;
    size_t n = 0;
    CHECK_OK(tl_stream_collect(&s, &schema, &batches, &n, &err), &err);
    int64_t c = n ? ((const int64_t *)batches[0].children[0]->buffers[1])[0] : -1;
    for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
    free(batches);
    tl_schema_release(&schema);
    s.release(&s);
    *files_read = stats.files_read;
    return c;
}

/* The keys of a one-level listing, joined by spaces. */
static void folders(tl_lake *lake, const char *prefix, char *buf, size_t size)
{
    tl_object *objs;
    size_t n;
    tl_error err;
    CHECK_OK(tl_lake_list_objects(lake, prefix, 0, &objs, &n, &err), &err);
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " " : "",
                                 objs[i].key + strlen(prefix));
    tl_objects_free(objs, n);
}

#define NOV1 20758 /* 2026-11-01 */

static void test_plain_table_in_hive_folders_and_pruned(void)
{
    tl_lake *lake = open_lake("part-plain");
    const char *by[] = {"region", "month(d)"};
    tl_table *t = create(lake, "sales.p", by, 2);
    const char *region[] = {"eu", "us", "eu", NULL, "a/b c", "eu"};
    int64_t n[] = {1, 2, 3, 4, 5, 6};
    int64_t d[] = {NOV1, NOV1 + 3, NOV1 + 30, NOV1, NOV1 + 1, NOV1 + 2};
    append_rows(t, region, n, d, 6);

    tl_table_info info;
    tl_error err;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK(info.partition_by && info.partition_by[0] && info.partition_by[1] &&
          !info.partition_by[2]);
    if (info.partition_by && info.partition_by[0] && info.partition_by[1]) {
        CHECK_STR(info.partition_by[0], "region");
        CHECK_STR(info.partition_by[1], "month(d)");
    }
    CHECK_INT(info.files, 5);
    CHECK(info.snapshot_id != 0 && info.last_commit_ms > 0);
    tl_table_info_clear(&info);

    char got[512];
    folders(lake, "sales/p/data/", got, sizeof got);
    CHECK_STR(got, "region=a%2Fb%20c/ region=eu/ region=null/ region=us/");
    folders(lake, "sales/p/data/region=eu/", got, sizeof got);
    CHECK_STR(got, "d_month=2026-11/ d_month=2026-12/");

    int64_t files;
    CHECK_INT(count(lake, "region = 'eu'", &files), 3);
    CHECK_INT(files, 2);
    CHECK_INT(count(lake, "region IN ('us', 'a/b c')", &files), 2);
    CHECK_INT(files, 2);
    CHECK_INT(count(lake, "d >= DATE '2026-12-01'", &files), 1);
    CHECK_INT(files, 1);
    CHECK_INT(count(lake, "region IS NULL", &files), 1);
    CHECK_INT(files, 1);
    CHECK_INT(count(lake, "region = 'eu' AND d < '2026-12-01'", &files), 2);
    CHECK_INT(files, 1);
    CHECK_INT(count(lake, "n > 0", &files), 6); /* not a partition column: every file */
    CHECK_INT(files, 5);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_compaction_stays_within_partitions(void)
{
    tl_lake *lake = open_lake("part-compact");
    const char *by[] = {"region"};
    tl_table *t = create(lake, "sales.p", by, 1);
    for (int k = 0; k < 3; k++) {
        const char *region[] = {"eu", "us", "eu"};
        int64_t n[] = {k, k, k}, d[] = {NOV1 + k, NOV1, NOV1};
        append_rows(t, region, n, d, 3);
    }
    tl_maintain_report rep;
    tl_error err;
    CHECK_OK(tl_table_maintain(t, NULL, &rep, &err), &err);
    CHECK_INT(rep.partitions_compacted, 2);
    tl_table_info info;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK_INT(info.files, 2);
    CHECK_INT(info.rows, 9);
    tl_table_info_clear(&info);
    int64_t files;
    CHECK_INT(count(lake, "region = 'eu'", &files), 6);
    CHECK_INT(files, 1);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_bad_partition_by_creates_nothing(void)
{
    tl_lake *lake = open_lake("part-bad");
    struct ArrowSchema schema;
    make_schema(&schema);
    const struct {
        const char *by[5];
        size_t n;
        const char *message;
    } cases[] = {
        {{"nope"}, 1, "no column \"nope\""},
        {{"v"}, 1, "a double column cannot be a partition"},
        {{"day(region)"}, 1, "day, month and year take a date or timestamp column"},
        {{"hour(d)"}, 1, "use a column name, or day(column)"},
        {{"month(d"}, 1, "use a column name"},
        {{"region", "region"}, 2, "given twice"},
        {{"region", "n", "d", "month(d)", "year(d)"}, 5, "at most 4"},
        {{""}, 1, "empty"},
        {{NULL}, 1, "empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_table_options o = {.dedup = -1,
                              .ingest_time = -1,
                              .partition_by = cases[i].by,
                              .partition_by_len = cases[i].n};
        tl_table *t = NULL;
        tl_error err;
        CHECK_INT(tl_lake_create_table(lake, "sales.bad", &schema, &o, &t, &err), TL_ERR_INVALID);
        if (strstr(err.message, cases[i].message) == NULL)
            unit_fail(__FILE__, __LINE__, "case %zu: \"%s\" lacks \"%s\"", i, err.message,
                      cases[i].message);
        CHECK_INT(tl_lake_open_table(lake, "sales.bad", &t, &err), TL_ERR_NOT_FOUND);
    }
    tl_schema_release(&schema);
    tl_object *objs;
    size_t n;
    tl_error err;
    CHECK_OK(tl_lake_list_objects(lake, NULL, 1, &objs, &n, &err), &err);
    CHECK_INT(n, 0);
    tl_objects_free(objs, n);
    tl_lake_close(lake);
}

/* Time-series tables: the time partition first, then series-key columns;
 * with dedup, a column outside the series key is refused. */
static void test_time_series_partitions(void)
{
    tl_lake *lake = open_lake("part-ts");
    struct ArrowSchema schema;
    tl_error err;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 3, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], "tsu:UTC", "time", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[1], "u", "host", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[2], "u", "site", ARROW_FLAG_NULLABLE, 0, &err), &err);
    const char *key[] = {"host"}, *by_host[] = {"host"}, *by_site[] = {"site"},
               *by_time[] = {"day(time)"};
    tl_table_options o = {.time_column = "time",
                          .series_key = key,
                          .series_key_len = 1,
                          .dedup = -1,
                          .ingest_time = -1,
                          .partition_by = by_site,
                          .partition_by_len = 1};
    tl_table *t = NULL;
    CHECK_INT(tl_lake_create_table(lake, "iot.m", &schema, &o, &t, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "only by series-key columns") != NULL);
    o.partition_by = by_time;
    CHECK_INT(tl_lake_create_table(lake, "iot.m", &schema, &o, &t, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "chunk interval") != NULL);
    o.partition_by = by_site;
    o.dedup = 0; /* without dedup any column will do */
    CHECK_OK(tl_lake_create_table(lake, "iot.nodedup", &schema, &o, &t, &err), &err);
    tl_table_close(t);
    o.partition_by = by_host;
    o.dedup = -1;
    CHECK_OK(tl_lake_create_table(lake, "iot.m", &schema, &o, &t, &err), &err);
    tl_table_info info;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK(info.partition_by && info.partition_by[0] && !info.partition_by[1]);
    if (info.partition_by && info.partition_by[0]) CHECK_STR(info.partition_by[0], "host");
    CHECK_STR(info.chunk, "day");
    tl_table_info_clear(&info);

    /* The same (host, time) written twice: the later write wins, alone. */
    for (int k = 0; k < 2; k++) {
        int64_t times[] = {1714557600000000LL, 1714557600000000LL + 86400000000LL};
        const char *hosts[] = {"a b", "c"};
        struct ArrowArray batch;
        tcol cols[3];
        tcol_ints(&cols[0], "tsu:UTC", times, NULL, 2);
        tcol_strs(&cols[1], "u", hosts, 2);
        const char *sites[] = {k ? "new" : "old", "x"};
        tcol_strs(&cols[2], "u", sites, 2);
        CHECK_OK(tl_array_init(&batch, 1, 3, &err), &err);
        batch.length = 2;
        for (int c = 0; c < 3; c++) {
            tl_array_move(&cols[c].array, batch.children[c]);
            tcol_free(&cols[c]);
        }
        struct ArrowSchema s;
        CHECK_OK(tl_schema_copy(&schema, &s, &err), &err);
        struct ArrowArrayStream st;
        CHECK_OK(tl_stream_from_batches(&s, &batch, 1, &st, &err), &err);
        tl_append_options ao = {.maintain = 0};
        tl_append_result r;
        CHECK_OK(tl_table_append(t, &st, &ao, &r, &err), &err);
    }
    char got[512];
    folders(lake, "iot/m/data/", got, sizeof got);
    CHECK_STR(got, "time_day=2024-05-01/ time_day=2024-05-02/");
    folders(lake, "iot/m/data/time_day=2024-05-01/", got, sizeof got);
    CHECK_STR(got, "host=a%20b/");
    tl_schema_release(&schema);
    struct ArrowArrayStream s;
    CHECK_OK(tl_lake_sql(lake, "SELECT site FROM iot.m WHERE host = 'a b'", NULL, &s, NULL, &err),
             &err);
    struct ArrowSchema rs;
    struct ArrowArray *batches = NULL;
    size_t n = 0;
    CHECK_OK(tl_stream_collect(&s, &rs, &batches, &n, &err), &err);
    int64_t rows = 0;
    for (size_t i = 0; i < n; i++) rows += batches[i].length;
    CHECK_INT(rows, 1);
    if (n > 0 && batches[0].length == 1) {
        tl_array_view v = tview(rs.children[0]->format, batches[0].children[0]);
        char buf[16];
        CHECK_STR(tv_str(&v, 0, buf, sizeof buf), "new");
    }
    for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
    free(batches);
    tl_schema_release(&rs);
    s.release(&s);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_plain_table_in_hive_folders_and_pruned),
           UNIT(test_compaction_stays_within_partitions),
           UNIT(test_bad_partition_by_creates_nothing), UNIT(test_time_series_partitions))
