/* The shared storage of snapshots in metadata (tl_ice_snapshot.data).
 *
 * A commit copies the table's metadata, adds a snapshot and writes it all
 * out; a table that keeps every snapshot holds thousands. Copying each
 * snapshot's strings, and rebuilding its JSON, made every commit cost in
 * proportion to the history. A snapshot never changes once it is part of a
 * metadata, so its parts live in one immutable allocation that copies share
 * by reference count, with its serialized JSON kept beside them. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"

typedef struct cached_json {
    int format_version; /* the JSON differs between format versions */
    size_t len;
    char text[]; /* NUL-terminated */
} cached_json;

/* Followed in the same allocation by the summary array and the strings. */
struct tl_ice_snapshot_data {
    atomic_size_t refs;
    _Atomic(cached_json *) json;
    _Atomic int64_t memo; /* valid once has_memo is set */
    atomic_bool has_memo;
};

/* Room for the header and the kv array, rounded so the array is aligned. */
static size_t header_size(size_t n_summary)
{
    size_t head = (sizeof(struct tl_ice_snapshot_data) + _Alignof(tl_kv) - 1) / _Alignof(tl_kv) *
                  _Alignof(tl_kv);
    return head + n_summary * sizeof(tl_kv);
}

static char *put_string(char **cursor, const char *s)
{
    size_t n = strlen(s) + 1;
    char *at = *cursor;
    memcpy(at, s, n);
    *cursor += n;
    return at;
}

/* New data holding copies of src's parts; out gets src's fields pointing into it. */
static tl_status pack_into(const tl_ice_snapshot *src, tl_ice_snapshot *out, tl_error *err)
{
    size_t size = header_size(src->n_summary);
    if (src->manifest_list) size += strlen(src->manifest_list) + 1;
    for (size_t i = 0; i < src->n_summary; i++)
        size += strlen(src->summary[i].key) + strlen(src->summary[i].value) + 2;
    struct tl_ice_snapshot_data *d = malloc(size);
    json_t *extra = src->extra ? json_deep_copy(src->extra) : NULL;
    if (d == NULL || (src->extra && extra == NULL)) {
        free(d);
        json_decref(extra);
        return tl_error_nomem(err);
    }
    atomic_init(&d->refs, 1);
    atomic_init(&d->json, NULL);
    atomic_init(&d->memo, 0);
    atomic_init(&d->has_memo, false);
    tl_kv *kv = (tl_kv *)((char *)d + header_size(0));
    char *cursor = (char *)d + header_size(src->n_summary);
    *out = *src;
    out->data = d;
    out->extra = extra;
    out->summary = src->n_summary ? kv : NULL;
    out->manifest_list = src->manifest_list ? put_string(&cursor, src->manifest_list) : NULL;
    for (size_t i = 0; i < src->n_summary; i++) {
        kv[i].key = put_string(&cursor, src->summary[i].key);
        kv[i].value = put_string(&cursor, src->summary[i].value);
    }
    return TL_OK;
}

static void data_release(struct tl_ice_snapshot_data *d)
{
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) return;
    free(atomic_load_explicit(&d->json, memory_order_acquire));
    free(d);
}

void tl_ice_snapshot_free(tl_ice_snapshot *snap)
{
    if (snap == NULL) return;
    if (snap->data) {
        data_release(snap->data);
    } else {
        free(snap->manifest_list);
        tl_kv_free(snap->summary, snap->n_summary);
    }
    json_decref(snap->extra);
    memset(snap, 0, sizeof *snap);
}

tl_status tl_ice_snapshot_copy(const tl_ice_snapshot *src, tl_ice_snapshot *out, tl_error *err)
{
    if (src->data == NULL) return pack_into(src, out, err);
    /* Deep copies of extra: jansson values are not safe to share between threads. */
    json_t *extra = src->extra ? json_deep_copy(src->extra) : NULL;
    if (src->extra && extra == NULL) return tl_error_nomem(err);
    *out = *src;
    out->extra = extra;
    atomic_fetch_add_explicit(&src->data->refs, 1, memory_order_relaxed);
    return TL_OK;
}

tl_status tl_ice_snapshot_pack(tl_ice_snapshot *snap, tl_error *err)
{
    if (snap->data) return TL_OK;
    tl_ice_snapshot packed;
    TL_TRY(pack_into(snap, &packed, err));
    tl_ice_snapshot_free(snap);
    *snap = packed;
    return TL_OK;
}

const char *tl_ice_snapshot_json(const tl_ice_snapshot *snap, int format_version, size_t *len)
{
    cached_json *c =
        snap->data ? atomic_load_explicit(&snap->data->json, memory_order_acquire) : NULL;
    if (c == NULL || c->format_version != format_version) return NULL;
    *len = c->len;
    return c->text;
}

void tl_ice_snapshot_keep_json(const tl_ice_snapshot *snap, int format_version, const char *text,
                               size_t len)
{
    if (snap->data == NULL || atomic_load_explicit(&snap->data->json, memory_order_acquire)) return;
    cached_json *c = malloc(sizeof *c + len + 1);
    if (c == NULL) return; /* only a cache */
    c->format_version = format_version;
    c->len = len;
    memcpy(c->text, text, len);
    c->text[len] = '\0';
    cached_json *none = NULL;
    /* Another thread serializing a copy may have kept it first. */
    if (!atomic_compare_exchange_strong_explicit(&snap->data->json, &none, c, memory_order_acq_rel,
                                                 memory_order_acquire))
        free(c);
}

void tl_ice_snapshot_prefetch_data(const tl_ice_snapshot *snap)
{
    if (snap->data) __builtin_prefetch(snap->data, 1);
}

void tl_ice_snapshot_prefetch_json(const tl_ice_snapshot *snap)
{
    cached_json *c =
        snap->data ? atomic_load_explicit(&snap->data->json, memory_order_relaxed) : NULL;
    if (c) __builtin_prefetch(c);
}

bool tl_ice_snapshot_memo(const tl_ice_snapshot *snap, int64_t *out)
{
    if (snap->data == NULL || !atomic_load_explicit(&snap->data->has_memo, memory_order_acquire))
        return false;
    *out = atomic_load_explicit(&snap->data->memo, memory_order_relaxed);
    return true;
}

void tl_ice_snapshot_set_memo(const tl_ice_snapshot *snap, int64_t value)
{
    if (snap->data == NULL) return;
    /* Racing writers store the same value: it follows from the snapshot alone. */
    atomic_store_explicit(&snap->data->memo, value, memory_order_relaxed);
    atomic_store_explicit(&snap->data->has_memo, true, memory_order_release);
}
