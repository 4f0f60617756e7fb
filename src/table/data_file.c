/* Writing one Parquet data file and describing it for the manifest: the
 * column statistics become Iceberg counts and lower/upper bounds, which is what
 * lets readers prune files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/random.h"
#include "formats/parquet/parquet_writer.h"
#include "iceberg/bounds.h"
#include "iceberg/partition_value.h"
#include "iceberg/transform.h"
#include "table/append.h"
#include "table/head_footer.h"

#define CREATED_BY "timelake-c " TIMELAKE_VERSION
/* Iceberg's default metrics mode truncates string bounds to 16 characters. */
#define STRING_BOUND_CHARS 16

/* "<table>/data/" and a Hive-style folder per partition field:
 * "region=eu/d_month=2026-11/". */
static tl_status partition_dir(const tl_table *t, const tl_partition_rows *part, tl_buf *key,
                               tl_error *err)
{
    if (tl_buf_printf(key, "%s/data/", t->name.key) != 0) return tl_error_nomem(err);
    const tl_contract *c = &t->contract;
    for (size_t i = 0; i < part->n_partition && i < c->n_partition; i++) {
        const tl_part_field *f = &c->partition[i];
        TL_TRY(tl_ice_partition_path_segment(f->name, f->transform, f->source, &part->partition[i],
                                             key, err));
        if (tl_buf_append_byte(key, '/') != 0) return tl_error_nomem(err);
    }
    return TL_OK;
}

tl_status tl_data_file_folder(const tl_table *t, const tl_partition_rows *part, tl_buf *key,
                              tl_error *err)
{
    return partition_dir(t, part, key, err);
}

static tl_status open_parquet(const tl_table *t, const struct ArrowSchema *schema,
                              tl_parquet_writer **out, tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const tl_contract *c = &t->contract;
    int32_t field_ids[s->n_fields + 1];
    for (size_t i = 0; i < s->n_fields; i++) field_ids[i] = s->fields[i].id;
    int32_t sorting[c->series_key.len + 1];
    size_t n_sorting = 0;
    for (size_t i = 0; i < c->series_key.len; i++) sorting[n_sorting++] = c->series_index[i];
    if (c->time_index >= 0) sorting[n_sorting++] = c->time_index;
    tl_parquet_write_options o = {
        .codec = c->codec,
        .compression_level = c->codec_level,
        .min_saving_pct = c->codec_min_saving,
        .page_rows = c->data_page_rows,
        .row_group_rows = c->row_group_limit,
        .field_ids = field_ids,
        .sorting_columns = sorting,
        .n_sorting_columns = n_sorting,
        .created_by = CREATED_BY,
        .write_page_index = true,
    };
    return tl_parquet_writer_open(schema, &o, out, err); /* copies what o points to */
}

static tl_status write_parquet(const tl_table *t, const struct ArrowSchema *schema,
                               const struct ArrowArray *array, tl_buf *out,
                               tl_parquet_file_stats *stats, tl_error *err)
{
    tl_parquet_writer *w = NULL;
    TL_TRY(open_parquet(t, schema, &w, err));
    tl_status st = tl_parquet_writer_write(w, array, err);
    if (st == TL_OK) st = tl_parquet_writer_finish(w, out, stats, err);
    tl_parquet_writer_free(w);
    return st;
}

static tl_status add_count(tl_ice_count **list, size_t *n, int32_t id, int64_t v, tl_error *err)
{
    tl_ice_count *p = realloc(*list, (*n + 1) * sizeof **list);
    if (p == NULL) return tl_error_nomem(err);
    p[(*n)++] = (tl_ice_count){id, v};
    *list = p;
    return TL_OK;
}

static tl_status add_bound(tl_ice_bound **list, size_t *n, int32_t id, uint8_t *data, size_t len,
                           tl_error *err)
{
    tl_ice_bound *p = realloc(*list, (*n + 1) * sizeof **list);
    if (p == NULL) {
        free(data);
        return tl_error_nomem(err);
    }
    p[(*n)++] = (tl_ice_bound){id, data, len};
    *list = p;
    return TL_OK;
}

/* Our Parquet writer stores every decimal as big-endian fixed-length bytes. */
static tl_status stat_to_bound(const tl_ice_type *t, const uint8_t *v, size_t len, uint8_t **out,
                               size_t *out_len, tl_error *err)
{
    if (t->id == TL_ICE_DECIMAL)
        return tl_ice_bound_from_parquet_typed(t, TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY, v, len, out,
                                               out_len, err);
    return tl_ice_bound_from_parquet(t, v, len, out, out_len, err);
}

