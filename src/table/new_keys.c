/* tl_table_filter_new_keys: which rows of an input carry keys the table
 * holds already. The input's distinct keys go into a hash set; a live file is
 * read only when, for every key column, its partition value and its manifest
 * bounds (and null counts) admit some input value, and then only its key
 * columns, of the row groups whose statistics admit one too. So the cost
 * follows the new rows: keys that grow with time (timestamps, sequence
 * numbers, dates) leave only the newest files to read. Keys of no such order
 * (random ids) still read every file's key columns: no index says more. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/cast.h"
#include "arrow/stream.h"
#include "arrow/take.h"
#include "core/grow.h"
#include "core/parallel.h"
#include "formats/parquet/parquet_dict.h"
#include "formats/parquet/parquet_reader.h"
#include "iceberg/bounds.h"
#include "iceberg/transform.h"
#include "table/live_files.h"
#include "table/maintain.h"

#define MAX_KEY_COLUMNS 32
#define READ_THREADS 4

typedef struct bound_val {
    uint8_t *data;
    size_t len;
} bound_val;

/* A key column: the table's field, and the input's distinct values as
 * Iceberg bounds, sorted, for pruning. */
typedef struct key_col {
    const tl_ice_field *field;
    tl_arrow_type type; /* the Arrow type the table's files hold (input values are cast to it) */
    bound_val *values;
    size_t n_values, cap_values;
    bool has_null; /* some input key has a null here */
    bool prunable; /* the values compare with bounds (a supported type, no NaN) */
    /* The values under each temporal transform, sorted: made when a
     * partition field first asks (NULL until then). */
    int64_t *parts[TL_ICE_TRANSFORM_HOUR + 1];
} key_col;

typedef struct new_keys {
    const tl_table *t;
    key_col cols[MAX_KEY_COLUMNS];
    size_t n_cols;
    tl_pq_dict keys;   /* the input's distinct key tuples, encoded */
    uint32_t *row_key; /* per input row: its tuple's index in keys */
    atomic_uchar *found;
    atomic_size_t n_found;
    const tl_live_file **files; /* those that may hold an input key */
    size_t n_files;
} new_keys;

/* ---- Key tuples ---- */

/* Appends value i of v (cast to the column's type) to a tuple: a null is one
 * 0 byte (so NULL equals NULL); a value a 1 byte and its bytes. */
static int encode_value(const tl_array_view *v, int64_t i, tl_buf *out)
{
    if (tl_view_is_null(v, i)) return tl_buf_append_byte(out, 0);
    if (tl_buf_append_byte(out, 1) != 0) return -1;
    int64_t j = v->offset + i;
    switch (v->type.id) {
    case TL_ATYPE_BOOL: {
        uint8_t b = tl_bit_get(v->values, j);
        return tl_buf_append_byte(out, b);
    }
    case TL_ATYPE_FLOAT32:
    case TL_ATYPE_FLOAT64: {
        double d = v->type.id == TL_ATYPE_FLOAT32 ? ((const float *)v->values)[j]
                                                  : ((const double *)v->values)[j];
        if (d == 0) d = 0;                 /* -0.0 equals 0.0 */
        if (d != d) d = __builtin_nan(""); /* and NaN equals NaN */
        return tl_buf_append(out, &d, sizeof d);
    }
    case TL_ATYPE_DECIMAL128:
    case TL_ATYPE_FIXED_BINARY:
        return tl_buf_append(out, (const uint8_t *)v->values + j * v->type.byte_width,
                             (size_t)v->type.byte_width);
    default:
        if (tl_atype_is_varbinary(v->type.id)) {
            int64_t len;
            const uint8_t *p = tl_view_bytes(v, i, &len);
            uint32_t n = (uint32_t)len;
            return tl_buf_append(out, &n, sizeof n) == 0 ? tl_buf_append(out, p, (size_t)len) : -1;
        } else {
            int64_t x = tl_view_int(v, i);
            return tl_buf_append(out, &x, sizeof x);
        }
    }
}

/* The tuple of row `row`; a NULL view is a column the file lacks: null. */
static int encode_tuple(const tl_array_view *const *views, size_t n, int64_t row, tl_buf *out)
{
    out->len = 0;
    for (size_t c = 0; c < n; c++)
        if (views[c] ? encode_value(views[c], row, out) != 0 : tl_buf_append_byte(out, 0) != 0)
            return -1;
    return 0;
}

