/* Committing an append in two sequential storage round trips. Everything is
 * encoded in memory first; then one parallel batch uploads the data files, the
 * manifest, the manifest list and the last-value index, and one conditional
 * create makes the next vN.metadata.json. The loser of a race reloads the
 * winner's version, re-checks its batch id, and rebases onto it: data files
 * and manifest stay valid because their sequence numbers are inherited from
 * the manifest list, so a retry rebuilds and uploads only the manifest list
 * and the index (both merged with the new parent).
 *
 * A replace (an Iceberg "overwrite") is the same commit whose manifest list
 * holds, instead of the parent's manifests, one manifest of every file live in
 * the parent marked deleted; each attempt builds it against its own parent.
 * With expect_version, a lost race is a conflict instead of a rebase.
 *
 * Files are deleted only when the commit definitely did not land. When the
 * conditional create's outcome stays unknown (even after the store's
 * read-back), the metadata may refer to them: they stay, and orphan cleanup
 * removes them later if it did not land (their names carry UUIDv7 ages). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/parallel.h"
#include "core/random.h"
#include "iceberg/manifest_list.h"
#include "table/append.h"
#include "table/attachments.h"
#include "table/head.h"
#include "table/head_footer.h"
#include "table/head_write.h"
#include "table/batch_ids.h"
#include "table/batch_ledger.h"
#include "table/commit_point.h"
#include "table/contract.h"
#include "table/live_files.h"
#include "table/lvi.h"
#include "table/maintain.h"
#include "table/manifest_merge.h"

#define MAX_ATTEMPTS 40
#define BACKOFF_BASE_MS 2
#define BACKOFF_CAP_MS 500

typedef struct commit_state {
    int64_t snapshot_id;
    char *manifest_key;
    tl_buf manifest_avro;           /* uploaded by the first batch (see carried) */
    tl_head_objects fresh;          /* the same, by URL, for the head object */
    tl_ice_manifest_file *manifest; /* the new manifest's list entry; seq set per attempt */
    char *list_key;                 /* this attempt's manifest list */
    char *lvi_key; /* this attempt's last-value index, merged with its parent's, or NULL */
    /* A replace: this attempt's manifests of the parent's files, deleted,
     * one per partition spec (n_deleted of each). */
    char **deleted_keys;
    tl_buf *deleted_avro;
    tl_ice_manifest_file *deleted;
    size_t n_deleted;
    int64_t removed_files, removed_rows, removed_bytes;
    tl_manifest_merge merge;    /* this attempt's merge of the parent's manifests */
    int32_t schema_id, spec_id; /* what the files were written against */
    bool may_have_landed;       /* a create succeeded or its outcome is unknown */
    bool folded;                /* this attempt's version holds req->fold's snapshot */
    /* The data files, attachments and manifest went up with an attempt's
     * batch: the first attempt that got as far as uploading (one can lose
     * before, when another writer expired its parent snapshot). */
    bool carried;
    char warning[TL_ERROR_MESSAGE_MAX]; /* the parent's index was rebuilt (tl_lvi_parent) */
} commit_state;

static int64_t new_snapshot_id(const tl_ice_metadata *md)
{
    for (;;) {
        int64_t id = (int64_t)(tl_random_u64() >> 1);
        if (id != 0 && tl_ice_metadata_snapshot(md, id) == NULL) return id;
    }
}

static tl_status encode_manifest(const tl_table *t, const tl_commit_request *req,
                                 int64_t snapshot_id, tl_buf *out, tl_error *err)
{
    tl_ice_manifest_entry *entries = calloc(req->n_files + 1, sizeof *entries);
    if (entries == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < req->n_files; i++) {
        entries[i].status = 1;
        entries[i].has_snapshot_id = true;
        entries[i].snapshot_id = snapshot_id;
        entries[i].file = req->files[i]; /* shallow: the writer only reads it */
    }
    tl_status st = tl_table_manifest_encode(t, entries, req->n_files, out, err);
    free(entries);
    return st;
}

/* Partition summary of the new manifest: min and max of each partition field. */
static tl_status summarize_partitions(const tl_commit_request *req, tl_ice_manifest_file *mf,
                                      tl_error *err)
{
    const tl_ice_data_file **files = malloc((req->n_files + 1) * sizeof *files);
    if (files == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < req->n_files; i++) files[i] = &req->files[i];
    tl_status st = tl_table_manifest_summarize(files, req->n_files, mf, err);
    free(files);
    return st;
}

