/* Writing the head object with the commit (see head.h). The head of vN is
 * built while the commit's first round trip (the upload batch) is in flight,
 * and PUT in parallel with the conditional create of vN, so an append stays
 * at two sequential round trips.
 *
 * The PUT goes out before the create's outcome is known, so a writer that
 * loses the race for vN may overwrite the winner's head with one for the same
 * N but with its own, never committed, metadata. Readers compare the head's
 * metadata bytes with the listed size and MD5 of vN (head_read.c): such a
 * head is not trusted and they read vN itself (correct, one round trip
 * slower) until the next commit writes a head again. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/parallel.h"
#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"
#include "table/head_footer.h"
#include "table/head_write.h"
#include "table/live_files.h"
#include "table/settings.h"

#define FETCH_THREADS 8

struct tl_head_job {
    /* What the head is built from: borrowed until built. */
    const tl_table *t;
    tl_store *store;
    const tl_ice_metadata *md;
    const tl_buf *json, *list, *lvi;
    const tl_head_objects *fresh;
    /* Room for the last-value index, then footers: the table's
     * head-inline-bytes, SIZE_MAX when unset (only TL_HEAD_MAX_BYTES holds). */
    size_t inline_room;
    /* The outcome. */
    tl_head h;
    tl_buf bytes;
    tl_status st;
    bool no_large; /* no live data file of the snapshot is large enough for a footer */
    char key[sizeof((tl_qname *)0)->key + 64];
    /* The background thread's hand-over. */
    bool threaded, built, go, cancel;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

bool tl_head_wanted(const tl_table *t, const tl_ice_metadata *md)
{
    if (tl_store_is_local(t->lake->store)) return false;
    const char *f = tl_setting_value(md, NULL, "head-format");
    return f == NULL || !tl_setting_is(f, "none");
}

/* The table's head-inline-bytes, or SIZE_MAX when it sets none. */
static size_t inline_room(const tl_ice_metadata *md)
{
    const char *v = tl_setting_value(md, NULL, "head-inline-bytes");
    char *end = NULL;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    return v && *v && *end == '\0' && n < SIZE_MAX ? (size_t)n : SIZE_MAX;
}

/* Objects the head wants but neither the commit nor the handle holds,
 * fetched in parallel. */
typedef struct fetch_job {
    const tl_table *t;
    const char **urls;
    tl_buf *bufs;
    bool *ok;
    size_t n;
} fetch_job;

static tl_status fetch_one(void *ctx, size_t i, tl_error *err)
{
    (void)err; /* a missing object only leaves it out of the head */
    fetch_job *j = ctx;
    j->ok[i] = tl_table_read_url(j->t, j->urls[i], &j->bufs[i], NULL) == TL_OK;
    return TL_OK;
}

static void fetch_all(fetch_job *j)
{
    tl_parallel_run(j->n, FETCH_THREADS, false, fetch_one, j, NULL);
}

static size_t objects_bytes(const tl_head_objects *o)
{
    size_t n = 0;
    for (size_t i = 0; i < o->n; i++) n += o->items[i].data.len;
    return n;
}

/* The bytes of url if the commit or the handle has them in memory. */
static const tl_buf *held(const tl_head_job *j, const char *url)
{
    const tl_buf *b = tl_head_objects_find(j->fresh, url);
    return b ? b : tl_head_objects_find(j->t->head_objects, url);
}

/* Adds each of urls (size hints in sizes) within TL_HEAD_MAX_BYTES, in
 * order: from memory, else fetched (in parallel). Those past the budget are
 * neither carried nor fetched, so a large table does not pay a fetch on
 * every commit. */
static tl_status add_objects(const tl_head_job *hj, const char **urls, const int64_t *sizes,
                             size_t n, tl_head_objects *o, tl_error *err)
{
    fetch_job j = {.t = hj->t};
    j.urls = calloc(n + 1, sizeof *j.urls);
    j.bufs = calloc(n + 1, sizeof *j.bufs);
    j.ok = calloc(n + 1, sizeof *j.ok);
    tl_status st = j.urls && j.bufs && j.ok ? TL_OK : tl_error_nomem(err);
    size_t total = objects_bytes(o);
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        const tl_buf *b = held(hj, urls[i]);
        size_t size = b ? b->len : (size_t)(sizes[i] > 0 ? sizes[i] : 0);
        if (total + size > TL_HEAD_MAX_BYTES) continue;
        total += size;
        if (b)
            st = tl_head_objects_add(o, urls[i], b->data, b->len, err);
        else
            j.urls[j.n++] = urls[i];
    }
    if (st == TL_OK && j.n) fetch_all(&j);
    for (size_t i = 0; st == TL_OK && i < j.n; i++)
        if (j.ok[i]) st = tl_head_objects_add(o, j.urls[i], j.bufs[i].data, j.bufs[i].len, err);
    for (size_t i = 0; j.bufs && i < j.n; i++) tl_buf_free(&j.bufs[i]);
    free(j.urls);
    free(j.bufs);
    free(j.ok);
    return st;
}