/* ---- The input's values, for pruning ---- */

/* The Iceberg bound of value i of v (cast to the column's type); *ok false
 * when the value cannot be one (NaN, or a type without bounds here). */
static tl_status value_bound(const key_col *k, const tl_array_view *v, int64_t i, bound_val *out,
                             bool *ok, tl_error *err)
{
    uint8_t fixed[TL_ICE_BOUND_FIXED_MAX];
    size_t len = 0;
    const uint8_t *p = fixed;
    const tl_ice_type *t = &k->field->type;
    *ok = true;
    switch (t->id) {
    case TL_ICE_BOOLEAN:
        TL_TRY(tl_ice_bound_from_int(t, tl_bit_get(v->values, v->offset + i), fixed, &len, err));
        break;
    case TL_ICE_INT:
    case TL_ICE_LONG:
    case TL_ICE_DATE:
    case TL_ICE_TIME:
    case TL_ICE_TIMESTAMP:
    case TL_ICE_TIMESTAMPTZ:
    case TL_ICE_TIMESTAMP_NS:
    case TL_ICE_TIMESTAMPTZ_NS:
        TL_TRY(tl_ice_bound_from_int(t, tl_view_int(v, i), fixed, &len, err));
        break;
    case TL_ICE_FLOAT:
    case TL_ICE_DOUBLE: {
        double d = v->type.id == TL_ATYPE_FLOAT32 ? ((const float *)v->values)[v->offset + i]
                                                  : ((const double *)v->values)[v->offset + i];
        if (d != d) return *ok = false, TL_OK;
        TL_TRY(tl_ice_bound_from_double(t, d, fixed, &len, err));
        break;
    }
    case TL_ICE_STRING:
    case TL_ICE_BINARY: {
        int64_t n;
        p = tl_view_bytes(v, i, &n);
        len = (size_t)n;
        break;
    }
    default:
        return *ok = false, TL_OK;
    }
    out->len = len;
    out->data = malloc(len ? len : 1);
    if (out->data == NULL) return tl_error_nomem(err);
    if (len) memcpy(out->data, p, len);
    return TL_OK;
}

static const tl_ice_type *sort_type; /* qsort has no context: set just around the sort */
static int compare_bounds(const void *a, const void *b)
{
    const bound_val *x = a, *y = b;
    return tl_ice_bound_compare(sort_type, x->data, x->len, y->data, y->len);
}

/* Sorts and deduplicates a column's values. */
static void sort_values(key_col *k)
{
    if (k->n_values == 0) return;
    sort_type = &k->field->type;
    qsort(k->values, k->n_values, sizeof *k->values, compare_bounds);
    size_t n = 1;
    for (size_t i = 1; i < k->n_values; i++) {
        if (compare_bounds(&k->values[n - 1], &k->values[i]) == 0) {
            free(k->values[i].data);
            continue;
        }
        k->values[n++] = k->values[i];
    }
    k->n_values = n;
}

/* Index of the first value at or above `b`. */
static size_t first_at_least(const key_col *k, const uint8_t *b, size_t len)
{
    size_t lo = 0, hi = k->n_values;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tl_ice_bound_compare(&k->field->type, k->values[mid].data, k->values[mid].len, b, len) <
            0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether some input value lies in [lo, hi] (either may be NULL: unbounded). */
static bool values_between(const key_col *k, const uint8_t *lo, size_t lo_len, const uint8_t *hi,
                           size_t hi_len)
{
    size_t i = lo ? first_at_least(k, lo, lo_len) : 0;
    if (i == k->n_values) return false;
    return hi == NULL || tl_ice_bound_compare(&k->field->type, k->values[i].data, k->values[i].len,
                                              hi, hi_len) <= 0;
}

/* ---- Which files ---- */

static const tl_ice_bound *find_bound(const tl_ice_bound *b, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (b[i].field_id == id) return &b[i];
    return NULL;
}

static int64_t find_count(const tl_ice_count *c, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].field_id == id) return c[i].value;
    return -1;
}

/* Whether values of column k with these bounds and counts (-1: unknown) may
 * include an input value. */
