/* The commit point (see commit_point.h): the conditional create of the next
 * version, and telling a dropped table from a live one. */
#include "table/commit_point.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/parallel.h"
#include "store/cache.h"
#include "store/store.h"
#include "table/head.h"
#include "table/version_cache.h"

/* The value of a top-level field of metadata JSON (found by its quoted name,
 * which appears once in Iceberg metadata), or NULL. */
static const char *field_value(const char *s, size_t n, const char *quoted)
{
    const char *p = memmem(s, n, quoted, strlen(quoted)), *end = s + n;
    if (p == NULL) return NULL;
    p += strlen(quoted);
    while (p < end && strchr(" \t\r\n:", *p)) p++;
    return p < end ? p : NULL;
}

typedef enum { PARENT_SAME, PARENT_OTHER, PARENT_UNKNOWN } parent_match;

/* Whether the table-uuid value at uuid (up to end) is the handle's table's
 * (true when the handle knows none). */
static bool same_uuid(const tl_table *t, const char *uuid, const char *end)
{
    const char *want = t->md->table_uuid;
    size_t len = want ? strlen(want) : 0;
    return !want || (end - uuid >= (ptrdiff_t)len + 2 && *uuid == '"' &&
                     strncasecmp(uuid + 1, want, len) == 0 && uuid[len + 1] == '"');
}

/* Is this metadata text (whole or a prefix) the version the handle loaded?
 * Same table-uuid and last-updated-ms: a drop's deletion, then a stale
 * writer's commit of the same version number, differ in both or the latter. */
static parent_match match_parent(const tl_table *t, const char *s, size_t n)
{
    const char *uuid = field_value(s, n, "\"table-uuid\""), *end = s + n;
    const char *ms = field_value(s, n, "\"last-updated-ms\"");
    if (uuid == NULL || ms == NULL) return PARENT_UNKNOWN;
    if (!same_uuid(t, uuid, end)) return PARENT_OTHER;
    char digits[24];
    size_t k = 0;
    while (ms + k < end && k + 1 < sizeof digits && ms[k] >= '0' && ms[k] <= '9') k++;
    if (ms + k == end) return PARENT_UNKNOWN; /* cut off in the prefix */
    memcpy(digits, ms, k);
    digits[k] = 0;
    return strtoll(digits, NULL, 10) == t->md->last_updated_ms ? PARENT_SAME : PARENT_OTHER;
}

/* Reads the handle's version back: PARENT_SAME, PARENT_OTHER, or
 * TL_ERR_NOT_FOUND when it is gone. The start of the file usually says;
 * when it does not, the whole file. */
static tl_status read_parent(tl_table *t, parent_match *out, tl_error *err)
{
    /* The file the handle read: vN, or a catalog's NNNNN-<uuid> (table.c). */
    char key[sizeof t->name.key + 128];
    const char *read = t->metadata_url ? tl_store_key_of(t->lake->store, t->metadata_url) : NULL;
    if (read && strlen(read) < sizeof key)
        strcpy(key, read);
    else
        tl_table_metadata_key(&t->name, t->version, key, sizeof key);
    char head[1024];
    size_t got = 0;
    uint64_t total = 0;
    TL_TRY(
        tl_store_get_first(t->lake->store, key, sizeof head, (uint8_t *)head, &got, &total, err));
    *out = match_parent(t, head, got);
    if (*out != PARENT_UNKNOWN || total <= got) {
        if (*out == PARENT_UNKNOWN) *out = PARENT_SAME; /* it does not say: existence is all */
        return TL_OK;
    }
    tl_buf all = {0};
    TL_TRY(tl_store_get(t->lake->store, key, &all, err));
    *out = match_parent(t, (const char *)all.data, all.len);
    if (*out == PARENT_UNKNOWN) *out = PARENT_SAME;
    tl_buf_free(&all);
    return TL_OK;
}

/* Versions newer than `version` listed; 0 when there are none. */
static tl_status newest_version(tl_table *t, int64_t *out, tl_error *err)
{
    tl_status st = tl_table_listed_version(t->lake->store, &t->name, out, err);
    if (st == TL_ERR_NOT_FOUND) *out = 0;
    return st == TL_ERR_NOT_FOUND ? TL_OK : st;
}

/* With the handle's version gone: is the table gone, or did it move on past
 * `mine` (later commits may prune metadata files that leave the log)? While
 * versions after `mine` are listed, wait for them to go: stale writers of a
 * dropped table remove theirs; those that stay were built on ours (our
 * create's fence saw none newer than its parent, see no_newer_version).
 * *newest: the newest version listed last. */
