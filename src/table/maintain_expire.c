/* Snapshot expiry and deletion of unreferenced objects. Snapshots expire when
 * older than snapshot-retention or beyond the newest max-snapshots, but the
 * newest min-snapshots, the current one and those refs name always stay, and
 * none expires before keep-snapshots-until. The expiry is a metadata-only
 * commit; afterwards the objects only expired snapshots referenced are
 * deleted. Inline (after an append) the count limit waits until the table
 * holds INLINE_SLACK snapshots more than max-snapshots, as the reference's
 * does, so that expiry is one commit per INLINE_SLACK appends rather than one
 * per append. A full maintain expires down to the limit at once; it also
 * lists storage, and objects no snapshot
 * references are deleted once older than a safety window (their age is the
 * time in their UUIDv7 name, else their listed modification time), which
 * protects the files of appends still in flight. */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "iceberg/manifest_list.h"
#include "table/attachments.h"
#include "table/batch_ledger.h"
#include "table/commit_point.h"
#include "table/head_write.h"
#include "table/live_files.h"
#include "table/maintain.h"

#define MAX_ATTEMPTS 40
#define INLINE_SLACK 20
/* The window for objects whose name carries no UUIDv7 (other engines', the
 * reference's): their writer may take hours between upload and commit, so
 * they wait at least as long as Iceberg's own orphan removal makes them. */
#define FOREIGN_ORPHAN_WINDOW_MS (INT64_C(3) * 24 * 3600 * 1000)

/* ---- A set of object keys (open addressing) ---- */

typedef struct key_set {
    char **slots;
    size_t cap, n;
} key_set;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

static bool set_has(const key_set *s, const char *key)
{
    if (s->cap == 0) return false;
    for (size_t i = hash_str(key) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i] == NULL) return false;
        if (strcmp(s->slots[i], key) == 0) return true;
    }
}

static bool set_insert_owned(key_set *s, char *key);

static bool set_grow(key_set *s)
{
    key_set bigger = {calloc(s->cap ? s->cap * 2 : 256, sizeof(char *)), s->cap ? s->cap * 2 : 256,
                      0};
    if (bigger.slots == NULL) return false;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i]) set_insert_owned(&bigger, s->slots[i]);
    free(s->slots);
    *s = bigger;
    return true;
}

static bool set_insert_owned(key_set *s, char *key)
{
    if ((s->n + 1) * 2 > s->cap && !set_grow(s)) {
        free(key);
        return false;
    }
    size_t i = hash_str(key) & (s->cap - 1);
    for (; s->slots[i]; i = (i + 1) & (s->cap - 1))
        if (strcmp(s->slots[i], key) == 0) {
            free(key);
            return true;
        }
    s->slots[i] = key;
    s->n++;
    return true;
}

/* Adds the key of a URL in the table's metadata; false only when out of memory. */
static bool set_add_url(const tl_table *t, key_set *s, const char *url)
{
    char buf[1024];
    const char *key = tl_table_key_of_url(t, url, buf, sizeof buf);
    if (key == NULL || set_has(s, key)) return true;
    char *copy = strdup(key);
    return copy && set_insert_owned(s, copy);
}

