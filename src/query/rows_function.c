#include "query/rows_function.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "core/buf.h"

struct tl_rowsets {
    tl_rowset **sets;
    int64_t *ids;
    bool *inputs; /* kept by tl_rowsets_clear: a query's inputs */
    size_t n;
};

/* Rowsets larger than this many blocks (of duckdb_vector_size() rows) are
 * scanned in parallel; smaller ones on one thread, in order, as a single
 * file's read_parquet. */
#define PARALLEL_BLOCKS 64

static duckdb_type duck_type_of(const char *f)
{
    if (strcmp(f, "b") == 0) return DUCKDB_TYPE_BOOLEAN;
    if (strcmp(f, "i") == 0) return DUCKDB_TYPE_INTEGER;
    if (strcmp(f, "l") == 0) return DUCKDB_TYPE_BIGINT;
    if (strcmp(f, "f") == 0) return DUCKDB_TYPE_FLOAT;
    if (strcmp(f, "g") == 0) return DUCKDB_TYPE_DOUBLE;
    if (strcmp(f, "tdD") == 0) return DUCKDB_TYPE_DATE;
    if (strcmp(f, "tsu:") == 0) return DUCKDB_TYPE_TIMESTAMP;
    if (strncmp(f, "tsu:", 4) == 0) return DUCKDB_TYPE_TIMESTAMP_TZ;
    if (strcmp(f, "u") == 0) return DUCKDB_TYPE_VARCHAR;
    if (strcmp(f, "z") == 0) return DUCKDB_TYPE_BLOB;
    return DUCKDB_TYPE_INVALID;
}

bool tl_rows_type_mapped(const char *format)
{
    return duck_type_of(format) != DUCKDB_TYPE_INVALID;
}

void tl_rowset_free(tl_rowset *rs)
{
    if (rs == NULL) return;
    for (size_t s = 0; s < rs->n_segs; s++) {
        for (size_t c = 0; rs->segs[s].cols && c < rs->n_cols; c++)
            tl_array_release(&rs->segs[s].cols[c]);
        free(rs->segs[s].cols);
    }
    for (size_t c = 0; c < rs->n_cols; c++) {
        if (rs->names) free(rs->names[c]);
        if (rs->formats) free(rs->formats[c]);
    }
    free(rs->names);
    free(rs->formats);
    free(rs->segs);
    free(rs);
}

/* ---- The scan ---- */

typedef struct block {
    size_t seg;
    int64_t start, rows;
} block;

/* Bind data: which rowset, and the columns it had when bound. A prepared
 * statement (statement_cache.h) is executed again without binding, after
 * the rowset it was bound to was freed and a new one took its id: the scan
 * looks the rowset up when it starts, and refuses one of other columns
 * (which the statement cache's key rules out). */
typedef struct bound {
    tl_query_engine *e;
    int64_t id;
    size_t n_cols;
    char **formats; /* of the rowset's columns, copied */
} bound;

typedef struct scan_state {
    atomic_size_t next;
    const tl_rowset *rs; /* borrowed from the engine */
    block *blocks;
    size_t n_blocks;
    idx_t *cols; /* rowset column of each output vector */
    idx_t n_cols;
} scan_state;

static void bound_free(void *p)
{
    bound *b = p;
    if (b == NULL) return;
    for (size_t c = 0; b->formats && c < b->n_cols; c++) free(b->formats[c]);
    free(b->formats);
    free(b);
}

static const tl_rowset *find(const struct tl_rowsets *r, int64_t id)
{
    for (size_t i = 0; r && i < r->n; i++)
        if (r->ids[i] == id) return r->sets[i];
    return NULL;
}

