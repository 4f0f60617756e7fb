/* Committing a rewrite: a "replace" (compaction) or "delete" (retention)
 * snapshot. Each attempt reads the live files of the current snapshot, checks
 * that every file to remove is still live, and writes up to three manifests:
 * the added files (with an explicit data sequence number, so the dedup order
 * of their rows is kept), the surviving files of the manifests it touches
 * (EXISTING), and the removed files (DELETED); untouched manifests are carried
 * over. A lost race rebases onto the winner while the removed files are still
 * live, and gives up with a conflict once one of them is gone.
 *
 * Staged instead of committed (tl_commit_rewrite_stage), one attempt builds
 * the same snapshot on top of the handle's metadata, writes its manifests and
 * list, and hands the metadata over without creating a version: an inline
 * compaction folded into an append's commit (maintain_fold.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/random.h"
#include "iceberg/manifest_list.h"
#include "table/append.h"
#include "table/commit_point.h"
#include "table/attachments.h"
#include "table/head_write.h"
#include "table/maintain.h"

#define MAX_ATTEMPTS 40
#define BACKOFF_CAP_MS 500

typedef struct rw_ctx {
    tl_table *t;
    const tl_rewrite_request *req;
    char **sorted; /* removed paths, sorted, for bsearch */
    int64_t snapshot_id;
    tl_strlist written;              /* keys this attempt wrote */
    tl_ice_manifest_file *manifests; /* the new snapshot's list */
    size_t n_manifests;
    int64_t deleted_records, removed_bytes;
    tl_head_objects fresh; /* the manifests this attempt wrote and the added files' footers,
                              for the head object */
    char *lvi_key;         /* this attempt's last-value index (req->index), or NULL */
    tl_buf lvi;
    /* The create landed or its outcome is unknown: the metadata may name what
     * was written, which must then stay (orphan cleanup removes it otherwise). */
    bool may_have_landed;
    tl_rewrite_staged *stage; /* staged, not committed: the metadata goes here */
} rw_ctx;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static long removed_index(const rw_ctx *c, const char *path)
{
    char *const *hit = bsearch(&path, c->sorted, c->req->n_removed, sizeof *c->sorted, cmp_str);
    return hit ? (long)(hit - c->sorted) : -1;
}

/* The manifest list's summary of the partition fields of the entries. */
static tl_status summarize(const tl_ice_manifest_entry *e, size_t n, tl_ice_manifest_file *mf,
                           tl_error *err)
{
    const tl_ice_data_file **files = malloc((n + 1) * sizeof *files);
    if (files == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) files[i] = &e[i].file;
    tl_status st = tl_table_manifest_summarize(files, n, mf, err);
    free(files);
    return st;
}

static tl_status put_object(rw_ctx *c, const char *key, const tl_buf *data, tl_error *err)
{
    if (tl_strlist_push(&c->written, key) != 0) return tl_error_nomem(err);
    return tl_store_put_new(c->t->lake->store, key, data->data, data->len, err);
}

static tl_status add_list_entry(rw_ctx *c, tl_ice_manifest_file *mf, tl_error *err)
{
    tl_ice_manifest_file *p = realloc(c->manifests, (c->n_manifests + 1) * sizeof *p);
    if (p == NULL) {
        tl_ice_manifest_files_free(mf, 1);
        return tl_error_nomem(err);
    }
    c->manifests = p;
    c->manifests[c->n_manifests++] = *mf;
    free(mf);
    return TL_OK;
}

