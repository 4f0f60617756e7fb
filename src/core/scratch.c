#include "core/scratch.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 8
#define MIN_BYTES ((size_t)64 << 10) /* smaller blocks malloc serves well */
#define MAX_BYTES ((size_t)32 << 20) /* kept by one thread at most */
/* Kept by all threads together: a server's many threads (the pool's up to
 * 64, DuckDB's, its own) would otherwise keep up to 32 MiB each for as long
 * as they live. Four threads' worth: a scan's threads on a small machine. */
#define ALL_BYTES ((size_t)128 << 20)

static atomic_size_t all_bytes;

/* Oldest first. */
typedef struct kept {
    void *block[SLOTS];
    size_t cap[SLOTS];
    size_t n, bytes;
} kept;

static _Thread_local kept *mine;
static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool keyed;

/* At the thread's exit. */
static void drop(void *p)
{
    kept *k = p;
    for (size_t i = 0; i < k->n; i++) free(k->block[i]);
    atomic_fetch_sub(&all_bytes, k->bytes);
    free(k);
    mine = NULL;
}

static void make_key(void)
{
    keyed = pthread_key_create(&key, drop) == 0;
}

static kept *thread_kept(void)
{
    if (mine) return mine;
    pthread_once(&once, make_key);
    kept *k = keyed ? calloc(1, sizeof *k) : NULL;
    if (k && pthread_setspecific(key, k) != 0) {
        free(k);
        k = NULL;
    }
    return mine = k;
}

static void *take(kept *k, size_t i)
{
    void *p = k->block[i];
    k->bytes -= k->cap[i];
    atomic_fetch_sub(&all_bytes, k->cap[i]);
    k->n--;
    memmove(&k->block[i], &k->block[i + 1], (k->n - i) * sizeof *k->block);
    memmove(&k->cap[i], &k->cap[i + 1], (k->n - i) * sizeof *k->cap);
    return p;
}

/* Sizes rounded up to an eighth of their power of two: a block kept then
 * serves the next request a little larger than the last. */
static size_t rounded(size_t size)
{
    size_t step = 64;
    while (step < size / 8) step <<= 1;
    return size > SIZE_MAX - step ? size : (size + step - 1) & ~(step - 1);
}

void *tl_scratch_alloc(size_t size)
{
    kept *k = size >= MIN_BYTES ? mine : NULL;
    size_t best = SLOTS;
    for (size_t i = 0; k && i < k->n; i++) /* the smallest that holds it, not 4 times over */
        if (k->cap[i] >= size && k->cap[i] / 4 <= size &&
            (best == SLOTS || k->cap[i] < k->cap[best]))
            best = i;
    if (best < SLOTS) return take(k, best);
    size = size >= MIN_BYTES ? rounded(size) : (size + 63) & ~(size_t)63;
    return aligned_alloc(64, size ? size : 64);
}

void tl_scratch_free(void *p)
{
    if (p == NULL) return;
    size_t cap = malloc_usable_size(p);
    kept *k =
        cap >= MIN_BYTES && cap <= MAX_BYTES / 2 && ((uintptr_t)p & 63) == 0 ? thread_kept() : NULL;
    if (k == NULL) {
        free(p);
        return;
    }
    /* The oldest go: a decoder wants again the sizes it wanted last. */
    while (k->n == SLOTS || (k->n && k->bytes + cap > MAX_BYTES)) free(take(k, 0));
    while (k->n && atomic_load(&all_bytes) + cap > ALL_BYTES) free(take(k, 0));
    if (atomic_fetch_add(&all_bytes, cap) + cap > ALL_BYTES) { /* the others keep enough */
        atomic_fetch_sub(&all_bytes, cap);
        free(p);
        return;
    }
    k->block[k->n] = p;
    k->cap[k->n++] = cap;
    k->bytes += cap;
}

size_t tl_scratch_kept_all(void)
{
    return atomic_load(&all_bytes);
}

void tl_scratch_kept(size_t *blocks, size_t *bytes)
{
    *blocks = mine ? mine->n : 0;
    *bytes = mine ? mine->bytes : 0;
}
