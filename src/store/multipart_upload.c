#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/random.h"
#include "store/digest.h"
#include "store/multipart.h"

bool tl_multipart_wanted(const tl_remote *r, size_t len)
{
    return (long long)len > r->cfg.multipart_threshold;
}

size_t tl_multipart_part_size(const tl_remote *r, size_t len, size_t max_parts, size_t align)
{
    size_t size = (size_t)r->cfg.multipart_part_size;
    if (size == 0) size = 1;
    if ((len + size - 1) / size > max_parts) size = (len + max_parts - 1) / max_parts;
    if (align > 1) size = (size + align - 1) / align * align;
    return size;
}

typedef struct task_job {
    tl_remote *r;
    tl_multipart_task fn;
    void *ctx;
} task_job;

static tl_status run_task(void *ctx, size_t i, tl_error *err)
{
    task_job *j = ctx;
    return j->fn(j->r, j->ctx, i, err);
}

tl_status tl_multipart_parallel(tl_remote *r, size_t n, tl_multipart_task fn, void *ctx,
                                tl_error *err)
{
    int threads = r->cfg.multipart_concurrency;
    task_job j = {r, fn, ctx};
    return tl_parallel_run(n, threads < 1 ? 1 : (size_t)threads, true, run_task, &j, err);
}

typedef struct part_ctx {
    const tl_multipart_ops *ops;
    void *upload;
    const uint8_t *data;
    size_t len, part_size;
} part_ctx;

static tl_status send_part(tl_remote *r, void *ctx, size_t i, tl_error *err)
{
    part_ctx *c = ctx;
    size_t off = i * c->part_size;
    size_t n = c->len - off < c->part_size ? c->len - off : c->part_size;
    return c->ops->part(r, c->upload, i, c->data + off, n, err);
}

tl_status tl_multipart_put(tl_remote *r, const tl_multipart_ops *ops, const char *key,
                           const void *data, size_t len, size_t part_size, tl_error *err)
{
    if (part_size == 0) part_size = 1;
    size_t n_parts = len == 0 ? 1 : (len + part_size - 1) / part_size;
    void *upload = NULL;
    TL_TRY(ops->begin(r, key, n_parts, &upload, err));
    part_ctx c = {ops, upload, data, len, part_size};
    tl_status st = tl_multipart_parallel(r, n_parts, send_part, &c, err);
    if (st == TL_OK) st = ops->finish(r, upload, n_parts, data, len, err);
    /* Every part thread has ended here: nothing can add a part after the abort. */
    if (st != TL_OK) ops->abort(r, upload, n_parts);
    ops->free(upload);
    return st;
}

tl_status tl_tagged_upload_begin(tl_remote *r, const char *key, size_t max_parts, void **out,
                                 tl_error *err)
{
    (void)r;
    (void)max_parts;
    tl_tagged_upload *u = calloc(1, sizeof *u);
    if (u == NULL || (u->key = strdup(key)) == NULL) {
        tl_tagged_upload_free(u);
        return tl_error_nomem(err);
    }
    uint8_t rnd[8];
    tl_random_bytes(rnd, sizeof rnd);
    tl_hex(rnd, sizeof rnd, u->tag);
    *out = u;
    return TL_OK;
}

void tl_tagged_upload_free(void *upload)
{
    tl_tagged_upload *u = upload;
    if (u) free(u->key);
    free(u);
}

tl_status tl_multipart_verify(tl_remote *r, const char *key, const void *data, size_t len,
                              tl_error *err)
{
    uint64_t size = 0;
    tl_error e;
    tl_status st = r->base.ops->size(&r->base, key, &size, &e);
    if (st == TL_OK && size == len) {
        tl_buf b = {0};
        st = r->base.ops->get(&r->base, key, &b, &e);
        bool same = st == TL_OK && b.len == len && (len == 0 || memcmp(b.data, data, len) == 0);
        tl_buf_free(&b);
        if (same) return TL_OK;
    }
    return tl_error_set(err, TL_ERR_STORAGE,
                        "writing %s: the upload's last answer was lost and the object is not "
                        "ours (%s)",
                        key, st == TL_OK ? "other bytes" : e.message);
}