static void set_free(key_set *s)
{
    for (size_t i = 0; i < s->cap; i++) free(s->slots[i]);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ---- What snapshots reference ---- */

typedef struct add_ctx {
    const tl_table *t;
    key_set *out;
    const key_set *skip;
    tl_ice_manifest_file *todo; /* manifests to visit (path and length only) */
    size_t n_todo;
} add_ctx;

static bool add_live_entry(void *p, const tl_ice_manifest_entry *e)
{
    add_ctx *c = p;
    return e->status == 2 || set_add_url(c->t, c->out, e->file.file_path);
}

/* Notes a manifest not seen yet; its entries are visited after the list (the
 * cache is not reentrant). */
static bool add_manifest(void *p, const tl_ice_manifest_file *mf)
{
    add_ctx *c = p;
    char buf[1024];
    const char *mkey = tl_table_key_of_url(c->t, mf->manifest_path, buf, sizeof buf);
    if (mkey == NULL || set_has(c->out, mkey) || (c->skip && set_has(c->skip, mkey))) return true;
    if (!set_add_url(c->t, c->out, mf->manifest_path)) return false;
    tl_ice_manifest_file *todo = realloc(c->todo, (c->n_todo + 1) * sizeof *todo);
    if (todo == NULL) return false;
    c->todo = todo;
    todo[c->n_todo] = (tl_ice_manifest_file){.manifest_path = strdup(mf->manifest_path),
                                             .manifest_length = mf->manifest_length};
    return todo[c->n_todo++].manifest_path != NULL;
}

/* Adds what snapshot i of md references that is not in `skip` (may be
 * NULL) to `out`: its manifest list, last-value index, attachments (of its
 * source, sources[i]: tl_attachments_sources), manifests and live data files. */
static tl_status collect_snapshot(const tl_table *t, const tl_ice_metadata *md,
                                  const size_t *sources, size_t i, const key_set *skip,
                                  key_set *out, tl_error *err)
{
    const tl_ice_snapshot *snap = &md->snapshots[i];
    const char *lvi = tl_ice_snapshot_summary(snap, TL_SUMMARY_LVI);
    if ((lvi && !set_add_url(t, out, lvi)) ||
        (snap->manifest_list && !set_add_url(t, out, snap->manifest_list)))
        return tl_error_nomem(err);
    tl_strlist attached = {0};
    const tl_ice_snapshot *source = sources[i] == SIZE_MAX ? NULL : &md->snapshots[sources[i]];
    tl_status st = source ? tl_snapshot_attachment_urls(source, &attached, err) : TL_OK;
    for (size_t i = 0; st == TL_OK && i < attached.len; i++)
        if (!set_add_url(t, out, attached.items[i])) st = tl_error_nomem(err);
    tl_strlist_free(&attached);
    TL_TRY(st);
    if (snap->manifest_list == NULL) return TL_OK;
    add_ctx c = {.t = t, .out = out, .skip = skip};
    st = tl_manifest_list_cache_visit(t, snap->manifest_list, add_manifest, &c, err);
    for (size_t m = 0; st == TL_OK && m < c.n_todo; m++)
        st = tl_manifest_cache_visit(t, &c.todo[m], add_live_entry, &c, err);
    tl_ice_manifest_files_free(c.todo, c.n_todo);
    return st;
}

static tl_status collect_all(const tl_table *t, const tl_ice_metadata *md, key_set *out,
                             tl_error *err)
{
    const char *ledger = tl_ice_metadata_property(md, TL_PROP_BATCH_LEDGER);
    if (ledger && !set_add_url(t, out, ledger)) return tl_error_nomem(err);
    size_t *sources;
    TL_TRY(tl_attachments_sources(md, &sources, err));
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < md->n_snapshots; i++)
        st = collect_snapshot(t, md, sources, i, NULL, out, err);
    free(sources);
    return st;
}

/* ---- Choosing snapshots ---- */

static int by_newest(const void *a, const void *b)
{
    const tl_ice_snapshot *x = *(const tl_ice_snapshot *const *)a,
                          *y = *(const tl_ice_snapshot *const *)b;
    if (x->timestamp_ms != y->timestamp_ms) return x->timestamp_ms > y->timestamp_ms ? -1 : 1;
    return x->sequence_number > y->sequence_number ? -1 : x->sequence_number < y->sequence_number;
}

static bool named_by_ref(const tl_ice_metadata *md, int64_t id)
{
    for (size_t i = 0; i < md->n_refs; i++)
        if (md->refs[i].snapshot_id == id) return true;
    return id == md->current_snapshot_id;
}

/* Whether some snapshot is older than snapshot-retention. */
static bool any_too_old(const tl_ice_metadata *md, const tl_maintain_settings *s, int64_t now_ms)
{
    for (size_t i = 0; s->snapshot_retention_ms >= 0 && i < md->n_snapshots; i++)
        if (now_ms - md->snapshots[i].timestamp_ms > s->snapshot_retention_ms) return true;
    return false;
}

