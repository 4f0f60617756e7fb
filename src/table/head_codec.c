/* The head object's binary encoding (see head.h), and its object collection. */
#include <stdlib.h>
#include <string.h>

#include "store/digest.h"
#include "table/head.h"

#define HEAD_MAGIC "TLHD"
#define HEAD_FORMAT 1
#define DIGEST_LEN 32

tl_status tl_head_objects_add(tl_head_objects *o, const char *url, const void *data, size_t len,
                              tl_error *err)
{
    tl_head_object *items = realloc(o->items, (o->n + 1) * sizeof *items);
    if (items == NULL) return tl_error_nomem(err);
    o->items = items;
    tl_head_object *it = &items[o->n];
    memset(it, 0, sizeof *it);
    it->url = strdup(url);
    if (it->url == NULL || tl_buf_append(&it->data, data, len) != 0) {
        free(it->url);
        tl_buf_free(&it->data);
        return tl_error_nomem(err);
    }
    o->n++;
    return TL_OK;
}

const tl_buf *tl_head_objects_find(const tl_head_objects *o, const char *url)
{
    for (size_t i = 0; o && i < o->n; i++)
        if (strcmp(o->items[i].url, url) == 0) return &o->items[i].data;
    return NULL;
}

tl_status tl_head_objects_add_all(tl_head_objects *o, const tl_head_objects *from, tl_error *err)
{
    for (size_t i = 0; i < from->n; i++) {
        const tl_head_object *it = &from->items[i];
        if (tl_head_objects_find(o, it->url) == NULL)
            TL_TRY(tl_head_objects_add(o, it->url, it->data.data, it->data.len, err));
    }
    return TL_OK;
}

void tl_head_objects_clear(tl_head_objects *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->items[i].url);
        tl_buf_free(&o->items[i].data);
    }
    free(o->items);
    o->items = NULL;
    o->n = 0;
}

void tl_head_objects_free(tl_head_objects *o)
{
    if (o == NULL) return;
    tl_head_objects_clear(o);
    free(o);
}

void tl_head_clear(tl_head *h)
{
    tl_buf_free(&h->metadata);
    tl_head_objects_clear(&h->objects);
    h->version = 0;
}

tl_status tl_head_encode(const tl_head *h, tl_buf *out, tl_error *err)
{
    size_t codec = strlen(TL_HEAD_CODEC);
    int rc = tl_buf_append(out, HEAD_MAGIC, 4) | tl_buf_append_byte(out, HEAD_FORMAT) |
             tl_buf_append_le64(out, (uint64_t)h->version) |
             tl_buf_append_byte(out, (uint8_t)codec) | tl_buf_append(out, TL_HEAD_CODEC, codec) |
             tl_buf_append_le64(out, (uint64_t)h->metadata.len) |
             tl_buf_append(out, h->metadata.data, h->metadata.len) |
             tl_buf_append_le32(out, (uint32_t)h->objects.n);
    for (size_t i = 0; rc == 0 && i < h->objects.n; i++) {
        const tl_head_object *o = &h->objects.items[i];
        size_t n = strlen(o->url);
        rc |= tl_buf_append_le32(out, (uint32_t)n) | tl_buf_append(out, o->url, n) |
              tl_buf_append_le64(out, (uint64_t)o->data.len) |
              tl_buf_append(out, o->data.data, o->data.len);
    }
    uint8_t digest[DIGEST_LEN];
    if (rc == 0) {
        tl_sha256(out->data, out->len, digest);
        rc = tl_buf_append(out, digest, sizeof digest);
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

/* A bounds-checked reader over the encoded bytes. */
typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static const uint8_t *take(reader *r, uint64_t n)
{
    if (n > r->left) return NULL;
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= (size_t)n;
    return p;
}

static bool take_u8(reader *r, uint8_t *v)
{
    const uint8_t *p = take(r, 1);
    if (p) *v = *p;
    return p != NULL;
}

static bool take_u32(reader *r, uint32_t *v)
{
    const uint8_t *p = take(r, 4);
    if (p) *v = tl_load_le32(p);
    return p != NULL;
}

static bool take_u64(reader *r, uint64_t *v)
{
    const uint8_t *p = take(r, 8);
    if (p) *v = tl_load_le64(p);
    return p != NULL;
}

static bool decode_object(reader *r, tl_head_objects *o)
{
    uint32_t url_len;
    uint64_t len;
    const uint8_t *url = take_u32(r, &url_len) ? take(r, url_len) : NULL;
    if (url == NULL || url_len == 0 || memchr(url, 0, url_len) != NULL) return false;
    const uint8_t *data = take_u64(r, &len) ? take(r, len) : NULL;
    if (data == NULL) return false;
    char *u = strndup((const char *)url, url_len);
    bool ok = u && tl_head_objects_add(o, u, data, (size_t)len, NULL) == TL_OK;
    free(u);
    return ok;
}

static bool decode_body(reader *r, tl_head *out)
{
    uint8_t format, codec_len;
    uint64_t version, md_len;
    const uint8_t *magic = take(r, 4);
    if (magic == NULL || memcmp(magic, HEAD_MAGIC, 4) != 0) return false;
    if (!take_u8(r, &format) || format != HEAD_FORMAT || !take_u64(r, &version)) return false;
    const uint8_t *codec = take_u8(r, &codec_len) ? take(r, codec_len) : NULL;
    if (codec == NULL || codec_len != strlen(TL_HEAD_CODEC) ||
        memcmp(codec, TL_HEAD_CODEC, codec_len) != 0)
        return false;
    if (version == 0 || version > INT64_MAX) return false;
    out->version = (int64_t)version;
    const uint8_t *md = take_u64(r, &md_len) ? take(r, md_len) : NULL;
    if (md == NULL || md_len == 0 || tl_buf_append(&out->metadata, md, (size_t)md_len) != 0)
        return false;
    uint32_t n;
    if (!take_u32(r, &n)) return false;
    for (uint32_t i = 0; i < n; i++)
        if (!decode_object(r, &out->objects)) return false;
    return r->left == 0;
}

tl_status tl_head_decode(const uint8_t *data, size_t len, tl_head *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    uint8_t digest[DIGEST_LEN];
    bool ok = data != NULL && len > DIGEST_LEN;
    if (ok) {
        tl_sha256(data, len - DIGEST_LEN, digest);
        ok = memcmp(digest, data + len - DIGEST_LEN, DIGEST_LEN) == 0;
    }
    reader r = {data, ok ? len - DIGEST_LEN : 0};
    if (ok) ok = decode_body(&r, out);
    if (ok) return TL_OK;
    tl_head_clear(out);
    return tl_error_set(err, TL_ERR_INVALID, "the head object is malformed or corrupt");
}

void tl_head_key(const tl_qname *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/metadata/" TL_HEAD_NAME, name->key);
}