/* The index, then the snapshot's manifests, newest first. */
static tl_status add_index_and_manifests(const tl_head_job *j, const char *lvi_url,
                                         tl_head_objects *o, tl_error *err)
{
    tl_ice_manifest_file *mfs = NULL;
    size_t n = 0;
    TL_TRY(tl_ice_manifest_list_read(j->list->data, j->list->len, &mfs, &n, err));
    const char **urls = calloc(n + 1, sizeof *urls);
    int64_t *sizes = calloc(n + 1, sizeof *sizes);
    tl_status st = urls && sizes ? TL_OK : tl_error_nomem(err);
    size_t k = 0;
    if (lvi_url) urls[k++] = lvi_url; /* size unknown until read: never past the budget */
    for (size_t i = 0; st == TL_OK && i < n; i++, k++) {
        urls[k] = mfs[i].manifest_path;
        sizes[k] = mfs[i].manifest_length;
    }
    if (st == TL_OK) st = add_objects(j, urls, sizes, k, o, err);
    free(urls);
    free(sizes);
    tl_ice_manifest_files_free(mfs, n);
    return st;
}

/* A live data file of the snapshot: its path and size (the manifest's). */
typedef struct live_file {
    char *path;
    int64_t size;
} live_file;

typedef struct live_set {
    live_file *items;
    size_t n, cap;
} live_set;

static int cmp_live(const void *a, const void *b)
{
    return strcmp(((const live_file *)a)->path, ((const live_file *)b)->path);
}

static void live_free(live_set *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->items[i].path);
    free(l->items);
}

static bool live_push(live_set *l, const tl_ice_data_file *f)
{
    if (TL_GROW(l->items, l->cap, l->n + 1, 64) != 0) return false;
    l->items[l->n] = (live_file){strdup(f->file_path), f->file_size_in_bytes};
    return l->items[l->n++].path != NULL;
}

/* The snapshot's live data files, sorted by path, from the manifests the
 * head carries; false when one is not carried (the head is full then). */
static bool live_files(const tl_head_objects *o, const tl_ice_manifest_file *mfs, size_t n_mfs,
                       live_set *out)
{
    for (size_t m = 0; m < n_mfs; m++) {
        if (mfs[m].content != 0) continue;
        const tl_buf *b = tl_head_objects_find(o, mfs[m].manifest_path);
        tl_ice_manifest_entry *e = NULL;
        size_t n = 0;
        if (b == NULL || tl_ice_manifest_read(b->data, b->len, &e, &n, NULL) != TL_OK) return false;
        bool ok = true;
        for (size_t i = 0; ok && i < n; i++)
            if (e[i].status != 2 && e[i].file.content == 0) ok = live_push(out, &e[i].file);
        tl_ice_manifest_entries_free(e, n);
        if (!ok) return false;
    }
    if (out->n) qsort(out->items, out->n, sizeof *out->items, cmp_live);
    return true;
}

static bool is_live(const live_set *live, const char *footer_url)
{
    size_t n = strlen(footer_url) - strlen(TL_HEAD_FOOTER_SUFFIX);
    char path[1100];
    if (n >= sizeof path) return false;
    memcpy(path, footer_url, n);
    path[n] = 0;
    live_file key = {.path = path};
    return live->n && bsearch(&key, live->items, live->n, sizeof *live->items, cmp_live) != NULL;
}

static bool is_footer(const char *url)
{
    size_t n = strlen(url), k = strlen(TL_HEAD_FOOTER_SUFFIX);
    return n > k && strcmp(url + n - k, TL_HEAD_FOOTER_SUFFIX) == 0;
}

/* What footers may take: the head's whole budget, and the room left for
 * inline objects past `base` (the head's bytes before the first footer). */
typedef struct footer_budget {
    size_t base, room;
} footer_budget;

static bool fits(const footer_budget *b, size_t total, size_t size)
{
    return total + size <= TL_HEAD_MAX_BYTES && total + size - b->base <= b->room;
}

/* Adds the footers of the files in `from` that are live, within the budget,
 * in order. */
static tl_status add_footers_from(const tl_head_objects *from, const live_set *live,
                                  const footer_budget *b, tl_head_objects *o, tl_error *err)
{
    size_t total = objects_bytes(o);
    for (size_t i = 0; from && i < from->n; i++) {
        const tl_head_object *f = &from->items[i];
        if (!is_footer(f->url) || tl_head_objects_find(o, f->url) || !is_live(live, f->url))
            continue;
        if (!fits(b, total, f->data.len)) continue;
        total += f->data.len;
        TL_TRY(tl_head_objects_add(o, f->url, f->data.data, f->data.len, err));
    }
    return TL_OK;
}