/* Marks expire[i] for md->snapshots[i]; returns how many (0 also when out of memory). */
static size_t choose(const tl_ice_metadata *md, const tl_maintain_settings *s, int64_t now_ms,
                     bool full, bool *expire)
{
    if (now_ms < s->keep_snapshots_until_ms || md->n_snapshots <= (size_t)s->min_snapshots)
        return 0;
    bool count_due = full || (int64_t)md->n_snapshots >= s->max_snapshots + INLINE_SLACK;
    /* The usual case after an append: nothing is due, found without sorting. */
    if (!count_due && !any_too_old(md, s, now_ms)) return 0;
    int64_t max_snapshots = count_due ? s->max_snapshots : INT64_MAX;
    const tl_ice_snapshot **order = malloc(md->n_snapshots * sizeof *order);
    if (order == NULL) return 0;
    for (size_t i = 0; i < md->n_snapshots; i++) order[i] = &md->snapshots[i];
    qsort(order, md->n_snapshots, sizeof *order, by_newest);
    size_t n = 0;
    for (size_t rank = (size_t)s->min_snapshots; rank < md->n_snapshots; rank++) {
        const tl_ice_snapshot *snap = order[rank];
        bool too_many = (int64_t)rank >= max_snapshots;
        bool too_old =
            s->snapshot_retention_ms >= 0 && now_ms - snap->timestamp_ms > s->snapshot_retention_ms;
        if ((too_many || too_old) && !named_by_ref(md, snap->snapshot_id)) {
            expire[snap - md->snapshots] = true;
            n++;
        }
    }
    free(order);
    /* A kept snapshot's attachments may live in an ancestor's summary (after
     * another writer's commit): that ancestor stays too. */
    size_t *sources = NULL;
    if (n && tl_attachments_sources(md, &sources, NULL) != TL_OK) {
        memset(expire, 0, md->n_snapshots);
        return 0;
    }
    for (size_t i = 0; n && i < md->n_snapshots; i++) {
        size_t src = expire[i] ? SIZE_MAX : sources[i];
        if (src != SIZE_MAX && expire[src]) {
            expire[src] = false;
            n--;
        }
    }
    free(sources);
    return n;
}

/* Adds the handle's version to md's metadata log. */
static tl_status log_replaced(const tl_table *t, tl_ice_metadata *md, tl_error *err)
{
    return tl_ice_metadata_log_previous(md, t->metadata_url, md->last_updated_ms, err);
}

/* Drops the marked snapshots from md (a copy); with `log`, logs the replaced
 * version (the handle's: a version of its own; folded into an append's
 * commit, the append's metadata has logged it already). */
static tl_status drop_snapshots(const tl_table *t, tl_ice_metadata *md, const bool *expire,
                                bool log, tl_error *err)
{
    size_t kept = 0, log_kept = 0;
    for (size_t i = 0; i < md->n_snapshots; i++) {
        if (expire[i])
            tl_ice_snapshot_free(&md->snapshots[i]);
        else
            md->snapshots[kept++] = md->snapshots[i];
    }
    md->n_snapshots = kept;
    for (size_t i = 0; i < md->n_snapshot_log; i++)
        if (tl_ice_metadata_snapshot(md, md->snapshot_log[i].snapshot_id))
            md->snapshot_log[log_kept++] = md->snapshot_log[i];
    md->n_snapshot_log = log_kept;
    if (log) TL_TRY(log_replaced(t, md, err));
    int64_t now = tl_now_millis();
    md->last_updated_ms = now > md->last_updated_ms ? now : md->last_updated_ms + 1;
    return TL_OK;
}

/* Adds to *gone what the snapshots of `before` marked in expire referenced
 * and `after` (before less them) does not. */