/* The manifest, in memory (cs->manifest_avro) for the first attempt to upload, and for the head. */
static tl_status build_manifest(tl_table *t, const tl_commit_request *req, commit_state *cs,
                                tl_error *err)
{
    tl_buf *avro = &cs->manifest_avro;
    /* UUIDv7 in every name this commit makes: orphan cleanup ages files by it. */
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    cs->manifest_key = tl_strdup_printf("%s/metadata/%s-m0.avro", t->name.key, uuid);
    if (cs->manifest_key == NULL) return tl_error_nomem(err);
    tl_status st = encode_manifest(t, req, cs->snapshot_id, avro, err);
    if (st != TL_OK) {
        free(cs->manifest_key);
        cs->manifest_key = NULL;
        return st;
    }
    tl_ice_manifest_file *mf = cs->manifest;
    mf->manifest_path =
        tl_strdup_printf("%s%s", t->location, cs->manifest_key + strlen(t->name.key));
    mf->partition_spec_id = cs->spec_id;
    mf->added_snapshot_id = cs->snapshot_id;
    mf->added_files_count = (int32_t)req->n_files;
    mf->added_rows_count = req->added_rows;
    mf->manifest_length = (int64_t)avro->len;
    if (mf->manifest_path == NULL) return tl_error_nomem(err);
    if (!tl_store_is_local(t->lake->store))
        TL_TRY(tl_head_objects_add(&cs->fresh, mf->manifest_path, avro->data, avro->len, err));
    if (!tl_store_is_local(t->lake->store))
        TL_TRY(tl_head_footers_of_commit(t, req, &cs->fresh, err));
    return summarize_partitions(req, mf, err);
}

static tl_status read_parent_manifests(const tl_table *t, const tl_ice_snapshot *parent,
                                       tl_ice_manifest_file **out, size_t *n, tl_error *err)
{
    *out = NULL;
    *n = 0;
    if (parent == NULL || parent->manifest_list == NULL) return TL_OK;
    /* Usually this process wrote it, at its previous commit (see offer_written). */
    if (tl_manifest_list_cache_held(parent->manifest_list, out, n)) return TL_OK;
    tl_buf b = {0};
    char buf[1024];
    const char *key = tl_table_key_of_url(t, parent->manifest_list, buf, sizeof buf);
    bool held = tl_head_objects_find(t->head_objects, parent->manifest_list) != NULL;
    tl_status st = key && !held ? tl_store_get(t->lake->store, key, &b, err)
                                : tl_table_read_url(t, parent->manifest_list, &b, err);
    if (st == TL_ERR_NOT_FOUND) {
        /* Another writer expired the snapshot this handle is at: the table
         * moved on, so this attempt is lost like a race, and retried. */
        tl_buf_free(&b);
        return tl_error_set(err, TL_ERR_EXISTS, "snapshot %lld was expired by another writer",
                            (long long)parent->snapshot_id);
    }
    if (st == TL_OK) st = tl_ice_manifest_list_read(b.data, b.len, out, n, err);
    if (st != TL_OK) {
        tl_error_prefix(err, "manifest list %s", parent->manifest_list);
        st = tl_table_damaged(t, st, err);
    }
    tl_buf_free(&b);
    return st;
}

/* Whether every source column of `spec` is in the current schema: a
 * manifest of that spec can be written against it. (Readers such as
 * pyiceberg bind every manifest's spec to the current schema, so a manifest
 * of deleted entries whose spec names a dropped column would break them; the
 * entries are informational, and such files simply go unlisted.) */
static bool spec_fits(const tl_table *t, const tl_ice_partition_spec *spec)
{
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(t->md);
    for (size_t i = 0; spec && i < spec->n_fields; i++)
        if (tl_ice_schema_field_by_id(schema, spec->fields[i].source_id) == NULL) return false;
    return spec != NULL;
}

/* One manifest of the entries e[0..n) of the parent's files (all of spec
 * `spec_id`) marked deleted, as cs->deleted[cs->n_deleted]. */
