/* A table for the tests that need one: a lake in the process's scratch
 * directory and a table of a time column and one series-key column (and,
 * when asked, a nullable double "v"). Header-only. */
#ifndef TEST_TABLE_HELPERS_H
#define TEST_TABLE_HELPERS_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "test_arrow_helpers.h"
#include "timelake.h"
#include "unit.h"

/* Opens the lake <scratch>/<dir_name> into *lake and creates table `name`:
 * time (tsu:UTC), `key` (key_format, the series key), then v (g) when
 * with_value. *schema_out, when not NULL, gets the schema (the caller
 * releases it). The table is the caller's to close. */
static inline tl_table *ttable_create(tl_lake **lake, const char *dir_name, const char *name,
                                      const char *key, const char *key_format, bool with_value,
                                      struct ArrowSchema *schema_out)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", unit_tmpdir(), dir_name);
    tl_error err;
    CHECK_OK(tl_lake_open(dir, NULL, lake, &err), &err);
    struct ArrowSchema schema;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, with_value ? 3 : 2, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], "tsu:UTC", "time", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[1], key_format, key, 0, 0, &err), &err);
    if (with_value)
        CHECK_OK(tl_schema_init(schema.children[2], "g", "v", ARROW_FLAG_NULLABLE, 0, &err), &err);
    const char *keys[] = {key};
    tl_table_options opts = {.time_column = "time",
                             .series_key = keys,
                             .series_key_len = 1,
                             .dedup = -1,
                             .ingest_time = -1};
    tl_table *t = NULL;
    CHECK_OK(tl_lake_create_table(*lake, name, &schema, &opts, &t, &err), &err);
    if (schema_out)
        *schema_out = schema; /* moved */
    else
        tl_schema_release(&schema);
    return t;
}

/* Appends one row (time = 2024-05-01T10:00:00Z + `at` seconds, series key
 * `key`) to a table made by ttable_create without a value column; `schema` is
 * its schema (copied). */
/* The table's current snapshot id (tl_table_info.snapshot_id). */
static inline int64_t ttable_snapshot_id(tl_table *t)
{
    tl_table_info info;
    tl_error err;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    int64_t id = info.snapshot_id;
    tl_table_info_clear(&info);
    return id;
}

static inline tl_status ttable_append_key(tl_table *t, const struct ArrowSchema *schema,
                                          const char *key, int64_t at, const tl_append_options *o,
                                          tl_append_result *r, tl_error *err)
{
    int64_t time = 1714557600000000LL + at * 1000000LL;
    struct ArrowArray batch;
    struct ArrowSchema copy;
    struct ArrowArrayStream s;
    tbatch_time_key(&batch, &time, &key, 1);
    CHECK_OK(tl_schema_copy(schema, &copy, err), err);
    CHECK_OK(tl_stream_from_batches(&copy, &batch, 1, &s, err), err);
    return tl_table_append(t, &s, o, r, err);
}

static inline tl_status ttable_append_row(tl_table *t, const struct ArrowSchema *schema, int at,
                                          const tl_append_options *o, tl_append_result *r,
                                          tl_error *err)
{
    return ttable_append_key(t, schema, "pump-1", at, o, r, err);
}

/* The schema of the torture tests' tables (the caller releases it): time
 * (tsu:UTC), then the series key "device" (a string). */
static inline void ttable_device_schema(struct ArrowSchema *schema)
{
    tl_error err;
    CHECK_OK(tl_schema_init(schema, "+s", NULL, 0, 2, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[0], "tsu:UTC", "time", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[1], "u", "device", 0, 0, &err), &err);
}

/* Creates table `name` of ttable_device_schema's schema with dedup off (a
 * row appended twice shows as two) into *t, the caller's to close. */
static inline tl_status ttable_create_device_table(tl_lake *lake, const char *name,
                                                   const struct ArrowSchema *schema, tl_table **t,
                                                   tl_error *err)
{
    const char *keys[] = {"device"};
    tl_table_options opts = {.time_column = "time",
                             .series_key = keys,
                             .series_key_len = 1,
                             .dedup = 0,
                             .ingest_time = -1};
    return tl_lake_create_table(lake, name, schema, &opts, t, err);
}

