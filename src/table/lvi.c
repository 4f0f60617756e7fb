/* The last-value index: read, merge with an append's rows, write. */
#include "table/lvi.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/cast.h"
#include "arrow/concat.h"
#include "arrow/nested.h"
#include "arrow/sort.h"
#include "arrow/take.h"
#include "core/random.h"
#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_writer.h"
#include "table/live_files.h"
#include "table/lvi_memo.h"

#define CREATED_BY "timelake-c " TIMELAKE_VERSION

static const char *current_lvi_url(const tl_table *t)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    return s ? tl_ice_snapshot_summary(s, TL_SUMMARY_LVI) : NULL;
}

static int find_column(const struct ArrowSchema *s, const char *name)
{
    for (int64_t i = 0; i < s->n_children; i++)
        if (s->children[i]->name && strcmp(s->children[i]->name, name) == 0) return (int)i;
    return -1;
}

static tl_status read_nested(const struct ArrowSchema *file_schema, const struct ArrowArray *groups,
                             int n_groups, int c, const struct ArrowSchema *want,
                             struct ArrowArray *out, tl_error *err)
{
    struct ArrowArray *cast = calloc((size_t)n_groups + 1, sizeof *cast);
    tl_status st = cast ? TL_OK : tl_error_nomem(err);
    for (int g = 0; st == TL_OK && g < n_groups; g++)
        st = tl_arrow_cast_nested(file_schema->children[c], groups[g].children[c], want, want->name,
                                  &cast[g], err);
    if (st == TL_OK) st = tl_arrow_concat_nested(want, cast, (size_t)n_groups, out, err);
    for (int g = 0; cast && g < n_groups; g++) tl_array_release(&cast[g]);
    free(cast);
    return st;
}

/* Column `i` of the storage layout from every row group of the index file,
 * cast to the storage type (the file may say "tsu:UTC" and "u" where the
 * storage layout has "tsu:+00:00" and "U"). */
static tl_status read_column(const struct ArrowSchema *file_schema, const struct ArrowArray *groups,
                             int n_groups, const struct ArrowSchema *want, struct ArrowArray *out,
                             tl_error *err)
{
    int c = find_column(file_schema, want->name);
    if (c < 0)
        return tl_error_set(err, TL_ERR_INVALID, "the last-value index lacks column \"%s\"",
                            want->name);
    if (tl_arrow_is_nested(want))
        return read_nested(file_schema, groups, n_groups, c, want, out, err);
    tl_arrow_type target;
    TL_TRY(tl_arrow_type_parse(want->format, &target, err));
    tl_array_view *parts = calloc((size_t)n_groups + 1, sizeof *parts);
    struct ArrowArray *cast = calloc((size_t)n_groups + 1, sizeof *cast);
    tl_status st = parts && cast ? TL_OK : tl_error_nomem(err);
    int done = 0;
    for (; st == TL_OK && done < n_groups; done++) {
        tl_array_view v;
        st = tl_array_view_init(&v, file_schema->children[c], groups[done].children[c], err);
        if (st != TL_OK) break;
        st = tl_arrow_cast(&v, &target, want->name, &cast[done], err);
        tl_array_view_free(&v);
        if (st == TL_OK) st = tl_array_view_init(&parts[done], want, &cast[done], err);
        if (st != TL_OK) break;
    }
    if (st == TL_OK) st = tl_arrow_concat(parts, (size_t)n_groups, out, err);
    for (int i = 0; parts && cast && i < n_groups; i++) {
        if (i < done) tl_array_view_free(&parts[i]);
        tl_array_release(&cast[i]);
    }
    free(parts);
    free(cast);
    return st;
}