static tl_status add_deleted_manifest(tl_table *t, commit_state *cs, int32_t spec_id,
                                      const tl_ice_manifest_entry *e, const tl_live_file *const *f,
                                      size_t n, int64_t seq, tl_error *err)
{
    size_t k = cs->n_deleted;
    char **keys = realloc(cs->deleted_keys, (k + 1) * sizeof *keys);
    if (keys) cs->deleted_keys = keys;
    tl_buf *avro = keys ? realloc(cs->deleted_avro, (k + 1) * sizeof *avro) : NULL;
    if (avro) cs->deleted_avro = avro;
    tl_ice_manifest_file *mfs = avro ? realloc(cs->deleted, (k + 1) * sizeof *mfs) : NULL;
    if (mfs == NULL) return tl_error_nomem(err);
    cs->deleted = mfs;
    memset(&avro[k], 0, sizeof avro[k]);
    memset(&mfs[k], 0, sizeof mfs[k]);
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    keys[k] = tl_strdup_printf("%s/metadata/%s-m%zu.avro", t->name.key, uuid, k + 1);
    cs->n_deleted++; /* from here on freed with the state */
    if (keys[k] == NULL) return tl_error_nomem(err);
    TL_TRY(tl_table_manifest_encode_spec(t, tl_ice_metadata_spec(t->md, spec_id), e, n, &avro[k],
                                         err));
    tl_ice_manifest_file *mf = &mfs[k];
    mf->manifest_path = tl_strdup_printf("%s%s", t->location, keys[k] + strlen(t->name.key));
    mf->manifest_length = (int64_t)avro[k].len;
    mf->partition_spec_id = spec_id;
    mf->added_snapshot_id = cs->snapshot_id;
    mf->sequence_number = seq;
    mf->min_sequence_number = seq;
    mf->deleted_files_count = (int32_t)n;
    const tl_ice_data_file **files = malloc((n + 1) * sizeof *files);
    for (size_t i = 0; files && i < n; i++) {
        files[i] = &f[i]->file;
        mf->deleted_rows_count += f[i]->file.record_count;
        if (e[i].sequence_number < mf->min_sequence_number)
            mf->min_sequence_number = e[i].sequence_number;
    }
    tl_status st = mf->manifest_path && files ? tl_table_manifest_summarize(files, n, mf, err)
                                              : tl_error_nomem(err);
    free(files);
    if (st == TL_OK && !tl_store_is_local(t->lake->store))
        st = tl_head_objects_add(&cs->fresh, mf->manifest_path, avro[k].data, avro[k].len, err);
    return st;
}

/* A replace: the manifests of every file live in the parent, marked
 * deleted, one per partition spec (cs->deleted*), and what they held.
 * Nothing when the parent is empty. */
static tl_status build_deleted_manifests(tl_table *t, commit_state *cs, int64_t seq, tl_error *err)
{
    cs->removed_files = cs->removed_rows = cs->removed_bytes = 0;
    tl_live_files lf;
    TL_TRY(tl_live_files_read(t, NULL, &lf, err));
    tl_ice_manifest_entry *e = calloc(lf.n + 1, sizeof *e);
    const tl_live_file **of = calloc(lf.n + 1, sizeof *of);
    bool *done = calloc(lf.n + 1, sizeof *done);
    tl_status st = e && of && done ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < lf.n; i++) {
        cs->removed_rows += lf.files[i].file.record_count;
        cs->removed_bytes += lf.files[i].file.file_size_in_bytes;
    }
    cs->removed_files = (int64_t)lf.n;
    /* One manifest per spec, in the order the specs first appear. */
    for (size_t i = 0; st == TL_OK && i < lf.n; i++) {
        if (done[i]) continue;
        int32_t spec_id = lf.files[i].partition_spec_id;
        size_t n = 0;
        for (size_t j = i; j < lf.n; j++)
            if (!done[j] && lf.files[j].partition_spec_id == spec_id) {
                done[j] = true;
                of[n] = &lf.files[j];
                e[n++] = tl_live_file_deleted(&lf.files[j], cs->snapshot_id);
            }
        if (spec_fits(t, tl_ice_metadata_spec(t->md, spec_id)))
            st = add_deleted_manifest(t, cs, spec_id, e, of, n, seq, err);
    }
    free(e);
    free(of);
    free(done);
    tl_live_files_free(&lf);
    return st;
}

/* This attempt's manifest list, in memory: the new manifest (when the commit
 * adds files), then the parent's manifests, or for a replace the manifest of
 * the parent's files deleted. */
static tl_status build_manifest_list(tl_table *t, commit_state *cs, const tl_commit_request *req,
                                     int64_t seq, int attempt, tl_buf *avro, tl_error *err)
{
    const tl_ice_snapshot *parent = tl_ice_metadata_current_snapshot(t->md);
    tl_ice_manifest_file *old = NULL;
    size_t n_old = 0;
    if (req->replace)
        TL_TRY(build_deleted_manifests(t, cs, seq, err));
    else
        TL_TRY(read_parent_manifests(t, parent, &old, &n_old, err));
    tl_manifest_merge *mm = &cs->merge;
    tl_status st = tl_manifest_merge_plan(t, old, n_old, cs->snapshot_id, seq, mm, err);
    if (st == TL_OK && mm->merged && !tl_store_is_local(t->lake->store))
        st = tl_head_objects_add(&cs->fresh, mm->merged->manifest_path, mm->avro.data, mm->avro.len,
                                 err);
    tl_ice_manifest_file *all =
        st == TL_OK ? malloc((n_old + cs->n_deleted + 3) * sizeof *all) : NULL;
    if (st == TL_OK && all == NULL) st = tl_error_nomem(err);
    size_t n = 0;
    if (st == TL_OK) {
        if (cs->manifest) {
            cs->manifest->sequence_number = cs->manifest->min_sequence_number = seq;
            all[n++] = *cs->manifest;
        }
        for (size_t i = 0; i < cs->n_deleted; i++) all[n++] = cs->deleted[i];
        if (mm->merged) all[n++] = *mm->merged;
        for (size_t i = 0; i < n_old; i++)
            if (mm->leave == NULL || !mm->leave[i]) all[n++] = old[i];
        int64_t parent_id = parent ? parent->snapshot_id : 0;
        st = tl_ice_manifest_list_write(cs->snapshot_id, parent ? &parent_id : NULL, seq, 2, all, n,
                                        avro, err);
    }
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    if (st == TL_OK) {
        cs->list_key = tl_strdup_printf("%s/metadata/snap-%lld-%d-%s.avro", t->name.key,
                                        (long long)cs->snapshot_id, attempt, uuid);
        if (cs->list_key == NULL) st = tl_error_nomem(err);
    }
    free(all);
    tl_ice_manifest_files_free(old, n_old);
    return st;
}