static tl_status collect_gone(const tl_table *t, const tl_ice_metadata *before,
                              const tl_ice_metadata *after, const bool *expire, key_set *gone,
                              tl_error *err)
{
    key_set live = {0}, cand = {0};
    tl_status st = collect_all(t, after, &live, err);
    /* A replaced ledger is held by the new one. */
    const char *old = tl_ice_metadata_property(before, TL_PROP_BATCH_LEDGER);
    if (st == TL_OK && old && !set_add_url(t, &cand, old)) st = tl_error_nomem(err);
    size_t *sources = NULL;
    if (st == TL_OK) st = tl_attachments_sources(before, &sources, err);
    for (size_t i = 0; st == TL_OK && i < before->n_snapshots; i++)
        if (expire[i]) st = collect_snapshot(t, before, sources, i, &live, &cand, err);
    free(sources);
    /* Keep only what no live snapshot references. */
    for (size_t i = 0; i < cand.cap; i++) {
        char *key = cand.slots[i];
        cand.slots[i] = NULL;
        if (key == NULL) continue;
        if (st != TL_OK || set_has(&live, key))
            free(key);
        else if (!set_insert_owned(gone, key))
            st = tl_error_nomem(err);
    }
    set_free(&cand);
    set_free(&live);
    return st;
}

/* One attempt at committing the expiry; TL_ERR_EXISTS when another commit won.
 * The batch ids of the expired snapshots move to a new batch ledger. */
static tl_status commit_expiry(tl_table *t, const bool *expire, tl_error *err)
{
    tl_ice_metadata *md = NULL;
    tl_buf json = {0}, list = {0};
    char *ledger_key = NULL;
    tl_status st = tl_ice_metadata_copy(t->md, &md, err);
    if (st == TL_OK) st = tl_batch_ledger_extend(t, expire, md, &ledger_key, err);
    if (st == TL_OK) st = drop_snapshots(t, md, expire, true, err);
    if (st == TL_OK) st = tl_ice_metadata_serialize(md, &json, err);
    bool may_have_landed = false;
    if (st == TL_OK) {
        tl_head_job *head = tl_head_job_start_same_snapshot(t, md, &json, &list);
        st = tl_table_land_next(t, md, &json, head, err);
        md = NULL;
        may_have_landed = st != TL_ERR_EXISTS && st != TL_ERR_NOT_FOUND;
    }
    tl_buf_free(&list);
    if (ledger_key && !may_have_landed) tl_store_remove(t->lake->store, ledger_key, NULL);
    free(ledger_key);
    tl_ice_metadata_free(md);
    tl_buf_free(&json);
    return st;
}

/* One attempt's choice and commit, as one turn of the table's handles when
 * they take turns (tl_table_set_commit_turns: the notification server's
 * maintainer and requests), from the other handle's latest version:
 * the expiry then never makes a group commit lose its version, nor loses its
 * own. *expire (the caller's) marks the snapshots of *before (the metadata
 * expired from, the caller's; NULL when *n_expired is 0). */
static tl_status expire_turn(tl_table *t, const tl_maintain_settings *s, bool full, bool **expire,
                             size_t *n_expired, tl_ice_metadata **before, tl_error *err)
{
    if (t->turn_enter) t->turn_enter(t, t->turn_ctx);
    tl_status st = TL_OK;
    *before = NULL;
    *n_expired = 0;
    if ((*expire = calloc(t->md->n_snapshots + 1, 1)) == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) *n_expired = choose(t->md, s, tl_now_millis(), full, *expire);
    if (*n_expired > 0) st = tl_ice_metadata_copy(t->md, before, err);
    if (*n_expired > 0 && st == TL_OK) st = commit_expiry(t, *expire, err);
    if (t->turn_leave) t->turn_leave(t, t->turn_ctx);
    return st;
}

