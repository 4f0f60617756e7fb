/* quickstart: create a time-series table in a local lake and append to it,
 * using only the public header. Run: quickstart [LAKE_DIR]
 *
 * The data is built by hand with the Arrow C data interface, as any Arrow
 * producer (pyarrow, polars, nanoarrow, DuckDB) would hand it over. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timelake.h"

#define DEVICES 4
#define MINUTES (3 * 24 * 60) /* three days, one reading a minute */

/* A batch: struct<time: timestamp[us, UTC], device_id: utf8, temp: float64>. */
typedef struct demo_batch {
    int64_t *time;
    int32_t *offsets;
    char *names;
    double *temp;
    const void *buffers[3][3];
    const void *struct_buffers[1];
    struct ArrowArray columns[3], *column_ptrs[3];
} demo_batch;

static void release_child(struct ArrowArray *a)
{
    a->release = NULL; /* the memory belongs to the parent's demo_batch */
}

static void demo_free(demo_batch *b);

/* The struct array owns its demo_batch: a consumer may keep the array after
 * releasing the stream it came from. */
static void release_batch(struct ArrowArray *a)
{
    demo_batch *b = a->private_data;
    demo_free(b);
    free(b);
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s)
{
    s->release = NULL;
}

static struct ArrowSchema fields[3] = {
    {"tsu:UTC", "time", NULL, 0, 0, NULL, NULL, release_schema, NULL},
    {"u", "device_id", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL},
    {"g", "temp", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL},
};
static struct ArrowSchema *field_ptrs[3] = {&fields[0], &fields[1], &fields[2]};

static void demo_schema(struct ArrowSchema *out)
{
    *out = (struct ArrowSchema){"+s", "", NULL, 0, 3, field_ptrs, NULL, release_schema, NULL};
    for (int i = 0; i < 3; i++) fields[i].release = release_schema;
}

/* Makes *out an array of n readings starting at start_us. */
static void demo_fill(int64_t n, int64_t start_us, struct ArrowArray *out)
{
    demo_batch *b = calloc(1, sizeof *b);
    b->time = malloc(n * sizeof *b->time);
    b->temp = malloc(n * sizeof *b->temp);
    b->offsets = malloc((n + 1) * sizeof *b->offsets);
    b->names = malloc(n * 8);
    b->offsets[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        b->time[i] = start_us + (i / DEVICES) * 60 * INT64_C(1000000);
        b->temp[i] = 20.0 + (double)(i % 97) / 10.0;
        int len = snprintf(b->names + b->offsets[i], 8, "pump-%d", (int)(i % DEVICES));
        b->offsets[i + 1] = b->offsets[i] + len;
    }
    const void *bufs[3][3] = {{NULL, b->time}, {NULL, b->offsets, b->names}, {NULL, b->temp}};
    memcpy(b->buffers, bufs, sizeof bufs);
    int64_t n_buffers[3] = {2, 3, 2};
    for (int i = 0; i < 3; i++) {
        b->columns[i] = (struct ArrowArray){n, 0, 0, n_buffers[i], 0, b->buffers[i], NULL, NULL,
                                            release_child, NULL};
        b->column_ptrs[i] = &b->columns[i];
    }
    b->struct_buffers[0] = NULL;
    *out = (struct ArrowArray){n, 0, 0, 1, 3, b->struct_buffers, b->column_ptrs, NULL,
                               release_batch, b};
}

static void demo_free(demo_batch *b)
{
    free(b->time);
    free(b->temp);
    free(b->offsets);
    free(b->names);
}

/* A one-batch ArrowArrayStream over a demo_batch. */
typedef struct demo_stream {
    int64_t rows, start_us;
    int done;
} demo_stream;

static int stream_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    (void)s;
    demo_schema(out);
    return 0;
}

static int stream_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    demo_stream *d = s->private_data;
    if (d->done) {
        out->release = NULL; /* end of stream */
        return 0;
    }
    d->done = 1;
    demo_fill(d->rows, d->start_us, out);
    return 0;
}

static const char *stream_error(struct ArrowArrayStream *s)
{
    (void)s;
    return NULL;
}

static void stream_release(struct ArrowArrayStream *s)
{
    s->release = NULL;
}

static int fail(const char *what, const tl_error *err)
{
    fprintf(stderr, "quickstart: %s: %s (%s)\n", what, err->message, tl_status_name(err->code));
    return 1;
}

static int append(tl_table *t, int64_t start_us, const char *batch_id)
{
    demo_stream d = {.rows = MINUTES * DEVICES, .start_us = start_us};
    struct ArrowArrayStream stream = {stream_schema, stream_next, stream_error, stream_release, &d};
    tl_append_options opts = {.batch_id = batch_id, .maintain = -1};
    tl_append_result res;
    tl_error err;
    if (tl_table_append(t, &stream, &opts, &res, &err) != TL_OK) return fail("append", &err);
    printf("append %-12s rows=%lld files=%lld bytes=%lld version=%lld %.1f ms%s\n", batch_id,
           (long long)res.rows, (long long)res.files, (long long)res.bytes,
           (long long)res.version, res.commit_ms, res.duplicate ? " (duplicate: skipped)" : "");
    return 0;
}

int main(int argc, char **argv)
{
    const char *where = argc > 1 ? argv[1] : "demo-lake";
    tl_error err;
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    if (tl_lake_open(where, NULL, &lake, &err) != TL_OK) return fail("open lake", &err);
    printf("lake %s\n", tl_lake_location(lake));

    tl_lake_drop_table(lake, "iot.readings", NULL); /* start afresh on each run */
    struct ArrowSchema schema;
    demo_schema(&schema);
    const char *series_key[] = {"device_id"};
    tl_table_options opts = {.time_column = "time", .series_key = series_key,
                             .series_key_len = 1, .chunk = "day", .retention = "365d",
                             .dedup = -1, .ingest_time = -1};
    if (tl_lake_create_table(lake, "iot.readings", &schema, &opts, &t, &err) != TL_OK)
        return fail("create table", &err);
    printf("created %s at %s\n", tl_table_name(t), tl_table_location(t));

    int64_t jan1 = INT64_C(1767225600) * 1000000; /* 2026-01-01T00:00:00Z */
    int rc = append(t, jan1, "gateway-0001") || append(t, jan1 + 3 * 86400 * INT64_C(1000000), "gateway-0002") ||
             append(t, jan1, "gateway-0001"); /* redelivered: commits nothing */

    tl_table_info info;
    if (rc == 0 && tl_table_info_get(t, &info, &err) == TL_OK) {
        printf("info: version=%lld rows=%lld files=%lld bytes=%lld snapshots=%lld manifests=%lld\n",
               (long long)info.version, (long long)info.rows, (long long)info.files,
               (long long)info.bytes, (long long)info.snapshots, (long long)info.manifests);
        tl_table_info_clear(&info);
    }
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}
