/* The runs of an append larger than a chunk merged per partition
 * (append_merge.h). Which runs overlap is found from each run's first and
 * last rows, kept when its chunk was laid out: a partition whose runs are
 * disjoint (an input sorted by series, a partition one chunk wrote) costs
 * nothing more. Runs that overlap go through the compaction's k-way merge,
 * read in place when they are still rows (append_hold.c), from memory when
 * their bytes are still held, else from the store. */
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "table/append_merge.h"
#include "table/maintain.h"

/* An append holds this much (rows, or encoded data) before uploading it: the
 * merge reads it from memory, and runs merged away are never uploaded. */
#define HOLD_BYTES (INT64_C(64) << 20)

int64_t tl_append_hold_bytes(void)
{
    const char *v = getenv("TIMELAKE_APPEND_HOLD_BYTES");
    long long n = v ? atoll(v) : -1;
    return n >= 0 ? n : HOLD_BYTES;
}

/* The set's arrays, not what they hold. */
static void free_arrays(tl_append_files *f)
{
    free(f->files);
    free(f->keys);
    free(f->bytes);
    free(f->items);
    free(f->ends);
    free(f->chunk);
    free(f->raw);
}

tl_status tl_append_files_reserve(tl_append_files *f, size_t n, tl_error *err)
{
    f->files = calloc(n + 1, sizeof *f->files);
    f->keys = calloc(n + 1, sizeof *f->keys);
    f->bytes = calloc(n + 1, sizeof *f->bytes);
    f->items = calloc(n + 1, sizeof *f->items);
    f->ends = calloc(n + 1, sizeof *f->ends);
    f->chunk = calloc(n + 1, sizeof *f->chunk);
    f->raw = calloc(n + 1, sizeof *f->raw);
    if (f->files && f->keys && f->bytes && f->items && f->ends && f->chunk && f->raw) return TL_OK;
    free_arrays(f);
    f->files = NULL, f->keys = NULL, f->bytes = NULL, f->items = NULL;
    f->ends = NULL, f->chunk = NULL, f->raw = NULL;
    return tl_error_nomem(err);
}

/* One file's contents, not its entry's slot. */
static void file_clear(tl_append_files *f, size_t i)
{
    free(f->keys[i]);
    tl_ice_data_file_clear(&f->files[i]);
    tl_buf_free(&f->bytes[i]);
    if (f->ends[i].schema.release) tl_rows_free(&f->ends[i]);
    if (f->raw[i].release) tl_array_release(&f->raw[i]);
}

void tl_append_files_free(tl_table *t, tl_append_files *f, bool remove)
{
    for (size_t i = 0; i < f->n; i++) {
        /* A raw run's key is a folder: it never went up. */
        if (remove && !tl_append_file_is_raw(f, i))
            tl_store_remove(t->lake->store, f->keys[i], NULL);
        file_clear(f, i);
    }
    free_arrays(f);
    if (f->schema.release) tl_schema_release(&f->schema);
    memset(f, 0, sizeof *f);
}

/* ---- Comparing the runs' ends ---- */

#define MAX_KEYS 8

typedef struct run {
    size_t file;     /* index into the files */
    size_t dir_len;  /* the partition: the file's key up to its last '/' */
    const char *key; /* the file's key */
    tl_array_view keys[MAX_KEYS];
    int8_t width[MAX_KEYS]; /* bits of an integer key, 0 for bytes */
    size_t n_keys;
    bool comparable; /* its ends are known and of types compared here */
} run;

static tl_status run_init(const tl_table *t, const tl_append_files *f, size_t i, run *r,
                          tl_error *err)
{
    const tl_contract *c = &t->contract;
    const tl_rows *ends = &f->ends[i];
    const char *slash = strrchr(f->keys[i], '/');
    r->file = i;
    r->key = f->keys[i];
    r->dir_len = slash ? (size_t)(slash - f->keys[i]) : 0;
    size_t n = c->series_key.len + (c->time_index >= 0 ? 1 : 0);
    r->comparable = ends->schema.release && ends->array.length == 2 && n <= MAX_KEYS;
    for (size_t k = 0; r->comparable && k < n; k++) {
        int col = k < c->series_key.len ? c->series_index[k] : c->time_index;
        TL_TRY(tl_array_view_init(&r->keys[k], ends->schema.children[col],
                                  ends->array.children[col], err));
        r->n_keys++;
        r->comparable = tl_merge_key_comparable(&r->keys[k]);
        bool bytes = tl_atype_is_varbinary(r->keys[k].type.id);
        r->width[k] = (int8_t)(bytes ? 0 : tl_arrow_type_bit_width(&r->keys[k].type));
    }
    return TL_OK;
}

static void run_free(run *r)
{
    for (size_t k = 0; k < r->n_keys; k++) tl_array_view_free(&r->keys[k]);
}

/* Row i of a's ends against row j of b's, in the layout's order: key by key,
 * nulls first, integers by value, bytes lexicographically. */
