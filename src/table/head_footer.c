#include "table/head_footer.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"

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

tl_status tl_head_footers_of_commit(const tl_table *t, const tl_commit_request *req,
                                    tl_head_objects *o, tl_error *err)
{
    char url[1100];
    for (size_t i = 0; i < req->n_uploads; i++) {
        const tl_store_put_item *u = &req->uploads[i];
        if (u->len < TL_HEAD_FOOTER_MIN_FILE) continue;
        const tl_ice_data_file *d = file_of_key(t, req, u->key);
        size_t fs = footer_size((const uint8_t *)u->data, u->len);
        if (d == NULL || fs == 0 || tl_head_footer_url(d->file_path, url, sizeof url) == NULL)
            continue;
        TL_TRY(tl_head_objects_add(o, url, (const uint8_t *)u->data + u->len - fs, fs, err));
    }
    return TL_OK;
}