/* Lower/upper bounds of one column; strings are truncated as Iceberg does. */
static tl_status column_bounds(const tl_ice_field *f, const tl_parquet_column_stats *cs,
                               tl_ice_data_file *df, tl_error *err)
{
    if (!cs->has_min_max) return TL_OK;
    uint8_t *lo = NULL, *hi = NULL;
    size_t lo_len = 0, hi_len = 0;
    tl_status st = stat_to_bound(&f->type, cs->min, cs->min_len, &lo, &lo_len, err);
    if (st == TL_OK) st = stat_to_bound(&f->type, cs->max, cs->max_len, &hi, &hi_len, err);
    if (st == TL_OK && f->type.id == TL_ICE_STRING && lo && hi) {
        uint8_t *tlo = NULL, *thi = NULL;
        size_t tlo_len = 0, thi_len = 0;
        st = tl_ice_bound_truncate(&f->type, lo, lo_len, STRING_BOUND_CHARS, false, &tlo, &tlo_len,
                                   err);
        if (st == TL_OK)
            st = tl_ice_bound_truncate(&f->type, hi, hi_len, STRING_BOUND_CHARS, true, &thi,
                                       &thi_len, err);
        free(lo);
        free(hi);
        lo = tlo, lo_len = tlo_len, hi = thi, hi_len = thi_len;
    }
    if (st == TL_OK && lo) {
        st = add_bound(&df->lower_bounds, &df->n_lower_bounds, f->id, lo, lo_len, err);
        lo = NULL;
    }
    if (st == TL_OK && hi) {
        st = add_bound(&df->upper_bounds, &df->n_upper_bounds, f->id, hi, hi_len, err);
        hi = NULL;
    }
    free(lo);
    free(hi);
    return st;
}

static tl_status describe_columns(const tl_ice_schema *s, const tl_parquet_file_stats *stats,
                                  tl_ice_data_file *df, tl_error *err)
{
    /* Top-level flat columns only: a nested column's leaves are not fields of
     * the schema's top level, and their counts are of values, not rows. */
    for (size_t i = 0, leaf = 0; i < s->n_fields && leaf < stats->n_columns; i++) {
        const tl_ice_field *f = &s->fields[i];
        size_t at = leaf;
        while (leaf < stats->n_columns && stats->columns[leaf].field_id != f->id) leaf++;
        if (leaf == stats->n_columns) {
            leaf = at;
            continue;
        }
        const tl_parquet_column_stats *cs = &stats->columns[leaf++];
        TL_TRY(add_count(&df->column_sizes, &df->n_column_sizes, f->id, cs->compressed_size, err));
        TL_TRY(add_count(&df->value_counts, &df->n_value_counts, f->id, cs->value_count, err));
        TL_TRY(add_count(&df->null_value_counts, &df->n_null_value_counts, f->id, cs->null_count,
                         err));
        if (cs->nan_count >= 0)
            TL_TRY(add_count(&df->nan_value_counts, &df->n_nan_value_counts, f->id, cs->nan_count,
                             err));
        TL_TRY(column_bounds(f, cs, df, err));
    }
    return TL_OK;
}

static tl_status describe_file(const tl_table *t, const tl_partition_rows *part, const char *key,
                               const tl_parquet_file_stats *stats, tl_ice_data_file *df,
                               tl_error *err)
{
    memset(df, 0, sizeof *df);
    df->content = 0;
    df->file_path = tl_strdup_printf("%s%s", t->location, key + strlen(t->name.key));
    df->file_format = strdup("PARQUET");
    if (df->file_path == NULL || df->file_format == NULL) return tl_error_nomem(err);
    df->record_count = stats->num_rows;
    df->file_size_in_bytes = stats->file_size;
    TL_TRY(tl_ice_values_copy(part->partition, part->n_partition, &df->partition, err));
    df->n_partition = part->n_partition;
    df->split_offsets = malloc((stats->n_row_groups ? stats->n_row_groups : 1) * sizeof(int64_t));
    if (df->split_offsets == NULL) return tl_error_nomem(err);
    memcpy(df->split_offsets, stats->row_group_offsets, stats->n_row_groups * sizeof(int64_t));
    df->n_split_offsets = stats->n_row_groups;
    const tl_ice_sort_order *order = tl_ice_metadata_default_sort_order(t->md);
    df->has_sort_order_id = true;
    df->sort_order_id = order ? order->order_id : 0;
    return describe_columns(tl_ice_metadata_current_schema(t->md), stats, df, err);
}