static tl_status decode_index(const tl_table *t, const tl_buf *file, tl_rows *out, tl_error *err)
{
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file->data, file->len);
    tl_parquet_reader *r = NULL;
    TL_TRY(tl_parquet_reader_open(&src, &r, err));
    struct ArrowSchema fs = {0};
    int n_groups = tl_parquet_reader_num_row_groups(r);
    struct ArrowArray *groups = calloc((size_t)n_groups + 1, sizeof *groups);
    tl_status st = groups ? tl_parquet_reader_schema(r, &fs, err) : tl_error_nomem(err);
    for (int g = 0; st == TL_OK && g < n_groups; g++)
        st = tl_parquet_reader_read_row_group(r, g, NULL, 0, &groups[g], err);
    memset(out, 0, sizeof *out);
    if (st == TL_OK)
        st = tl_storage_schema(tl_ice_metadata_current_schema(t->md), &out->schema, err);
    if (st == TL_OK) st = tl_array_init(&out->array, 1, out->schema.n_children, err);
    if (st == TL_OK) out->array.length = tl_parquet_reader_num_rows(r);
    for (int64_t i = 0; st == TL_OK && i < out->schema.n_children; i++)
        st = read_column(&fs, groups, n_groups, out->schema.children[i], out->array.children[i],
                         err);
    if (st != TL_OK) tl_rows_free(out);
    for (int g = 0; groups && g < n_groups; g++) tl_array_release(&groups[g]);
    free(groups);
    tl_schema_release(&fs);
    tl_parquet_reader_free(r);
    return st;
}

static tl_status read_index(const tl_table *t, const char *url, tl_rows *out, tl_error *err)
{
    tl_buf file = {0};
    tl_status st = tl_table_read_url_or_none(t, url, &file, err);
    if (st == TL_OK) st = decode_index(t, &file, out, err);
    tl_buf_free(&file);
    return st;
}

tl_status tl_lvi_read(const tl_table *t, tl_rows *out, bool *found, tl_error *err)
{
    const char *url = current_lvi_url(t);
    *found = false;
    if (url == NULL) return TL_OK;
    tl_status st = read_index(t, url, out, err);
    if (st != TL_OK) return tl_error_prefix(err, "reading the last-value index %s", url);
    *found = true;
    return TL_OK;
}

/* ---- The index this handle built last (lvi_memo.h) ---- */

/* The kept rows when they are the current snapshot's index (key `url`)
 * laid out like `rows` and its file is still there at its size, else false:
 * a file gone or replaced is read, rebuilt and reported as before
 * (tl_lvi_parent). */
static bool memo_take(const tl_table *t, const char *url, const tl_rows *rows, tl_rows *out)
{
    char buf[1024];
    const char *key = tl_table_key_of_url(t, url, buf, sizeof buf);
    uint64_t kept_size = 0, size;
    bool hit = key && tl_lvi_memo_take(t->lvi_memo, key, t->md->current_schema_id, &rows->schema,
                                       out, &kept_size);
    if (hit && (tl_store_size(t->lake->store, key, &size, NULL) != TL_OK || size != kept_size)) {
        tl_rows_free(out);
        hit = false;
    }
    tl_lvi_memo_count(t->lvi_memo, hit);
    return hit;
}

/* ---- Merging ---- */

static bool value_equal(const tl_array_view *v, int64_t a, int64_t b)
{
    bool na = tl_view_is_null(v, a), nb = tl_view_is_null(v, b);
    if (na || nb) return na == nb;
    if (tl_atype_is_varbinary(v->type.id)) {
        int64_t la, lb;
        const uint8_t *pa = tl_view_bytes(v, a, &la), *pb = tl_view_bytes(v, b, &lb);
        return la == lb && memcmp(pa, pb, (size_t)la) == 0;
    }
    int bits = tl_arrow_type_bit_width(&v->type);
    const uint8_t *vals = v->values;
    if (bits == 1) return tl_bit_get(vals, v->offset + a) == tl_bit_get(vals, v->offset + b);
    size_t w = (size_t)bits / 8;
    return memcmp(vals + (size_t)(v->offset + a) * w, vals + (size_t)(v->offset + b) * w, w) == 0;
}

typedef struct merge_input {
    tl_array_view *cols; /* the combined rows, one view per storage column */
    int64_t length;
} merge_input;