static bool column_may_hold(const key_col *k, const uint8_t *lo, size_t lo_len, const uint8_t *hi,
                            size_t hi_len, int64_t values, int64_t nulls)
{
    if (k->has_null && nulls != 0) return true;                     /* a null may match */
    if (values >= 0 && nulls >= 0 && values == nulls) return false; /* nulls only */
    if (!k->prunable) return true;
    return values_between(k, lo, lo_len, hi, hi_len); /* false when the input has only nulls */
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The input's values of column k under a temporal transform, sorted (made
 * once); NULL when one cannot be computed (or memory ran out). */
static const int64_t *transformed(key_col *k, tl_ice_transform tr)
{
    if (k->parts[tr.kind]) return k->parts[tr.kind];
    bool date = k->field->type.id == TL_ICE_DATE;
    int64_t *parts = malloc((k->n_values + 1) * sizeof *parts);
    for (size_t i = 0; parts && i < k->n_values; i++) {
        int64_t v;
        if (tl_ice_bound_to_int(&k->field->type, k->values[i].data, k->values[i].len, &v, NULL) !=
            TL_OK) {
            free(parts);
            return NULL;
        }
        parts[i] =
            date ? tl_ice_transform_apply_date(tr, (int32_t)v) : tl_ice_transform_apply(tr, v);
    }
    if (parts) qsort(parts, k->n_values, sizeof *parts, compare_i64);
    return k->parts[tr.kind] = parts;
}

/* Whether partition value p of a field transforming column k may be that of
 * an input value. */
static bool partition_may_hold(key_col *k, const char *transform, const tl_ice_value *p)
{
    tl_ice_transform tr;
    if (!k->prunable || tl_ice_transform_parse(transform, &tr, NULL) != TL_OK) return true;
    if (p->kind == TL_ICE_VALUE_NULL) return k->has_null;
    const tl_ice_type *t = &k->field->type;
    if (tr.kind == TL_ICE_TRANSFORM_IDENTITY) {
        uint8_t fixed[TL_ICE_BOUND_FIXED_MAX];
        size_t len;
        if (p->kind == TL_ICE_VALUE_STRING || p->kind == TL_ICE_VALUE_BYTES)
            return values_between(k, p->bytes, p->len, p->bytes, p->len);
        if (p->kind != TL_ICE_VALUE_INT && p->kind != TL_ICE_VALUE_LONG &&
            p->kind != TL_ICE_VALUE_BOOL)
            return true;
        if (tl_ice_bound_from_int(t, p->i, fixed, &len, NULL) != TL_OK) return true;
        return values_between(k, fixed, len, fixed, len);
    }
    if (tr.kind < TL_ICE_TRANSFORM_YEAR || tr.kind > TL_ICE_TRANSFORM_HOUR ||
        (t->id != TL_ICE_DATE && t->id != TL_ICE_TIMESTAMP && t->id != TL_ICE_TIMESTAMPTZ) ||
        (p->kind != TL_ICE_VALUE_INT && p->kind != TL_ICE_VALUE_LONG))
        return true;
    const int64_t *parts = transformed(k, tr);
    return parts == NULL || bsearch(&p->i, parts, k->n_values, sizeof *parts, compare_i64);
}

static bool file_may_hold(new_keys *nk, const tl_live_file *lf)
{
    const tl_ice_data_file *f = &lf->file;
    for (size_t c = 0; c < nk->n_cols; c++) {
        const key_col *k = &nk->cols[c];
        int32_t id = k->field->id;
        const tl_ice_bound *lo = find_bound(f->lower_bounds, f->n_lower_bounds, id);
        const tl_ice_bound *hi = find_bound(f->upper_bounds, f->n_upper_bounds, id);
        if (!column_may_hold(k, lo ? lo->data : NULL, lo ? lo->len : 0, hi ? hi->data : NULL,
                             hi ? hi->len : 0, find_count(f->value_counts, f->n_value_counts, id),
                             find_count(f->null_value_counts, f->n_null_value_counts, id)))
            return false;
    }
    const tl_ice_partition_spec *spec = tl_ice_metadata_spec(nk->t->md, lf->partition_spec_id);
    for (size_t j = 0; spec && j < spec->n_fields && j < f->n_partition; j++)
        for (size_t c = 0; c < nk->n_cols; c++)
            if (spec->fields[j].source_id == nk->cols[c].field->id &&
                !partition_may_hold(&nk->cols[c], spec->fields[j].transform, &f->partition[j]))
                return false;
    return true;
}