/* Writes one manifest of entries (all of one status) and lists it first-come. */
static tl_status write_manifest(rw_ctx *c, const char *kind, const tl_ice_manifest_entry *e,
                                size_t n, int64_t seq, tl_error *err)
{
    if (n == 0) return TL_OK;
    tl_table *t = c->t;
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    char *key = tl_strdup_printf("%s/metadata/%s-%s-m.avro", t->name.key, uuid, kind);
    tl_ice_manifest_file *mf = calloc(1, sizeof *mf);
    tl_buf avro = {0};
    tl_status st = key && mf ? tl_table_manifest_encode(t, e, n, &avro, err) : tl_error_nomem(err);
    if (st == TL_OK) st = put_object(c, key, &avro, err);
    if (st == TL_OK) {
        const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
        mf->manifest_path = tl_strdup_printf("%s%s", t->location, key + strlen(t->name.key));
        mf->manifest_length = (int64_t)avro.len;
        if (mf->manifest_path) tl_manifest_cache_written(mf->manifest_path, avro.data, avro.len);
        mf->partition_spec_id = spec ? spec->spec_id : 0;
        mf->sequence_number = seq;
        mf->min_sequence_number = seq;
        mf->added_snapshot_id = c->snapshot_id;
        for (size_t i = 0; i < n; i++) {
            if (e[i].sequence_number < mf->min_sequence_number)
                mf->min_sequence_number = e[i].sequence_number;
            int64_t rows = e[i].file.record_count;
            if (e[i].status == 1) mf->added_files_count++, mf->added_rows_count += rows;
            if (e[i].status == 0) mf->existing_files_count++, mf->existing_rows_count += rows;
            if (e[i].status == 2) mf->deleted_files_count++, mf->deleted_rows_count += rows;
        }
        st = mf->manifest_path ? summarize(e, n, mf, err) : tl_error_nomem(err);
        if (st == TL_OK && !tl_store_is_local(t->lake->store))
            st = tl_head_objects_add(&c->fresh, mf->manifest_path, avro.data, avro.len, err);
    }
    if (st == TL_OK) {
        st = add_list_entry(c, mf, err);
        mf = NULL;
    }
    if (mf) tl_ice_manifest_files_free(mf, 1);
    tl_buf_free(&avro);
    free(key);
    return st;
}

typedef struct entry_sets {
    tl_ice_manifest_entry *added, *kept, *deleted;
    size_t n_added, n_kept, n_deleted;
} entry_sets;

/* Sorts the live files into kept and deleted entries; TL_ERR_CONFLICT when a
 * file to remove is no longer live. Entries borrow the files. */
static tl_status classify(rw_ctx *c, tl_live_files *lf, entry_sets *es, tl_error *err)
{
    const tl_rewrite_request *req = c->req;
    bool *affected = calloc(lf->n_manifests + 1, 1);
    bool *found = calloc(req->n_removed + 1, 1);
    es->kept = calloc(lf->n + 1, sizeof *es->kept);
    es->deleted = calloc(req->n_removed + 1, sizeof *es->deleted);
    es->added = calloc(req->n_added + 1, sizeof *es->added);
    if (!affected || !found || !es->kept || !es->deleted || !es->added) {
        free(affected);
        free(found);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < lf->n; i++) {
        long k = removed_index(c, lf->files[i].file.file_path);
        if (k >= 0 && !found[k]) {
            found[k] = true;
            affected[lf->files[i].manifest] = true;
            const tl_live_file *f = &lf->files[i];
            c->deleted_records += f->file.record_count;
            c->removed_bytes += f->file.file_size_in_bytes;
            es->deleted[es->n_deleted++] = tl_live_file_deleted(f, c->snapshot_id);
        }
    }
    tl_status st = TL_OK;
    if (es->n_deleted != req->n_removed)
        st = tl_error_set(err, TL_ERR_CONFLICT,
                          "%s: a concurrent commit removed files this %s rewrites; abandoned",
                          c->t->name.full, req->operation);
    for (size_t i = 0; st == TL_OK && i < lf->n; i++) {
        const tl_live_file *f = &lf->files[i];
        if (!affected[f->manifest] || removed_index(c, f->file.file_path) >= 0) continue;
        es->kept[es->n_kept++] = (tl_ice_manifest_entry){
            .status = 0,
            .has_snapshot_id = true,
            .snapshot_id = f->snapshot_id,
            .has_sequence_number = true,
            .sequence_number = f->sequence_number,
            .has_file_sequence_number = true,
            .file_sequence_number = f->sequence_number,
            .file = f->file,
        };
    }
    for (size_t i = 0; st == TL_OK && i < req->n_added; i++)
        es->added[es->n_added++] = (tl_ice_manifest_entry){
            .status = 1,
            .has_snapshot_id = true,
            .snapshot_id = c->snapshot_id,
            .has_sequence_number = true,
            .sequence_number = req->added_sequence_numbers[i],
            .file = req->added[i],
        };
    /* Untouched manifests carry over; a manifest of only deleted entries
     * (an earlier rewrite's) has done its job and is dropped. */
    for (size_t m = 0; st == TL_OK && m < lf->n_manifests; m++) {
        const tl_ice_manifest_file *mf = &lf->manifests[m];
        if (affected[m]) continue;
        if (mf->deleted_files_count > 0 && mf->added_files_count == 0 &&
            mf->existing_files_count == 0)
            continue;
        tl_ice_manifest_file *copy = calloc(1, sizeof *copy);
        if (copy == NULL) {
            st = tl_error_nomem(err);
            break;
        }
        *copy = *mf;
        memset(&lf->manifests[m], 0, sizeof *mf); /* moved */
        st = add_list_entry(c, copy, err);
    }
    free(affected);
    free(found);
    return st;
}