static int64_t summary_int(const tl_ice_snapshot *s, const char *key)
{
    const char *v = s ? tl_ice_snapshot_summary(s, key) : NULL;
    return v ? strtoll(v, NULL, 10) : 0;
}

static tl_status build_summary(const tl_table *t, const commit_state *cs,
                               const tl_commit_request *req, tl_strlist *kv, tl_error *err)
{
    const tl_ice_snapshot *parent = tl_ice_metadata_current_snapshot(t->md);
    /* A replace's totals are what it adds: every parent file is gone. */
    const tl_ice_snapshot *base = req->replace ? NULL : parent;
    char num[12][21];
    int64_t vals[] = {
        (int64_t)req->n_files,
        req->added_rows,
        req->added_bytes,
        summary_int(base, "total-records") + req->added_rows,
        summary_int(base, "total-files-size") + req->added_bytes,
        summary_int(base, "total-data-files") + (int64_t)req->n_files,
        summary_int(base, "total-delete-files"),
        summary_int(base, "total-position-deletes"),
        summary_int(base, "total-equality-deletes"),
        cs->removed_files,
        cs->removed_rows,
        cs->removed_bytes,
    };
    const char *keys[] = {"added-data-files",   "added-records",          "added-files-size",
                          "total-records",      "total-files-size",       "total-data-files",
                          "total-delete-files", "total-position-deletes", "total-equality-deletes",
                          "deleted-data-files", "deleted-records",        "removed-files-size"};
    size_t n_keys = req->replace ? 12 : 9;
    bool ok = tl_strlist_push(kv, "operation") == 0 &&
              tl_strlist_push(kv, req->replace ? "overwrite" : "append") == 0;
    for (size_t i = 0; ok && i < n_keys; i++) {
        tl_format_i64(num[i], vals[i]);
        ok = tl_strlist_push(kv, keys[i]) == 0 && tl_strlist_push(kv, num[i]) == 0;
    }
    if (!ok) return tl_error_nomem(err);
    if (req->n_batch_ids) TL_TRY(tl_batch_ids_summary(req->batch_ids, req->n_batch_ids, kv, err));
    if (cs->lvi_key) {
        char *url = tl_strdup_printf("%s%s", t->location, cs->lvi_key + strlen(t->name.key));
        ok = url && tl_strlist_push(kv, TL_SUMMARY_LVI) == 0 && tl_strlist_push(kv, url) == 0;
        free(url);
    }
    for (const char *const *p = req->summary; ok && p && p[0]; p += 2)
        ok = tl_strlist_push(kv, p[0]) == 0 && tl_strlist_push(kv, p[1]) == 0;
    if (!ok) return tl_error_nomem(err);
    return tl_attachments_summary(t->md, parent, req->attachments, kv, err);
}

/* Builds the next metadata version on top of the handle's current one. */
static tl_status next_metadata(const tl_table *t, const commit_state *cs,
                               const tl_commit_request *req, int64_t seq, tl_ice_metadata **out,
                               tl_error *err)
{
    const tl_ice_snapshot *parent = tl_ice_metadata_current_snapshot(t->md);
    tl_strlist kv = {0};
    tl_status st = build_summary(t, cs, req, &kv, err);
    tl_kv *summary = calloc(kv.len / 2 + 1, sizeof *summary);
    if (st == TL_OK && summary == NULL) st = tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < kv.len / 2; i++)
        summary[i] = (tl_kv){kv.items[2 * i], kv.items[2 * i + 1]};
    char *list_url = tl_strdup_printf("%s%s", t->location, cs->list_key + strlen(t->name.key));
    tl_ice_snapshot snap = {
        .snapshot_id = cs->snapshot_id,
        .has_parent = parent != NULL,
        .parent_snapshot_id = parent ? parent->snapshot_id : 0,
        .sequence_number = seq,
        .timestamp_ms = tl_now_millis(),
        .manifest_list = list_url,
        .summary = summary,
        .n_summary = kv.len / 2,
        .has_schema_id = true,
        .schema_id = t->md->current_schema_id,
    };
    if (st == TL_OK && list_url == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_ice_metadata_copy(t->md, out, err);
    if (st == TL_OK) {
        /* The clock may lag a writer on another machine: keep time monotonic. */
        if (snap.timestamp_ms <= (*out)->last_updated_ms)
            snap.timestamp_ms = (*out)->last_updated_ms + 1;
        st = tl_ice_metadata_add_snapshot(*out, &snap, t->metadata_url, err);
        if (st != TL_OK) {
            tl_ice_metadata_free(*out);
            *out = NULL;
        }
    }
    free(list_url);
    free(summary);
    tl_strlist_free(&kv);
    return st;
}