static tl_status moved_on(tl_table *t, int64_t mine, bool *alive, int64_t *newest, tl_error *err)
{
    for (int wait_ms = 2;; wait_ms *= 2) {
        TL_TRY(newest_version(t, newest, err));
        if (*newest <= mine) return *alive = false, TL_OK;
        if (wait_ms > 512) return *alive = true, TL_OK;
        tl_sleep_ms(wait_ms);
    }
}

/* Whether metadata `md` descends from the version `mine` we created (its
 * JSON `ours`): it holds our current snapshot (an append's, whose id is
 * new), or its metadata log names our version with our last-updated-ms. */
static bool descends(const tl_ice_metadata *md, const tl_ice_metadata *ours, int64_t mine)
{
    if (ours->current_snapshot_id > 0 && tl_ice_metadata_snapshot(md, ours->current_snapshot_id))
        return true;
    char tail[40];
    snprintf(tail, sizeof tail, "/v%lld.metadata.json", (long long)mine);
    size_t n = strlen(tail);
    for (size_t i = 0; i < md->n_metadata_log; i++) {
        const char *f = md->metadata_log[i].metadata_file;
        size_t len = f ? strlen(f) : 0;
        if (len >= n && strcmp(f + len - n, tail) == 0 &&
            md->metadata_log[i].timestamp_ms == ours->last_updated_ms)
            return true;
    }
    return false;
}

/* Our version `mine` (its JSON) was created, its parent is gone and the
 * newer version `newest` is listed: did that one build on ours, or did ours
 * go into a number freed by an expiry that deleted the metadata files
 * leaving the log (timelake 0.7.0's does so on object stores too, where our
 * creates are not fenced, see no_newer_version)? Then ours is on a branch no
 * reader follows: *freed. Unreadable either way: not freed (the version stays). */
static void check_freed(tl_table *t, int64_t mine, int64_t newest, const void *json, size_t len,
                        bool *freed)
{
    char key[sizeof t->name.key + 64];
    tl_table_metadata_key(&t->name, newest, key, sizeof key);
    tl_buf b = {0};
    tl_ice_metadata *ours = NULL, *md = NULL;
    if (tl_store_get(t->lake->store, key, &b, NULL) == TL_OK &&
        tl_ice_metadata_parse(json, len, &ours, NULL) == TL_OK &&
        tl_ice_metadata_parse((const char *)b.data, b.len, &md, NULL) == TL_OK)
        *freed = !descends(md, ours, mine);
    tl_ice_metadata_free(ours);
    tl_ice_metadata_free(md);
    tl_buf_free(&b);
}

/* After creating version K+1 (K = t->version) from `json`: is the table
 * still there? The parent read back as the one loaded says yes; read back as
 * another table's (dropped and created again, or a stale writer's) says no;
 * gone, it depends on the versions after ours, which may also show that ours
 * went into a freed number (*freed). */
static tl_status still_there(tl_table *t, const void *json, size_t len, bool *alive, bool *freed,
                             tl_error *err)
{
    parent_match m;
    tl_status st = read_parent(t, &m, err);
    *alive = st == TL_OK && m == PARENT_SAME;
    if (st != TL_ERR_NOT_FOUND) return st;
    int64_t mine = t->version + 1, newest = 0;
    TL_TRY(moved_on(t, mine, alive, &newest, err));
    if (*alive) check_freed(t, mine, newest, json, len, freed); /* newest > mine */
    return TL_OK;
}

static tl_status dropped(tl_table *t, tl_error *err)
{
    t->dropped = true;
    return tl_error_set(err, TL_ERR_NOT_FOUND,
                        "table %s was dropped (or dropped and created again) while this handle "
                        "held it: nothing was committed; open the table again",
                        t->name.full);
}

static void hint_key(const tl_table *t, char *buf, size_t size)
{
    snprintf(buf, size, "%s/metadata/version-hint.text", t->name.key);
}

/* metadata/version-hint.text names the version just made, on every store
 * after every commit: readers such as DuckDB's iceberg_scan trust it without
 * looking for newer versions (ours and the reference's probe past it). Only
 * a hint, so a failure is not the commit's. */
static void write_hint(tl_table *t, int64_t version)
{
    char key[sizeof t->name.key + 64], text[24];
    hint_key(t, key, sizeof key);
    int n = snprintf(text, sizeof text, "%lld", (long long)version);
    tl_store_put_hint(t->lake->store, key, text, (size_t)n, NULL);
}