static tl_status build_summary(rw_ctx *c, const tl_ice_snapshot *parent, tl_strlist *kv,
                               tl_error *err)
{
    const tl_rewrite_request *req = c->req;
    int64_t added_rows = 0, added_bytes = 0;
    for (size_t i = 0; i < req->n_added; i++) {
        added_rows += req->added[i].record_count;
        added_bytes += req->added[i].file_size_in_bytes;
    }
    const char *keys[] = {"added-data-files",   "deleted-data-files",     "added-records",
                          "deleted-records",    "added-files-size",       "removed-files-size",
                          "total-records",      "total-files-size",       "total-data-files",
                          "total-delete-files", "total-position-deletes", "total-equality-deletes"};
    const char *totals[] = {"total-records",          "total-files-size",
                            "total-data-files",       "total-delete-files",
                            "total-position-deletes", "total-equality-deletes"};
    int64_t base[6];
    for (size_t i = 0; i < 6; i++) {
        const char *v = parent ? tl_ice_snapshot_summary(parent, totals[i]) : NULL;
        base[i] = v ? strtoll(v, NULL, 10) : 0;
    }
    int64_t vals[] = {(int64_t)req->n_added,
                      (int64_t)req->n_removed,
                      added_rows,
                      c->deleted_records,
                      added_bytes,
                      c->removed_bytes,
                      base[0] + added_rows - c->deleted_records,
                      base[1] + added_bytes - c->removed_bytes,
                      base[2] + (int64_t)req->n_added - (int64_t)req->n_removed,
                      base[3],
                      base[4],
                      base[5]};
    bool ok = tl_strlist_push(kv, "operation") == 0 && tl_strlist_push(kv, req->operation) == 0;
    for (size_t i = 0; ok && i < sizeof keys / sizeof keys[0]; i++) {
        char num[24];
        snprintf(num, sizeof num, "%lld", (long long)vals[i]);
        ok = tl_strlist_push(kv, keys[i]) == 0 && tl_strlist_push(kv, num) == 0;
    }
    /* Unless the request made one, the newest row of each series did not
     * change: keep the parent's index. */
    char *own = c->lvi_key
                    ? tl_strdup_printf("%s%s", c->t->location, c->lvi_key + strlen(c->t->name.key))
                    : NULL;
    const char *lvi = own ? own : parent ? tl_ice_snapshot_summary(parent, TL_SUMMARY_LVI) : NULL;
    if (ok && c->lvi_key && own == NULL) ok = false;
    if (ok && lvi) ok = tl_strlist_push(kv, TL_SUMMARY_LVI) == 0 && tl_strlist_push(kv, lvi) == 0;
    free(own);
    if (!ok) return tl_error_nomem(err);
    return tl_attachments_summary(c->t->md, parent, NULL, kv, err); /* inherited as they are */
}

/* The end of a staged attempt: the list is put, the metadata handed over. */
static tl_status stage_list_and_metadata(rw_ctx *c, char *key, tl_buf *avro, tl_ice_metadata *md,
                                         tl_buf *json, tl_status st, tl_strlist *kv, tl_kv *summary,
                                         char *list_url, tl_error *err)
{
    if (st == TL_OK) st = put_object(c, key, avro, err);
    if (st == TL_OK) {
        c->stage->md = md;
        c->stage->json = *json;
        c->stage->list = *avro;
        md = NULL;
        memset(json, 0, sizeof *json);
        memset(avro, 0, sizeof *avro);
    }
    tl_ice_metadata_free(md);
    tl_strlist_free(kv);
    free(summary);
    free(list_url);
    free(key);
    tl_buf_free(avro);
    tl_buf_free(json);
    return st;
}

