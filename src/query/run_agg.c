#include "query/run_agg.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "query/time_floor.h"

static bool valid(const struct ArrowArray *a, int64_t i)
{
    return a->null_count == 0 || a->buffers[0] == NULL || tl_bit_get(a->buffers[0], a->offset + i);
}

/* Whether two values of the same length are equal: short keys (host
 * names, tags) compared inline, eight bytes at a time. */
static bool same_bytes(const uint8_t *a, const uint8_t *b, int32_t len)
{
    if (len > 32) return memcmp(a, b, (size_t)len) == 0;
    uint64_t x, y;
    for (; len >= 8; len -= 8, a += 8, b += 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return false;
    }
    for (; len > 0; len--)
        if (*a++ != *b++) return false;
    return true;
}

static bool same_key(const struct ArrowArray *a, int64_t i, int64_t j)
{
    if (a->null_count != 0 && a->buffers[0] != NULL) {
        bool vi = valid(a, i), vj = valid(a, j);
        if (!vi || !vj) return vi == vj;
    }
    if (a->dictionary) { /* equal codes, equal strings; a dictionary's repeats only split runs */
        const int32_t *code = (const int32_t *)a->buffers[1] + a->offset;
        return code[i] == code[j];
    }
    const int32_t *off = (const int32_t *)a->buffers[1] + a->offset;
    const uint8_t *d = a->buffers[2];
    int32_t li = off[i + 1] - off[i], lj = off[j + 1] - off[j];
    return li == lj && same_bytes(d + off[i], d + off[j], li);
}

/* The string of row i of a key (utf8, or codes into a utf8 dictionary). */
static const uint8_t *key_string(const struct ArrowArray *a, int64_t i, int32_t *len)
{
    if (a->dictionary) {
        i = ((const int32_t *)a->buffers[1])[a->offset + i];
        a = a->dictionary;
    }
    const int32_t *off = (const int32_t *)a->buffers[1] + a->offset;
    *len = off[i + 1] - off[i];
    return (const uint8_t *)a->buffers[2] + off[i];
}

/* Which of the time range's three parts (before, inside, after) t is in. */
static int side(const tl_run_split *s, int64_t t)
{
    return t < s->lo ? 0 : t > s->hi ? 2 : 1;
}

/* The times [lo, hi) a run starting at time t may hold: t's bucket and
 * side of the query's range. */
static void run_interval(const tl_run_split *s, double inv, int64_t t, int64_t *lo, int64_t *hi)
{
    if (!tl_time_floor(t, s->width, inv, lo)) *lo = INT64_MIN;
    if (__builtin_add_overflow(*lo, s->width, hi)) *hi = INT64_MAX;
    int64_t after = s->hi == INT64_MAX ? INT64_MAX : s->hi + 1; /* the range: [s->lo, after) */
    switch (side(s, t)) {
    case 0:
        if (s->lo < *hi) *hi = s->lo;
        break;
    case 1:
        if (s->lo > *lo) *lo = s->lo;
        if (after < *hi) *hi = after;
        break;
    default:
        if (after > *lo) *lo = after;
    }
}

/* The first row of each run, then n: malloc'd, *n_runs of them (+1).
 * Grown as runs are found: runs are usually few, and a buffer of n rows
 * would be mapped and unmapped (page faults) for every row group. */