/* ---- Reading the files' keys ---- */

typedef struct file_read {
    const new_keys *nk;
    tl_store *store;
    char *key;
} file_read;

static tl_status read_range(void *ctx, uint64_t offset, size_t len, uint8_t *dst, tl_error *err)
{
    file_read *fr = ctx;
    return tl_store_get_range(fr->store, fr->key, offset, len, dst, err);
}

/* The leaf column of the file holding field f (by field id, else name), or -1. */
static int file_column(const struct ArrowSchema *schema, const tl_ice_field *f)
{
    int by_name = -1;
    for (int64_t i = 0; i < schema->n_children; i++) {
        const struct ArrowSchema *c = schema->children[i];
        int32_t len;
        const char *id = tl_metadata_find(c->metadata, "PARQUET:field_id", &len);
        if (id && len < 16) {
            char buf[16];
            memcpy(buf, id, (size_t)len);
            buf[len] = 0;
            if (atoi(buf) == f->id) return (int)i;
            continue;
        }
        if (strcmp(c->name, f->name) == 0) by_name = (int)i;
    }
    return by_name;
}

/* Whether row group rg may hold an input key, by its column statistics. */
static bool row_group_may_hold(const new_keys *nk, tl_parquet_reader *r, int rg, const int *cols)
{
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    for (size_t c = 0; c < nk->n_cols; c++) {
        if (cols[c] < 0) {
            if (!nk->cols[c].has_null) return false; /* the column is null throughout */
            continue;
        }
        tl_parquet_column_stats st;
        if (tl_parquet_reader_column_stats(r, rg, cols[c], &st, NULL) != TL_OK) continue;
        const tl_ice_type *t = &nk->cols[c].field->type;
        tl_ice_parquet_physical phys = (tl_ice_parquet_physical)m->row_groups[rg]
                                           .columns[tl_parquet_reader_leaf(r, cols[c])]
                                           .meta.type;
        uint8_t *lo = NULL, *hi = NULL;
        size_t lo_len = 0, hi_len = 0;
        if (st.has_min_max) {
            (void)tl_ice_bound_from_parquet_typed(t, phys, st.min, st.min_len, &lo, &lo_len, NULL);
            (void)tl_ice_bound_from_parquet_typed(t, phys, st.max, st.max_len, &hi, &hi_len, NULL);
        }
        bool may = lo && hi ? column_may_hold(&nk->cols[c], lo, lo_len, hi, hi_len, st.value_count,
                                              st.null_count)
                            : !(st.null_count >= 0 && st.null_count == st.value_count) ||
                                  nk->cols[c].has_null;
        free(lo);
        free(hi);
        tl_parquet_column_stats_clear(&st);
        if (!may) return false;
    }
    return true;
}

/* Marks the input keys found in row group rg. */
static tl_status probe_row_group(new_keys *nk, tl_parquet_reader *r, int rg, const int *cols,
                                 const struct ArrowSchema *schema, tl_error *err)
{
    int want[MAX_KEY_COLUMNS];
    size_t n_want = 0;
    for (size_t c = 0; c < nk->n_cols; c++)
        if (cols[c] >= 0) want[n_want++] = cols[c];
    struct ArrowArray batch = {0};
    if (n_want) TL_TRY(tl_parquet_reader_read_row_group(r, rg, want, n_want, &batch, err));
    int64_t rows = tl_parquet_reader_row_group_rows(r, rg);
    tl_array_view views[MAX_KEY_COLUMNS];
    const tl_array_view *vp[MAX_KEY_COLUMNS] = {NULL};
    size_t made = 0;
    tl_status st = TL_OK;
    for (size_t c = 0; st == TL_OK && c < nk->n_cols; c++) {
        if (cols[c] < 0) continue;
        st = tl_array_view_init(&views[made], schema->children[cols[c]], batch.children[made], err);
        if (st == TL_OK) vp[c] = &views[made++];
    }
    tl_buf tuple = {0};
    for (int64_t i = 0; st == TL_OK && i < rows; i++) {
        if (encode_tuple(vp, nk->n_cols, i, &tuple) != 0) {
            st = tl_error_nomem(err);
            break;
        }
        int64_t k = tl_pq_dict_find(&nk->keys, tuple.data, tuple.len);
        if (k >= 0 && atomic_exchange_explicit(&nk->found[k], 1, memory_order_relaxed) == 0)
            atomic_fetch_add_explicit(&nk->n_found, 1, memory_order_relaxed);
    }
    tl_buf_free(&tuple);
    for (size_t c = 0; c < made; c++) tl_array_view_free(&views[c]);
    tl_array_release(&batch);
    return st;
}

