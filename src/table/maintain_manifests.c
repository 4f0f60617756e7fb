/* Parsed manifests and manifest lists, kept in memory for maintenance.
 * Inline maintenance runs after every append and needs the live files of the
 * table (and, when snapshots expire, what every snapshot references); parsing
 * each Avro file again every time made that cost grow with the table. Both
 * are immutable (unique names, never rewritten), so they are cached
 * process-wide by URL (and length, for manifests), and a run parses only what
 * was written since the last one: usually what the append just added.
 * The cache is bounded by the number of entries it holds (least recently
 * used manifests go first) and is thread-safe. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "table/maintain.h"

#define BUCKETS 4096
#define MAX_ENTRIES 65536 /* data files held; about 1 KiB each */

/* A parsed manifest (entries) or manifest list (manifests). */
typedef struct node {
    struct node *next;
    char *url;
    int64_t length; /* from the manifest list: a guard against reused names; -1 for lists */
    tl_ice_manifest_entry *entries;
    tl_ice_manifest_file *manifests;
    size_t n;
    uint64_t used; /* the clock at the last use */
} node;

static struct {
    pthread_mutex_t lock;
    node *buckets[BUCKETS];
    size_t held; /* entries over all nodes */
    size_t nodes;
    uint64_t clock;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t hash_url(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

static node **slot_of(const char *url, int64_t length)
{
    node **p = &cache.buckets[hash_url(url) & (BUCKETS - 1)];
    for (; *p; p = &(*p)->next)
        if ((*p)->length == length && strcmp((*p)->url, url) == 0) break;
    return p;
}

static void node_free(node *n)
{
    if (n->manifests)
        tl_ice_manifest_files_free(n->manifests, n->n);
    else
        tl_ice_manifest_entries_free(n->entries, n->n);
    free(n->url);
    free(n);
}

static int by_use(const void *a, const void *b)
{
    const node *x = *(node *const *)a, *y = *(node *const *)b;
    return x->used < y->used ? -1 : x->used > y->used;
}

/* Drops least recently used manifests until a quarter of the room is free,
 * so that the scan is paid once per many insertions. Lock held. */
static void evict(void)
{
    node **all = malloc((cache.nodes + 1) * sizeof *all);
    if (all == NULL) return;
    size_t n = 0;
    for (size_t b = 0; b < BUCKETS; b++)
        for (node *p = cache.buckets[b]; p; p = p->next) all[n++] = p;
    qsort(all, n, sizeof *all, by_use);
    for (size_t i = 0; i < n && cache.held > MAX_ENTRIES / 4 * 3; i++) {
        node **s = slot_of(all[i]->url, all[i]->length);
        *s = all[i]->next;
        cache.held -= all[i]->n;
        cache.nodes--;
        node_free(all[i]);
    }
    free(all);
}

/* Takes over n (lock held); a racing insertion of the same manifest wins. */
static void insert(node *n)
{
    node **s = slot_of(n->url, n->length);
    if (*s != NULL || n->n > MAX_ENTRIES / 2) {
        node_free(n);
        return;
    }
    *s = n;
    cache.held += n->n;
    cache.nodes++;
    if (cache.held > MAX_ENTRIES) evict();
}

/* Reads and parses a manifest (length >= 0) or a manifest list (length -1). */
static tl_status parse(const tl_table *t, const char *url, int64_t length, node **out,
                       tl_error *err)
{
    node *n = calloc(1, sizeof *n);
    tl_status st = n ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK && (n->url = strdup(url)) == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && length >= 0) st = tl_table_read_manifest(t, url, &n->entries, &n->n, err);
    if (st == TL_OK && length < 0)
        st = tl_table_read_manifest_list(t, url, &n->manifests, &n->n, err);
    if (st != TL_OK && n) node_free(n);
    if (st == TL_OK) {
        n->length = length;
        *out = n;
    }
    return st;
}

/* Parses the bytes of a manifest (length >= 0) or a manifest list (length
 * -1) this process wrote into a node. */
static tl_status parse_written(const char *url, int64_t length, const void *bytes, size_t len,
                               node **out, tl_error *err)
{
    node *n = calloc(1, sizeof *n);
    tl_status st = n && (n->url = strdup(url)) ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK && length >= 0) st = tl_ice_manifest_read(bytes, len, &n->entries, &n->n, err);
    if (st == TL_OK && length < 0)
        st = tl_ice_manifest_list_read(bytes, len, &n->manifests, &n->n, err);
    if (st != TL_OK && n) node_free(n);
    if (st == TL_OK) {
        n->length = length;
        *out = n;
    }
    return st;
}

