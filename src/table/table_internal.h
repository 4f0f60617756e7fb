/* What the table layer's files share: the lake and table handles. */
#ifndef TL_TABLE_INTERNAL_H
#define TL_TABLE_INTERNAL_H

#include "timelake.h"

#include "store/store.h"
#include "table/contract.h"
#include "table/name.h"

struct tl_lake {
    tl_store *store;
    /* The query layer's engine (its DuckDB), created on first use; the
     * query layer sets query_free so that closing the lake frees it. */
    void *query;
    void (*query_free)(void *query);
    int query_threads;              /* DuckDB's threads (timelake_query_threads); 0: its default */
    struct tl_md_cache *md_cache;   /* parsed metadata of unchanged tables (metadata_cache.h) */
    struct tl_lvi_memos *lvi_memos; /* the budget of the handles' lvi_memo (lvi_memo.h) */
    /* Session settings of every query (tl_lake_set_settings): NULL or
     * NULL-terminated name, value pairs, owned. */
    char **settings;
};

struct tl_table {
    tl_lake *lake;
    tl_qname name;
    char *location;       /* the table's root URL */
    char *metadata_url;   /* URL of the current vN.metadata.json */
    int64_t version;      /* N of the current vN.metadata.json */
    tl_ice_metadata *md;  /* the current metadata */
    tl_contract contract; /* parsed from md's properties */
    /* md came from, and goes back to, md_cache (a reference to the lake's,
     * taken on first use) under md_token; 0: md is the handle's own. */
    uint64_t md_token;
    struct tl_md_cache *md_cache;
    /* Immutable objects (manifest list, manifests, index) carried by the
     * head object this handle read or wrote (table/head.h), or NULL: reads
     * of these URLs are answered from memory. Kept across versions. */
    struct tl_head_objects *head_objects;
    /* The head this handle wrote for `version` found no live data file
     * large enough to carry a footer (head_footer.h): the next head need
     * not look for one unless its commit adds one. False after any other
     * change of version. */
    bool no_large_files;
    /* A commit found the table dropped (commit_point.h): commits fail at
     * once. A successful reload clears it. */
    bool dropped;
    /* A commit's fence (commit_point.c) listed a version newer than this
     * handle's: the next reload of the latest version lists the versions
     * rather than trust the hint, which may lag behind (a slow writer can
     * write an old number last). */
    bool newer_listed;
    /* > 0: a read-only handle of the table as of this snapshot (time travel,
     * time_travel.h), never committed through; 0: the current table. */
    int64_t pinned_snapshot;
    /* The batch ids of the current ancestry (batch_index.h), or NULL until
     * a duplicate check needs them. Checked against md at each use. */
    struct tl_batch_index *batch_index;
    /* The last-value index this handle built last (lvi_memo.h), counted in
     * the lake's lvi_memos; never NULL. */
    struct tl_lvi_memo *lvi_memo;
    /* Inside an append with its inline maintenance (append.c) a commit
     * returns once its version is visible: the wait for the version to be
     * durable is left to the next commit's first wait (which syncs it with
     * its own files) or to tl_table_sync_commits at the end, so maintenance
     * that commits after an append costs one wait for the disk less.
     * `unsynced`: a version may not be durable yet; the objects it stopped
     * naming wait in unsynced_removals until it is. sync_status: a sync that
     * covered such a version failed (kept until the append reports it). */
    bool defer_sync, unsynced;
    /* With defer_sync: the commit about to be made is expected to be the
     * append's last (no inline maintenance commits after it), so its wait
     * for the version to be durable begins at once on a pool thread
     * (tl_store_sync_begin) and overlaps the work after the link (the
     * version hint, the dropped-table check, the append's cleanup); the
     * sync at the end waits for it. A wrong guess costs one more wait for
     * the disk, never durability. */
    bool sync_early;
    tl_strlist unsynced_removals;
    tl_status sync_status;
    tl_error sync_error;
    /* Commit turns (tl_table_set_commit_turns): when set, called before
     * and after each attempt of tl_commit_rewrite and of snapshot expiry
     * (its choice and its commit). */
    tl_turn_fn turn_enter, turn_leave;
    void *turn_ctx;
};

/* Key of metadata/vN.metadata.json of a table, written into buf. */
void tl_table_metadata_key(const tl_qname *name, int64_t version, char *buf, size_t size);
/* Whether metadata/vN.metadata.json of a table is there now: asked of the
 * store itself, never of a cache (commits reason from it under their lock). */
bool tl_table_version_present(tl_store *store, const tl_qname *name, int64_t version);
/* TL_ERR_NOT_FOUND and TL_ERR_EXISTS for table `name`, saying what to do. */
tl_status tl_table_not_found(tl_error *err, const tl_qname *name);
tl_status tl_table_exists_error(tl_error *err, const tl_qname *name);

/* tl_lake_create_table, with properties Timelake sets itself in version 1
 * (`own`: NULL or NULL-terminated key, value pairs, not checked as a
 * user's are): a rollup is created with its definition in one commit. */
tl_status tl_table_create_owned(tl_lake *lake, const char *name, const struct ArrowSchema *schema,
                                const tl_table_options *options, const char *const *own,
                                tl_table **out, tl_error *err);

/* The object key of a URL written in the table's metadata (buf may receive
 * it), or NULL when the URL is outside the warehouse. */
const char *tl_table_key_of_url(const tl_table *t, const char *url, char *buf, size_t size);

/* The newest vN.metadata.json of a table by listing; TL_ERR_NOT_FOUND when none. */
tl_status tl_table_listed_version(tl_store *store, const tl_qname *name, int64_t *out,
                                  tl_error *err);

/* Loads version `version` of a table (or the latest if version <= 0) into a new handle. */
tl_status tl_table_load(tl_lake *lake, const tl_qname *name, int64_t version, tl_table **out,
                        tl_error *err);

/* The same for a version the version cache knows, from the parse the
 * lake's metadata cache holds, with no request (metadata files are
 * immutable); TL_ERR_NOT_FOUND when the cache does not hold it. */
tl_status tl_table_load_cached(tl_lake *lake, const tl_qname *name, int64_t version, tl_table **out,
                               tl_error *err);

/* Makes md (taken, freed on failure too) version `version` of the handle. */
tl_status tl_table_adopt(tl_table *t, tl_ice_metadata *md, int64_t version, tl_error *err);

/* Replaces the handle's state with a freshly loaded version (the handle keeps its identity). */
tl_status tl_table_reload(tl_table *t, int64_t version, tl_error *err);

/* Registry of table names at the warehouse root (timelake-tables.json, as the reference keeps). */
tl_status tl_registry_add(tl_store *store, const char *full_name, tl_error *err);
tl_status tl_registry_remove(tl_store *store, const char *full_name, tl_error *err);

#endif