static int cmp_ends(const run *a, int64_t i, const run *b, int64_t j)
{
    for (size_t k = 0; k < a->n_keys; k++) {
        const tl_array_view *va = &a->keys[k], *vb = &b->keys[k];
        bool na = tl_view_is_null(va, i), nb = tl_view_is_null(vb, j);
        if (na || nb) {
            if (na != nb) return na ? -1 : 1;
            continue;
        }
        int c;
        if (a->width[k] == 0) {
            int64_t la, lb;
            const uint8_t *pa = tl_view_bytes(va, i, &la), *pb = tl_view_bytes(vb, j, &lb);
            c = memcmp(pa, pb, (size_t)(la < lb ? la : lb));
            c = c ? c : (la > lb) - (la < lb);
        } else {
            int64_t x = tl_view_int_of_width(va, a->width[k], i),
                    y = tl_view_int_of_width(vb, b->width[k], j);
            c = (x > y) - (x < y);
        }
        if (c) return c < 0 ? -1 : 1;
    }
    return 0;
}

/* By partition, then (comparable first) by first row, then by file. */
static int by_partition_then_first(const void *x, const void *y)
{
    const run *a = x, *b = y;
    size_t n = a->dir_len < b->dir_len ? a->dir_len : b->dir_len;
    int c = memcmp(a->key, b->key, n);
    if (c || a->dir_len != b->dir_len) return c ? c : a->dir_len < b->dir_len ? -1 : 1;
    if (a->comparable != b->comparable) return a->comparable ? -1 : 1;
    c = a->comparable ? cmp_ends(a, 0, b, 0) : 0;
    return c ? c : (a->file > b->file) - (a->file < b->file);
}

static bool same_partition(const run *a, const run *b)
{
    return a->dir_len == b->dir_len && memcmp(a->key, b->key, a->dir_len) == 0;
}

/* The end (exclusive) of the cluster of overlapping runs starting at runs[i]:
 * the runs of its partition whose first row is not past the last rows before
 * it. Runs whose ends are not known (sorted last) overlap them all. */
static size_t cluster_end(const run *runs, size_t n, size_t i)
{
    size_t part_end = i + 1;
    while (part_end < n && same_partition(&runs[i], &runs[part_end])) part_end++;
    if (!runs[part_end - 1].comparable) return part_end;
    const run *last = &runs[i]; /* the run holding the greatest last row so far */
    size_t j = i + 1;
    for (; j < part_end; j++) {
        const run *r = &runs[j];
        if (cmp_ends(r, 0, last, 1) > 0) break; /* starts after all before it */
        if (cmp_ends(r, 1, last, 1) > 0) last = r;
    }
    return j;
}

/* ---- Merging a cluster ---- */

static tl_status merge_cluster(const tl_table *t, const tl_append_files *f, const run *runs,
                               size_t n, tl_rewrite_output *out, bool *fallback, tl_error *err)
{
    tl_live_file *lf = calloc(n, sizeof *lf);
    tl_merge_input *in = calloc(n, sizeof *in);
    tl_rows *raw = calloc(n, sizeof *raw);
    if (lf == NULL || in == NULL || raw == NULL) {
        free(lf);
        free(in);
        free(raw);
        return tl_error_nomem(err);
    }
    int64_t rows = 0, bytes = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = runs[k].file;
        lf[k].file = f->files[i]; /* borrowed: never freed here */
        lf[k].sequence_number = f->chunk[i];
        in[k] = (tl_merge_input){&lf[k], f->bytes[i].data ? &f->bytes[i] : NULL, NULL};
        if (tl_append_file_is_raw(f, i)) { /* borrowed too: the merge reads them in place */
            raw[k] = (tl_rows){.schema = f->schema, .array = f->raw[i]};
            in[k].rows = &raw[k];
        }
        rows += f->files[i].record_count;
        bytes += f->files[i].file_size_in_bytes;
    }
    int64_t target =
        t->contract.target_file_size > 0 ? t->contract.target_file_size : TL_MERGE_RESERVE_MAX;
    int64_t per_row = rows > 0 && bytes / rows > 0 ? bytes / rows : 1;
    int64_t rows_per_file = target / per_row > 0 ? target / per_row : 1;
    tl_status st = tl_merge_inputs(t, in, n, rows_per_file, "merging the append's sorted runs", out,
                                   fallback, err);
    free(lf);
    free(in);
    free(raw);
    return st;
}

/* ---- Replacing the merged files by the merge's ---- */

typedef struct swap {
    tl_append_files next;
    size_t uploaded;
} swap;

static void move_file(tl_append_files *from, size_t i, tl_append_files *to)
{
    size_t k = to->n++;
    to->files[k] = from->files[i];
    to->keys[k] = from->keys[i];
    to->bytes[k] = from->bytes[i];
    to->ends[k] = from->ends[i];
    to->chunk[k] = from->chunk[i];
    to->raw[k] = from->raw[i];
}