static bool cut_blocks(scan_state *s)
{
    idx_t size = duckdb_vector_size();
    size_t n = 0;
    for (size_t g = 0; g < s->rs->n_segs; g++)
        n += (size_t)((s->rs->segs[g].rows + (int64_t)size - 1) / (int64_t)size);
    if ((s->blocks = calloc(n + 1, sizeof *s->blocks)) == NULL) return false;
    for (size_t g = 0; g < s->rs->n_segs; g++)
        for (int64_t r = 0; r < s->rs->segs[g].rows; r += (int64_t)size) {
            int64_t left = s->rs->segs[g].rows - r;
            s->blocks[s->n_blocks++] = (block){g, r, left < (int64_t)size ? left : (int64_t)size};
        }
    return true;
}

/* Whether rs has the columns b was bound with. */
static bool same_columns(const bound *b, const tl_rowset *rs)
{
    if (rs->n_cols != b->n_cols) return false;
    for (size_t c = 0; c < rs->n_cols; c++)
        if (strcmp(rs->formats[c], b->formats[c]) != 0) return false;
    return true;
}

static const char *const gone = "Timelake rows are only available to the query they were "
                                "prepared for";

static void rows_bind(duckdb_bind_info info)
{
    tl_query_engine *e = duckdb_bind_get_extra_info(info);
    duckdb_value v = duckdb_bind_get_parameter(info, 0);
    int64_t id = duckdb_get_int64(v);
    duckdb_destroy_value(&v);
    const tl_rowset *rs = find(e->rowsets, id);
    if (rs == NULL) {
        duckdb_bind_set_error(info, gone);
        return;
    }
    bound *b = calloc(1, sizeof *b);
    bool ok = b && (b->formats = calloc(rs->n_cols + 1, sizeof *b->formats)) != NULL;
    if (ok) *b = (bound){e, id, rs->n_cols, b->formats};
    for (size_t c = 0; ok && c < rs->n_cols; c++)
        ok = (b->formats[c] = strdup(rs->formats[c])) != NULL;
    if (!ok) {
        bound_free(b);
        duckdb_bind_set_error(info, "out of memory");
        return;
    }
    for (size_t c = 0; c < rs->n_cols; c++) {
        duckdb_logical_type t = duckdb_create_logical_type(duck_type_of(rs->formats[c]));
        duckdb_bind_add_result_column(info, rs->names[c], t);
        duckdb_destroy_logical_type(&t);
    }
    duckdb_bind_set_cardinality(info, (idx_t)rs->rows, true);
    duckdb_bind_set_bind_data(info, b, bound_free);
}

static void state_free(void *p)
{
    scan_state *s = p;
    if (s == NULL) return;
    free(s->blocks);
    free(s->cols);
    free(s);
}