static int64_t *run_starts(const tl_run_split *s, const tl_run_input *in, int64_t *n_runs)
{
    size_t cap = 256;
    int64_t *starts = malloc(cap * sizeof *starts), k = 0;
    if (starts == NULL) return NULL;
    const int64_t *tv = (const int64_t *)in->time->buffers[1] + in->time->offset;
    bool tnull = false, tnulls = in->time->null_count != 0 && in->time->buffers[0] != NULL;
    /* The current run's times: its bucket and side of the range, [r_lo, r_hi). */
    int64_t r_lo = 0, r_hi = 0;
    /* With a range, the rows outside it (or of null times) make one run
     * whatever their keys: keep_in_range drops it. */
    bool ranged = s->lo != INT64_MIN || s->hi != INT64_MAX, outside = false;
    double inv = 1.0 / (double)s->width;
    for (int64_t i = 0; i < in->n; i++) {
        bool tvalid = !tnulls || valid(in->time, i), fresh = i == 0 || tvalid == tnull;
        if (!fresh && outside) {
            if (!tvalid || tv[i] < s->lo || tv[i] > s->hi) continue;
            fresh = true;
        }
        if (!fresh && tvalid) fresh = tv[i] < r_lo || tv[i] >= r_hi;
        for (size_t c = 0; !fresh && c < in->n_keys; c++) fresh = !same_key(in->keys[c], i, i - 1);
        if (!fresh) continue;
        if (TL_GROW(starts, cap, (size_t)k + 2, 256) != 0) {
            free(starts);
            return NULL;
        }
        starts[k++] = i;
        tnull = !tvalid;
        outside = ranged && (!tvalid || side(s, tv[i]) != 1);
        if (tvalid) {
            int64_t t = tv[i];
            /* At the ends of time (and DuckDB's infinities) a run may end
             * early: more runs, the same answer. */
            run_interval(s, inv, t, &r_lo, &r_hi);
        }
    }
    starts[k] = in->n;
    *n_runs = k;
    return starts;
}

static bool same_keys_at(const tl_run_input *in, int64_t i)
{
    for (size_t c = 0; c < in->n_keys; c++)
        if (!same_key(in->keys[c], i, i - 1)) return false;
    return true;
}

/* run_starts when no time is null: each run extended by a tight loop over
 * its rows (the common case, and most of the aggregation's time). */
static int64_t *run_starts_valid(const tl_run_split *s, const tl_run_input *in, int64_t *n_runs)
{
    size_t cap = 256;
    int64_t *starts = malloc(cap * sizeof *starts), k = 0, n = in->n;
    if (starts == NULL) return NULL;
    const int64_t *tv = (const int64_t *)in->time->buffers[1] + in->time->offset;
    bool ranged = s->lo != INT64_MIN || s->hi != INT64_MAX;
    double inv = 1.0 / (double)s->width;
    for (int64_t i = 0; i < n;) {
        if (TL_GROW(starts, cap, (size_t)k + 2, 256) != 0) {
            free(starts);
            return NULL;
        }
        starts[k++] = i;
        int64_t t = tv[i++], lo, hi;
        if (ranged && side(s, t) != 1) { /* rows outside the range, whatever their keys */
            while (i < n && (tv[i] < s->lo || tv[i] > s->hi)) i++;
            continue;
        }
        run_interval(s, inv, t, &lo, &hi);
        if (in->n_keys == 0)
            while (i < n && tv[i] >= lo && tv[i] < hi) i++;
        else
            while (i < n && tv[i] >= lo && tv[i] < hi && same_keys_at(in, i)) i++;
    }
    starts[k] = n;
    *n_runs = k;
    return starts;
}

/* Keeps the runs whose rows the query's time range holds (none of a null
 * time when it has a range): starts[] their first rows, ends[] their ends;
 * returns how many. starts[] holds n_runs + 1 entries on entry. */
static int64_t keep_in_range(const tl_run_split *s, const tl_run_input *in, int64_t *starts,
                             int64_t *ends, int64_t n_runs)
{
    const struct ArrowArray *time = in->time;
    const int64_t *tv = (const int64_t *)time->buffers[1] + time->offset;
    bool ranged = s->lo != INT64_MIN || s->hi != INT64_MAX;
    int64_t k = 0;
    for (int64_t r = 0; r < n_runs; r++) {
        int64_t first = starts[r], end = starts[r + 1];
        if (ranged && (!valid(time, first) || side(s, tv[first]) != 1)) continue;
        starts[k] = first;
        ends[k++] = end;
    }
    return k;
}

/* Whether each valid row of rows[] holds a code of its dictionary. */
static bool codes_fit(const struct ArrowArray *a, const int64_t *rows, int64_t n)
{
    if (a->dictionary == NULL) return true;
    const int32_t *code = (const int32_t *)a->buffers[1] + a->offset;
    for (int64_t i = 0; i < n; i++)
        if (valid(a, rows[i]) && (code[rows[i]] < 0 || code[rows[i]] >= a->dictionary->length))
            return false;
    return true;
}

