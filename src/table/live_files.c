#include "table/live_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table/head.h"

tl_status tl_table_read_url_or_none(const tl_table *t, const char *url, tl_buf *out, tl_error *err)
{
    const tl_buf *held = tl_head_objects_find(t->head_objects, url);
    if (held) {
        out->len = 0;
        return tl_buf_append(out, held->data, held->len) == 0 ? TL_OK : tl_error_nomem(err);
    }
    char buf[1024];
    const char *key = tl_table_key_of_url(t, url, buf, sizeof buf);
    if (key == NULL)
        return tl_error_set(err, TL_ERR_STORAGE, "%s is outside the warehouse %s", url,
                            t->lake->store->url);
    tl_status st = tl_store_get(t->lake->store, key, out, err);
    if (st == TL_ERR_NOT_FOUND)
        st = tl_error_set(err, TL_ERR_NOT_FOUND, "%s is missing (referenced by the table metadata)",
                          url);
    return st;
}

tl_status tl_table_read_url(const tl_table *t, const char *url, tl_buf *out, tl_error *err)
{
    tl_status st = tl_table_read_url_or_none(t, url, out, err);
    if (st == TL_ERR_NOT_FOUND) { /* the table is damaged */
        st = TL_ERR_STORAGE;
        if (err) err->code = st;
    }
    return st;
}

tl_status tl_table_damaged(const tl_table *t, tl_status code, tl_error *err)
{
    /* Memory ran out reading the file: that says nothing of the file. */
    if (code == TL_ERR_NOMEM) return code;
    if (err == NULL) return code;
    char why[TL_ERROR_MESSAGE_MAX];
    snprintf(why, sizeof why, "%s", err->message);
    return tl_error_set(
        err, code,
        "table %.200s is damaged: %.500s; restore that file (from a backup or "
        "the bucket's versions), or make an earlier snapshot current (`timelake "
        "rollback %.200s SNAPSHOT`, a snapshot id from metadata/v%lld.metadata.json)",
        t->name.full, why, t->name.full, (long long)t->version);
}

tl_status tl_table_read_manifest_list(const tl_table *t, const char *url,
                                      tl_ice_manifest_file **out, size_t *n, tl_error *err)
{
    *out = NULL;
    *n = 0;
    tl_buf b = {0};
    tl_status st = tl_table_read_url(t, url, &b, err);
    if (st == TL_OK && (st = tl_ice_manifest_list_read(b.data, b.len, out, n, err)) != TL_OK)
        tl_error_prefix(err, "manifest list %s", url);
    tl_buf_free(&b);
    return st;
}

tl_status tl_table_read_manifest(const tl_table *t, const char *url, tl_ice_manifest_entry **out,
                                 size_t *n, tl_error *err)
{
    *out = NULL;
    *n = 0;
    tl_buf b = {0};
    tl_status st = tl_table_read_url(t, url, &b, err);
    if (st == TL_OK && (st = tl_ice_manifest_read(b.data, b.len, out, n, err)) != TL_OK)
        tl_error_prefix(err, "manifest %s", url);
    tl_buf_free(&b);
    return st;
}

void tl_live_files_free(tl_live_files *lf)
{
    for (size_t i = 0; i < lf->n; i++) tl_ice_data_file_clear(&lf->files[i].file);
    free(lf->files);
    tl_ice_manifest_files_free(lf->manifests, lf->n_manifests);
    memset(lf, 0, sizeof *lf);
}

/* Moves the live data entries of one manifest into lf. */
static tl_status take_entries(tl_live_files *lf, size_t m, tl_ice_manifest_entry *entries, size_t n,
                              tl_error *err)
{
    const tl_ice_manifest_file *mf = &lf->manifests[m];
    tl_live_file *files = realloc(lf->files, (lf->n + n + 1) * sizeof *files);
    if (files == NULL) return tl_error_nomem(err);
    lf->files = files;
    for (size_t i = 0; i < n; i++) {
        tl_ice_manifest_entry *e = &entries[i];
        if (e->status == 2) continue; /* deleted */
        if (e->file.content != 0) {
            lf->delete_files++;
            continue;
        }
        tl_live_file *f = &lf->files[lf->n++];
        f->file = e->file;
        memset(&e->file, 0, sizeof e->file); /* moved */
        /* v2 inheritance: null ids and sequence numbers come from the manifest. */
        f->snapshot_id = e->has_snapshot_id ? e->snapshot_id : mf->added_snapshot_id;
        f->sequence_number = e->has_sequence_number ? e->sequence_number : mf->sequence_number;
        f->partition_spec_id = mf->partition_spec_id;
        f->manifest = m;
    }
    return TL_OK;
}

tl_status tl_live_files_read(const tl_table *t, const tl_ice_snapshot *snapshot, tl_live_files *out,
                             tl_error *err)
{
    memset(out, 0, sizeof *out);
    const tl_ice_snapshot *s = snapshot ? snapshot : tl_ice_metadata_current_snapshot(t->md);
    if (s == NULL || s->manifest_list == NULL) return TL_OK;
    tl_status st =
        tl_table_read_manifest_list(t, s->manifest_list, &out->manifests, &out->n_manifests, err);
    for (size_t m = 0; st == TL_OK && m < out->n_manifests; m++) {
        if (out->manifests[m].content != 0) continue; /* delete manifests */
        tl_ice_manifest_entry *entries = NULL;
        size_t n = 0;
        st = tl_table_read_manifest(t, out->manifests[m].manifest_path, &entries, &n, err);
        if (st == TL_OK) st = take_entries(out, m, entries, n, err);
        tl_ice_manifest_entries_free(entries, n);
    }
    if (st != TL_OK) tl_live_files_free(out);
    return st;
}

tl_ice_manifest_entry tl_live_file_deleted(const tl_live_file *f, int64_t snapshot_id)
{
    return (tl_ice_manifest_entry){.status = 2,
                                   .has_snapshot_id = true,
                                   .snapshot_id = snapshot_id,
                                   .has_sequence_number = true,
                                   .sequence_number = f->sequence_number,
                                   .has_file_sequence_number = true,
                                   .file_sequence_number = f->sequence_number,
                                   .file = f->file};
}