/* Expires snapshots; *gone receives what only the expired snapshots referenced. */
static tl_status expire_snapshots(tl_table *t, const tl_maintain_settings *s, bool full,
                                  key_set *gone, tl_maintain_report *r, tl_error *err)
{
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        bool *expire = NULL;
        size_t n_expired = 0;
        tl_ice_metadata *before = NULL;
        tl_status st = expire_turn(t, s, full, &expire, &n_expired, &before, err);
        if (st == TL_OK && n_expired > 0) {
            r->snapshots_expired += (int64_t)n_expired;
            st = collect_gone(t, before, t->md, expire, gone, err);
        }
        tl_ice_metadata_free(before);
        free(expire);
        if (st != TL_ERR_EXISTS) return st;
        TL_TRY(tl_table_reload_same(t, err));
    }
    return tl_error_set(err, TL_ERR_CONFLICT,
                        "%s: gave up expiring snapshots after %d attempts lost to other writers",
                        t->name.full, MAX_ATTEMPTS);
}

/* ---- Expiry staged for an append's commit (maintain_fold.c) ---- */

/* Moves the keys of a set into a list. */
static tl_status set_to_list(key_set *s, tl_strlist *out, tl_error *err)
{
    for (size_t i = 0; i < s->cap; i++) {
        if (s->slots[i] == NULL) continue;
        if (tl_strlist_push_owned(out, s->slots[i]) != 0) return tl_error_nomem(err);
        s->slots[i] = NULL;
    }
    return TL_OK;
}

tl_status tl_maintain_expire_stage(tl_table *t, const tl_maintain_settings *s,
                                   tl_expiry_staged *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    bool *expire = calloc(t->md->n_snapshots + 1, 1);
    if (expire == NULL) return tl_error_nomem(err);
    size_t n_expired = choose(t->md, s, tl_now_millis(), false, expire);
    key_set gone = {0};
    tl_status st = n_expired ? tl_ice_metadata_copy(t->md, &out->md, err) : TL_OK;
    if (n_expired && st == TL_OK)
        st = tl_batch_ledger_extend(t, expire, out->md, &out->ledger_key, err);
    if (n_expired && st == TL_OK) st = drop_snapshots(t, out->md, expire, false, err);
    if (n_expired && st == TL_OK) st = tl_ice_metadata_serialize(out->md, &out->json, err);
    if (n_expired && st == TL_OK) st = collect_gone(t, t->md, out->md, expire, &gone, err);
    if (n_expired && st == TL_OK) st = set_to_list(&gone, &out->gone, err);
    out->n_expired = (int64_t)n_expired;
    set_free(&gone);
    free(expire);
    if (st != TL_OK) tl_expiry_staged_free(t, out, true);
    return st;
}

void tl_expiry_staged_free(tl_table *t, tl_expiry_staged *x, bool remove)
{
    if (remove && x->ledger_key) tl_store_remove(t->lake->store, x->ledger_key, NULL);
    free(x->ledger_key);
    tl_ice_metadata_free(x->md);
    tl_buf_free(&x->json);
    tl_strlist_free(&x->gone);
    memset(x, 0, sizeof *x);
}

/* ---- Orphans ---- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static bool is_uuid_at(const char *p)
{
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? p[i] != '-' : hexval(p[i]) < 0) return false;
    }
    return true;
}

/* Milliseconds since the epoch in the first UUIDv7 of a name, or -1. */
static int64_t name_time_ms(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i + 36 <= len; i++) {
        const char *p = name + i;
        if (!is_uuid_at(p) || p[14] != '7') continue;
        int64_t ms = 0;
        for (int k = 0; k < 13; k++)
            if (k != 8) ms = ms << 4 | hexval(p[k]);
        return ms;
    }
    return -1;
}

/* Objects maintenance may delete: data files, manifests, manifest lists,
 * last-value indexes and attachments. Table metadata, hints and heads are
 * never touched. */