static void offer(const char *url, int64_t length, const void *bytes, size_t len)
{
    pthread_mutex_lock(&cache.lock);
    bool held = *slot_of(url, length) != NULL;
    pthread_mutex_unlock(&cache.lock);
    node *n = NULL;
    if (held || parse_written(url, length, bytes, len, &n, NULL) != TL_OK) return;
    pthread_mutex_lock(&cache.lock);
    n->used = ++cache.clock;
    insert(n);
    pthread_mutex_unlock(&cache.lock);
}

void tl_manifest_cache_written(const char *url, const void *bytes, size_t len)
{
    offer(url, (int64_t)len, bytes, len);
}

void tl_manifest_list_cache_written(const char *url, const void *bytes, size_t len)
{
    offer(url, -1, bytes, len);
}

/* Calls fn (with entries) or list_fn (with manifests) for every record. */
static bool visit_node(const node *n, tl_manifest_visit_fn fn, tl_manifest_list_visit_fn list_fn,
                       void *ctx)
{
    bool ok = true;
    for (size_t i = 0; ok && i < n->n; i++)
        ok = n->manifests ? list_fn(ctx, &n->manifests[i]) : fn(ctx, &n->entries[i]);
    return ok;
}

static tl_status visit(const tl_table *t, const char *url, int64_t length, tl_manifest_visit_fn fn,
                       tl_manifest_list_visit_fn list_fn, void *ctx, tl_error *err)
{
    pthread_mutex_lock(&cache.lock);
    node *hit = *slot_of(url, length);
    if (hit) {
        hit->used = ++cache.clock;
        bool ok = visit_node(hit, fn, list_fn, ctx);
        pthread_mutex_unlock(&cache.lock);
        return ok ? TL_OK : tl_error_nomem(err);
    }
    pthread_mutex_unlock(&cache.lock);
    /* A miss: read and parse outside the lock, visit, then keep it. */
    node *n = NULL;
    TL_TRY(parse(t, url, length, &n, err));
    bool ok = visit_node(n, fn, list_fn, ctx);
    pthread_mutex_lock(&cache.lock);
    n->used = ++cache.clock;
    insert(n);
    pthread_mutex_unlock(&cache.lock);
    return ok ? TL_OK : tl_error_nomem(err);
}

tl_status tl_manifest_cache_visit(const tl_table *t, const tl_ice_manifest_file *mf,
                                  tl_manifest_visit_fn fn, void *ctx, tl_error *err)
{
    int64_t length = mf->manifest_length >= 0 ? mf->manifest_length : 0;
    return visit(t, mf->manifest_path, length, fn, NULL, ctx, err);
}

tl_status tl_manifest_list_cache_visit(const tl_table *t, const char *url,
                                       tl_manifest_list_visit_fn fn, void *ctx, tl_error *err)
{
    return visit(t, url, -1, NULL, fn, ctx, err);
}

/* ---- Live files through the cache ---- */

static void *dup_mem(const void *src, size_t len, bool *ok)
{
    if (src == NULL || !*ok) return NULL;
    void *p = malloc(len + 1); /* +1: strings keep their terminator, and never malloc(0) */
    if (p == NULL) {
        *ok = false;
        return NULL;
    }
    memcpy(p, src, len);
    ((char *)p)[len] = '\0';
    return p;
}

static bool copy_bounds(tl_ice_bound **dst, const tl_ice_bound *src, size_t n)
{
    bool ok = true;
    *dst = dup_mem(src, n * sizeof *src, &ok);
    for (size_t i = 0; ok && *dst && i < n; i++) (*dst)[i].data = NULL;
    for (size_t i = 0; ok && *dst && i < n; i++)
        (*dst)[i].data = dup_mem(src[i].data, src[i].len, &ok);
    return ok;
}

