/* A driver for the Parquet interop tests and benchmark.
 *
 *   parquet_tool rewrite IN OUT [--codec zstd|snappy|gzip|none] [--level N] [--page-rows N]
 *                [--row-group-rows N] [--field-ids] [--sort i,j,..] [--page-index] [--kv k=v]
 *       reads IN with our reader and writes it again with our writer; prints the
 *       writer's file statistics as JSON.
 *   parquet_tool stats IN     prints the reader's per-chunk statistics as JSON.
 *   parquet_tool bench [ROWS [OUT|- [THREADS]]] times writing and reading ROWS rows of a
 *       time-series batch (best of 5).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arrow/array.h"
#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_writer.h"

static int fail(const char *what, const tl_error *err)
{
    fprintf(stderr, "%s: %s\n", what, err->message);
    return 1;
}

static int load_file(const char *path, tl_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return -1;
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(out, chunk, n);
    fclose(f);
    return 0;
}

static int save_file(const char *path, const tl_buf *b)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) return -1;
    size_t n = fwrite(b->data, 1, b->len, f);
    fclose(f);
    return n == b->len ? 0 : -1;
}

static void print_hex(const uint8_t *p, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
    putchar('"');
}

static void print_column_stats(const tl_parquet_column_stats *c)
{
    printf("{\"field_id\": %d, \"value_count\": %lld, \"null_count\": %lld, \"nan_count\": %lld, "
           "\"compressed_size\": %lld, \"min\": ",
           (int)c->field_id, (long long)c->value_count, (long long)c->null_count,
           (long long)c->nan_count, (long long)c->compressed_size);
    if (c->has_min_max)
        print_hex(c->min, c->min_len);
    else
        printf("null");
    printf(", \"max\": ");
    if (c->has_min_max)
        print_hex(c->max, c->max_len);
    else
        printf("null");
    printf("}");
}

static void print_file_stats(const tl_parquet_file_stats *s)
{
    printf("{\"num_rows\": %lld, \"file_size\": %lld, \"row_group_offsets\": [",
           (long long)s->num_rows, (long long)s->file_size);
    for (size_t i = 0; i < s->n_row_groups; i++)
        printf("%s%lld", i ? ", " : "", (long long)s->row_group_offsets[i]);
    printf("], \"columns\": [");
    for (size_t i = 0; i < s->n_columns; i++) {
        if (i) printf(", ");
        print_column_stats(&s->columns[i]);
    }
    printf("]}\n");
}

typedef struct rewrite_opts {
    tl_parquet_write_options w;
    bool field_ids;
    int32_t sort[64];
    const char *kv[64];
    size_t n_kv;
} rewrite_opts;

static int parse_rewrite_opts(int argc, char **argv, rewrite_opts *o)
{
    memset(o, 0, sizeof *o);
    o->w.codec = TL_PARQUET_ZSTD;
    o->w.compression_level = 3;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(a, "--codec") == 0) {
            i++;
            o->w.codec = strcmp(v, "snappy") == 0   ? TL_PARQUET_SNAPPY
                         : strcmp(v, "gzip") == 0   ? TL_PARQUET_GZIP
                         : strcmp(v, "lz4") == 0    ? TL_PARQUET_LZ4_RAW
                         : strcmp(v, "brotli") == 0 ? TL_PARQUET_BROTLI
                         : strcmp(v, "none") == 0   ? TL_PARQUET_UNCOMPRESSED
                                                    : TL_PARQUET_ZSTD;
        } else if (strcmp(a, "--level") == 0) {
            o->w.compression_level = atoi(v), i++;
        } else if (strcmp(a, "--page-rows") == 0) {
            o->w.page_rows = atoll(v), i++;
        } else if (strcmp(a, "--row-group-rows") == 0) {
            o->w.row_group_rows = atoll(v), i++;
        } else if (strcmp(a, "--field-ids") == 0) {
            o->field_ids = true;
        } else if (strcmp(a, "--page-index") == 0) {
            o->w.write_page_index = true;
        } else if (strcmp(a, "--sort") == 0) {
            i++;
            for (char *s = (char *)v; *s && o->w.n_sorting_columns < 64;) {
                o->sort[o->w.n_sorting_columns++] = (int32_t)strtol(s, &s, 10);
                if (*s == ',') s++;
            }
            o->w.sorting_columns = o->sort;
        } else if (strcmp(a, "--kv") == 0 && o->n_kv < 60) {
            i++;
            char *eq = strchr(v, '=');
            if (eq == NULL) return -1;
            *eq = '\0';
            o->kv[o->n_kv++] = v;
            o->kv[o->n_kv++] = eq + 1;
            o->w.key_value_metadata = o->kv;
        } else {
            return -1;
        }
    }
    return 0;
}

static int rewrite(int argc, char **argv)
{
    if (argc < 2) return 2;
    rewrite_opts o;
    if (parse_rewrite_opts(argc - 2, argv + 2, &o) != 0) return 2;
    tl_error err;
    tl_buf in = {0}, out = {0};
    if (load_file(argv[0], &in) != 0) return 2;
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, in.data, in.len);
    tl_parquet_reader *r;
    if (tl_parquet_reader_open(&src, &r, &err)) return fail("open", &err);
    struct ArrowSchema schema;
    if (tl_parquet_reader_schema(r, &schema, &err)) return fail("schema", &err);
    int32_t ids[256];
    for (int64_t i = 0; i < schema.n_children && i < 256; i++) ids[i] = (int32_t)i + 1;
    if (o.field_ids) o.w.field_ids = ids;
    tl_parquet_writer *w;
    if (tl_parquet_writer_open(&schema, &o.w, &w, &err)) return fail("writer", &err);
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        struct ArrowArray batch;
        if (tl_parquet_reader_read_row_group(r, g, NULL, 0, &batch, &err))
            return fail("read", &err);
        if (tl_parquet_writer_write(w, &batch, &err)) return fail("write", &err);
        tl_array_release(&batch);
    }
    tl_parquet_file_stats stats;
    if (tl_parquet_writer_finish(w, &out, &stats, &err)) return fail("finish", &err);
    if (save_file(argv[1], &out) != 0) return 2;
    print_file_stats(&stats);
    tl_parquet_file_stats_free(&stats);
    tl_parquet_writer_free(w);
    tl_schema_release(&schema);
    tl_parquet_reader_free(r);
    tl_buf_free(&in);
    tl_buf_free(&out);
    return 0;
}

static int stats(int argc, char **argv)
{
    if (argc < 1) return 2;
    tl_error err;
    tl_buf in = {0};
    if (load_file(argv[0], &in) != 0) return 2;
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, in.data, in.len);
    tl_parquet_reader *r;
    if (tl_parquet_reader_open(&src, &r, &err)) return fail("open", &err);
    printf("[");
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        printf("%s[", g ? ", " : "");
        for (int c = 0; c < tl_parquet_reader_num_columns(r); c++) {
            tl_parquet_column_stats s;
            if (tl_parquet_reader_column_stats(r, g, c, &s, &err)) return fail("stats", &err);
            if (c) printf(", ");
            print_column_stats(&s);
            tl_parquet_column_stats_clear(&s);
        }
        printf("]");
    }
    printf("]\n");
    tl_parquet_reader_free(r);
    tl_buf_free(&in);
    return 0;
}

/* ---- Benchmark: time int64 ts, two string series of ~100 values, five float64 ---- */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void make_strings(struct ArrowArray *a, int64_t n, const char *prefix, int64_t run,
                         tl_error *err)
{
    tl_array_init(a, 3, 0, err);
    int32_t *off = tl_array_alloc_buffer(a, 1, (size_t)(n + 1) * 4);
    char *data = tl_array_alloc_buffer(a, 2, (size_t)n * 24);
    int32_t pos = 0;
    for (int64_t i = 0; i < n; i++) {
        off[i] = pos;
        pos += sprintf(data + pos, "%s-%03d", prefix, (int)((i / run) % 100));
    }
    off[n] = pos;
    a->length = n;
}