/* The first round trip: one parallel batch. The first batch also carries
 * the data files and the manifest; a later one only its new list and index. */
static tl_status upload_batch(tl_table *t, commit_state *cs, const tl_commit_request *req,
                              const tl_buf *list, const tl_buf *lvi, tl_error *err)
{
    size_t n_att = req->attachments ? req->attachments->n : 0, n = 0;
    size_t n_first = cs->carried ? 0 : req->n_uploads + 1 + n_att;
    tl_store_put_item *items = calloc(n_first + cs->n_deleted + 3, sizeof *items);
    if (items == NULL) return tl_error_nomem(err);
    if (!cs->carried) {
        for (size_t i = 0; i < req->n_uploads; i++) items[n++] = req->uploads[i];
        for (size_t i = 0; i < n_att; i++) items[n++] = req->attachments->items[i];
        if (cs->manifest_key)
            items[n++] = (tl_store_put_item){cs->manifest_key, cs->manifest_avro.data,
                                             cs->manifest_avro.len};
    }
    for (size_t i = 0; i < cs->n_deleted; i++)
        items[n++] = (tl_store_put_item){cs->deleted_keys[i], cs->deleted_avro[i].data,
                                         cs->deleted_avro[i].len};
    if (cs->merge.key)
        items[n++] = (tl_store_put_item){cs->merge.key, cs->merge.avro.data, cs->merge.avro.len};
    items[n++] = (tl_store_put_item){cs->list_key, list->data, list->len};
    if (cs->lvi_key) items[n++] = (tl_store_put_item){cs->lvi_key, lvi->data, lvi->len};
    tl_status st = tl_store_put_many_new(t->lake->store, items, n, err);
    free(items);
    if (st == TL_OK) cs->carried = true;
    return st;
}

/* The lowest version among `keys` named vN.metadata.json, or 0. */
static int64_t lowest_version(const tl_table *t, const tl_strlist *keys)
{
    int64_t low = 0;
    char own[sizeof t->name.key + 64];
    for (size_t i = 0; i < keys->len; i++) {
        int64_t v = tl_ice_metadata_version_of_key(keys->items[i]);
        tl_table_metadata_key(&t->name, v, own, sizeof own);
        if (v > 0 && strcmp(keys->items[i], own) == 0 && (low == 0 || v < low)) low = v;
    }
    return low;
}

/* Puts before the pruned `keys` (in ascending order already) the versions
 * below them still there: queued by another writer and not deleted yet, or
 * left by a table that only now asks for pruning. Deleted lowest first, the
 * versions present stay one run of numbers, which lets the create's fence
 * look up two names instead of listing the folder (no_newer_version in
 * commit_point.c). Usually one lookup, which finds nothing. */
static tl_status lower_versions_first(tl_table *t, tl_strlist *keys, tl_error *err)
{
    int64_t lowest = lowest_version(t, keys), v = lowest - 1;
    while (v > 0 && tl_table_version_present(t->lake->store, &t->name, v))
        v--;                           /* found downwards, deleted upwards */
    if (v + 1 >= lowest) return TL_OK; /* none: the usual case */
    char key[sizeof t->name.key + 64];
    tl_strlist all = {0};
    bool ok = true;
    for (int64_t u = v + 1; ok && u < lowest; u++) {
        tl_table_metadata_key(&t->name, u, key, sizeof key);
        ok = tl_strlist_push(&all, key) == 0;
    }
    for (size_t i = 0; ok && i < keys->len; i++) ok = tl_strlist_push(&all, keys->items[i]) == 0;
    tl_strlist_free(ok ? keys : &all);
    if (!ok) return tl_error_nomem(err);
    *keys = all;
    return TL_OK;
}

/* The metadata files that fall out of the metadata log when `md` replaces
 * `old` (write.metadata.previous-versions-max), to delete once it landed, so
 * that a busy table's metadata folder stays small: only where the table asks
 * for it (write.metadata.delete-after-commit.enabled, which our tables are
 * created with; the reference never deletes, and its writers do not fence
 * their creates as ours do, see commit_point.c: deleting frees numbers that
 * a writer far behind could take). Only locally: on an object store it would
 * be one more round trip per append. */