typedef struct after_create {
    tl_table *t;
    bool alive, local;
    bool freed; /* created into a freed number (check_freed) */
    char *const *obsolete;
    size_t n_obsolete;
    const void *json;
    size_t len;
} after_create;

static void check_alive(after_create *a)
{
    if (a->t->version >= 1 &&
        still_there(a->t, a->json, a->len, &a->alive, &a->freed, NULL) != TL_OK)
        a->alive = true; /* a failed check says nothing either way: the version stays */
}

/* After a commit that found its table dropped removed its version: the hint
 * it wrote named that version. A table created again under the name has its
 * own versions, so the hint names the newest of them again (DuckDB's
 * iceberg_scan reads a table through it); with none, the hint goes. */
static void restore_hint(tl_table *t)
{
    int64_t newest = 0;
    if (newest_version(t, &newest, NULL) == TL_OK && newest > 0) {
        write_hint(t, newest);
        return;
    }
    char hint[sizeof t->name.key + 64];
    hint_key(t, hint, sizeof hint);
    tl_store_remove(t->lake->store, hint, NULL);
}

/* Item 0 writes the hint, item 1 checks the table is still there (locally
 * after the hint, in the same item), item 2 hands the obsolete objects to
 * deletion (locally queued: nobody waits for it, see local_trash.h). */
static tl_status after_create_step(void *ctx, size_t i, tl_error *err)
{
    after_create *a = ctx;
    (void)err;
    if (i == 0) {
        write_hint(a->t, a->t->version + 1);
        if (a->local) check_alive(a);
    } else if (i == 1 && !a->local) {
        check_alive(a);
    } else if (i == 2) {
        tl_store_remove_later(a->t->lake->store, a->obsolete, a->n_obsolete);
    }
    return TL_OK;
}

tl_status tl_table_land_next(tl_table *t, tl_ice_metadata *md, const tl_buf *json,
                             tl_head_job *head, tl_error *err)
{
    tl_head_job_send(head); /* in parallel with the conditional create */
    tl_status st = tl_table_create_next(t, json->data, json->len, err);
    bool won = st == TL_OK, dropped = st == TL_ERR_NOT_FOUND;
    if (won) {
        st = tl_table_adopt(t, md, t->version + 1, err); /* frees md on failure */
        md = NULL;
    }
    tl_head_job_finish(t, head, won && st == TL_OK);
    if (dropped && head) tl_table_remove_head(t);
    tl_ice_metadata_free(md);
    return st;
}

/* Keeps what a commit not yet durable stopped naming until it is. */
static tl_status hold_removals(tl_table *t, char *const *keys, size_t n, tl_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i] && tl_strlist_push(&t->unsynced_removals, keys[i]) != 0)
            return tl_error_nomem(err);
    return TL_OK;
}

/* A sync that covered a version not yet durable failed: the append that
 * made it reports so (its outcome is unknown). */
static void sync_failed(tl_table *t, tl_status st, const tl_error *err)
{
    if (t->sync_status != TL_OK) return;
    t->sync_status = st;
    if (err)
        t->sync_error = *err;
    else
        tl_error_set(&t->sync_error, st, "making a commit durable failed");
}

tl_status tl_table_sync_commits(tl_table *t, tl_error *err)
{
    if (t->unsynced) {
        tl_error e = {0};
        tl_status st = tl_store_sync(t->lake->store, &e);
        t->unsynced = false;
        if (st != TL_OK) sync_failed(t, st, &e);
    }
    if (t->sync_status == TL_OK)
        tl_store_remove_later(t->lake->store, t->unsynced_removals.items, t->unsynced_removals.len);
    tl_strlist_free(&t->unsynced_removals); /* after a failure they stay: orphans */
    if (t->sync_status != TL_OK && err) *err = t->sync_error;
    return t->sync_status;
}

size_t tl_table_remove_once_durable(tl_table *t, char *const *keys, size_t n)
{
    if (!t->unsynced) return tl_store_remove_later(t->lake->store, keys, n);
    size_t held = 0;
    for (size_t i = 0; i < n; i++)
        if (keys[i] && tl_strlist_push(&t->unsynced_removals, keys[i]) == 0) held++;
    return held;
}

tl_status tl_table_create_next(tl_table *t, const void *json, size_t len, tl_error *err)
{
    return tl_table_create_next_removing(t, json, len, NULL, 0, err);
}