static tl_status gather_strings(const struct ArrowArray *a, const int64_t *rows, int64_t n,
                                struct ArrowArray *out, tl_error *err)
{
    if (!codes_fit(a, rows, n))
        return tl_error_set(err, TL_ERR_INVALID, "partial aggregation: a code past its dictionary");
    size_t bytes = 0;
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t len = 0;
        if (!valid(a, rows[i])) {
            nulls++;
            continue;
        }
        key_string(a, rows[i], &len);
        bytes += (size_t)len;
    }
    if (bytes > INT32_MAX) return tl_error_set(err, TL_ERR_INVALID, "partial states too large");
    TL_TRY(tl_array_init(out, 3, 0, err));
    out->length = n;
    out->null_count = nulls;
    uint8_t *validity = nulls ? tl_array_alloc_buffer(out, 0, (size_t)(n + 7) / 8) : NULL;
    int32_t *o = tl_array_alloc_buffer(out, 1, (size_t)(n + 1) * sizeof *o);
    uint8_t *d = tl_array_alloc_buffer(out, 2, bytes + 1);
    if ((nulls && !validity) || !o || !d) {
        tl_array_release(out);
        return tl_error_nomem(err);
    }
    if (validity) memset(validity, 0, (size_t)(n + 7) / 8);
    int32_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        o[i] = at;
        if (!valid(a, rows[i])) continue;
        if (validity) tl_bit_set(validity, i);
        int32_t len = 0;
        const uint8_t *from = key_string(a, rows[i], &len);
        memcpy(d + at, from, (size_t)len);
        at += len;
    }
    o[n] = at;
    return TL_OK;
}

/* An int64-wide array of n values with validity (NULL: all valid). */
static tl_status fixed_array(int64_t n, void **values, uint8_t **validity, struct ArrowArray *out,
                             tl_error *err)
{
    TL_TRY(tl_array_init(out, 2, 0, err));
    out->length = n;
    *values = tl_array_alloc_buffer(out, 1, (size_t)(n + 1) * 8);
    *validity = tl_array_alloc_buffer(out, 0, (size_t)(n + 7) / 8 + 1);
    if (*values == NULL || *validity == NULL) {
        tl_array_release(out);
        return tl_error_nomem(err);
    }
    memset(*validity, 0xff, (size_t)(n + 7) / 8 + 1);
    return TL_OK;
}

static void set_null(struct ArrowArray *a, uint8_t *validity, int64_t i)
{
    tl_bit_clear(validity, i);
    a->null_count++;
}

static tl_status gather_time(const struct ArrowArray *a, const int64_t *rows, int64_t n,
                             struct ArrowArray *out, tl_error *err)
{
    void *values;
    uint8_t *validity;
    TL_TRY(fixed_array(n, &values, &validity, out, err));
    const int64_t *tv = (const int64_t *)a->buffers[1] + a->offset;
    int64_t *v = values;
    for (int64_t i = 0; i < n; i++) {
        v[i] = tv[rows[i]];
        if (!valid(a, rows[i])) set_null(out, validity, i);
    }
    return TL_OK;
}

/* NaN above every number, as DuckDB orders doubles. */
static bool above(double a, double b)
{
    return isnan(a) ? !isnan(b) : !isnan(b) && a > b;
}

/* The largest of *m and x[0..n) into *m, by four independent comparisons
 * at a time (no chain of dependent ones); false, *m untouched, when a NaN
 * is among them (the caller then orders NaN above every number). */
