#include "table/head_footer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "formats/parquet/parquet_subset.h"

const char *tl_head_footer_url(const char *url, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s%s", url, TL_HEAD_FOOTER_SUFFIX);
    return n > 0 && (size_t)n < size ? buf : NULL;
}

/* The footer of a whole Parquet file (FileMetaData + length + magic), or 0. */
static size_t footer_size(const uint8_t *data, size_t len)
{
    if (len < 12 || memcmp(data + len - 4, "PAR1", 4) != 0) return 0;
    uint64_t meta = tl_load_le32(data + len - 8);
    return meta + 12 <= len ? (size_t)meta + 8 : 0;
}

static const tl_ice_data_file *file_of_key(const tl_table *t, const tl_commit_request *req,
                                           const char *key)
{
    char buf[1024];
    for (size_t i = 0; i < req->n_files; i++) {
        const char *k = tl_table_key_of_url(t, req->files[i].file_path, buf, sizeof buf);
        if (k && strcmp(k, key) == 0) return &req->files[i];
    }
    return NULL;
}

tl_status tl_head_footer_keep(const tl_table *t, const char *url, const void *data, size_t len,
                              tl_head_objects *o, tl_error *err)
{
    char key[1100];
    if (len < TL_HEAD_FOOTER_MIN_FILE || tl_store_is_local(t->lake->store)) return TL_OK;
    size_t fs = footer_size((const uint8_t *)data, len);
    if (fs == 0 || tl_head_footer_url(url, key, sizeof key) == NULL) return TL_OK;
    return tl_head_objects_add(o, key, (const uint8_t *)data + len - fs, fs, err);
}

tl_status tl_head_footers_of_commit(const tl_table *t, const tl_commit_request *req,
                                    tl_head_objects *o, tl_error *err)
{
    for (size_t i = 0; i < req->n_uploads; i++) {
        const tl_store_put_item *u = &req->uploads[i];
        const tl_ice_data_file *d = file_of_key(t, req, u->key);
        if (d) TL_TRY(tl_head_footer_keep(t, d->file_path, u->data, u->len, o, err));
    }
    return req->footers ? tl_head_objects_add_all(o, req->footers, err) : TL_OK;
}

tl_status tl_head_footer_fetch(const tl_table *t, const char *url, uint64_t size, tl_buf *out,
                               tl_error *err)
{
    char buf[1024];
    const char *key = tl_table_key_of_url(t, url, buf, sizeof buf);
    if (key == NULL || size < 12)
        return tl_error_set(err, TL_ERR_INVALID, "%s: not a Parquet file of the table", url);
    size_t tail = (size_t)(size < TL_HEAD_FOOTER_TAIL ? size : TL_HEAD_FOOTER_TAIL);
    uint8_t *b = malloc(tail);
    if (b == NULL) return tl_error_nomem(err);
    uint64_t meta = 0;
    tl_status st = tl_store_get_range(t->lake->store, key, size - tail, tail, b, err);
    if (st == TL_OK) st = tl_pq_footer_len(b + tail - 8, size, &meta, err);
    /* Its 4-byte length is the file's word: a second read for a longer
     * footer would cost a round trip the append has not got, and the
     * length may claim most of a large file. */
    if (st == TL_OK && meta + 8 > tail)
        st = tl_error_set(err, TL_ERR_INVALID, "%s: a Parquet footer of %llu bytes is not carried",
                          url, (unsigned long long)meta);
    if (st == TL_OK && tl_buf_append(out, b + tail - (meta + 8), (size_t)meta + 8) != 0)
        st = tl_error_nomem(err);
    free(b);
    return st;
}