/* Indices (in ascending series-key order) of the winner of every series. */
static tl_status pick_winners(const tl_table *t, const merge_input *in, int64_t **out, int64_t *n,
                              tl_error *err)
{
    const tl_contract *c = &t->contract;
    size_t nk = c->series_key.len;
    tl_sort_key keys[nk + 2];
    size_t k = 0;
    for (size_t i = 0; i < nk; i++) keys[k++] = (tl_sort_key){&in->cols[c->series_index[i]], 0, 1};
    keys[k++] = (tl_sort_key){&in->cols[c->time_index], 0, 1};
    if (c->ingest_column) keys[k++] = (tl_sort_key){&in->cols[c->ingest_index], 0, 1};
    int64_t *idx = NULL;
    TL_TRY(tl_arrow_sort_indices(keys, k, in->length, &idx, err));
    /* Stable ascending order: the last row of each series wins. */
    int64_t m = 0;
    for (int64_t p = 0; p < in->length; p++) {
        bool last = p + 1 == in->length;
        for (size_t i = 0; !last && i < nk; i++)
            last = !value_equal(&in->cols[c->series_index[i]], idx[p], idx[p + 1]);
        if (last) idx[m++] = idx[p];
    }
    *out = idx;
    *n = m;
    return TL_OK;
}

/* The parent's index rows followed by the new rows, column by column. */
static tl_status combine(const tl_rows *parent, const tl_rows *rows, struct ArrowArray *out,
                         tl_error *err)
{
    struct ArrowArray both[2] = {parent->array, rows->array}; /* shallow: only read */
    return tl_arrow_concat_struct(&rows->schema, both, 2, out, err);
}

/* The merged index rows: the winners among `all` (rows with rows->schema). */
static tl_status merge(const tl_table *t, const struct ArrowSchema *schema,
                       const struct ArrowArray *all, struct ArrowArray *out, tl_error *err)
{
    int64_t nc = schema->n_children;
    merge_input in = {calloc((size_t)nc + 1, sizeof(tl_array_view)), all->length};
    if (in.cols == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    int64_t done = 0;
    for (; st == TL_OK && done < nc; done++) {
        if (tl_arrow_is_nested(schema->children[done])) continue; /* never a key */
        st = tl_array_view_init(&in.cols[done], schema->children[done], all->children[done], err);
        if (st != TL_OK) break;
    }
    int64_t *idx = NULL, n = 0;
    if (st == TL_OK) st = pick_winners(t, &in, &idx, &n, err);
    if (st == TL_OK) st = tl_arrow_take_struct(schema, all, idx, n, out, err);
    free(idx);
    for (int64_t i = 0; i < done; i++) tl_array_view_free(&in.cols[i]);
    free(in.cols);
    return st;
}

static tl_status encode(const tl_table *t, const struct ArrowSchema *schema,
                        const struct ArrowArray *rows, tl_buf *out, tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int32_t field_ids[s->n_fields + 1];
    for (size_t i = 0; i < s->n_fields; i++) field_ids[i] = s->fields[i].id;
    tl_parquet_write_options o = {
        .codec = TL_PARQUET_ZSTD,
        .compression_level = 3,
        /* As the data files: a page the codec barely shrinks stays plain, and
         * the small pages of a small table's index are not even tried. */
        .min_saving_pct = t->contract.codec_min_saving,
        .field_ids = field_ids,
        .created_by = CREATED_BY,
        .threads = 1, /* a small file: threads cost more than they save */
    };
    tl_parquet_writer *w = NULL;
    TL_TRY(tl_parquet_writer_open(schema, &o, &w, err));
    tl_status st = tl_parquet_writer_write(w, rows, err);
    if (st == TL_OK) st = tl_parquet_writer_finish(w, out, NULL, err);
    tl_parquet_writer_free(w);
    return st;
}

static int64_t parent_rows(const tl_table *t)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    const char *v = s ? tl_ice_snapshot_summary(s, "total-records") : NULL;
    return v ? strtoll(v, NULL, 10) : 0;
}

