/* Rewriting files of one partition: normally a streaming merge of the sorted
 * files (maintain_merge.c). Inputs that are not sorted as the table says are
 * read whole, oldest commit first, fit to the table's storage layout, and
 * the append layout sorts and deduplicates them. Its stable sort keeps equal keys in input order,
 * so among rows with the same ingest time the later commit (higher data sequence number) and then
 * the later row wins, as on read. */
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/concat.h"
#include "arrow/nested.h"
#include "arrow/take.h"
#include "formats/parquet/parquet_reader.h"
#include "table/append.h"
#include "table/maintain.h"

void tl_rewrite_output_free(const tl_table *t, tl_rewrite_output *out, bool remove)
{
    for (size_t i = 0; i < out->n_added; i++) {
        if (remove) tl_store_remove(t->lake->store, out->keys[i], NULL);
        free(out->keys[i]);
        tl_ice_data_file_clear(&out->added[i]);
    }
    free(out->added);
    free(out->keys);
    tl_head_objects_clear(&out->footers);
    memset(out, 0, sizeof *out);
}

tl_status tl_rewrite_read_file(const tl_table *t, const tl_live_file *f, tl_rows *out,
                               tl_error *err)
{
    tl_buf b = {0};
    tl_parquet_source src;
    tl_parquet_reader *r = NULL;
    struct ArrowSchema schema = {0};
    struct ArrowArray *batches = NULL;
    int n = 0;
    tl_status st = tl_table_read_url(t, f->file.file_path, &b, err);
    if (st == TL_OK) {
        tl_parquet_source_from_memory(&src, b.data, b.len);
        st = tl_parquet_reader_open(&src, &r, err);
    }
    if (st == TL_OK) st = tl_parquet_reader_schema(r, &schema, err);
    if (st == TL_OK) {
        n = tl_parquet_reader_num_row_groups(r);
        batches = calloc((size_t)n + 1, sizeof *batches);
        if (batches == NULL) st = tl_error_nomem(err);
    }
    for (int i = 0; st == TL_OK && i < n; i++)
        st = tl_parquet_reader_read_row_group(r, i, NULL, 0, &batches[i], err);
    /* A file without an ingest-time column sorts before any that has one. */
    if (st == TL_OK) st = tl_append_prepare_take(t, &schema, batches, (size_t)n, 0, out, err);
    if (st != TL_OK) tl_error_prefix(err, "rewriting %s", f->file.file_path);
    for (int i = 0; batches && i < n; i++) tl_array_release(&batches[i]);
    free(batches);
    tl_schema_release(&schema);
    tl_parquet_reader_free(r);
    tl_buf_free(&b);
    return st;
}

static tl_status concat_nested(const tl_rows *parts, size_t n, int64_t c, struct ArrowArray *out,
                               tl_error *err)
{
    struct ArrowArray *cols = calloc(n + 1, sizeof *cols);
    if (cols == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        cols[i] = *parts[i].array.children[c];
        cols[i].release = NULL; /* borrowed */
    }
    tl_status st = tl_arrow_concat_nested(parts[0].schema.children[c], cols, n, out, err);
    free(cols);
    return st;
}

/* Concatenates the column arrays of parts into one tl_rows (parts stay owned). */
static tl_status concat_rows(tl_rows *parts, size_t n, tl_rows *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t cols = parts[0].schema.n_children, length = 0;
    for (size_t p = 0; p < n; p++) length += parts[p].array.length;
    TL_TRY(tl_schema_copy(&parts[0].schema, &out->schema, err));
    tl_status st = tl_array_init(&out->array, 1, cols, err);
    out->array.length = length;
    tl_array_view *views = calloc(n + 1, sizeof *views);
    if (st == TL_OK && views == NULL) st = tl_error_nomem(err);
    for (int64_t c = 0; st == TL_OK && c < cols; c++) {
        if (tl_arrow_is_nested(parts[0].schema.children[c])) {
            st = concat_nested(parts, n, c, out->array.children[c], err);
            continue;
        }
        size_t made = 0;
        for (; st == TL_OK && made < n; made++)
            st = tl_array_view_init(&views[made], parts[made].schema.children[c],
                                    parts[made].array.children[c], err);
        if (st == TL_OK) st = tl_arrow_concat(views, n, out->array.children[c], err);
        for (size_t i = 0; i < made; i++) tl_array_view_free(&views[i]);
    }
    free(views);
    if (st != TL_OK) tl_rows_free(out);
    return st;
}

static int by_sequence(const void *a, const void *b)
{
    const tl_live_file *x = *(const tl_live_file *const *)a, *y = *(const tl_live_file *const *)b;
    if (x->sequence_number != y->sequence_number)
        return x->sequence_number < y->sequence_number ? -1 : 1;
    return strcmp(x->file.file_path, y->file.file_path);
}