/* A stream *s of `n` (at most 16) rows of batch `b` for a table made by
 * ttable_create without a value column (`schema`, copied): half in a day two
 * months before now_us (a cold partition retention drops), half in the last
 * hours, in two series. The stream is the caller's to consume. */
static inline void ttable_two_partition_stream(const struct ArrowSchema *schema, int64_t now_us,
                                               int b, int n, struct ArrowArrayStream *s)
{
    int64_t times[16];
    const char *keys[16];
    int64_t old_day = (now_us / 86400000000LL - 60) * 86400000000LL;
    for (int i = 0; i < n && i < 16; i++) {
        int64_t base = i % 2 ? now_us - 3 * 3600000000LL : old_day;
        times[i] = base + (int64_t)(b * 16 + i) * 1000000LL;
        keys[i] = i % 4 < 2 ? "pump-1" : "pump-2";
    }
    struct ArrowArray batch;
    struct ArrowSchema copy;
    tl_error err;
    tbatch_time_key(&batch, times, keys, n < 16 ? n : 16);
    CHECK_OK(tl_schema_copy(schema, &copy, &err), &err);
    CHECK_OK(tl_stream_from_batches(&copy, &batch, 1, s, &err), &err);
}

/* The first column of the first row of a query's answer, a BIGINT (a count). */
static inline int64_t ttable_sql_int64(tl_lake *lake, const char *sql)
{
    struct ArrowArrayStream s;
    tl_error err;
    CHECK_OK(tl_lake_sql(lake, sql, NULL, &s, NULL, &err), &err);
    struct ArrowSchema schema;
    struct ArrowArray a;
    CHECK(s.get_schema(&s, &schema) == 0);
    CHECK(s.get_next(&s, &a) == 0);
    int64_t n = ((const int64_t *)a.children[0]->buffers[1])[0];
    a.release(&a);
    schema.release(&schema);
    s.release(&s);
    return n;
}

/* Calls fn(path, folder, ctx) for every file under dir, recursively (names
 * starting with '.' left out), and returns the sum of what it returned. */
typedef int (*ttable_file_fn)(const char *path, const char *folder, void *ctx);

static inline int ttable_walk_files(const char *dir, ttable_file_fn fn, void *ctx)
{
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    int sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1200];
        struct stat st;
        /* A name too long for path is skipped (and the check keeps -O3's
         * format-truncation warning quiet). */
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        if (stat(path, &st) != 0) continue;
        sum += S_ISDIR(st.st_mode) ? ttable_walk_files(path, fn, ctx) : fn(path, dir, ctx);
    }
    closedir(d);
    return sum;
}

/* Reads a result stream to its end and releases it. */
static inline void ttable_drain(struct ArrowArrayStream *s)
{
    struct ArrowArray a;
    while (s->get_next(s, &a) == 0 && a.release) a.release(&a);
    s->release(s);
}

/* Runs a statement that must succeed, and drops its result. */
static inline void ttable_sql_ok(tl_lake *lake, const char *sql)
{
    struct ArrowArrayStream s;
    tl_error err;
    CHECK_OK(tl_lake_sql(lake, sql, NULL, &s, NULL, &err), &err);
    ttable_drain(&s);
}

/* The torture tests' rollup: rows per device and hour of table. */
static inline void ttable_rollup_sql(const char *rollup, const char *table, bool if_not_exists,
                                     char *sql, size_t size)
{
    snprintf(sql, size,
             "CREATE MATERIALIZED ROLLUP %s%s AS SELECT device, time_bucket(INTERVAL '1 hour', "
             "time) AS bucket, count(*) AS n FROM %s GROUP BY device, bucket",
             if_not_exists ? "IF NOT EXISTS " : "", rollup, table);
}

#endif