static tl_status write_list_and_metadata(rw_ctx *c, int64_t seq, tl_error *err)
{
    tl_table *t = c->t;
    const tl_ice_snapshot *parent = tl_ice_metadata_current_snapshot(t->md);
    int64_t parent_id = parent ? parent->snapshot_id : 0;
    tl_buf avro = {0}, json = {0};
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    char *key = tl_strdup_printf("%s/metadata/snap-%lld-%s.avro", t->name.key,
                                 (long long)c->snapshot_id, uuid);
    tl_status st = key ? tl_ice_manifest_list_write(c->snapshot_id, parent ? &parent_id : NULL, seq,
                                                    2, c->manifests, c->n_manifests, &avro, err)
                       : tl_error_nomem(err);
    if (st == TL_OK && c->req->index)
        st = c->req->index(t, c->req->index_ctx, c->snapshot_id, &c->lvi_key, &c->lvi, err);
    if (st == TL_OK && c->lvi_key) st = put_object(c, c->lvi_key, &c->lvi, err);
    tl_strlist kv = {0};
    if (st == TL_OK) st = build_summary(c, parent, &kv, err);
    tl_kv *summary = calloc(kv.len / 2 + 1, sizeof *summary);
    char *list_url = key ? tl_strdup_printf("%s%s", t->location, key + strlen(t->name.key)) : NULL;
    if (st == TL_OK && (summary == NULL || list_url == NULL)) st = tl_error_nomem(err);
    /* Put below; read next by the next commit, as its parent's (maintain.h). */
    if (st == TL_OK) tl_manifest_list_cache_written(list_url, avro.data, avro.len);
    for (size_t i = 0; st == TL_OK && i < kv.len / 2; i++)
        summary[i] = (tl_kv){kv.items[2 * i], kv.items[2 * i + 1]};
    tl_ice_snapshot snap = {
        .snapshot_id = c->snapshot_id,
        .has_parent = parent != NULL,
        .parent_snapshot_id = parent_id,
        .sequence_number = seq,
        .timestamp_ms = tl_now_millis(),
        .manifest_list = list_url,
        .summary = summary,
        .n_summary = kv.len / 2,
        .has_schema_id = true,
        .schema_id = t->md->current_schema_id,
    };
    tl_ice_metadata *md = NULL;
    if (st == TL_OK) st = tl_ice_metadata_copy(t->md, &md, err);
    if (st == TL_OK) {
        if (snap.timestamp_ms <= md->last_updated_ms) snap.timestamp_ms = md->last_updated_ms + 1;
        /* Staged, the handle's metadata is not a file yet: no log entry. */
        st = tl_ice_metadata_add_snapshot(md, &snap, c->stage ? NULL : t->metadata_url, err);
    }
    if (st == TL_OK) st = tl_ice_metadata_serialize(md, &json, err);
    if (c->stage)
        return stage_list_and_metadata(c, key, &avro, md, &json, st, &kv, summary, list_url, err);
    /* The head object, as an append writes it (head_write.h): built while
     * the list uploads, PUT in parallel with the conditional create. */
    tl_head_job *head = st == TL_OK ? tl_head_job_start(t, md, t->version + 1, &json, &avro,
                                                        c->lvi_key ? &c->lvi : NULL, &c->fresh)
                                    : NULL;
    if (st == TL_OK) st = put_object(c, key, &avro, err);
    if (st == TL_OK) {
        st = tl_table_land_next(t, md, &json, head, err);
        md = NULL;
        c->may_have_landed = st != TL_ERR_EXISTS && st != TL_ERR_NOT_FOUND;
    } else {
        tl_head_job_finish(t, head, false);
    }
    tl_ice_metadata_free(md);
    tl_strlist_free(&kv);
    free(summary);
    free(list_url);
    free(key);
    tl_buf_free(&avro);
    tl_buf_free(&json);
    return st;
}

static void attempt_cleanup(rw_ctx *c, bool remove)
{
    for (size_t i = 0; remove && i < c->written.len; i++)
        tl_store_remove(c->t->lake->store, c->written.items[i], NULL);
    tl_strlist_free(&c->written);
    tl_head_objects_clear(&c->fresh);
    free(c->lvi_key);
    c->lvi_key = NULL;
    tl_buf_free(&c->lvi);
    tl_ice_manifest_files_free(c->manifests, c->n_manifests);
    c->manifests = NULL;
    c->n_manifests = 0;
    c->deleted_records = c->removed_bytes = 0;
}

static int64_t new_snapshot_id(const tl_ice_metadata *md)
{
    for (;;) {
        int64_t id = (int64_t)(tl_random_u64() >> 1);
        if (id != 0 && tl_ice_metadata_snapshot(md, id) == NULL) return id;
    }
}