static bool extreme_max(const double *x, int64_t n, double *m)
{
    double a = *m, b = *m, c = *m, d = *m;
    bool nan = a != a;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a = x[i] > a ? x[i] : a;
        b = x[i + 1] > b ? x[i + 1] : b;
        c = x[i + 2] > c ? x[i + 2] : c;
        d = x[i + 3] > d ? x[i + 3] : d;
        nan |= (x[i] != x[i]) | (x[i + 1] != x[i + 1]) | (x[i + 2] != x[i + 2]) |
               (x[i + 3] != x[i + 3]);
    }
    for (; i < n; i++) {
        a = x[i] > a ? x[i] : a;
        nan |= x[i] != x[i];
    }
    if (nan) return false;
    a = b > a ? b : a;
    c = d > c ? d : c;
    *m = c > a ? c : a;
    return true;
}

/* The smallest, as extreme_max. */
static bool extreme_min(const double *x, int64_t n, double *m)
{
    double a = *m, b = *m, c = *m, d = *m;
    bool nan = a != a;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a = x[i] < a ? x[i] : a;
        b = x[i + 1] < b ? x[i + 1] : b;
        c = x[i + 2] < c ? x[i + 2] : c;
        d = x[i + 3] < d ? x[i + 3] : d;
        nan |= (x[i] != x[i]) | (x[i + 1] != x[i + 1]) | (x[i + 2] != x[i + 2]) |
               (x[i + 3] != x[i + 3]);
    }
    for (; i < n; i++) {
        a = x[i] < a ? x[i] : a;
        nan |= x[i] != x[i];
    }
    if (nan) return false;
    a = b < a ? b : a;
    c = d < c ? d : c;
    *m = c < a ? c : a;
    return true;
}

/* The sums of an int64 column (a rollup's stored counts) of each output
 * row; TL_ERR_INVALID when one leaves int64 (the caller then declines). */
static tl_status int_sums(const struct ArrowArray *a, const int64_t *starts, const int64_t *ends,
                          int64_t n_runs, const int64_t *rows, int64_t *cnt, int64_t *sums,
                          tl_error *err)
{
    const int64_t *x = (const int64_t *)a->buffers[1] + a->offset;
    bool nulls = a->null_count != 0 && a->buffers[0] != NULL;
    bool over = false;
    for (int64_t r = 0; r < n_runs; r++) {
        int64_t o = rows ? rows[r] : r, sum = sums[o], count = cnt[o];
        for (int64_t i = starts[r]; i < ends[r]; i++) {
            if (nulls && !valid(a, i)) continue;
            over |= __builtin_add_overflow(sum, x[i], &sum);
            count++;
        }
        sums[o] = sum;
        cnt[o] = count;
    }
    return over ? tl_error_set(err, TL_ERR_INVALID, "partial aggregation: a sum overflows") : TL_OK;
}

/* The state s of each output row: of run r, or of the runs folded into row
 * rows[r] (n_out rows). */
static tl_status fold_state(const tl_run_state *s, const tl_run_input *in, const int64_t *starts,
                            const int64_t *ends, int64_t n_runs, const int64_t *rows, int64_t n_out,
                            void *values, int64_t *cnt, tl_error *err)
{
    const struct ArrowArray *a = in->values[s->value];
    if (s->op == TL_RUN_SUM_INT) return int_sums(a, starts, ends, n_runs, rows, cnt, values, err);
    const double *x = (const double *)a->buffers[1] + a->offset;
    double *acc = values;
    bool nulls = a->null_count != 0 && a->buffers[0] != NULL;
    if (!nulls && (s->op == TL_RUN_MIN || s->op == TL_RUN_MAX)) {
        bool max = s->op == TL_RUN_MAX;
        for (int64_t r = 0; r < n_runs; r++) {
            int64_t o = rows ? rows[r] : r, i = starts[r];
            double v0 = cnt[o] ? acc[o] : x[i];
            if (max ? !extreme_max(x + i, ends[r] - i, &v0) : !extreme_min(x + i, ends[r] - i, &v0))
                for (; i < ends[r]; i++) { /* a NaN: above every number (above()) */
                    double v = x[i];
                    if (max ? v > v0 || (v != v && v0 == v0) : v < v0 || (v0 != v0 && v == v))
                        v0 = v;
                }
            cnt[o] += ends[r] - starts[r];
            acc[o] = v0;
        }
        return TL_OK;
    }
    for (int64_t r = 0; r < n_runs; r++) {
        int64_t o = rows ? rows[r] : r, count = cnt[o];
        double v0 = acc[o];
        for (int64_t i = starts[r]; i < ends[r]; i++) {
            if (nulls && !valid(a, i)) continue;
            double v = x[i];
            if (s->op == TL_RUN_SUM || count == 0)
                v0 = s->op == TL_RUN_SUM ? v0 + v : v;
            else if (s->op == TL_RUN_MIN ? above(v0, v) : above(v, v0))
                v0 = v;
            count++;
        }
        cnt[o] = count;
        acc[o] = v0;
    }
    (void)n_out;
    return TL_OK;
}

