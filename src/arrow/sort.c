#include "arrow/sort.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/sort_internal.h"

/* ---- The packed plan ---- */

uint64_t *tl_sort_plan_scratch(tl_sort_plan *p)
{
    if (p->scratch == NULL) p->scratch = malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof *p->scratch);
    return p->scratch;
}

tl_status tl_sort_plan_add(tl_sort_plan *p, uint64_t max_code, tl_error *err)
{
    int b = max_code ? 64 - __builtin_clzll(max_code) : 0;
    if (b == 0) return TL_OK; /* a constant subkey says nothing about the order */
    int last = p->n_words - 1;
    if (last < 0 || p->bits[last] + b > 64) {
        if (p->n_words == p->max_words)
            return tl_error_set(err, TL_ERR_INTERNAL, "sort: too many key words");
        p->words[p->n_words] = p->scratch; /* the codes become the new word as they are */
        p->bits[p->n_words++] = b;
        p->scratch = NULL;
        return TL_OK;
    }
    uint64_t *w = p->words[last];
    int shift = p->bits[last];
    for (int64_t i = 0; i < p->n; i++) w[i] |= p->scratch[i] << shift;
    p->bits[last] += b;
    return TL_OK;
}

static void plan_free(tl_sort_plan *p)
{
    for (int i = 0; i < p->n_words; i++) free(p->words[i]);
    free(p->words);
    free(p->bits);
    free(p->scratch);
}

static tl_status check_keys(const tl_sort_key *keys, size_t n_keys, int64_t length, tl_error *err)
{
    if (length < 0 || (uint64_t)length > UINT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID,
                            "sort: %lld rows is more than the 2^32 - 1 supported",
                            (long long)length);
    for (size_t i = 0; i < n_keys; i++)
        if (keys[i].view->length != length)
            return tl_error_set(err, TL_ERR_INVALID, "sort: key %zu has %lld rows, expected %lld",
                                i, (long long)keys[i].view->length, (long long)length);
    return TL_OK;
}

static tl_status plan_build(const tl_sort_key *keys, size_t n_keys, int64_t length, tl_sort_plan *p,
                            tl_error *err)
{
    memset(p, 0, sizeof *p);
    TL_TRY(check_keys(keys, n_keys, length, err));
    p->n = length;
    p->max_words = (int)n_keys * TL_SORT_MAX_SUBKEYS + 1;
    p->words = calloc((size_t)p->max_words, sizeof *p->words);
    p->bits = calloc((size_t)p->max_words, sizeof *p->bits);
    if (p->words == NULL || p->bits == NULL) {
        plan_free(p);
        return tl_error_nomem(err);
    }
    /* The last key is the least significant: it goes in first. */
    for (size_t k = n_keys; k-- > 0;) {
        tl_status st = tl_sort_encode_key(p, &keys[k], err);
        if (st != TL_OK) {
            plan_free(p);
            return tl_error_prefix(err, "sort key %zu", k);
        }
    }
    return TL_OK;
}

/* Row i <= row i + 1 for every i, comparing words most significant first. */
static bool plan_sorted(const tl_sort_plan *p)
{
    if (p->n_words == 1) {
        const uint64_t *w = p->words[0];
        for (int64_t i = 0; i + 1 < p->n; i++)
            if (w[i] > w[i + 1]) return false;
        return true;
    }
    for (int64_t i = 0; i + 1 < p->n; i++) {
        for (int k = p->n_words - 1; k >= 0; k--) {
            if (p->words[k][i] < p->words[k][i + 1]) break;
            if (p->words[k][i] > p->words[k][i + 1]) return false;
        }
    }
    return true;
}

/* ---- MSD radix sort of (key, row) pairs, stable ---- */

#define TL_RADIX_SMALL 48
#define TL_RADIX_TOP_BITS 11
#define TL_RADIX_BITS 11
#define TL_RADIX_MAX_DEPTH 64

typedef struct tl_radix {
    uint64_t *tk; /* scratch as long as the whole input */
    uint32_t *ti;
    uint32_t *top_counts;  /* 2^16 counters for the first pass */
    uint32_t *deep_counts; /* 2^11 counters per deeper level */
    bool keep_keys;        /* the caller reads the sorted keys, not only the rows */
} tl_radix;

static void insertion_sort(uint64_t *k, uint32_t *ix, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        uint64_t key = k[i];
        uint32_t row = ix[i];
        int64_t j = i;
        for (; j > 0 && k[j - 1] > key; j--) {
            k[j] = k[j - 1];
            ix[j] = ix[j - 1];
        }
        k[j] = key;
        ix[j] = row;
    }
}

static bool keys_sorted(const uint64_t *k, int64_t n)
{
    for (int64_t i = 0; i + 1 < n; i++)
        if (k[i] > k[i + 1]) return false;
    return true;
}

static int digit_bits(int64_t n, int bits, int depth)
{
    int d = 63 - __builtin_clzll((uint64_t)n) - 2;
    int cap = depth == 0 ? TL_RADIX_TOP_BITS : TL_RADIX_BITS;
    if (d < 4) d = 4;
    if (d > cap) d = cap;
    return d < bits ? d : bits;
}

/* Sorts by the low `bits` bits of the keys (higher bits are equal). `at` is
 * the position of k within the whole input, to address the scratch arrays. */