char *tl_lvi_key(const tl_table *t, int64_t snapshot_id)
{
    /* UUIDv7: orphan cleanup ages an unreferenced index by its name. */
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    return tl_strdup_printf("%s/metadata/lvi-%lld-%s.parquet", t->name.key, (long long)snapshot_id,
                            uuid);
}

/* Encodes index rows as the index file of snapshot_id, named for it. */
static tl_status encode_named(const tl_table *t, const struct ArrowSchema *schema,
                              const struct ArrowArray *rows, int64_t snapshot_id, char **key_out,
                              tl_buf *file_out, tl_error *err)
{
    tl_status st = encode(t, schema, rows, file_out, err);
    char *key = st == TL_OK ? tl_lvi_key(t, snapshot_id) : NULL;
    if (st == TL_OK && key == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) {
        *key_out = key;
    } else {
        tl_buf_free(file_out);
        tl_error_prefix(err, "building the last-value index");
    }
    return st;
}

tl_status tl_lvi_parent(const tl_table *t, tl_rows *out, bool *found, char *warning, tl_error *err)
{
    const char *url = current_lvi_url(t);
    if (warning) warning[0] = 0;
    *found = false;
    if (url == NULL && parent_rows(t) == 0) return TL_OK;
    tl_error why = {0};
    tl_status st = url ? read_index(t, url, out, &why) : TL_ERR_NOT_FOUND;
    if (st == TL_OK) {
        *found = true;
        return TL_OK;
    }
    /* Only a file that is gone or is not an index is rebuilt: a store that
     * fails (or no memory) is an error, not a reason to read every file. */
    if (st != TL_ERR_NOT_FOUND && st != TL_ERR_INVALID) {
        *err = why;
        return tl_error_prefix(err, "reading the last-value index %s", url);
    }
    TL_TRY(tl_lvi_rebuild(t, out, found, err));
    if (warning && url)
        snprintf(warning, TL_ERROR_MESSAGE_MAX,
                 "%.200s: the last-value index %.400s of version %lld could not be read (%.250s); "
                 "rebuilt it from the data files",
                 t->name.full, url, (long long)t->version, why.message);
    else if (warning)
        snprintf(warning, TL_ERROR_MESSAGE_MAX,
                 "%.200s: version %lld has rows but no last-value index (another writer's commit); "
                 "built it from the data files",
                 t->name.full, (long long)t->version);
    return TL_OK;
}

tl_status tl_lvi_repaired(const tl_table *t, void *ctx, int64_t snapshot_id, char **key,
                          tl_buf *file, tl_error *err)
{
    char *warning = ctx;
    tl_rows index;
    bool found = false;
    *key = NULL;
    memset(file, 0, sizeof *file);
    warning[0] = 0;
    if (t->contract.time_index < 0) return TL_OK;
    TL_TRY(tl_lvi_parent(t, &index, &found, warning, err));
    tl_status st = TL_OK;
    if (found && warning[0])
        st = encode_named(t, &index.schema, &index.array, snapshot_id, key, file, err);
    if (found) tl_rows_free(&index);
    return st;
}

bool tl_lvi_kept(const tl_table *t)
{
    return t->contract.time_index >= 0;
}

bool tl_lvi_wanted(const tl_table *t, bool fresh)
{
    if (!tl_lvi_kept(t)) return false;
    /* A parent with rows and no index (another writer's commit): the merge
     * would need every data file, so an append leaves the index out and a
     * reader computes the newest rows by a query; maintain builds it. */
    return fresh || current_lvi_url(t) != NULL || parent_rows(t) == 0;
}