static tl_status state_column(const tl_run_state *s, const tl_run_input *in, const int64_t *starts,
                              const int64_t *ends, int64_t n_runs, const int64_t *rows,
                              int64_t n_out, struct ArrowArray *out, tl_error *err)
{
    void *values;
    uint8_t *validity;
    TL_TRY(fixed_array(n_out, &values, &validity, out, err));
    memset(values, 0, (size_t)n_out * 8); /* int64 and double zeros alike */
    if (s->op == TL_RUN_COUNT_STAR) {
        for (int64_t r = 0; r < n_runs; r++)
            ((int64_t *)values)[rows ? rows[r] : r] += ends[r] - starts[r];
        return TL_OK;
    }
    const struct ArrowArray *a = in->values[s->value];
    const double *x = (const double *)a->buffers[1] + a->offset;
    bool nulls = a->null_count != 0 && a->buffers[0] != NULL;
    if (!rows && !nulls && (s->op == TL_RUN_COUNT || s->op == TL_RUN_SUM)) { /* common, fast */
        for (int64_t r = 0; r < n_runs; r++) {
            if (s->op == TL_RUN_COUNT) {
                ((int64_t *)values)[r] = ends[r] - starts[r];
                continue;
            }
            double acc = 0;
            for (int64_t i = starts[r]; i < ends[r]; i++) acc += x[i];
            ((double *)values)[r] = acc;
        }
        return TL_OK;
    }
    int64_t *cnt = calloc((size_t)n_out + 1, sizeof *cnt);
    tl_status st = cnt ? fold_state(s, in, starts, ends, n_runs, rows, n_out, values, cnt, err)
                       : tl_error_nomem(err);
    for (int64_t o = 0; st == TL_OK && o < n_out; o++) {
        if (s->op == TL_RUN_COUNT)
            ((int64_t *)values)[o] = cnt[o];
        else if (cnt[o] == 0)
            set_null(out, validity, o);
    }
    free(cnt);
    return st;
}

/* With no keys, the runs of one bucket fold into one output row (a row
 * group sorted by series then time holds a bucket once per series): *rows
 * (malloc'd) the output row of each run, *firsts (malloc'd) the first row
 * of each output row's first run; returns how many output rows. Not folded
 * (*rows NULL, *firsts NULL) when there are keys, a null time, or more
 * buckets between the first and the last than runs. */
