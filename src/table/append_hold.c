/* The runs an append larger than a chunk holds in memory (append_merge.h):
 * a chunk's sorted rows are kept as they are, not encoded, while they fit,
 * since a time-ordered input's runs all overlap and the merge would decode
 * them only to encode them again. What is left raw once the runs are merged
 * (or when the append must make room) is encoded here, a few runs at once. */
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/nested.h"
#include "core/parallel.h"
#include "table/append_merge.h"

/* Data files are encoded by a few threads at once, as a chunk's are. */
#define ENCODE_THREADS 4

bool tl_append_hold_raw(int64_t chunks_before, int64_t calibrated_bytes, int64_t held,
                        int64_t chunk_bytes, int64_t limit, bool last)
{
    if (chunks_before == 0 || calibrated_bytes <= 0) return false;
    return last || held + chunk_bytes <= limit;
}

/* Bytes of one column's buffers, about: nested columns are guessed. */
static int64_t column_bytes(const struct ArrowSchema *s, const struct ArrowArray *a)
{
    tl_array_view v;
    tl_error err;
    if (tl_arrow_is_nested(s) || tl_array_view_init(&v, s, a, &err) != TL_OK) return a->length * 16;
    int64_t n = v.length, bytes = v.validity ? (n + 7) / 8 : 0;
    const tl_arrow_type *type = v.is_dictionary ? &v.index_type : &v.type;
    if (!v.is_dictionary && tl_atype_is_varbinary(v.type.id)) {
        bytes += (n + 1) *
                 (v.type.id == TL_ATYPE_LARGE_STRING || v.type.id == TL_ATYPE_LARGE_BINARY ? 8 : 4);
        if (n > 0) {
            int64_t l0, l1;
            const uint8_t *p0 = tl_view_bytes(&v, 0, &l0), *p1 = tl_view_bytes(&v, n - 1, &l1);
            bytes += (int64_t)(p1 - p0) + l1;
        }
    } else {
        bytes += (n * tl_arrow_type_bit_width(type) + 7) / 8;
    }
    tl_array_view_free(&v);
    return bytes;
}

int64_t tl_append_rows_bytes(const struct ArrowSchema *schema, const struct ArrowArray *array)
{
    int64_t bytes = 0;
    for (int64_t c = 0; c < schema->n_children && c < array->n_children; c++)
        bytes += column_bytes(schema->children[c], array->children[c]);
    return bytes;
}

int64_t tl_append_files_held(const tl_append_files *f, size_t from)
{
    int64_t held = 0;
    for (size_t i = from; i < f->n; i++)
        held += tl_append_file_is_raw(f, i) ? tl_append_rows_bytes(&f->schema, &f->raw[i])
                                            : (int64_t)f->bytes[i].len;
    return held;
}

/* A raw run's key: its partition's folder, by which the merge groups it. */
static tl_status folder_key(const tl_table *t, const tl_partition_rows *part, char **out,
                            tl_error *err)
{
    tl_buf key = {0};
    tl_status st = tl_data_file_folder(t, part, &key, err);
    if (st == TL_OK && (*out = (char *)tl_buf_detach(&key, NULL)) == NULL) st = tl_error_nomem(err);
    tl_buf_free(&key);
    return st;
}

/* Takes parts[i]'s rows and partition into e's slot i, as a raw run. */
static tl_status hold_one(const tl_table *t, tl_partition_rows *part, double ratio,
                          tl_append_files *e, size_t i, tl_error *err)
{
    tl_ice_data_file *df = &e->files[i];
    TL_TRY(folder_key(t, part, &e->keys[i], err));
    if ((df->file_path = strdup(e->keys[i])) == NULL) {
        free(e->keys[i]);
        e->keys[i] = NULL;
        return tl_error_nomem(err);
    }
    df->record_count = part->array.length;
    df->file_size_in_bytes =
        (int64_t)((double)tl_append_rows_bytes(&e->schema, &part->array) * ratio);
    if (df->file_size_in_bytes < 1) df->file_size_in_bytes = 1;
    df->partition = part->partition;
    df->n_partition = part->n_partition;
    part->partition = NULL;
    part->n_partition = 0;
    e->raw[i] = part->array;
    part->array.release = NULL;
    return TL_OK;
}

tl_status tl_append_files_hold(const tl_table *t, const struct ArrowSchema *schema,
                               tl_partition_rows *parts, size_t n_parts, double ratio,
                               tl_append_files *e, tl_error *err)
{
    memset(e, 0, sizeof *e);
    TL_TRY(tl_append_files_reserve(e, n_parts, err));
    TL_TRY(tl_schema_copy(schema, &e->schema, err));
    for (; e->n < n_parts; e->n++) TL_TRY(hold_one(t, &parts[e->n], ratio, e, e->n, err));
    return TL_OK;
}

/* ---- Encoding the raw runs ---- */

typedef struct encode_job {
    const tl_table *t;
    tl_append_files *f;
    const size_t *which;
} encode_job;

static tl_status encode_one(void *ctx, size_t j, tl_error *err)
{
    encode_job *job = ctx;
    tl_append_files *f = job->f;
    size_t i = job->which[j];
    tl_partition_rows part = {f->files[i].partition, f->files[i].n_partition, f->raw[i]};
    tl_ice_data_file df;
    char *key;
    tl_buf bytes;
    TL_TRY(tl_data_file_encode(job->t, &f->schema, &part, &df, &key, &bytes, err));
    tl_ice_data_file_clear(&f->files[i]);
    free(f->keys[i]);
    f->files[i] = df;
    f->keys[i] = key;
    f->bytes[i] = bytes;
    f->items[i] = (tl_store_put_item){key, bytes.data, bytes.len};
    tl_array_release(&f->raw[i]);
    return TL_OK;
}

tl_status tl_append_files_encode_raw(const tl_table *t, tl_append_files *f, tl_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) n += tl_append_file_is_raw(f, i);
    if (n == 0) return TL_OK;
    size_t *which = malloc(n * sizeof *which);
    if (which == NULL) return tl_error_nomem(err);
    n = 0;
    for (size_t i = 0; i < f->n; i++)
        if (tl_append_file_is_raw(f, i)) which[n++] = i;
    /* Each job writes its own slot: a failed one leaves its run raw. */
    encode_job job = {t, f, which};
    tl_status st = tl_parallel_run(n, ENCODE_THREADS, true, encode_one, &job, err);
    free(which);
    return st;
}