static tl_status obsolete_metadata(tl_table *t, const tl_ice_metadata *old,
                                   const tl_ice_metadata *md, tl_strlist *out, tl_error *err)
{
    const char *enabled = tl_ice_metadata_property(md, TL_PROP_DELETE_AFTER_COMMIT);
    if (!tl_store_is_local(t->lake->store) || !enabled || strcasecmp(enabled, "true") != 0)
        return TL_OK;
    /* The new log is usually the old one less its first entries, plus one:
     * the old entries before the new log's first left it. */
    size_t first_kept = old->n_metadata_log;
    for (size_t i = 0; md->n_metadata_log && i < old->n_metadata_log; i++)
        if (strcmp(old->metadata_log[i].metadata_file, md->metadata_log[0].metadata_file) == 0) {
            first_kept = i;
            break;
        }
    for (size_t i = 0; i < old->n_metadata_log; i++) {
        const char *url = old->metadata_log[i].metadata_file;
        bool kept = i >= first_kept;
        for (size_t j = 0; !kept && first_kept == old->n_metadata_log && j < md->n_metadata_log;
             j++)
            kept = strcmp(md->metadata_log[j].metadata_file, url) == 0;
        char buf[1024];
        const char *key = kept ? NULL : tl_table_key_of_url(t, url, buf, sizeof buf);
        if (key && tl_strlist_push(out, key) != 0) return tl_error_nomem(err);
    }
    return out->len ? lower_versions_first(t, out, err) : TL_OK;
}

static tl_status create_next_version(tl_table *t, commit_state *cs, tl_ice_metadata *md,
                                     const tl_buf *json, tl_error *err)
{
    tl_strlist obsolete = {0};
    tl_status st = obsolete_metadata(t, t->md, md, &obsolete, err);
    if (st == TL_OK)
        st = tl_table_create_next_removing(t, json->data, json->len, obsolete.items, obsolete.len,
                                           err);
    tl_strlist_free(&obsolete);
    if (st == TL_ERR_EXISTS || st == TL_ERR_NOT_FOUND) {
        tl_ice_metadata_free(md);
        return st; /* another writer's bytes are there, or the table was dropped: not landed */
    }
    /* Committed, or perhaps committed: the files must stay either way. */
    cs->may_have_landed = true;
    if (st != TL_OK) {
        tl_ice_metadata_free(md);
        return st;
    }
    return tl_table_adopt(t, md, t->version + 1, err); /* the handle stays as it was on failure */
}

/* The index and the metadata are built at once, on two threads: the
 * metadata needs only the index's name, and neither writes what the other
 * reads (both only read the handle). */
typedef struct build_job {
    const tl_table *t;
    commit_state *cs;
    const tl_commit_request *req;
    int64_t seq;
    tl_buf *lvi, *json;
    tl_ice_metadata *md;
    tl_status st[2];
    tl_error err[2];
} build_job;

static tl_status build_one(void *ctx, size_t i, tl_error *unused)
{
    (void)unused;
    build_job *j = ctx;
    tl_error *err = &j->err[i];
    if (i == 0) {
        /* Merged against this attempt's parent: after a lost race, the winner's. */
        j->st[0] = tl_lvi_build(j->t, j->req->rows, j->req->replace, j->cs->lvi_key, j->lvi,
                                j->cs->warning, err);
        return TL_OK;
    }
    j->st[1] = next_metadata(j->t, j->cs, j->req, j->seq, &j->md, err);
    if (j->st[1] == TL_OK) j->st[1] = tl_ice_metadata_serialize(j->md, j->json, err);
    return TL_OK; /* failures are taken in order below, the index's first */
}

static tl_status build_index_and_metadata(const tl_table *t, commit_state *cs,
                                          const tl_commit_request *req, int64_t seq, tl_buf *lvi,
                                          tl_ice_metadata **md, tl_buf *json, tl_error *err)
{
    bool index = req->rows && tl_lvi_wanted(t, req->replace);
    if (index && (cs->lvi_key = tl_lvi_key(t, cs->snapshot_id)) == NULL) return tl_error_nomem(err);
    build_job j = {.t = t, .cs = cs, .req = req, .seq = seq, .lvi = lvi, .json = json};
    if (index)
        tl_parallel_run(2, 2, false, build_one, &j, err);
    else
        build_one(&j, 1, err);
    *md = j.md;
    for (size_t i = index ? 0 : 1; i < 2; i++)
        if (j.st[i] != TL_OK) {
            *err = j.err[i];
            break;
        }
    if (index && j.st[0] != TL_OK) { /* nothing to upload under it */
        free(cs->lvi_key);
        cs->lvi_key = NULL;
    }
    return j.st[0] != TL_OK ? j.st[0] : j.st[1];
}