/* One attempt: TL_OK, TL_ERR_EXISTS (lost the race) or an error. */
static tl_status attempt(rw_ctx *c, tl_error *err)
{
    tl_live_files lf;
    entry_sets es = {0};
    int64_t seq = c->t->md->last_sequence_number + 1;
    c->snapshot_id = new_snapshot_id(c->t->md);
    TL_TRY(tl_maintain_live_files(c->t, &lf, err));
    tl_status st = classify(c, &lf, &es, err);
    /* The head carries the added files' footers as an append's (head_footer.h). */
    if (st == TL_OK && c->req->footers)
        st = tl_head_objects_add_all(&c->fresh, c->req->footers, err);
    if (st == TL_OK) st = write_manifest(c, "added", es.added, es.n_added, seq, err);
    if (st == TL_OK) st = write_manifest(c, "existing", es.kept, es.n_kept, seq, err);
    if (st == TL_OK) st = write_manifest(c, "deleted", es.deleted, es.n_deleted, seq, err);
    if (st == TL_OK) st = write_list_and_metadata(c, seq, err);
    free(es.added);
    free(es.kept);
    free(es.deleted);
    tl_live_files_free(&lf);
    return st;
}

tl_status tl_commit_rewrite(tl_table *t, const tl_rewrite_request *req, int *attempts,
                            tl_error *err)
{
    rw_ctx c = {.t = t, .req = req};
    c.sorted = malloc((req->n_removed + 1) * sizeof *c.sorted);
    if (c.sorted == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < req->n_removed; i++) c.sorted[i] = (char *)req->removed[i];
    qsort(c.sorted, req->n_removed, sizeof *c.sorted, cmp_str);
    tl_status st = TL_OK;
    for (int n = 1;; n++) {
        if (attempts) *attempts = n;
        if (t->turn_enter) t->turn_enter(t, t->turn_ctx);
        st = attempt(&c, err);
        attempt_cleanup(&c, st != TL_OK && !c.may_have_landed);
        if (t->turn_leave) t->turn_leave(t, t->turn_ctx);
        if (st != TL_ERR_EXISTS) break;
        if (n == MAX_ATTEMPTS) {
            st = tl_error_set(err, TL_ERR_CONFLICT,
                              "%s: gave up after %d commit attempts lost to concurrent writers",
                              t->name.full, n);
            break;
        }
        int64_t cap = INT64_C(2) << (n < 8 ? n : 8);
        tl_sleep_ms((int64_t)(tl_random_u64() %
                              (uint64_t)((cap < BACKOFF_CAP_MS ? cap : BACKOFF_CAP_MS) + 1)));
        st = tl_table_reload_same(t, err);
        if (st != TL_OK) break;
    }
    free(c.sorted);
    if (req->may_have_landed) *req->may_have_landed = c.may_have_landed;
    return st;
}

tl_status tl_commit_rewrite_stage(tl_table *t, const tl_rewrite_request *req,
                                  tl_rewrite_staged *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    rw_ctx c = {.t = t, .req = req, .stage = out};
    c.sorted = malloc((req->n_removed + 1) * sizeof *c.sorted);
    if (c.sorted == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < req->n_removed; i++) c.sorted[i] = (char *)req->removed[i];
    qsort(c.sorted, req->n_removed, sizeof *c.sorted, cmp_str);
    tl_status st = attempt(&c, err);
    if (st == TL_OK) { /* what it wrote and carries moves to the caller */
        out->written = c.written;
        out->fresh = c.fresh;
        memset(&c.written, 0, sizeof c.written);
        memset(&c.fresh, 0, sizeof c.fresh);
    }
    attempt_cleanup(&c, st != TL_OK);
    if (st != TL_OK) tl_rewrite_staged_free(t, out, false);
    free(c.sorted);
    return st;
}

void tl_rewrite_staged_free(tl_table *t, tl_rewrite_staged *s, bool remove)
{
    for (size_t i = 0; remove && i < s->written.len; i++)
        tl_store_remove(t->lake->store, s->written.items[i], NULL);
    tl_strlist_free(&s->written);
    tl_head_objects_clear(&s->fresh);
    tl_ice_metadata_free(s->md);
    tl_buf_free(&s->json);
    tl_buf_free(&s->list);
    memset(s, 0, sizeof *s);
}