/* Footers of live large files that neither the commit nor the handle holds
 * (written by another writer whose head this one's replaced, or before the
 * handle read a trusted head), read from the files in parallel while the
 * commit's uploads are in flight. The head carries them from then on, so a
 * file's footer is read at most once per gap, and only while the budget
 * has room for a footer read whole (TL_HEAD_FOOTER_TAIL). One GET each, and
 * FETCH_THREADS of them at most, in one wave: a commit pays one round trip
 * for them at most, however many are missing; later commits read the rest. */
typedef struct footer_fetch {
    const tl_table *t;
    const live_file **files;
    tl_buf *bufs;
    bool *ok;
    size_t n;
} footer_fetch;

static tl_status fetch_footer(void *ctx, size_t i, tl_error *err)
{
    (void)err; /* a footer not read is only left out of the head */
    footer_fetch *f = ctx;
    const live_file *l = f->files[i];
    f->ok[i] = tl_head_footer_fetch(f->t, l->path, (uint64_t)l->size, &f->bufs[i], NULL) == TL_OK;
    return TL_OK;
}

static tl_status add_missing_footers(const tl_head_job *j, const live_set *live,
                                     const footer_budget *b, tl_head_objects *o, tl_error *err)
{
    footer_fetch f = {.t = j->t};
    f.files = calloc(live->n + 1, sizeof *f.files);
    f.bufs = calloc(live->n + 1, sizeof *f.bufs);
    f.ok = calloc(live->n + 1, sizeof *f.ok);
    tl_status st = f.files && f.bufs && f.ok ? TL_OK : tl_error_nomem(err);
    size_t total = objects_bytes(o);
    char url[1100];
    for (size_t i = 0; st == TL_OK && i < live->n; i++) {
        const live_file *l = &live->items[i];
        if ((uint64_t)l->size < TL_HEAD_FOOTER_MIN_FILE ||
            tl_head_footer_url(l->path, url, sizeof url) == NULL || tl_head_objects_find(o, url))
            continue;
        if (f.n == FETCH_THREADS || !fits(b, total, TL_HEAD_FOOTER_TAIL)) break;
        total += TL_HEAD_FOOTER_TAIL;
        f.files[f.n++] = l;
    }
    if (st == TL_OK && f.n) tl_parallel_run(f.n, FETCH_THREADS, false, fetch_footer, &f, NULL);
    total = objects_bytes(o);
    for (size_t i = 0; st == TL_OK && i < f.n; i++) {
        if (!f.ok[i] || !fits(b, total, f.bufs[i].len)) continue;
        total += f.bufs[i].len;
        tl_head_footer_url(f.files[i]->path, url, sizeof url);
        st = tl_head_objects_add(o, url, f.bufs[i].data, f.bufs[i].len, err);
    }
    for (size_t i = 0; f.bufs && i < f.n; i++) tl_buf_free(&f.bufs[i]);
    free(f.files);
    free(f.bufs);
    free(f.ok);
    return st;
}

static bool has_footers(const tl_head_objects *o)
{
    for (size_t i = 0; o && i < o->n; i++)
        if (is_footer(o->items[i].url)) return true;
    return false;
}

static bool any_large(const live_set *live)
{
    for (size_t i = 0; i < live->n; i++)
        if (live->items[i].size >= (int64_t)TL_HEAD_FOOTER_MIN_FILE) return true;
    return false;
}

/* The footers of live large data files, newest first: this commit's, then
 * those the handle holds, then those read from the files; *no_large when
 * there are none. A table of small files is spared the parse of every
 * manifest on every commit: its handle knows its version has none, and
 * this commit adds none. */
static tl_status add_footers(const tl_head_job *j, size_t room, tl_head_objects *o, bool *no_large,
                             tl_error *err)
{
    footer_budget b = {objects_bytes(o), room};
    if (j->t->no_large_files && !has_footers(j->fresh)) {
        *no_large = true;
        return TL_OK;
    }
    tl_ice_manifest_file *mfs = NULL;
    size_t n = 0;
    TL_TRY(tl_ice_manifest_list_read(j->list->data, j->list->len, &mfs, &n, err));
    live_set live = {0};
    tl_status st = TL_OK;
    if (live_files(o, mfs, n, &live)) {
        *no_large = !any_large(&live);
        st = add_footers_from(j->fresh, &live, &b, o, err);
        if (st == TL_OK) st = add_footers_from(j->t->head_objects, &live, &b, o, err);
        if (st == TL_OK) st = add_missing_footers(j, &live, &b, o, err);
    }
    live_free(&live);
    tl_ice_manifest_files_free(mfs, n);
    return st;
}