/* Asks req->fold for a snapshot on top of the attempt's metadata: when it
 * gives one, *md and *json become its (the fold keeps the JSON). */
static void fold_into(tl_table *t, commit_state *cs, const tl_commit_request *req,
                      tl_ice_metadata **md, const tl_buf **json, const tl_buf **list)
{
    tl_commit_fold fold = {0};
    if (!req->fold(t, req->fold_ctx, *md, &fold)) return;
    tl_ice_metadata_free(*md);
    *md = fold.md;
    *json = fold.json;
    if (fold.list) *list = fold.list; /* else the append's snapshot stays current */
    cs->folded = true;
}

/* Puts what this attempt uploaded into the cache of parsed manifests
 * (maintain_manifests.c) as written: the folded compaction plans on this
 * list and manifest, and the next append reads this list as its parent's. */
static void offer_written(const tl_table *t, const commit_state *cs, const tl_buf *list)
{
    char *url = tl_strdup_printf("%s%s", t->location, cs->list_key + strlen(t->name.key));
    if (url) tl_manifest_list_cache_written(url, list->data, list->len);
    free(url);
    if (cs->manifest)
        tl_manifest_cache_written(cs->manifest->manifest_path, cs->manifest_avro.data,
                                  cs->manifest_avro.len);
    if (cs->merge.merged)
        tl_manifest_cache_written(cs->merge.merged->manifest_path, cs->merge.avro.data,
                                  cs->merge.avro.len);
}

/* One attempt: TL_OK (committed), TL_ERR_EXISTS (lost the race) or an error. */
static tl_status attempt_commit(tl_table *t, commit_state *cs, const tl_commit_request *req,
                                int attempt, tl_error *err)
{
    int64_t seq = t->md->last_sequence_number + 1;
    tl_buf list = {0}, lvi = {0}, json = {0};
    tl_ice_metadata *md = NULL;
    cs->folded = false;
    tl_status st = build_manifest_list(t, cs, req, seq, attempt, &list, err);
    if (st == TL_OK) st = build_index_and_metadata(t, cs, req, seq, &lvi, &md, &json, err);
    /* What a stale handle's version names (a manifest to merge, the index to
     * rebuild) may be gone: another writer's expiry, once the table moved on. */
    st = tl_table_lost_if_moved_on(t, st, err);
    /* The head object is built during the upload batch and PUT in parallel
     * with the conditional create (head_write.c): still two round trips.
     * (The append asks for a fold only when no head is written.) */
    bool fold = req->fold && attempt == 1;
    /* A retry does not fold: the compaction after the append commits again. */
    if (req->fold && attempt > 1) t->sync_early = false;
    tl_head_job *head = NULL;
    if (st == TL_OK && !fold)
        head = tl_head_job_start(t, md, t->version + 1, &json, &list, cs->lvi_key ? &lvi : NULL,
                                 &cs->fresh);
    if (st == TL_OK) st = upload_batch(t, cs, req, &list, &lvi, err);
    if (st == TL_OK) offer_written(t, cs, &list);
    const tl_buf *created = &json, *listed = &list;
    if (st == TL_OK && fold) {
        fold_into(t, cs, req, &md, &created, &listed);
        head = tl_head_job_start(t, md, t->version + 1, created, listed, cs->lvi_key ? &lvi : NULL,
                                 &cs->fresh);
    }
    bool won = false, dropped = false;
    if (st == TL_OK) {
        tl_head_job_send(head);
        st = create_next_version(t, cs, md, created, err);
        md = NULL;
        won = st == TL_OK;
        dropped = st == TL_ERR_NOT_FOUND;
    }
    tl_head_job_finish(t, head, won);
    if (dropped && head) tl_table_remove_head(t);
    tl_ice_metadata_free(md);
    tl_buf_free(&json);
    tl_buf_free(&list);
    tl_buf_free(&lvi);
    return st;
}

static void remove_quietly(tl_table *t, char **key)
{
    if (*key) tl_store_remove(t->lake->store, *key, NULL);
    free(*key);
    *key = NULL;
}

/* Forgets (and with remove, deletes) this attempt's manifests of deleted files. */
static void drop_deleted_manifests(tl_table *t, commit_state *cs, bool remove)
{
    for (size_t i = 0; i < cs->n_deleted; i++) {
        if (remove)
            remove_quietly(t, &cs->deleted_keys[i]);
        else
            free(cs->deleted_keys[i]);
        tl_buf_free(&cs->deleted_avro[i]);
    }
    free(cs->deleted_keys);
    free(cs->deleted_avro);
    tl_ice_manifest_files_free(cs->deleted, cs->n_deleted);
    cs->deleted_keys = NULL;
    cs->deleted_avro = NULL;
    cs->deleted = NULL;
    cs->n_deleted = 0;
}