static void radix_sort(tl_radix *r, uint64_t *k, uint32_t *ix, int64_t n, int bits, int64_t at,
                       int depth)
{
    while (n > 1 && bits > 0) {
        if (n <= TL_RADIX_SMALL) {
            insertion_sort(k, ix, n);
            return;
        }
        if (keys_sorted(k, n)) return;
        int d = digit_bits(n, bits, depth), shift = bits - d;
        size_t buckets = (size_t)1 << d;
        uint64_t mask = buckets - 1;
        uint32_t *count = depth == 0
                              ? r->top_counts
                              : r->deep_counts + (size_t)depth * ((size_t)1 << TL_RADIX_BITS);
        memset(count, 0, buckets * sizeof *count);
        for (int64_t i = 0; i < n; i++) count[(k[i] >> shift) & mask]++;
        bits = shift;
        depth++;
        if (count[(k[0] >> shift) & mask] == n) continue; /* one bucket: next digit */
        uint32_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            uint32_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        uint64_t *tk = r->tk + at;
        uint32_t *ti = r->ti + at;
        if (shift == 0 && !r->keep_keys) { /* the last digit: only the rows still matter */
            for (int64_t i = 0; i < n; i++) ti[count[k[i] & mask]++] = ix[i];
            memcpy(ix, ti, (size_t)n * sizeof *ix);
            return;
        }
        for (int64_t i = 0; i < n; i++) {
            uint32_t pos = count[(k[i] >> shift) & mask]++;
            tk[pos] = k[i];
            ti[pos] = ix[i];
        }
        memcpy(k, tk, (size_t)n * sizeof *k);
        memcpy(ix, ti, (size_t)n * sizeof *ix);
        if (shift == 0) return;
        /* count[b] is now the end of bucket b. */
        int64_t start = 0;
        for (size_t b = 0; b < buckets; b++) {
            int64_t end = count[b];
            if (end - start > 1)
                radix_sort(r, k + start, ix + start, end - start, shift, at + start, depth);
            start = end;
        }
        return;
    }
}

static tl_status radix_init(tl_radix *r, int64_t n, tl_error *err)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    r->tk = malloc(m * sizeof *r->tk);
    r->ti = malloc(m * sizeof *r->ti);
    r->top_counts = malloc(((size_t)1 << TL_RADIX_TOP_BITS) * sizeof *r->top_counts);
    r->deep_counts =
        malloc((size_t)(TL_RADIX_MAX_DEPTH + 1) * ((size_t)1 << TL_RADIX_BITS) * sizeof(uint32_t));
    r->keep_keys = false;
    if (r->tk && r->ti && r->top_counts && r->deep_counts) return TL_OK;
    free(r->tk);
    free(r->ti);
    free(r->top_counts);
    free(r->deep_counts);
    return tl_error_nomem(err);
}

static void radix_free(tl_radix *r)
{
    free(r->tk);
    free(r->ti);
    free(r->top_counts);
    free(r->deep_counts);
}

/* LSD over words (least significant first), each word sorted stably. */
static tl_status sort_plan_rows(tl_sort_plan *p, uint32_t *perm, tl_error *err)
{
    tl_radix r;
    uint64_t *scratch = p->n_words > 1 ? tl_sort_plan_scratch(p) : NULL;
    if (p->n_words > 1 && scratch == NULL) return tl_error_nomem(err);
    TL_TRY(radix_init(&r, p->n, err));
    for (int64_t i = 0; i < p->n; i++) perm[i] = (uint32_t)i;
    for (int w = 0; w < p->n_words; w++) {
        uint64_t *keys = p->words[w];
        if (w > 0) {
            /* The rows are permuted now: line this word up with them. */
            for (int64_t i = 0; i < p->n; i++) scratch[i] = keys[perm[i]];
            keys = scratch;
        }
        radix_sort(&r, keys, perm, p->n, p->bits[w], 0, 0);
    }
    radix_free(&r);
    return TL_OK;
}

tl_status tl_sort_pairs(uint64_t *keys, uint32_t *rows, int64_t n, int bits, tl_error *err)
{
    tl_radix r;
    TL_TRY(radix_init(&r, n, err));
    r.keep_keys = true;
    radix_sort(&r, keys, rows, n, bits, 0, 0);
    radix_free(&r);
    return TL_OK;
}

tl_status tl_arrow_sort_indices(const tl_sort_key *keys, size_t n_keys, int64_t length,
                                int64_t **out, tl_error *err)
{
    *out = NULL;
    tl_sort_plan p;
    TL_TRY(plan_build(keys, n_keys, length, &p, err));
    int64_t *idx = malloc((size_t)(length > 0 ? length : 1) * sizeof *idx);
    uint32_t *perm = NULL;
    tl_status st = idx ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK && plan_sorted(&p)) {
        for (int64_t i = 0; i < length; i++) idx[i] = i;
    } else if (st == TL_OK) {
        perm = malloc((size_t)(length > 0 ? length : 1) * sizeof *perm);
        st = perm ? sort_plan_rows(&p, perm, err) : tl_error_nomem(err);
        for (int64_t i = 0; st == TL_OK && i < length; i++) idx[i] = perm[i];
    }
    free(perm);
    plan_free(&p);
    if (st != TL_OK) {
        free(idx);
        return st;
    }
    *out = idx;
    return TL_OK;
}

tl_status tl_arrow_is_sorted(const tl_sort_key *keys, size_t n_keys, int64_t length, bool *out,
                             tl_error *err)
{
    tl_sort_plan p;
    TL_TRY(plan_build(keys, n_keys, length, &p, err));
    *out = plan_sorted(&p);
    plan_free(&p);
    return TL_OK;
}
