/* Group commit (tl_table_append_group): the rows of many inputs in one
 * commit, each input keeping the outcome an append of its own would have
 * had. One commit (data files, manifest, metadata, syncs) then serves many
 * small appends, which is most of their cost. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "core/clock.h"
#include "formats/input/text_batch.h"
#include "table/append.h"

/* Commits of one group lost to ids committed meanwhile by another writer,
 * before each input is tried alone. */
#define MAX_ROUNDS 3

/* One call: its inputs and the scratch every commit of it reuses, allocated
 * up front so that only the commits themselves can run out of memory. */
typedef struct group {
    tl_table *t;
    tl_append_input *in;
    int maintain;
    tl_append_fn append;
    bool *decided;             /* per input: its outcome is final */
    const char **ids;          /* the batch ids of a check or of a commit */
    int *seen;                 /* the answer of a check */
    struct ArrowArray *arrays; /* the rows of a commit, moved into its stream */
    size_t *live;              /* the inputs fitted for a commit */
    tl_rows *rows;             /* ... and their rows */
    size_t *pending, *now;     /* inputs left for a later commit; those of this one */
} group;

static void decide(group *g, size_t i, tl_status st, const tl_error *err)
{
    tl_append_input *in = &g->in[i];
    in->status = st;
    if (st != TL_OK) {
        in->error = *err;
        memset(&in->result, 0, sizeof in->result);
        in->group = 0;
    }
    g->decided[i] = true;
}

/* Inputs whose batch id the table has committed are duplicates: nothing of
 * theirs is read or written. A failed check decides nothing (the append
 * checks again). */
static void skip_committed(group *g, const size_t *idx, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!g->decided[idx[i]]) g->ids[m++] = g->in[idx[i]].batch_id;
    tl_error err = {0};
    if (m == 0 || tl_table_batches_committed(g->t, g->ids, m, g->seen, &err) != TL_OK) return;
    m = 0;
    for (size_t i = 0; i < n; i++) {
        if (g->decided[idx[i]] || !g->seen[m++]) continue;
        tl_append_input *in = &g->in[idx[i]];
        memset(&in->result, 0, sizeof in->result);
        in->result.duplicate = 1;
        in->result.version = tl_table_version(g->t);
        in->group = 0;
        decide(g, idx[i], TL_OK, NULL);
    }
}

/* Fits each undecided input's rows to the table (casts, required columns,
 * series key sizes), as the append would: one whose data does not fit fails
 * alone here. The others go to live[] and their rows to rows[]; returns how
 * many. A column already in the table's type is borrowed from the input's
 * batches, not copied: the append lays the rows out into arrays of its own
 * before it returns, and the batches outlive the call, so a failed group
 * still fits them again. */
static size_t fit(group *g, const size_t *idx, size_t n, size_t *live, tl_rows *rows)
{
    int64_t now = tl_now_micros();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        tl_append_input *in = &g->in[idx[i]];
        if (g->decided[idx[i]]) continue;
        tl_error err = {0};
        tl_status st = tl_append_prepare_borrow(g->t, in->schema, in->batches, in->n_batches, now,
                                                &rows[k], &err);
        if (st != TL_OK) {
            decide(g, idx[i], st, &err);
            continue;
        }
        in->result.rows = rows[k].array.length;
        live[k++] = idx[i];
    }
    return k;
}

/* One append of the k inputs' rows (taken), recording every batch id. */
static tl_status append_rows(group *g, const size_t *live, tl_rows *rows, size_t k,
                             tl_append_result *out, tl_error *err)
{
    for (size_t i = 0; i < k; i++) {
        g->ids[i] = g->in[live[i]].batch_id;
        tl_array_move(&rows[i].array, &g->arrays[i]);
        if (i > 0) tl_rows_free(&rows[i]); /* one schema serves: every input's is the table's */
    }
    struct ArrowArrayStream s;
    tl_status st = tl_stream_from_batches(&rows[0].schema, g->arrays, k, &s, err);
    if (st != TL_OK) {
        for (size_t i = 0; i < k; i++) tl_array_release(&g->arrays[i]);
        tl_rows_free(&rows[0]);
        return st;
    }
    tl_append_options o = {.batch_ids = g->ids, .n_batch_ids = k, .maintain = g->maintain};
    return g->append(g->t, &s, &o, out, err); /* releases s */
}

static void committed(group *g, const size_t *live, size_t k, const tl_append_result *r)
{
    for (size_t i = 0; i < k; i++) {
        tl_append_input *in = &g->in[live[i]];
        int64_t rows = r->duplicate ? 0 : in->result.rows;
        in->result = *r;
        in->result.rows = rows;
        in->group = r->duplicate ? 0 : (int)k;
        decide(g, live[i], TL_OK, NULL);
    }
}

static void commit_set(group *g, const size_t *idx, size_t n, size_t *live, tl_rows *rows);

/* Each input of a failed group alone, for its own outcome (a commit whose
 * outcome was unknown is found by the batch id check). */
static void commit_alone(group *g, const size_t *live, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        size_t one;
        tl_rows one_rows;
        commit_set(g, &live[i], 1, &one, &one_rows);
    }
}

/* Commits the rows of inputs idx[0..n) (ids distinct) together; live and
 * rows are scratch for n inputs. */
static void commit_set(group *g, const size_t *idx, size_t n, size_t *live, tl_rows *rows)
{
    for (int round = 1;; round++) {
        skip_committed(g, idx, n);
        size_t k = fit(g, idx, n, live, rows);
        if (k == 0) return;
        tl_append_result r;
        memset(&r, 0, sizeof r);
        tl_error err = {0};
        tl_status st = append_rows(g, live, rows, k, &r, &err);
        if (st == TL_OK) {
            committed(g, live, k, &r);
            return;
        }
        if (k == 1) {
            decide(g, live[0], st, &err);
            return;
        }
        /* Some ids were committed meanwhile by another writer, and some not:
         * those are duplicates now, the rest goes again. */
        if (st == TL_ERR_CONFLICT && round < MAX_ROUNDS) continue;
        commit_alone(g, live, k);
        return;
    }
}