static int64_t fold_buckets(const tl_run_split *s, const tl_run_input *in, const int64_t *starts,
                            int64_t n_runs, int64_t **rows, int64_t **firsts)
{
    *rows = *firsts = NULL;
    const struct ArrowArray *time = in->time;
    const int64_t *tv = (const int64_t *)time->buffers[1] + time->offset;
    if (in->n_keys || n_runs < 2) return n_runs;
    /* bucket[r]: run r's bucket (its first row's time floored), in *rows
     * until it gives way to the run's output row. */
    int64_t *bucket = malloc((size_t)n_runs * sizeof *bucket);
    if (bucket == NULL) return -1;
    int64_t lo = INT64_MAX, hi = INT64_MIN, span = 0;
    double inv = 1.0 / (double)s->width;
    bool ok = true;
    for (int64_t r = 0; ok && r < n_runs; r++) {
        ok = valid(time, starts[r]) && tl_time_floor(tv[starts[r]], s->width, inv, &bucket[r]);
        lo = ok && bucket[r] < lo ? bucket[r] : lo;
        hi = ok && bucket[r] > hi ? bucket[r] : hi;
    }
    /* Few buckets, and differences a double holds exactly. */
    if (!ok || __builtin_sub_overflow(hi, lo, &span) || span >= TL_FLOOR_FAST_LIMIT ||
        span / s->width >= n_runs) {
        free(bucket);
        return n_runs;
    }
    int64_t n_slots = span / s->width + 1, m = 0;
    int64_t *slot = malloc((size_t)n_slots * sizeof *slot);
    *firsts = malloc((size_t)n_runs * sizeof **firsts);
    if (!slot || !*firsts) {
        free(slot);
        free(bucket);
        free(*firsts);
        *firsts = NULL;
        return -1;
    }
    memset(slot, 0xff, (size_t)n_slots * sizeof *slot);
    for (int64_t r = 0; r < n_runs; r++) {
        /* a multiple of the width: the rounded quotient is exact */
        int64_t k = (int64_t)((double)(bucket[r] - lo) * inv + 0.5);
        if (slot[k] < 0) {
            slot[k] = m;
            (*firsts)[m++] = starts[r];
        }
        bucket[r] = slot[k];
    }
    free(slot);
    *rows = bucket;
    return m;
}

static bool has_format(const struct ArrowArray *a, int64_t n, int64_t buffers)
{
    return a && a->length >= n && a->n_buffers == buffers && a->buffers[buffers - 1] != NULL;
}

tl_status tl_run_aggregate(const tl_run_split *split, const tl_run_input *in,
                           const tl_run_state *states, size_t n_states, struct ArrowArray *out,
                           int64_t *runs, tl_error *err)
{
    bool ok = split->width > 0 && has_format(in->time, in->n, 2);
    for (size_t c = 0; ok && c < in->n_keys; c++) {
        const struct ArrowArray *k = in->keys[c], *dict = k ? k->dictionary : NULL;
        ok = dict ? has_format(k, in->n, 2) && has_format(dict, dict->length, 3)
                  : has_format(k, in->n, 3);
    }
    for (size_t c = 0; ok && c < in->n_values; c++) ok = has_format(in->values[c], in->n, 2);
    for (size_t c = 0; ok && c < n_states; c++)
        ok = states[c].op == TL_RUN_COUNT_STAR || states[c].value < in->n_values;
    if (!ok)
        return tl_error_set(err, TL_ERR_INVALID, "partial aggregation: columns of other types");
    int64_t n_runs = 0;
    bool tnulls = in->time->null_count != 0 && in->time->buffers[0] != NULL;
    int64_t *starts =
        tnulls ? run_starts(split, in, &n_runs) : run_starts_valid(split, in, &n_runs);
    int64_t *ends = starts ? malloc((size_t)(n_runs + 1) * sizeof *ends) : NULL;
    if (ends == NULL) {
        free(starts);
        return tl_error_nomem(err);
    }
    n_runs = keep_in_range(split, in, starts, ends, n_runs);
    int64_t *rows = NULL, *firsts = NULL;
    int64_t n_rows = fold_buckets(split, in, starts, n_runs, &rows, &firsts);
    size_t n_out = in->n_keys + 1 + n_states, done = 0;
    memset(out, 0, n_out * sizeof *out);
    tl_status st = n_rows < 0 ? tl_error_nomem(err) : TL_OK;
    for (; st == TL_OK && done < in->n_keys; done++)
        st = gather_strings(in->keys[done], starts, n_runs, &out[done], err);
    if (st == TL_OK)
        st = gather_time(in->time, firsts ? firsts : starts, n_rows, &out[done++], err);
    for (size_t c = 0; st == TL_OK && c < n_states; c++, done++)
        st = state_column(&states[c], in, starts, ends, n_runs, rows, n_rows, &out[done], err);
    free(starts);
    free(ends);
    free(rows);
    free(firsts);
    if (st != TL_OK) {
        for (size_t c = 0; c < n_out && c < done; c++) tl_array_release(&out[c]);
        return st;
    }
    *runs = n_rows;
    return TL_OK;
}