/* Whether version-hint.text names at most the handle's version K: the hint
 * is written after every commit (write_hint), so a hint above K says that
 * newer versions were made. Unreadable: false. */
static bool hint_at_most_own(tl_table *t)
{
    char key[sizeof t->name.key + 64], text[24];
    hint_key(t, key, sizeof key);
    size_t got = 0;
    uint64_t total = 0;
    if (tl_store_get_first(tl_store_uncached(t->lake->store), key, sizeof text - 1, (uint8_t *)text,
                           &got, &total, NULL) != TL_OK ||
        got == 0 || total > got)
        return false;
    text[got] = '\0';
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    return end != text && v > 0 && v <= t->version;
}

/* Whether the handle's own version file, vK, is still there. A catalog's
 * name (NNNNN-<uuid>) is not ours to reason about: false. */
static bool own_version_present(tl_table *t)
{
    char key[sizeof t->name.key + 64];
    tl_table_metadata_key(&t->name, t->version, key, sizeof key);
    const char *read = t->metadata_url ? tl_store_key_of(t->lake->store, t->metadata_url) : NULL;
    return (read == NULL || strcmp(read, key) == 0) &&
           tl_table_version_present(t->lake->store, &t->name, t->version);
}

/* The create's fence: no version newer than the handle's exists. Locally
 * each commit prunes the metadata files that leave the metadata log
 * (obsolete_metadata in commit.c), which frees their numbers: a handle more
 * than write.metadata.previous-versions-max versions behind would otherwise
 * create its next version into a freed number, and every commit after it
 * would build on that branch, which no reader follows. The store runs this
 * under the metadata folder's lock, just before the create, which itself
 * fails when v(K+1) exists (atomically).
 *
 * Listing the folder answers it, but reads every manifest and list of every
 * kept snapshot: an append's cost then grew with the history. A lookup by
 * name and a read of the hint answer it first. Versions are created one
 * number after another (the reference deletes none locally), and
 * pruned in ascending order, each deleter taking the lower ones still there
 * first (lower_versions_first in commit.c): the versions present are one run
 * of numbers, so with vK present and v(K+1) absent, vK is the newest. The
 * hint backs that up: a commit after vK would have named a higher version
 * there. Only a pruned number above a vK that stays (an unlink that failed)
 * together with a hint written out of order could mislead the two; anything
 * else unusual (vK gone, a hint above K or unreadable, a catalog's names)
 * lists the folder. (On object stores our commits free no number, see
 * check_freed for other writers': creates there are not fenced.) */
static tl_status no_newer_version(void *ctx, tl_error *err)
{
    tl_table *t = ctx;
    if (hint_at_most_own(t) && own_version_present(t)) return TL_OK;
    int64_t newest;
    TL_TRY(newest_version(t, &newest, err));
    if (newest <= t->version) return TL_OK;
    t->newer_listed = true;
    return tl_error_set(err, TL_ERR_EXISTS, "%s: version %lld was made after this handle's %lld",
                        t->name.full, (long long)newest, (long long)t->version);
}

tl_status tl_table_lost_if_moved_on(tl_table *t, tl_status st, tl_error *err)
{
    int64_t newest = 0;
    if (st != TL_ERR_NOT_FOUND || newest_version(t, &newest, NULL) != TL_OK || newest <= t->version)
        return st;
    t->newer_listed = true;
    return tl_error_set(err, TL_ERR_EXISTS,
                        "%s: a file version %lld names is gone, and version %lld was made since",
                        t->name.full, (long long)t->version, (long long)newest);
}

/* Our version `key` went into a freed number (check_freed): it goes again,
 * and the commit loses the race, to retry on the newest version. (Should the
 * removal fail, the version stays where no reader looks.) */
static tl_status lost_to_freed_number(tl_table *t, const char *key, tl_error *err)
{
    tl_store_remove(t->lake->store, key, NULL);
    restore_hint(t);
    t->newer_listed = true;
    return tl_error_set(err, TL_ERR_EXISTS,
                        "%s: version %lld went into a number an expiry had freed (the handle "
                        "was far behind)",
                        t->name.full, (long long)t->version + 1);
}