static void backoff(int attempt)
{
    int64_t cap = BACKOFF_BASE_MS << (attempt < 8 ? attempt : 8);
    if (cap > BACKOFF_CAP_MS) cap = BACKOFF_CAP_MS;
    tl_sleep_ms((int64_t)(tl_random_u64() % (uint64_t)(cap + 1)));
}

/* After a lost race: is the table still one our files fit? */
static tl_status check_rebase(const tl_table *t, const commit_state *cs, tl_error *err)
{
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    if (t->md->current_schema_id != cs->schema_id || (spec ? spec->spec_id : 0) != cs->spec_id)
        return tl_error_set(err, TL_ERR_CONFLICT,
                            "%s: the schema or partitioning changed during the append",
                            t->name.full);
    return TL_OK;
}

tl_status tl_commit_append(tl_table *t, const tl_commit_request *req, tl_commit_result *out,
                           tl_error *err)
{
    commit_state cs = {0};
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    cs.snapshot_id = new_snapshot_id(t->md);
    cs.schema_id = t->md->current_schema_id;
    cs.spec_id = spec ? spec->spec_id : 0;
    memset(out, 0, sizeof *out);
    tl_status st = TL_OK;
    if (req->expect_version > 0 && t->version != req->expect_version)
        st = tl_error_set(err, TL_ERR_CONFLICT, "%s is at version %lld, not %lld as expected",
                          t->name.full, (long long)t->version, (long long)req->expect_version);
    /* A commit of no files (attachments or a replace by nothing) has no manifest of its own. */
    if (st == TL_OK && req->n_files > 0) {
        cs.manifest = calloc(1, sizeof *cs.manifest);
        st = cs.manifest ? build_manifest(t, req, &cs, err) : tl_error_nomem(err);
    }
    for (int attempt = 1; st == TL_OK; attempt++) {
        out->attempts = attempt;
        st = attempt_commit(t, &cs, req, attempt, err);
        out->folded = cs.folded && st != TL_ERR_EXISTS && st != TL_ERR_NOT_FOUND;
        if (st == TL_OK) drop_deleted_manifests(t, &cs, false);
        if (st == TL_OK) tl_manifest_merge_clear(t, &cs.merge, false);
        if (st != TL_ERR_EXISTS) break;
        remove_quietly(t, &cs.list_key);
        remove_quietly(t, &cs.lvi_key);
        drop_deleted_manifests(t, &cs, true);
        tl_manifest_merge_clear(t, &cs.merge, true);
        if (req->expect_version > 0) {
            st = tl_error_set(err, TL_ERR_CONFLICT,
                              "%s moved past version %lld during the commit (expect_version)",
                              t->name.full, (long long)req->expect_version);
            break;
        }
        if (attempt == MAX_ATTEMPTS) {
            st = tl_error_set(err, TL_ERR_CONFLICT,
                              "%s: gave up after %d commit attempts lost to concurrent writers",
                              t->name.full, attempt);
            break;
        }
        backoff(attempt);
        st = tl_table_reload_same(t, err);
        bool seen = false; /* in the winner's snapshots, or its batch ledger */
        if (st == TL_OK && req->n_batch_ids)
            st = tl_batch_duplicate(t, req->batch_ids, req->n_batch_ids, &seen, err);
        if (st == TL_OK && seen) {
            out->duplicate = true;
            break;
        }
        if (st == TL_OK && req->rebase) st = req->rebase(t, req->rebase_ctx, err);
        if (st == TL_OK) st = check_rebase(t, &cs, err);
        if (st == TL_OK && tl_ice_metadata_snapshot(t->md, cs.snapshot_id) != NULL)
            st = tl_error_set(err, TL_ERR_CONFLICT, "snapshot id collision");
    }
    out->may_have_landed = cs.may_have_landed;
    memcpy(out->warning, cs.warning, sizeof out->warning);
    /* Say so when the failure is the table's drop (its files gone, say). */
    if (!cs.may_have_landed) st = tl_table_explain_failure(t, st, err);
    bool failed = !cs.may_have_landed && (st != TL_OK || out->duplicate);
    if (failed) {
        remove_quietly(t, &cs.list_key);
        remove_quietly(t, &cs.lvi_key);
        remove_quietly(t, &cs.manifest_key);
    }
    drop_deleted_manifests(t, &cs, failed);
    tl_manifest_merge_clear(t, &cs.merge, failed);
    free(cs.list_key);
    free(cs.lvi_key);
    free(cs.manifest_key);
    tl_buf_free(&cs.manifest_avro);
    tl_head_objects_clear(&cs.fresh);
    tl_ice_manifest_files_free(cs.manifest, cs.manifest ? 1 : 0);
    return st;
}