/* The file's key and entry, from its bytes' statistics. */
static tl_status name_and_describe(const tl_table *t, const tl_partition_rows *part,
                                   const tl_parquet_file_stats *stats, tl_ice_data_file *out,
                                   char **key_out, tl_error *err)
{
    tl_buf key = {0};
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    tl_status st = partition_dir(t, part, &key, err);
    if (st == TL_OK && tl_buf_printf(&key, "%s.parquet", uuid) != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = describe_file(t, part, (const char *)key.data, stats, out, err);
    if (st == TL_OK)
        *key_out = (char *)tl_buf_detach(&key, NULL);
    else
        tl_ice_data_file_clear(out);
    tl_buf_free(&key);
    return st;
}

tl_status tl_data_file_encode(const tl_table *t, const struct ArrowSchema *schema,
                              const tl_partition_rows *part, tl_ice_data_file *out, char **key_out,
                              tl_buf *file_out, tl_error *err)
{
    tl_parquet_file_stats stats = {0};
    memset(out, 0, sizeof *out);
    memset(file_out, 0, sizeof *file_out);
    *key_out = NULL;
    tl_status st = write_parquet(t, schema, &part->array, file_out, &stats, err);
    if (st == TL_OK) st = name_and_describe(t, part, &stats, out, key_out, err);
    if (st != TL_OK) tl_buf_free(file_out);
    tl_parquet_file_stats_free(&stats);
    return st;
}

/* Keeps the footer for the head, then uploads the file; on failure nothing
 * is left of *out and *key_out. */
static tl_status upload(const tl_table *t, tl_buf *file, tl_ice_data_file *out, char **key_out,
                        struct tl_head_objects *footers, tl_error *err)
{
    tl_status st = footers
                       ? tl_head_footer_keep(t, out->file_path, file->data, file->len, footers, err)
                       : TL_OK;
    if (st == TL_OK) st = tl_store_put_new(t->lake->store, *key_out, file->data, file->len, err);
    if (st != TL_OK) {
        tl_ice_data_file_clear(out);
        free(*key_out);
        *key_out = NULL;
    }
    return st;
}

tl_status tl_data_file_write(const tl_table *t, const struct ArrowSchema *schema,
                             const tl_partition_rows *part, tl_ice_data_file *out, char **key_out,
                             struct tl_head_objects *footers, tl_error *err)
{
    tl_buf file;
    TL_TRY(tl_data_file_encode(t, schema, part, out, key_out, &file, err));
    tl_status st = upload(t, &file, out, key_out, footers, err);
    tl_buf_free(&file);
    return st;
}

struct tl_data_file_writer {
    const tl_table *t;
    tl_parquet_writer *w;
    const tl_ice_value *partition;
    size_t n_partition;
};

tl_status tl_data_file_writer_open(const tl_table *t, const struct ArrowSchema *schema,
                                   const tl_ice_value *partition, size_t n_partition,
                                   tl_data_file_writer **out, tl_error *err)
{
    tl_data_file_writer *w = calloc(1, sizeof *w);
    if (w == NULL) return tl_error_nomem(err);
    *w = (tl_data_file_writer){t, NULL, partition, n_partition};
    tl_status st = open_parquet(t, schema, &w->w, err);
    if (st != TL_OK) {
        free(w);
        return st;
    }
    *out = w;
    return TL_OK;
}

int tl_data_file_writer_reserve(tl_data_file_writer *w, size_t bytes)
{
    return tl_parquet_writer_reserve(w->w, bytes);
}

tl_status tl_data_file_writer_add(tl_data_file_writer *w, const struct ArrowArray *rows,
                                  tl_error *err)
{
    return tl_parquet_writer_write(w->w, rows, err);
}

tl_status tl_data_file_writer_finish(tl_data_file_writer *w, tl_ice_data_file *out, char **key_out,
                                     struct tl_head_objects *footers, tl_error *err)
{
    tl_buf file = {0};
    tl_parquet_file_stats stats = {0};
    tl_partition_rows part = {.partition = (tl_ice_value *)w->partition,
                              .n_partition = w->n_partition};
    memset(out, 0, sizeof *out);
    *key_out = NULL;
    tl_status st = tl_parquet_writer_finish(w->w, &file, &stats, err);
    if (st == TL_OK) st = name_and_describe(w->t, &part, &stats, out, key_out, err);
    if (st == TL_OK) st = upload(w->t, &file, out, key_out, footers, err);
    tl_buf_free(&file);
    tl_parquet_file_stats_free(&stats);
    return st;
}

void tl_data_file_writer_free(tl_data_file_writer *w)
{
    if (w == NULL) return;
    tl_parquet_writer_free(w->w);
    free(w);
}