/* Moves to now[] the first input of each batch id among the pending ones,
 * in order, and keeps the repeats pending, in order: a repeat goes in a
 * later commit, where it is a duplicate or, if the first failed, loaded.
 * Returns how many moved. */
static size_t take_distinct(group *g, size_t *n_pending)
{
    size_t k = 0, left = 0;
    for (size_t i = 0; i < *n_pending; i++) {
        size_t j = g->pending[i];
        bool repeat = false;
        for (size_t m = 0; m < k && !repeat; m++)
            repeat = strcmp(g->in[g->now[m]].batch_id, g->in[j].batch_id) == 0;
        if (repeat)
            g->pending[left++] = j;
        else
            g->now[k++] = j;
    }
    *n_pending = left;
    return k;
}

static tl_status check_options(const tl_append_options *o, tl_error *err)
{
    const char *field = o->batch_id                            ? "batch_id"
                        : o->batch_ids || o->n_batch_ids       ? "batch_ids"
                        : o->expect_version                    ? "expect_version"
                        : o->summary                           ? "summary"
                        : o->attachments || o->attachments_len ? "attachments"
                                                               : NULL;
    if (field == NULL) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID,
                        "a group commit takes only options->maintain, not options->%s (each "
                        "input brings its own batch_id)",
                        field);
}

static tl_status check_call(const tl_table *t, const tl_append_input *in, size_t n,
                            const tl_append_options *o, tl_error *err)
{
    if (t == NULL) return tl_error_set(err, TL_ERR_INVALID, "a group commit needs a table");
    if (in == NULL && n > 0)
        return tl_error_set(err, TL_ERR_INVALID, "a group commit of %zu inputs got none", n);
    for (size_t i = 0; i < n; i++) {
        if (in[i].batch_id == NULL)
            return tl_error_set(err, TL_ERR_INVALID,
                                "inputs[%zu] has no batch_id: a group commit needs each "
                                "input's idempotency key",
                                i);
        if (in[i].schema == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "inputs[%zu] has no schema", i);
        if (in[i].batches == NULL && in[i].n_batches > 0)
            return tl_error_set(err, TL_ERR_INVALID, "inputs[%zu] has %zu batches but no array", i,
                                in[i].n_batches);
    }
    return o ? check_options(o, err) : TL_OK;
}

static void group_free(group *g)
{
    free(g->decided);
    free(g->ids);
    free(g->seen);
    free(g->arrays);
    free(g->live);
    free(g->rows);
    free(g->pending);
    free(g->now);
}

static tl_status group_alloc(group *g, size_t n, tl_error *err)
{
    size_t c = n ? n : 1;
    g->decided = calloc(c, sizeof *g->decided);
    g->ids = calloc(c, sizeof *g->ids);
    g->seen = calloc(c, sizeof *g->seen);
    g->arrays = calloc(c, sizeof *g->arrays);
    g->live = calloc(c, sizeof *g->live);
    g->rows = calloc(c, sizeof *g->rows);
    g->pending = calloc(c, sizeof *g->pending);
    g->now = calloc(c, sizeof *g->now);
    if (g->decided && g->ids && g->seen && g->arrays && g->live && g->rows && g->pending && g->now)
        return TL_OK;
    group_free(g);
    return tl_error_nomem(err);
}

/* Every input's outcome starts as `st` (TL_OK: to be decided). */
static void reset_outcomes(tl_append_input *in, size_t n, tl_status st, const tl_error *err)
{
    for (size_t i = 0; in && i < n; i++) {
        in[i].status = st;
        memset(&in[i].error, 0, sizeof in[i].error);
        if (st != TL_OK) in[i].error = *err;
        memset(&in[i].result, 0, sizeof in[i].result);
        in[i].group = 0;
    }
}

/* A batch id goes into the snapshot summary, which is JSON: one that is not
 * UTF-8 fails its own input, as it would fail its own append. */
static void refuse_non_utf8(group *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *id = g->in[i].batch_id;
        if (tl_utf8_valid((const uint8_t *)id, strlen(id))) continue;
        tl_error err = {0};
        tl_error_set(&err, TL_ERR_INVALID,
                     "batch id of inputs[%zu] is not valid UTF-8 (table metadata is JSON): "
                     "give a UTF-8 batch id",
                     i);
        decide(g, i, err.code, &err);
    }
}

tl_status tl_append_group_run(tl_table *t, tl_append_input *inputs, size_t n,
                              const tl_append_options *options, tl_append_fn append, tl_error *err)
{
    group g = {
        .t = t, .in = inputs, .maintain = options ? options->maintain : -1, .append = append};
    tl_error e = {0};
    tl_status st = check_call(t, inputs, n, options, &e);
    if (st == TL_OK) st = group_alloc(&g, n, &e);
    reset_outcomes(inputs, n, st, &e);
    if (st != TL_OK) {
        if (err) *err = e;
        return st;
    }
    refuse_non_utf8(&g, n);
    size_t n_pending = 0;
    for (size_t i = 0; i < n; i++)
        if (!g.decided[i]) g.pending[n_pending++] = i;
    while (n_pending > 0) {
        size_t k = take_distinct(&g, &n_pending);
        commit_set(&g, g.now, k, g.live, g.rows);
    }
    group_free(&g);
    return TL_OK;
}