static void rows_init(duckdb_init_info info)
{
    const bound *b = duckdb_init_get_bind_data(info);
    const tl_rowset *rs = find(b->e->rowsets, b->id);
    if (rs == NULL || !same_columns(b, rs)) {
        duckdb_init_set_error(info, gone);
        return;
    }
    scan_state *s = calloc(1, sizeof *s);
    idx_t n = duckdb_init_get_column_count(info);
    if (s == NULL || (s->cols = calloc(n + 1, sizeof *s->cols)) == NULL ||
        (s->rs = rs, !cut_blocks(s))) {
        state_free(s);
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    s->n_cols = n;
    for (idx_t i = 0; i < n; i++) {
        s->cols[i] = duckdb_init_get_column_index(info, i);
        if (s->cols[i] >= rs->n_cols) continue; /* the row id: not given */
        for (size_t g = 0; g < rs->n_segs; g++)
            if (rs->segs[g].cols[s->cols[i]].release == NULL) {
                char msg[256];
                snprintf(msg, sizeof msg, "Timelake did not decode column \"%s\"",
                         rs->names[s->cols[i]]);
                state_free(s);
                duckdb_init_set_error(info, msg);
                return;
            }
    }
    atomic_init(&s->next, 0);
    duckdb_init_set_max_threads(info, s->n_blocks > PARALLEL_BLOCKS ? s->n_blocks : 1);
    duckdb_init_set_init_data(info, s, state_free);
}

static void local_init(duckdb_init_info info)
{
    (void)info; /* blocks are handed out by the global state */
}

static void copy_validity(const struct ArrowArray *a, int64_t start, int64_t n, duckdb_vector v)
{
    const uint8_t *bits = a->n_buffers > 0 ? a->buffers[0] : NULL;
    if (a->null_count == 0 || bits == NULL) return;
    duckdb_vector_ensure_validity_writable(v);
    uint64_t *valid = duckdb_vector_get_validity(v);
    for (int64_t i = 0; i < n; i++)
        if (!tl_bit_get(bits, a->offset + start + i)) duckdb_validity_set_row_invalid(valid, i);
}

static void copy_column(const struct ArrowArray *a, const char *format, int64_t start, int64_t n,
                        duckdb_vector v)
{
    int64_t at = a->offset + start;
    duckdb_type t = duck_type_of(format);
    void *out = duckdb_vector_get_data(v);
    if (t == DUCKDB_TYPE_BOOLEAN) {
        const uint8_t *bits = a->buffers[1];
        bool *o = out;
        for (int64_t i = 0; i < n; i++) o[i] = tl_bit_get(bits, at + i);
    } else if (t == DUCKDB_TYPE_VARCHAR || t == DUCKDB_TYPE_BLOB) {
        const int32_t *off = a->buffers[1];
        const char *data = a->buffers[2];
        const uint8_t *bits = a->null_count ? a->buffers[0] : NULL;
        for (int64_t i = 0; i < n; i++)
            if (bits == NULL || tl_bit_get(bits, at + i))
                duckdb_vector_assign_string_element_len(v, (idx_t)i, data + off[at + i],
                                                        (idx_t)(off[at + i + 1] - off[at + i]));
    } else {
        size_t w =
            t == DUCKDB_TYPE_INTEGER || t == DUCKDB_TYPE_FLOAT || t == DUCKDB_TYPE_DATE ? 4 : 8;
        memcpy(out, (const uint8_t *)a->buffers[1] + (size_t)at * w, (size_t)n * w);
    }
    copy_validity(a, start, n, v);
}

static void rows_scan(duckdb_function_info info, duckdb_data_chunk output)
{
    scan_state *s = duckdb_function_get_init_data(info);
    size_t i = atomic_fetch_add(&s->next, 1);
    if (i >= s->n_blocks) {
        duckdb_data_chunk_set_size(output, 0);
        return;
    }
    const block *k = &s->blocks[i];
    const tl_rows_segment *seg = &s->rs->segs[k->seg];
    for (idx_t j = 0; j < s->n_cols; j++) {
        duckdb_vector v = duckdb_data_chunk_get_vector(output, j);
        if (s->cols[j] >= s->rs->n_cols) {
            int64_t *ids = duckdb_vector_get_data(v); /* a row id: any distinct number */
            for (int64_t r = 0; r < k->rows; r++) ids[r] = (int64_t)i * 1000000 + r;
            continue;
        }
        copy_column(&seg->cols[s->cols[j]], s->rs->formats[s->cols[j]], k->start, k->rows, v);
    }
    duckdb_data_chunk_set_size(output, (idx_t)k->rows);
}

int tl_rowsets_signature(const tl_query_engine *e, tl_buf *sig)
{
    const struct tl_rowsets *r = e->rowsets;
    for (size_t i = 0; r && i < r->n; i++) {
        const tl_rowset *rs = r->sets[i];
        if (tl_buf_printf(sig, "%lld:", (long long)r->ids[i]) != 0) return -1;
        for (size_t c = 0; c < rs->n_cols; c++)
            if (tl_buf_printf(sig, "%zu:%s%s,", strlen(rs->names[c]), rs->names[c],
                              rs->formats[c]) != 0)
                return -1;
        if (tl_buf_append_byte(sig, ';') != 0) return -1;
    }
    return 0;
}

tl_status tl_rows_register_function(tl_query_engine *e, tl_error *err)
{
    duckdb_table_function f = duckdb_create_table_function();
    if (f == NULL) return tl_error_nomem(err);
    duckdb_table_function_set_name(f, TL_ROWS_FUNCTION);
    duckdb_logical_type big = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_table_function_add_parameter(f, big);
    duckdb_destroy_logical_type(&big);
    duckdb_table_function_set_extra_info(f, e, NULL);
    duckdb_table_function_set_bind(f, rows_bind);
    duckdb_table_function_set_init(f, rows_init);
    duckdb_table_function_set_local_init(f, local_init);
    duckdb_table_function_set_function(f, rows_scan);
    duckdb_table_function_supports_projection_pushdown(f, true);
    duckdb_state ok = duckdb_register_table_function(e->conn, f);
    duckdb_destroy_table_function(&f);
    return ok == DuckDBSuccess
               ? TL_OK
               : tl_error_set(err, TL_ERR_QUERY, "cannot register " TL_ROWS_FUNCTION);
}

static tl_status add(tl_query_engine *e, tl_rowset *rs, bool input, int64_t *id, tl_error *err)
{
    if (e->rowsets == NULL && (e->rowsets = calloc(1, sizeof *e->rowsets)) == NULL) {
        tl_rowset_free(rs);
        return tl_error_nomem(err);
    }
    struct tl_rowsets *r = e->rowsets;
    tl_rowset **sets = realloc(r->sets, (r->n + 1) * sizeof *sets);
    if (sets) r->sets = sets;
    int64_t *ids = sets ? realloc(r->ids, (r->n + 1) * sizeof *ids) : NULL;
    if (ids) r->ids = ids;
    bool *inputs = ids ? realloc(r->inputs, (r->n + 1) * sizeof *inputs) : NULL;
    if (inputs) r->inputs = inputs;
    if (sets == NULL || ids == NULL || inputs == NULL) {
        tl_rowset_free(rs);
        return tl_error_nomem(err);
    }
    /* The smallest id not in use: a query's rowsets take the ids the last
     * query's had, so a table's view reads as it did and is not made again
     * (tl_query_register). */
    *id = 1;
    for (bool taken = true; taken;) {
        taken = false;
        for (size_t i = 0; i < r->n && !taken; i++) taken = r->ids[i] == *id;
        if (taken) ++*id;
    }
    r->sets[r->n] = rs;
    r->inputs[r->n] = input;
    r->ids[r->n++] = *id;
    return TL_OK;
}

tl_status tl_rowsets_add(tl_query_engine *e, tl_rowset *rs, int64_t *id, tl_error *err)
{
    return add(e, rs, false, id, err);
}

tl_status tl_rowsets_add_input(tl_query_engine *e, tl_rowset *rs, int64_t *id, tl_error *err)
{
    return add(e, rs, true, id, err);
}

/* Frees the rowsets that are inputs (or not). */
static void drop(tl_query_engine *e, bool inputs)
{
    struct tl_rowsets *r = e->rowsets;
    if (r == NULL) return;
    size_t kept = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->inputs[i] == inputs) {
            tl_rowset_free(r->sets[i]);
            continue;
        }
        r->sets[kept] = r->sets[i];
        r->ids[kept] = r->ids[i];
        r->inputs[kept++] = r->inputs[i];
    }
    r->n = kept;
}

void tl_rowsets_clear(tl_query_engine *e)
{
    drop(e, false);
}

void tl_rowsets_clear_inputs(tl_query_engine *e)
{
    drop(e, true);
}

void tl_rowsets_free(tl_query_engine *e)
{
    tl_rowsets_clear(e);
    tl_rowsets_clear_inputs(e);
    if (e->rowsets == NULL) return;
    free(e->rowsets->sets);
    free(e->rowsets->ids);
    free(e->rowsets->inputs);
    free(e->rowsets);
    e->rowsets = NULL;
}
