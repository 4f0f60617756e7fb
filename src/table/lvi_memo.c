#include "table/lvi_memo.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"

/* A memo's fields other than `pool` belong to the pool's lock: another
 * handle's keep may drop them at any time. */
struct tl_lvi_memo {
    tl_lvi_memos *pool;
    tl_lvi_memo *older, *newer; /* in the pool's list while it holds rows */
    char *key;                  /* NULL: holds nothing */
    uint64_t size;              /* of the file: one replaced or gone is read (and reported) */
    int32_t schema_id;
    int64_t bytes; /* counted against the budget */
    tl_rows rows;
};

struct tl_lvi_memos {
    pthread_mutex_t lock;
    int refs;
    int64_t budget, used, kept;
    int64_t hits, misses, dropped;
    tl_lvi_memo *oldest, *newest;
};

tl_lvi_memos *tl_lvi_memos_new(int64_t budget_bytes)
{
    tl_lvi_memos *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    p->refs = 1;
    p->budget = budget_bytes;
    return p;
}

static tl_lvi_memos *process_memos;
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

static void process_make(void)
{
    process_memos = tl_lvi_memos_new(TL_LVI_MEMO_DEFAULT_BYTES);
}

tl_lvi_memos *tl_lvi_memos_process(void)
{
    pthread_once(&process_once, process_make);
    return process_memos ? tl_lvi_memos_ref(process_memos) : NULL;
}

tl_lvi_memos *tl_lvi_memos_ref(tl_lvi_memos *p)
{
    pthread_mutex_lock(&p->lock);
    p->refs++;
    pthread_mutex_unlock(&p->lock);
    return p;
}

void tl_lvi_memos_free(tl_lvi_memos *p)
{
    if (p == NULL) return;
    pthread_mutex_lock(&p->lock);
    int left = --p->refs;
    pthread_mutex_unlock(&p->lock);
    if (left > 0) return;
    pthread_mutex_destroy(&p->lock); /* no memo left: each holds a reference */
    free(p);
}

void tl_lvi_memos_stats(tl_lvi_memos *p, tl_index_cache_counts *out)
{
    pthread_mutex_lock(&p->lock);
    *out = (tl_index_cache_counts){p->used, p->budget, p->kept, p->hits, p->misses, p->dropped};
    pthread_mutex_unlock(&p->lock);
}

tl_lvi_memo *tl_lvi_memo_new(tl_lvi_memos *p)
{
    tl_lvi_memo *m = calloc(1, sizeof *m);
    if (m) m->pool = tl_lvi_memos_ref(p);
    return m;
}

/* Takes m out of the pool's list and frees what it holds (under the lock:
 * the free of a handful of buffers, cheaper than handing them out). */
static void drop(tl_lvi_memo *m)
{
    tl_lvi_memos *p = m->pool;
    if (m->key == NULL) return;
    if (m->older) m->older->newer = m->newer;
    if (m->newer) m->newer->older = m->older;
    if (p->oldest == m) p->oldest = m->newer;
    if (p->newest == m) p->newest = m->older;
    m->older = m->newer = NULL;
    p->used -= m->bytes;
    p->kept--;
    tl_rows_free(&m->rows);
    free(m->key);
    m->key = NULL;
}

void tl_lvi_memo_free(tl_lvi_memo *m)
{
    if (m == NULL) return;
    pthread_mutex_lock(&m->pool->lock);
    drop(m);
    pthread_mutex_unlock(&m->pool->lock);
    tl_lvi_memos_free(m->pool);
    free(m);
}

static bool same_layout(const struct ArrowSchema *a, const struct ArrowSchema *b)
{
    if (a->n_children != b->n_children) return false;
    for (int64_t i = 0; i < a->n_children; i++)
        if (strcmp(a->children[i]->format, b->children[i]->format) != 0 ||
            a->children[i]->n_children != 0 || b->children[i]->n_children != 0)
            return false;
    return true;
}

bool tl_lvi_memo_take(tl_lvi_memo *m, const char *key, int32_t schema_id,
                      const struct ArrowSchema *layout, tl_rows *out, uint64_t *size)
{
    tl_lvi_memos *p = m->pool;
    pthread_mutex_lock(&p->lock);
    bool hit = m->key && strcmp(key, m->key) == 0 && m->schema_id == schema_id &&
               same_layout(&m->rows.schema, layout);
    if (hit) {
        *out = m->rows;
        *size = m->size;
        memset(&m->rows, 0, sizeof m->rows); /* taken: drop frees only the key */
    }
    drop(m);
    pthread_mutex_unlock(&p->lock);
    return hit;
}

void tl_lvi_memo_count(tl_lvi_memo *m, bool served)
{
    pthread_mutex_lock(&m->pool->lock);
    if (served)
        m->pool->hits++;
    else
        m->pool->misses++;
    pthread_mutex_unlock(&m->pool->lock);
}

void tl_lvi_memo_keep(tl_lvi_memo *m, const char *key, uint64_t size, int32_t schema_id,
                      const struct ArrowSchema *schema, struct ArrowArray *array)
{
    tl_lvi_memos *p = m->pool;
    int64_t bytes = tl_array_memory(array);
    struct ArrowSchema copy = {0};
    char *k = NULL;
    tl_error ignored = {0};
    bool fits =
        bytes >= 0 && (k = strdup(key)) != NULL && tl_schema_copy(schema, &copy, &ignored) == TL_OK;
    if (fits) bytes += (int64_t)(malloc_usable_size(k) + sizeof *m);
    pthread_mutex_lock(&p->lock);
    drop(m);
    if (fits && bytes > p->budget) {
        fits = false; /* larger than the whole budget */
        p->dropped++;
    }
    while (fits && p->used + bytes > p->budget) {
        drop(p->oldest); /* never m: it holds nothing now */
        p->dropped++;
    }
    if (fits) {
        m->key = k;
        k = NULL;
        m->size = size;
        m->schema_id = schema_id;
        m->bytes = bytes;
        tl_schema_move(&copy, &m->rows.schema);
        tl_array_move(array, &m->rows.array);
        m->older = p->newest;
        if (p->newest) p->newest->newer = m;
        p->newest = m;
        if (p->oldest == NULL) p->oldest = m;
        p->used += bytes;
        p->kept++;
    }
    pthread_mutex_unlock(&p->lock);
    free(k);
    tl_schema_release(&copy);
}