static bool all_found(const new_keys *nk)
{
    return atomic_load_explicit(&nk->n_found, memory_order_relaxed) == nk->keys.n;
}

static tl_status probe_file(void *ctx, size_t i, tl_error *err)
{
    new_keys *nk = ctx;
    if (all_found(nk)) return TL_OK;
    const tl_live_file *lf = nk->files[i];
    char buf[1024];
    const char *key = tl_table_key_of_url(nk->t, lf->file.file_path, buf, sizeof buf);
    if (key == NULL)
        return tl_error_set(err, TL_ERR_STORAGE, "%s is outside the warehouse", lf->file.file_path);
    file_read fr = {nk, nk->t->lake->store, (char *)key};
    tl_parquet_source src = {.ctx = &fr, .read = read_range};
    tl_parquet_reader *r = NULL;
    struct ArrowSchema schema = {0};
    tl_status st = tl_store_size(fr.store, key, &src.size, err);
    if (st == TL_OK) st = tl_parquet_reader_open(&src, &r, err);
    if (st == TL_OK) st = tl_parquet_reader_schema(r, &schema, err);
    int cols[MAX_KEY_COLUMNS];
    for (size_t c = 0; st == TL_OK && c < nk->n_cols; c++)
        cols[c] = file_column(&schema, nk->cols[c].field);
    int n_rg = st == TL_OK ? tl_parquet_reader_num_row_groups(r) : 0;
    for (int rg = 0; st == TL_OK && rg < n_rg && !all_found(nk); rg++)
        if (row_group_may_hold(nk, r, rg, cols))
            st = probe_row_group(nk, r, rg, cols, &schema, err);
    if (schema.release) tl_schema_release(&schema);
    tl_parquet_reader_free(r);
    if (st != TL_OK && st != TL_ERR_NOMEM)
        tl_error_prefix(err, "reading the keys of %s", lf->file.file_path);
    return st;
}

/* ---- The input ---- */

static tl_status resolve_columns(new_keys *nk, const char *const *columns, size_t n, tl_error *err)
{
    if (columns == NULL || n == 0 || n > MAX_KEY_COLUMNS)
        return tl_error_set(err, TL_ERR_INVALID, "give between 1 and %d key columns",
                            MAX_KEY_COLUMNS);
    const tl_ice_schema *s = tl_ice_metadata_current_schema(nk->t->md);
    for (size_t c = 0; c < n; c++) {
        key_col *k = &nk->cols[c];
        k->field = columns[c] ? tl_ice_schema_find(s, columns[c]) : NULL;
        if (k->field == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "table %s has no column \"%s\"",
                                nk->t->name.full, columns[c] ? columns[c] : "(null)");
        for (size_t d = 0; d < c; d++)
            if (nk->cols[d].field == k->field)
                return tl_error_set(err, TL_ERR_INVALID, "key column \"%s\" is given twice",
                                    columns[c]);
        char format[128];
        tl_ice_type_arrow_format(&k->field->type, format, sizeof format);
        TL_TRY(tl_arrow_type_parse(format, &k->type, err));
        k->prunable = true; /* until a value says otherwise (value_bound) */
        nk->n_cols++;
    }
    return TL_OK;
}

/* Views of the key columns of one input batch, cast to the table's types
 * where they differ (casts[c] then holds the cast array). */