static bool deletable_kind(const char *key, const char *table_key)
{
    size_t n = strlen(table_key);
    if (strncmp(key, table_key, n) != 0 || key[n] != '/') return false;
    const char *rest = key + n + 1, *base = strrchr(key, '/') + 1;
    size_t bl = strlen(base);
    bool parquet = bl > 8 && strcmp(base + bl - 8, ".parquet") == 0;
    /* Part objects of a GCS upload that crashed before its compose. */
    if (strncmp(rest, "data/", 5) == 0) return parquet || strstr(base, ".parquet.tl-part-");
    if (strncmp(rest, "metadata/", 9) != 0 || strchr(rest + 9, '/') != NULL) return false;
    bool avro = bl > 5 && strcmp(base + bl - 5, ".avro") == 0; /* batch ledgers too */
    return avro || (parquet && strncmp(base, "lvi-", 4) == 0) || tl_attachment_key(base);
}

/* How old an unreferenced object must be to be deleted, and how old it is:
 * by the UUIDv7 in its name (ours), else by its listed modification time; -1
 * (never deleted) when neither tells. */
static int64_t orphan_age_ms(const tl_store_listed *e, int64_t now, int64_t window,
                             int64_t *min_age)
{
    int64_t born = name_time_ms(strrchr(e->key, '/') + 1);
    *min_age = window;
    if (born < 0 && e->modified_ms > 0) {
        born = e->modified_ms;
        if (*min_age < FOREIGN_ORPHAN_WINDOW_MS) *min_age = FOREIGN_ORPHAN_WINDOW_MS;
    }
    return born < 0 ? -1 : now - born;
}

static tl_status delete_orphans(tl_table *t, const tl_maintain_settings *s, const key_set *gone,
                                tl_maintain_report *r, tl_error *err)
{
    key_set live = {0};
    tl_store_listing listed = {0};
    tl_strlist doomed = {0};
    char prefix[sizeof t->name.key + 2];
    snprintf(prefix, sizeof prefix, "%s/", t->name.key);
    /* A fresh view: commits made meanwhile reference only what they wrote
     * (young, inside the window) and what the current snapshot has. */
    tl_status st = tl_table_reload(t, 0, err);
    if (st == TL_OK) st = collect_all(t, t->md, &live, err);
    if (st == TL_OK) st = tl_store_list_objects(t->lake->store, prefix, true, &listed, err);
    int64_t now = tl_now_millis();
    for (size_t i = 0; st == TL_OK && i < listed.len; i++) {
        const char *key = listed.items[i].key;
        int64_t min_age, age = orphan_age_ms(&listed.items[i], now, s->orphan_window_ms, &min_age);
        bool orphan = deletable_kind(key, t->name.key) && !set_has(&live, key) &&
                      !(gone && set_has(gone, key)) && /* deleted already */
                      age >= 0 && age >= min_age;
        if (orphan && tl_strlist_push(&doomed, key) != 0) st = tl_error_nomem(err);
    }
    if (st == TL_OK)
        r->objects_deleted +=
            (int64_t)tl_store_remove_many(t->lake->store, doomed.items, doomed.len);
    tl_strlist_free(&doomed);
    tl_store_listing_free(&listed);
    /* Temporaries of writers killed before their rename, which no listing shows. */
    if (st == TL_OK)
        st = tl_store_sweep(t->lake->store, prefix,
                            s->orphan_window_ms > 0 ? s->orphan_window_ms : 1, &r->objects_deleted,
                            err);
    set_free(&live);
    return st;
}

tl_status tl_maintain_expire(tl_table *t, const tl_maintain_settings *s, bool full,
                             tl_maintain_report *r, tl_error *err)
{
    key_set gone = {0};
    tl_status st = expire_snapshots(t, s, full, &gone, r, err);
    /* Deleted once the commits that stopped naming them are durable
     * (inside an append, its commits may not be yet: commit_point.h).
     * Queued locally: an append's inline expiry does not wait for the disk,
     * and tl_maintain_run settles them before it returns. */
    if (st == TL_OK && gone.cap > 0) st = tl_table_sync_commits(t, err);
    if (st == TL_OK)
        r->objects_deleted += (int64_t)tl_store_remove_later(t->lake->store, gone.slots, gone.cap);
    if (st == TL_OK && full) st = delete_orphans(t, s, &gone, r, err);
    set_free(&gone);
    return st;
}