/* Lets go of a merged file: deleted from the store when it went up (its
 * footer, if kept, is left out of the head with it: the head carries the
 * footers of live files only). */
static void drop_file(const tl_table *t, tl_append_files *f, size_t i, bool in_store)
{
    if (in_store) tl_store_remove(t->lake->store, f->keys[i], NULL);
    file_clear(f, i);
}

/* The files of f not merged (gone[i] false), then the outputs: those in the
 * store first. Cannot fail once the arrays are made. */
static tl_status replace_merged(const tl_table *t, tl_append_files *f, size_t *uploaded,
                                const bool *gone, tl_rewrite_output *outs, size_t n_outs,
                                tl_head_objects *footers, tl_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) n += !gone[i];
    for (size_t c = 0; c < n_outs; c++) n += outs[c].n_added;
    swap s = {0};
    TL_TRY(tl_append_files_reserve(&s.next, n, err));
    for (size_t c = 0; c < n_outs; c++) {
        tl_status st = tl_head_objects_add_all(footers, &outs[c].footers, err);
        if (st != TL_OK) {
            tl_append_files_free((tl_table *)t, &s.next, false);
            return st;
        }
    }
    tl_append_files *x = &s.next;
    for (size_t i = 0; i < *uploaded; i++)
        if (!gone[i]) move_file(f, i, x);
    for (size_t c = 0; c < n_outs; c++) {
        for (size_t k = 0; k < outs[c].n_added; k++) {
            size_t j = x->n++;
            x->files[j] = outs[c].added[k];
            x->keys[j] = outs[c].keys[k];
            x->chunk[j] = -1;
        }
        outs[c].n_added = 0; /* taken */
    }
    size_t in_store = x->n;
    for (size_t i = *uploaded; i < f->n; i++)
        if (!gone[i]) move_file(f, i, x);
    for (size_t i = 0; i < f->n; i++)
        if (gone[i]) drop_file(t, f, i, i < *uploaded);
    for (size_t i = 0; i < x->n; i++)
        x->items[i] = (tl_store_put_item){x->keys[i], x->bytes[i].data, x->bytes[i].len};
    free_arrays(f);
    x->schema = f->schema;
    *f = *x;
    *uploaded = in_store;
    return TL_OK;
}

/* ---- The whole step ---- */

typedef struct plan {
    run *runs;
    size_t n_runs;
    bool *gone;
    tl_rewrite_output *outs;
    size_t n_outs;
} plan;

static void plan_free(const tl_table *t, plan *p, bool remove_outputs)
{
    for (size_t i = 0; i < p->n_runs; i++) run_free(&p->runs[i]);
    for (size_t c = 0; c < p->n_outs; c++) tl_rewrite_output_free(t, &p->outs[c], remove_outputs);
    free(p->runs);
    free(p->gone);
    free(p->outs);
}

/* Merges each cluster of two runs or more into p->outs, marking its runs gone. */
static tl_status merge_clusters(const tl_table *t, const tl_append_files *f, plan *p, tl_error *err)
{
    for (size_t i = 0, end; i < p->n_runs; i = end) {
        end = cluster_end(p->runs, p->n_runs, i);
        if (end - i < 2) continue;
        bool fallback = false;
        tl_rewrite_output *out = &p->outs[p->n_outs];
        TL_TRY(merge_cluster(t, f, &p->runs[i], end - i, out, &fallback, err));
        if (fallback) continue; /* keys the merge cannot compare: left as they are */
        p->n_outs++;
        for (size_t k = i; k < end; k++) p->gone[p->runs[k].file] = true;
    }
    return TL_OK;
}

tl_status tl_append_merge_runs(const tl_table *t, tl_append_files *f, size_t *uploaded,
                               tl_head_objects *footers, size_t *merged, tl_error *err)
{
    if (merged) *merged = 0;
    /* A table sorted by nothing has no ranges to keep apart. */
    bool sorted = t->contract.series_key.len > 0 || t->contract.time_index >= 0;
    if (f->n < 2 || !sorted) return TL_OK;
    plan p = {0};
    p.runs = calloc(f->n, sizeof *p.runs);
    p.gone = calloc(f->n, sizeof *p.gone);
    p.outs = calloc(f->n, sizeof *p.outs);
    tl_status st = p.runs && p.gone && p.outs ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < f->n; i++, p.n_runs++)
        st = run_init(t, f, i, &p.runs[i], err);
    if (st == TL_OK) qsort(p.runs, p.n_runs, sizeof *p.runs, by_partition_then_first);
    if (st == TL_OK) st = merge_clusters(t, f, &p, err);
    size_t n_gone = 0;
    for (size_t i = 0; st == TL_OK && i < f->n; i++) n_gone += p.gone[i];
    if (st == TL_OK && n_gone > 0)
        st = replace_merged(t, f, uploaded, p.gone, p.outs, p.n_outs, footers, err);
    if (st == TL_OK && merged) *merged = n_gone;
    plan_free(t, &p, st != TL_OK);
    return st;
}