static tl_status build(tl_head_job *j, tl_error *err)
{
    tl_head *h = &j->h;
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(j->md);
    if (tl_buf_append(&h->metadata, j->json->data, j->json->len) != 0) return tl_error_nomem(err);
    if (s && s->manifest_list) {
        TL_TRY(
            tl_head_objects_add(&h->objects, s->manifest_list, j->list->data, j->list->len, err));
        const char *lvi_url = tl_ice_snapshot_summary(s, TL_SUMMARY_LVI);
        const tl_buf *lvi = j->lvi && j->lvi->len ? j->lvi : lvi_url ? held(j, lvi_url) : NULL;
        size_t room = j->inline_room;
        if (lvi_url && lvi && lvi->len <= room) {
            TL_TRY(tl_head_objects_add(&h->objects, lvi_url, lvi->data, lvi->len, err));
            if (room != SIZE_MAX) room -= lvi->len;
            lvi_url = NULL;
        }
        /* An index not in hand is fetched only when no room is set: its size
         * is unknown until read. */
        if (room != SIZE_MAX) lvi_url = NULL;
        TL_TRY(add_index_and_manifests(j, lvi_url, &h->objects, err));
        TL_TRY(add_footers(j, room, &h->objects, &j->no_large, err));
    }
    return tl_head_encode(h, &j->bytes, err);
}

static void put(tl_head_job *j)
{
    tl_store_put(j->store, j->key, j->bytes.data, j->bytes.len, NULL);
}

/* Builds, hands over, and PUTs once let go. It touches the table only while
 * building: the caller changes the handle after tl_head_job_send only. */
static void *run(void *arg)
{
    tl_head_job *j = arg;
    tl_status st = build(j, NULL);
    pthread_mutex_lock(&j->lock);
    j->st = st;
    j->built = true;
    pthread_cond_broadcast(&j->cond);
    while (!j->go && !j->cancel) pthread_cond_wait(&j->cond, &j->lock);
    bool go = j->go && j->st == TL_OK;
    pthread_mutex_unlock(&j->lock);
    if (go) put(j);
    return NULL;
}

tl_head_job *tl_head_job_start(tl_table *t, const tl_ice_metadata *md, int64_t version,
                               const tl_buf *json, const tl_buf *list, const tl_buf *lvi,
                               const tl_head_objects *fresh)
{
    if (!tl_head_wanted(t, md)) return NULL;
    tl_head_job *j = calloc(1, sizeof *j);
    if (j == NULL) return NULL;
    *j = (tl_head_job){.t = t,
                       .store = t->lake->store,
                       .md = md,
                       .json = json,
                       .list = list,
                       .lvi = lvi,
                       .fresh = fresh,
                       .inline_room = inline_room(md)};
    j->h.version = version;
    tl_head_key(&t->name, j->key, sizeof j->key);
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->cond, NULL);
    j->threaded = pthread_create(&j->tid, NULL, run, j) == 0;
    return j;
}

void tl_head_job_send(tl_head_job *j)
{
    if (j == NULL) return;
    if (!j->threaded) { /* no thread to spare: one more sequential round trip */
        j->st = build(j, NULL);
        j->built = j->go = true;
        if (j->st == TL_OK) put(j);
        return;
    }
    pthread_mutex_lock(&j->lock);
    while (!j->built) pthread_cond_wait(&j->cond, &j->lock);
    j->go = true;
    pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&j->lock);
}

void tl_head_job_finish(tl_table *t, tl_head_job *j, bool won)
{
    if (j == NULL) return;
    if (j->threaded) {
        pthread_mutex_lock(&j->lock);
        j->cancel = true; /* unless already let go */
        pthread_cond_broadcast(&j->cond);
        pthread_mutex_unlock(&j->lock);
        pthread_join(j->tid, NULL);
    }
    tl_head_objects *keep = won && j->built && j->st == TL_OK ? malloc(sizeof *keep) : NULL;
    if (keep) {
        *keep = j->h.objects;
        j->h.objects = (tl_head_objects){0};
        tl_head_objects_free(t->head_objects);
        t->head_objects = keep;
    }
    if (won) t->no_large_files = keep && j->no_large;
    tl_head_clear(&j->h);
    tl_buf_free(&j->bytes);
    pthread_cond_destroy(&j->cond);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

tl_head_job *tl_head_job_start_same_snapshot(tl_table *t, const tl_ice_metadata *md,
                                             const tl_buf *json, tl_buf *list)
{
    if (tl_store_is_local(t->lake->store)) return NULL;
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(md);
    if (s && s->manifest_list) {
        const tl_buf *held = tl_head_objects_find(t->head_objects, s->manifest_list);
        if (held ? tl_buf_append(list, held->data, held->len) != 0
                 : tl_table_read_url(t, s->manifest_list, list, NULL) != TL_OK)
            return NULL;
    }
    return tl_head_job_start(t, md, t->version + 1, json, list, NULL, NULL);
}