static tl_status batch_views(new_keys *nk, const struct ArrowSchema *schema,
                             const struct ArrowArray *batch, const int *idx, tl_array_view *views,
                             struct ArrowArray *casts, struct ArrowSchema *cast_schemas,
                             tl_error *err)
{
    for (size_t c = 0; c < nk->n_cols; c++) {
        const struct ArrowSchema *field = schema->children[idx[c]];
        TL_TRY(tl_array_view_init(&views[c], field, batch->children[idx[c]], err));
        char format[128];
        tl_arrow_type_format(&nk->cols[c].type, format, sizeof format);
        if (!views[c].is_dictionary && strcmp(format, field->format) == 0) continue;
        tl_status st = tl_arrow_cast(&views[c], &nk->cols[c].type, field->name, &casts[c], err);
        tl_array_view_free(&views[c]);
        if (st == TL_OK) st = tl_schema_init(&cast_schemas[c], format, field->name, 0, 0, err);
        if (st == TL_OK) st = tl_array_view_init(&views[c], &cast_schemas[c], &casts[c], err);
        if (st != TL_OK) {
            memset(&views[c], 0, sizeof views[c]);
            return st;
        }
    }
    return TL_OK;
}

/* Adds the values of a new distinct key (row i) to the columns' lists. */
static tl_status note_values(new_keys *nk, const tl_array_view *views, int64_t i, tl_error *err)
{
    for (size_t c = 0; c < nk->n_cols; c++) {
        key_col *k = &nk->cols[c];
        if (tl_view_is_null(&views[c], i)) {
            k->has_null = true;
            continue;
        }
        if (!k->prunable) continue;
        if (TL_GROW(k->values, k->cap_values, k->n_values + 1, 64) != 0) /* one value per new key */
            return tl_error_nomem(err);
        bool ok;
        TL_TRY(value_bound(k, &views[c], i, &k->values[k->n_values], &ok, err));
        if (ok)
            k->n_values++;
        else
            k->prunable = false;
    }
    return TL_OK;
}

/* Every input row's key tuple into the set: nk->row_key[row] is its index. */
static tl_status read_keys(new_keys *nk, const struct ArrowSchema *schema,
                           const struct ArrowArray *batches, size_t n, tl_error *err)
{
    int idx[MAX_KEY_COLUMNS];
    for (size_t c = 0; c < nk->n_cols; c++) {
        idx[c] = -1;
        for (int64_t i = 0; i < schema->n_children; i++)
            if (strcmp(schema->children[i]->name, nk->cols[c].field->name) == 0) idx[c] = (int)i;
        if (idx[c] < 0)
            return tl_error_set(err, TL_ERR_INVALID, "the rows have no column \"%s\" (a key)",
                                nk->cols[c].field->name);
    }
    int64_t total = 0;
    for (size_t b = 0; b < n; b++) total += batches[b].length;
    nk->row_key = malloc((size_t)(total ? total : 1) * sizeof *nk->row_key);
    if (nk->row_key == NULL) return tl_error_nomem(err);
    tl_buf tuple = {0};
    int64_t row = 0;
    tl_status st = TL_OK;
    for (size_t b = 0; st == TL_OK && b < n; b++) {
        tl_array_view views[MAX_KEY_COLUMNS];
        const tl_array_view *vp[MAX_KEY_COLUMNS];
        struct ArrowArray casts[MAX_KEY_COLUMNS] = {{0}};
        struct ArrowSchema cast_schemas[MAX_KEY_COLUMNS] = {{0}};
        memset(views, 0, sizeof views);
        st = batch_views(nk, schema, &batches[b], idx, views, casts, cast_schemas, err);
        for (size_t c = 0; c < nk->n_cols; c++) vp[c] = &views[c];
        for (int64_t i = 0; st == TL_OK && i < batches[b].length; i++, row++) {
            int64_t at = batches[b].offset + i;
            uint32_t k, before = nk->keys.n;
            if (encode_tuple(vp, nk->n_cols, at, &tuple) != 0 ||
                tl_pq_dict_insert(&nk->keys, tuple.data, tuple.len, &k) != 0) {
                st = tl_error_nomem(err);
                break;
            }
            nk->row_key[row] = k;
            if (nk->keys.n > before) st = note_values(nk, views, at, err);
        }
        for (size_t c = 0; c < nk->n_cols; c++) {
            if (views[c].array) tl_array_view_free(&views[c]);
            tl_array_release(&casts[c]);
            if (cast_schemas[c].release) tl_schema_release(&cast_schemas[c]);
        }
    }
    tl_buf_free(&tuple);
    for (size_t c = 0; c < nk->n_cols; c++) sort_values(&nk->cols[c]);
    return st;
}