/* A deep copy; on failure dst holds what was copied (tl_ice_data_file_clear frees it). */
static bool copy_data_file(tl_ice_data_file *dst, const tl_ice_data_file *s)
{
    bool ok = true;
    *dst = *s;
    dst->file_path = dup_mem(s->file_path, s->file_path ? strlen(s->file_path) : 0, &ok);
    dst->file_format = dup_mem(s->file_format, s->file_format ? strlen(s->file_format) : 0, &ok);
    dst->referenced_data_file =
        dup_mem(s->referenced_data_file,
                s->referenced_data_file ? strlen(s->referenced_data_file) : 0, &ok);
    dst->partition = dup_mem(s->partition, s->n_partition * sizeof *s->partition, &ok);
    for (size_t i = 0; dst->partition && i < s->n_partition; i++) dst->partition[i].bytes = NULL;
    for (size_t i = 0; ok && dst->partition && i < s->n_partition; i++)
        dst->partition[i].bytes = dup_mem(s->partition[i].bytes, s->partition[i].len, &ok);
    if (dst->partition == NULL) dst->n_partition = 0;
    dst->column_sizes = dup_mem(s->column_sizes, s->n_column_sizes * sizeof(tl_ice_count), &ok);
    dst->value_counts = dup_mem(s->value_counts, s->n_value_counts * sizeof(tl_ice_count), &ok);
    dst->null_value_counts =
        dup_mem(s->null_value_counts, s->n_null_value_counts * sizeof(tl_ice_count), &ok);
    dst->nan_value_counts =
        dup_mem(s->nan_value_counts, s->n_nan_value_counts * sizeof(tl_ice_count), &ok);
    dst->split_offsets = dup_mem(s->split_offsets, s->n_split_offsets * sizeof(int64_t), &ok);
    dst->equality_ids = dup_mem(s->equality_ids, s->n_equality_ids * sizeof(int32_t), &ok);
    dst->key_metadata = dup_mem(s->key_metadata, s->key_metadata_len, &ok);
    dst->lower_bounds = dst->upper_bounds = NULL;
    dst->n_lower_bounds = dst->n_upper_bounds = 0;
    if (ok && copy_bounds(&dst->lower_bounds, s->lower_bounds, s->n_lower_bounds))
        dst->n_lower_bounds = s->n_lower_bounds;
    else
        ok = false, dst->n_lower_bounds = dst->lower_bounds ? s->n_lower_bounds : 0;
    if (ok && copy_bounds(&dst->upper_bounds, s->upper_bounds, s->n_upper_bounds))
        dst->n_upper_bounds = s->n_upper_bounds;
    else
        ok = false, dst->n_upper_bounds = dst->upper_bounds ? s->n_upper_bounds : 0;
    return ok;
}

/* A deep copy; on failure dst holds what was copied (tl_ice_manifest_files_free frees it). */
static bool copy_manifest_file(tl_ice_manifest_file *dst, const tl_ice_manifest_file *s)
{
    bool ok = true;
    *dst = *s;
    dst->manifest_path =
        dup_mem(s->manifest_path, s->manifest_path ? strlen(s->manifest_path) : 0, &ok);
    dst->key_metadata = dup_mem(s->key_metadata, s->key_metadata_len, &ok);
    dst->partitions = dup_mem(s->partitions, s->n_partitions * sizeof *s->partitions, &ok);
    for (size_t i = 0; dst->partitions && i < s->n_partitions; i++)
        dst->partitions[i].lower_bound = dst->partitions[i].upper_bound = NULL;
    for (size_t i = 0; ok && dst->partitions && i < s->n_partitions; i++) {
        const tl_ice_field_summary *f = &s->partitions[i];
        dst->partitions[i].lower_bound = dup_mem(f->lower_bound, f->lower_len, &ok);
        dst->partitions[i].upper_bound = dup_mem(f->upper_bound, f->upper_len, &ok);
    }
    if (dst->partitions == NULL) dst->n_partitions = 0;
    return ok;
}

typedef struct list_copy {
    tl_ice_manifest_file *files;
    size_t n, cap;
} list_copy;

static bool take_manifest(void *p, const tl_ice_manifest_file *mf)
{
    list_copy *c = p;
    if (TL_GROW(c->files, c->cap, c->n + 1, 16) != 0) return false;
    return copy_manifest_file(&c->files[c->n++], mf); /* counted even on failure, to be freed */
}

bool tl_manifest_list_cache_held(const char *url, tl_ice_manifest_file **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    list_copy c = {0};
    pthread_mutex_lock(&cache.lock);
    node *hit = *slot_of(url, -1);
    bool ok = hit != NULL;
    if (hit) {
        hit->used = ++cache.clock;
        ok = visit_node(hit, NULL, take_manifest, &c);
    }
    pthread_mutex_unlock(&cache.lock);
    if (!ok) {
        tl_ice_manifest_files_free(c.files, c.n);
        return false;
    }
    *out = c.files;
    *n = c.n;
    return true;
}

tl_status tl_manifest_list_cache_read(const tl_table *t, const char *url,
                                      tl_ice_manifest_file **out, size_t *n, tl_error *err)
{
    list_copy c = {0};
    tl_status st = tl_manifest_list_cache_visit(t, url, take_manifest, &c, err);
    if (st != TL_OK) {
        tl_ice_manifest_files_free(c.files, c.n);
        return st;
    }
    *out = c.files;
    *n = c.n;
    return TL_OK;
}

typedef struct live_ctx {
    tl_live_files *lf;
    size_t m; /* the manifest being visited */
    size_t cap;
} live_ctx;