static tl_status read_all(const tl_table *t, const tl_live_file *const *files, size_t n,
                          tl_rows *out, tl_error *err)
{
    const tl_live_file **order = malloc((n + 1) * sizeof *order);
    tl_rows *parts = calloc(n + 1, sizeof *parts);
    tl_status st = order && parts ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) {
        memcpy(order, files, n * sizeof *order);
        qsort(order, n, sizeof *order, by_sequence);
    }
    size_t done = 0;
    for (; st == TL_OK && done < n; done++)
        st = tl_rewrite_read_file(t, order[done], &parts[done], err);
    if (st == TL_OK) done = n;
    if (st == TL_OK) st = concat_rows(parts, n, out, err);
    for (size_t i = 0; parts && i < done; i++) tl_rows_free(&parts[i]);
    free(parts);
    free(order);
    return st;
}

tl_status tl_rewrite_output_push(const tl_table *t, tl_rewrite_output *out, tl_ice_data_file *df,
                                 char *key, tl_error *err)
{
    tl_ice_data_file *a = realloc(out->added, (out->n_added + 1) * sizeof *a);
    if (a) out->added = a;
    char **k = a ? realloc(out->keys, (out->n_added + 1) * sizeof *k) : NULL;
    if (k) out->keys = k;
    if (a == NULL || k == NULL) {
        tl_store_remove(t->lake->store, key, NULL);
        free(key);
        tl_ice_data_file_clear(df);
        return tl_error_nomem(err);
    }
    out->added[out->n_added] = *df;
    out->keys[out->n_added++] = key;
    out->rows_out += df->record_count;
    out->bytes_out += df->file_size_in_bytes;
    return TL_OK;
}

/* Writes a partition's sorted rows as files of about `rows_per_file` rows. */
static tl_status write_partition(const tl_table *t, const tl_rows *rows, tl_partition_rows *part,
                                 int64_t rows_per_file, tl_rewrite_output *out, tl_error *err)
{
    int64_t total = part->array.length;
    int64_t n_files = (total + rows_per_file - 1) / rows_per_file;
    if (n_files < 1) n_files = 1;
    int64_t per = (total + n_files - 1) / n_files; /* even split */
    tl_status st = TL_OK;
    int64_t *idx = n_files > 1 ? malloc((size_t)per * sizeof *idx) : NULL;
    if (n_files > 1 && idx == NULL) return tl_error_nomem(err);
    for (int64_t start = 0; st == TL_OK && (start < total || start == 0); start += per) {
        tl_partition_rows chunk = {.partition = part->partition, .n_partition = part->n_partition};
        int64_t len = total - start < per ? total - start : per;
        if (n_files > 1) {
            for (int64_t i = 0; i < len; i++) idx[i] = start + i;
            st = tl_arrow_take_struct(&rows->schema, &part->array, idx, len, &chunk.array, err);
        }
        tl_ice_data_file df;
        char *key = NULL;
        if (st == TL_OK)
            st = tl_data_file_write(t, &rows->schema, n_files > 1 ? &chunk : part, &df, &key,
                                    &out->footers, err);
        if (n_files > 1) tl_array_release(&chunk.array);
        if (st == TL_OK) st = tl_rewrite_output_push(t, out, &df, key, err);
        if (total == 0) break;
    }
    free(idx);
    return st;
}

tl_status tl_rewrite_files(const tl_table *t, const tl_live_file *const *files, size_t n,
                           int64_t target_file_size, tl_rewrite_output *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return TL_OK;
    int64_t bytes_in = 0;
    for (size_t i = 0; i < n; i++) {
        bytes_in += files[i]->file.file_size_in_bytes;
        out->rows_in += files[i]->file.record_count;
    }
    /* Compressed bytes per row of the inputs estimate the size of the output. */
    int64_t bytes_per_row = out->rows_in > 0 ? bytes_in / out->rows_in : 1;
    int64_t rows_per_file = target_file_size / (bytes_per_row > 0 ? bytes_per_row : 1);
    if (rows_per_file < 1) rows_per_file = 1;
    /* Sorted inputs (what both implementations write) stream through a merge;
     * anything else is sorted in memory. */
    bool fallback = false;
    int64_t rows_in = out->rows_in;
    TL_TRY(tl_merge_files(t, files, n, rows_per_file, out, &fallback, err));
    if (!fallback) return TL_OK;
    out->rows_in = rows_in;
    tl_rows rows;
    tl_partition_rows *parts = NULL;
    size_t n_parts = 0;
    TL_TRY(read_all(t, files, n, &rows, err));
    out->rows_in = rows.array.length;
    tl_status st = tl_append_layout(t, &rows, &parts, &n_parts, err);
    for (size_t p = 0; st == TL_OK && p < n_parts; p++)
        st = write_partition(t, &rows, &parts[p], rows_per_file, out, err);
    tl_partition_rows_free(parts, n_parts);
    tl_rows_free(&rows);
    if (st != TL_OK) tl_rewrite_output_free(t, out, true);
    return st;
}