/* ---- The result ---- */

/* The batches without the rows whose keys were found. */
static tl_status keep_new(new_keys *nk, const struct ArrowSchema *schema,
                          struct ArrowArray *batches, size_t n, struct ArrowArray **out,
                          size_t *n_out, int64_t *dropped, tl_error *err)
{
    *out = calloc(n + 1, sizeof **out);
    if (*out == NULL) return tl_error_nomem(err);
    *n_out = 0;
    *dropped = 0;
    int64_t row = 0;
    for (size_t b = 0; b < n; b++) {
        int64_t len = batches[b].length, kept = 0;
        int64_t *take = malloc((size_t)(len ? len : 1) * sizeof *take);
        if (take == NULL) return tl_error_nomem(err);
        for (int64_t i = 0; i < len; i++)
            if (!atomic_load_explicit(&nk->found[nk->row_key[row + i]], memory_order_relaxed))
                take[kept++] = i;
        row += len;
        *dropped += len - kept;
        tl_status st = TL_OK;
        if (kept == len)
            tl_array_move(&batches[b], &(*out)[(*n_out)++]);
        else if (kept > 0)
            st = tl_arrow_take_struct(schema, &batches[b], take, kept, &(*out)[(*n_out)++], err);
        free(take);
        TL_TRY(st);
    }
    return TL_OK;
}

static void new_keys_free(new_keys *nk)
{
    for (size_t c = 0; c < nk->n_cols; c++) {
        for (size_t i = 0; i < nk->cols[c].n_values; i++) free(nk->cols[c].values[i].data);
        free(nk->cols[c].values);
        for (size_t i = 0; i <= TL_ICE_TRANSFORM_HOUR; i++) free(nk->cols[c].parts[i]);
    }
    tl_pq_dict_free(&nk->keys);
    free(nk->row_key);
    free(nk->found);
    free(nk->files);
}

/* The live files that may hold an input key, and the keys found in them. */
static tl_status probe_table(new_keys *nk, tl_error *err)
{
    tl_live_files lf = {0};
    TL_TRY(tl_maintain_live_files(nk->t, &lf, err)); /* parsed manifests kept by the process */
    tl_status st = TL_OK;
    nk->files = calloc(lf.n + 1, sizeof *nk->files);
    nk->found = calloc(nk->keys.n + 1, sizeof *nk->found);
    if (nk->files == NULL || nk->found == NULL) st = tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && nk->keys.n && i < lf.n; i++)
        if (file_may_hold(nk, &lf.files[i])) nk->files[nk->n_files++] = &lf.files[i];
    if (st == TL_OK && nk->n_files)
        st = tl_parallel_run(nk->n_files, READ_THREADS, true, probe_file, nk, err);
    tl_live_files_free(&lf);
    return st;
}

tl_status tl_table_filter_new_keys(tl_table *t, const char *const *columns, size_t columns_len,
                                   struct ArrowArrayStream *in, struct ArrowArrayStream *out,
                                   int64_t *dropped, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (dropped) *dropped = 0;
    struct ArrowSchema schema = {0};
    struct ArrowArray *batches = NULL, *kept = NULL;
    size_t n = 0, n_kept = 0;
    tl_status st = tl_stream_collect(in, &schema, &batches, &n, err);
    if (in && in->release) in->release(in);
    new_keys nk = {.t = t};
    atomic_init(&nk.n_found, 0);
    int64_t gone = 0;
    if (st == TL_OK) st = resolve_columns(&nk, columns, columns_len, err);
    if (st == TL_OK) st = read_keys(&nk, &schema, batches, n, err);
    if (st == TL_OK) st = probe_table(&nk, err);
    if (st == TL_OK) st = keep_new(&nk, &schema, batches, n, &kept, &n_kept, &gone, err);
    if (st == TL_OK) st = tl_stream_from_batches(&schema, kept, n_kept, out, err);
    if (st == TL_OK && dropped) *dropped = gone;
    for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
    for (size_t i = 0; kept && i < n_kept; i++) tl_array_release(&kept[i]);
    free(batches);
    free(kept);
    if (schema.release) tl_schema_release(&schema);
    new_keys_free(&nk);
    return st;
}