/* Copies a live data entry into the list, with the values v2 readers inherit. */
static bool take_entry(void *p, const tl_ice_manifest_entry *e)
{
    live_ctx *c = p;
    tl_live_files *lf = c->lf;
    const tl_ice_manifest_file *mf = &lf->manifests[c->m];
    if (e->status == 2) return true; /* deleted */
    if (e->file.content != 0) {
        lf->delete_files++;
        return true;
    }
    if (TL_GROW(lf->files, c->cap, lf->n + 1, 64) != 0) return false;
    tl_live_file *f = &lf->files[lf->n];
    bool ok = copy_data_file(&f->file, &e->file);
    lf->n++; /* counted even on failure, so that the free releases the partial copy */
    f->snapshot_id = e->has_snapshot_id ? e->snapshot_id : mf->added_snapshot_id;
    f->sequence_number = e->has_sequence_number ? e->sequence_number : mf->sequence_number;
    f->partition_spec_id = mf->partition_spec_id;
    f->manifest = c->m;
    return ok;
}

typedef struct existing_ctx {
    const tl_ice_manifest_file *mf;
    tl_ice_manifest_entry *entries;
    size_t n, cap;
} existing_ctx;

static bool take_existing(void *p, const tl_ice_manifest_entry *e)
{
    existing_ctx *c = p;
    if (e->status == 2 || e->file.content != 0) return true;
    if (TL_GROW(c->entries, c->cap, c->n + 1, 16) != 0) return false;
    int64_t seq = c->mf->sequence_number;
    tl_ice_manifest_entry *x = &c->entries[c->n];
    *x = (tl_ice_manifest_entry){
        .status = 0,
        .has_snapshot_id = true,
        .snapshot_id = e->has_snapshot_id ? e->snapshot_id : c->mf->added_snapshot_id,
        .has_sequence_number = true,
        .sequence_number = e->has_sequence_number ? e->sequence_number : seq,
        .has_file_sequence_number = true,
        .file_sequence_number = e->has_file_sequence_number ? e->file_sequence_number : seq,
    };
    bool ok = copy_data_file(&x->file, &e->file);
    c->n++; /* counted even on failure, so that the free releases the partial copy */
    return ok;
}

tl_status tl_manifest_cache_existing(const tl_table *t, const tl_ice_manifest_file *mf,
                                     tl_ice_manifest_entry **out, size_t *n, tl_error *err)
{
    existing_ctx c = {.mf = mf};
    tl_status st = tl_manifest_cache_visit(t, mf, take_existing, &c, err);
    if (st != TL_OK) {
        tl_ice_manifest_entries_free(c.entries, c.n);
        return st;
    }
    *out = c.entries;
    *n = c.n;
    return TL_OK;
}

tl_status tl_maintain_live_files(const tl_table *t, tl_live_files *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    if (s == NULL || s->manifest_list == NULL) return TL_OK;
    tl_status st =
        tl_manifest_list_cache_read(t, s->manifest_list, &out->manifests, &out->n_manifests, err);
    live_ctx c = {.lf = out};
    for (size_t m = 0; st == TL_OK && m < out->n_manifests; m++) {
        if (out->manifests[m].content != 0) continue; /* delete manifests */
        c.m = m;
        st = tl_manifest_cache_visit(t, &out->manifests[m], take_entry, &c, err);
    }
    if (st != TL_OK) tl_live_files_free(out);
    return st;
}

static bool visit_nothing(void *ctx, const tl_ice_manifest_entry *e)
{
    (void)ctx, (void)e;
    return true;
}

tl_status tl_table_check_manifests(const tl_table *t, tl_error *err)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    if (s == NULL || s->manifest_list == NULL) return TL_OK;
    tl_ice_manifest_file *mfs = NULL;
    size_t n = 0;
    const char *failed = s->manifest_list;
    tl_status st = tl_manifest_list_cache_read(t, s->manifest_list, &mfs, &n, err);
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        failed = mfs[i].manifest_path;
        st = tl_manifest_cache_visit(t, &mfs[i], visit_nothing, NULL, err);
    }
    /* A file that is gone is no damage: a stale handle names what another
     * writer's expiry removed, and the commit rebases onto its version. */
    char buf[1024];
    const char *key = st != TL_OK ? tl_table_key_of_url(t, failed, buf, sizeof buf) : NULL;
    uint64_t size;
    if (key && tl_store_size(t->lake->store, key, &size, NULL) == TL_ERR_NOT_FOUND) st = TL_OK;
    if (st != TL_OK) st = tl_table_damaged(t, st == TL_ERR_NOMEM ? st : TL_ERR_STORAGE, err);
    if (mfs) tl_ice_manifest_files_free(mfs, n);
    return st;
}