tl_status tl_table_create_next_removing(tl_table *t, const void *json, size_t len,
                                        char *const *obsolete, size_t n, tl_error *err)
{
    TL_TRY(tl_table_check_not_dropped(t, err));
    char key[sizeof t->name.key + 64];
    tl_table_metadata_key(&t->name, t->version + 1, key, sizeof key);
    bool local = tl_store_is_local(t->lake->store), defer = t->defer_sync && local;
    tl_status st = local ? tl_store_put_if_absent_fenced(t->lake->store, key, json, len, !defer,
                                                         no_newer_version, t, err)
                         : tl_store_put_if_absent(t->lake->store, key, json, len, err);
    /* Its syncs covered the versions left unsynced before it. */
    if (st != TL_OK && st != TL_ERR_EXISTS && t->unsynced) sync_failed(t, st, err);
    if (st != TL_OK) return st;
    if (defer) {
        t->unsynced = true;
        TL_TRY(hold_removals(t, obsolete, n, err));
        n = 0;
        if (t->sync_early) tl_store_sync_begin(t->lake->store);
    }
    /* Landed. On an object store the hint's PUT and the check share one
     * round trip; locally the hint is written first, so that a drop racing
     * the commit deletes it or the check sees the drop and removes it, all
     * on this thread (queuing the deletions waits for no disk). The
     * obsolete objects go meanwhile. */
    after_create a = {t, true, local, false, obsolete, n, json, len};
    tl_parallel_run(n ? 3 : 2, a.local ? 1 : 3, false, after_create_step, &a, NULL);
    if (a.freed) return lost_to_freed_number(t, key, err);
    if (a.alive) {
        tl_version_cache_note(t, t->version + 1); /* this process's queries see it at once */
        return TL_OK;
    }
    tl_error removing = {0};
    if (tl_store_remove(t->lake->store, key, &removing) != TL_OK)
        return tl_error_set(err, TL_ERR_STORAGE,
                            "table %s was dropped during this commit, and removing the version "
                            "it created (%s) failed: %s",
                            t->name.full, key, removing.message);
    restore_hint(t);
    return dropped(t, err);
}

tl_status tl_table_reload_same(tl_table *t, tl_error *err)
{
    char *uuid = t->md->table_uuid ? strdup(t->md->table_uuid) : NULL;
    if (t->md->table_uuid && uuid == NULL) return tl_error_nomem(err);
    tl_status st = tl_table_reload(t, 0, err);
    bool other = st == TL_OK && uuid && t->md->table_uuid && strcasecmp(uuid, t->md->table_uuid);
    free(uuid);
    if (st == TL_ERR_NOT_FOUND || other) return dropped(t, err);
    return st;
}

tl_status tl_table_explain_failure(tl_table *t, tl_status st, tl_error *err)
{
    if (st == TL_OK || st == TL_ERR_NOMEM || t->dropped) return st;
    parent_match m;
    bool alive = true;
    int64_t newest;
    tl_status rd = read_parent(t, &m, NULL);
    if (rd == TL_ERR_NOT_FOUND && moved_on(t, t->version, &alive, &newest, NULL) != TL_OK)
        return st;
    if (rd == TL_OK) alive = m == PARENT_SAME;
    return (rd == TL_OK || rd == TL_ERR_NOT_FOUND) && !alive ? dropped(t, err) : st;
}

/* Whether the encoded head describes the handle's table (its metadata's
 * table-uuid): this commit's head, or one of an earlier commit of it. */
static bool head_of_this_table(const tl_table *t, const tl_buf *bytes)
{
    tl_head h;
    if (tl_head_decode(bytes->data, bytes->len, &h, NULL) != TL_OK) return false;
    const char *s = (const char *)h.metadata.data;
    const char *uuid = s ? field_value(s, h.metadata.len, "\"table-uuid\"") : NULL;
    bool ours = uuid && same_uuid(t, uuid, s + h.metadata.len);
    tl_head_clear(&h);
    return ours;
}

void tl_table_remove_head(tl_table *t)
{
    char key[sizeof t->name.key + 64];
    tl_head_key(&t->name, key, sizeof key);
    tl_store *store = tl_store_uncached(t->lake->store);
    tl_buf bytes = {0};
    /* A table created again under the name writes its own head, which may
     * have replaced ours: that one stays. (One written between this read and
     * the removal goes too; a head is optional, the next commit's brings it
     * back.) */
    if (tl_store_get(store, key, &bytes, NULL) == TL_OK && head_of_this_table(t, &bytes))
        tl_store_remove(t->lake->store, key, NULL);
    tl_buf_free(&bytes);
}

tl_status tl_table_check_not_dropped(const tl_table *t, tl_error *err)
{
    if (!t->dropped) return TL_OK;
    return tl_error_set(err, TL_ERR_NOT_FOUND,
                        "table %s was dropped (or dropped and created again) since this handle "
                        "opened it: open the table again",
                        t->name.full);
}