static int bench(int argc, char **argv)
{
    int64_t n = argc > 0 ? atoll(argv[0]) : 1000000;
    tl_error err;
    struct ArrowSchema s;
    const char *names[] = {"ts", "host", "region", "f0", "f1", "f2", "f3", "f4"};
    tl_schema_init(&s, "+s", NULL, 0, 8, &err);
    tl_schema_init(s.children[0], "tsu:UTC", names[0], 0, 0, &err);
    tl_schema_init(s.children[1], "u", names[1], 0, 0, &err);
    tl_schema_init(s.children[2], "u", names[2], 0, 0, &err);
    for (int i = 3; i < 8; i++)
        tl_schema_init(s.children[i], "g", names[i], ARROW_FLAG_NULLABLE, 0, &err);
    struct ArrowArray a;
    tl_array_init(&a, 1, 8, &err);
    a.length = n;
    /* Sorted by series then time, as the table layer writes. */
    int64_t per_series = n / 100 ? n / 100 : 1;
    tl_array_init(a.children[0], 2, 0, &err);
    int64_t *ts = tl_array_alloc_buffer(a.children[0], 1, (size_t)n * 8);
    for (int64_t i = 0; i < n; i++) ts[i] = 1700000000000000 + (i % per_series) * 10000000;
    a.children[0]->length = n;
    make_strings(a.children[1], n, "host", per_series, &err);
    make_strings(a.children[2], n, "region", per_series * 10, &err);
    uint64_t x = 88172645463325252ull;
    for (int c = 3; c < 8; c++) {
        tl_array_init(a.children[c], 2, 0, &err);
        double *v = tl_array_alloc_buffer(a.children[c], 1, (size_t)n * 8);
        double level = 50;
        for (int64_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            level += ((double)(x % 1000) - 499.5) / 1000.0;
            v[i] = (double)(int64_t)(level * 100) / 100; /* sensor-like: 2 decimals */
        }
        a.children[c]->length = n;
    }
    tl_parquet_write_options o = {.codec = TL_PARQUET_ZSTD,
                                  .compression_level = 3,
                                  .page_rows = 20000,
                                  .row_group_rows = 1000000,
                                  .write_page_index = true};
    int32_t sort[] = {1, 2, 0};
    o.threads = argc > 2 ? atoi(argv[2]) : 0;
    o.sorting_columns = sort;
    o.n_sorting_columns = 3;
    double best_w = 1e9, best_r = 1e9;
    size_t size = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ms();
        tl_parquet_writer *w;
        tl_buf out = {0};
        tl_parquet_file_stats st;
        if (tl_parquet_writer_open(&s, &o, &w, &err) || tl_parquet_writer_write(w, &a, &err) ||
            tl_parquet_writer_finish(w, &out, &st, &err))
            return fail("write", &err);
        tl_parquet_writer_free(w);
        double t1 = now_ms();
        tl_parquet_source src;
        tl_parquet_source_from_memory(&src, out.data, out.len);
        tl_parquet_reader *r;
        if (tl_parquet_reader_open(&src, &r, &err)) return fail("open", &err);
        for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
            struct ArrowArray b;
            if (tl_parquet_reader_read_row_group(r, g, NULL, 0, &b, &err))
                return fail("read", &err);
            tl_array_release(&b);
        }
        tl_parquet_reader_free(r);
        double t2 = now_ms();
        if (t1 - t0 < best_w) best_w = t1 - t0;
        if (t2 - t1 < best_r) best_r = t2 - t1;
        size = out.len;
        if (rep == 0 && argc > 1 && strcmp(argv[1], "-") != 0) save_file(argv[1], &out);
        tl_parquet_file_stats_free(&st);
        tl_buf_free(&out);
    }
    printf("{\"rows\": %lld, \"bytes\": %zu, \"write_ms\": %.1f, \"read_ms\": %.1f}\n",
           (long long)n, size, best_w, best_r);
    tl_array_release(&a);
    tl_schema_release(&s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "rewrite") == 0) return rewrite(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "stats") == 0) return stats(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "bench") == 0) return bench(argc - 2, argv + 2);
    fprintf(stderr,
            "usage: parquet_tool rewrite IN OUT [options] | stats IN | bench [ROWS [OUT]]\n");
    return 2;
}