tl_status tl_lvi_build(const tl_table *t, const tl_rows *rows, bool fresh, const char *key,
                       tl_buf *file_out, char *warning, tl_error *err)
{
    memset(file_out, 0, sizeof *file_out);
    tl_rows parent = {0};
    bool found = false;
    const char *url = current_lvi_url(t);
    if (!fresh && url && memo_take(t, url, rows, &parent))
        found = true;
    else if (!fresh)
        TL_TRY(tl_lvi_parent(t, &parent, &found, warning, err));
    struct ArrowArray all = {0}, merged = {0};
    tl_status st = found ? combine(&parent, rows, &all, err) : TL_OK;
    const struct ArrowArray *input = found ? &all : &rows->array;
    if (st == TL_OK) st = merge(t, &rows->schema, input, &merged, err);
    if (st == TL_OK) {
        st = encode(t, &rows->schema, &merged, file_out, err);
        if (st != TL_OK) tl_error_prefix(err, "building the last-value index");
    }
    if (st != TL_OK) tl_buf_free(file_out);
    if (st == TL_OK && key)
        tl_lvi_memo_keep(t->lvi_memo, key, file_out->len, t->md->current_schema_id, &rows->schema,
                         &merged);
    if (merged.release) tl_array_release(&merged);
    tl_array_release(&all);
    if (found) tl_rows_free(&parent);
    return st;
}

tl_status tl_lvi_encode(const tl_table *t, const tl_rows *rows, int64_t snapshot_id, bool fresh,
                        char **key_out, tl_buf *file_out, char *warning, tl_error *err)
{
    *key_out = NULL;
    memset(file_out, 0, sizeof *file_out);
    if (!tl_lvi_wanted(t, fresh)) return TL_OK;
    TL_TRY(tl_lvi_build(t, rows, fresh, NULL, file_out, warning, err));
    *key_out = tl_lvi_key(t, snapshot_id);
    if (*key_out) return TL_OK;
    tl_buf_free(file_out);
    return tl_error_nomem(err);
}

tl_status tl_lvi_filter(const tl_table *t, tl_lvi_keep_fn keep, void *ctx, int64_t snapshot_id,
                        char **key_out, tl_buf *file_out, tl_error *err)
{
    *key_out = NULL;
    memset(file_out, 0, sizeof *file_out);
    if (!tl_lvi_kept(t)) return TL_OK;
    tl_rows index = {0};
    bool found = false;
    TL_TRY(tl_lvi_read(t, &index, &found, err));
    if (!found) return TL_OK;
    int64_t n = index.array.length, kept = 0;
    int64_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
    tl_array_view time;
    tl_status st = idx ? tl_array_view_init(&time, index.schema.children[t->contract.time_index],
                                            index.array.children[t->contract.time_index], err)
                       : tl_error_nomem(err);
    for (int64_t i = 0; st == TL_OK && i < n; i++)
        if (tl_view_is_null(&time, i) ||
            keep(t, ((const int64_t *)time.values)[time.offset + i], ctx))
            idx[kept++] = i;
    if (idx && st == TL_OK) tl_array_view_free(&time);
    struct ArrowArray less = {0};
    if (st == TL_OK && kept < n)
        st = tl_arrow_take_struct(&index.schema, &index.array, idx, kept, &less, err);
    if (st == TL_OK && kept < n)
        st = encode_named(t, &index.schema, &less, snapshot_id, key_out, file_out, err);
    tl_array_release(&less);
    free(idx);
    tl_rows_free(&index);
    return st;
}

tl_status tl_lvi_winners(const tl_table *t, const tl_rows *rows, tl_rows *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    tl_status st = merge(t, &rows->schema, &rows->array, &out->array, err);
    if (st == TL_OK) st = tl_schema_copy(&rows->schema, &out->schema, err);
    if (st != TL_OK) tl_rows_free(out);
    return st;
}

tl_status tl_lvi_newest(const tl_table *t, const tl_rows *a, const tl_rows *b, tl_rows *out,
                        tl_error *err)
{
    memset(out, 0, sizeof *out);
    struct ArrowArray all = {0};
    TL_TRY(combine(a, b, &all, err));
    tl_status st = merge(t, &a->schema, &all, &out->array, err);
    if (st == TL_OK) st = tl_schema_copy(&a->schema, &out->schema, err);
    if (st != TL_OK) tl_rows_free(out);
    tl_array_release(&all);
    return st;
}
