/* What the remote backends (S3, GCS, Azure) share: a configuration, an HTTP
 * client, the retry loop, the error mapping, the conditional create with its
 * read-back when an outcome is unknown, and parallel uploads. */
#ifndef TL_STORE_REMOTE_H
#define TL_STORE_REMOTE_H

#include "store/http.h"
#include "store/store.h"
#include "store/store_options.h"

typedef struct tl_remote tl_remote;

/* One request to the backend, before signing. */
typedef struct tl_remote_call {
    const char *method;
    const char *object;        /* full object name in the bucket; NULL for bucket-level calls */
    const char *query;         /* canonical query string ("a=1&b=2", sorted, encoded) or "" */
    const tl_strlist *headers; /* extra headers, "name: value" with lower-case names */
    const void *body;
    size_t body_len;
    uint8_t *dst; /* read the body into dst (dst_len bytes at most) */
    size_t dst_len;
} tl_remote_call;

/* Signs and sends one attempt of a call (no retries). */
typedef tl_status (*tl_remote_attempt_fn)(tl_remote *r, const tl_remote_call *call,
                                          tl_http_response *resp, tl_error *err);

struct tl_multipart_ops;

struct tl_remote {
    tl_store base;
    tl_store_config cfg;
    tl_http_client *http;
    tl_remote_attempt_fn attempt;
    /* The backend's multipart upload and its most parts (for streaming writers). */
    const struct tl_multipart_ops *multipart;
    size_t max_parts;
};

/* Fills the common part; base.ops and attempt are the backend's to set. */
tl_status tl_remote_init(tl_remote *r, tl_store_config *cfg, const char *url_scheme, tl_error *err);
void tl_remote_clear(tl_remote *r);

/* The object name of a key: prefix/key. malloc'd. */
char *tl_remote_object(const tl_remote *r, const char *key);

/* Sends with bounded retries. TL_OK when a final response arrived (any
 * status: check resp->status). *maybe_applied (may be NULL) becomes true when
 * an attempt may have reached the server without us seeing its answer. */
tl_status tl_remote_send(tl_remote *r, const tl_remote_call *call, tl_http_response *resp,
                         bool *maybe_applied, tl_error *err);

/* Maps a non-2xx final response to a status and message ("GET key: 403 ..."). */
tl_status tl_remote_fail(const tl_http_response *resp, const char *what, const char *key,
                         tl_error *err);

/* The conditional create of key with content data. `call` carries the backend's "only if absent"
 * condition; a response status in `lost` (e.g. 412, 409) means another writer
 * owns the key. When an attempt's outcome is unknown, the object is read back
 * and compared byte for byte: ours -> TL_OK, someone else's -> TL_ERR_EXISTS. */
tl_status tl_remote_put_if_absent(tl_remote *r, const tl_remote_call *call, const char *key,
                                  const void *data, size_t len, const long *lost, size_t n_lost,
                                  tl_error *err);

/* Moves a GET's body into *out (replacing it), NUL-terminated. */
tl_status tl_remote_take_body(tl_http_response *resp, tl_buf *out, tl_error *err);

/* Writes the header line "<name>: bytes=<offset>-<last>" for a ranged GET. */
void tl_remote_range_header(char *buf, size_t size, const char *name, uint64_t offset, size_t len);

/* A ranged GET must deliver exactly len bytes. */
tl_status tl_remote_check_range(const tl_http_response *resp, const char *key, uint64_t offset,
                                size_t len, tl_error *err);

/* The outcome of a GET of bytes 0..len-1 (tl_store_get_first): a 206's
 * Content-Range ("bytes 0-E/TOTAL") or a 200's Content-Length gives *total,
 * and the bytes received must be all of them up to len. Not for other statuses. */
tl_status tl_remote_first_result(const tl_http_response *resp, const char *key, size_t len,
                                 size_t *got, uint64_t *total, tl_error *err);

/* One page of a listing: the objects under object_prefix after `token`
 * (NULL: the first page) go into out, keys relative to the store's root,
 * with their sizes, digests, times and etags; *next is the next page's
 * token, or NULL. delimited: one level ('/' as the delimiter), with each
 * deeper folder as an is_folder entry. */
typedef tl_status (*tl_remote_page_fn)(tl_remote *r, const char *object_prefix, bool delimited,
                                       const char *token, tl_store_listing *out, char **next,
                                       tl_error *err);

/* Lists every object under prefix (one level when delimited), page by page. */
tl_status tl_remote_list(tl_remote *r, const char *prefix, bool delimited, tl_remote_page_fn page,
                         tl_store_listing *out, tl_error *err);

/* Adds a folder entry (name: the object name the store gave, prefix included). */
int tl_remote_push_folder(tl_remote *r, const char *name, tl_store_listing *out);

/* Unix ms of an HTTP date ("Tue, 01 Dec 2026 13:54:55 GMT") or of an ISO 8601
 * time ("2026-12-01T13:54:40.000Z"); 0 when text is NULL or neither. */
int64_t tl_remote_http_date_ms(const char *text);
int64_t tl_remote_iso_date_ms(const char *text);

/* Fills *out (tl_store_stat) from the answer to a HEAD of key:
 * Content-Length, Last-Modified, ETag. */
tl_status tl_remote_stat_of_head(const tl_http_response *resp, const char *key,
                                 tl_store_listed *out, tl_error *err);
/* tl_store_ops.size through the backend's stat. */
tl_status tl_remote_size_by_stat(tl_store *s, const char *key, uint64_t *out, tl_error *err);

/* The streaming writer of a remote store (remote_writer.c): r->multipart
 * once the bytes pass the multipart threshold, one put otherwise. */
tl_status tl_remote_writer_open(tl_store *s, const char *key, tl_store_writer **out, tl_error *err);
/* The same, keys only. */
tl_status tl_remote_list_keys(tl_remote *r, const char *prefix, tl_remote_page_fn page,
                              tl_strlist *out, tl_error *err);

/* Uploads items through s->ops->put on up to `threads` threads. */
tl_status tl_store_put_parallel(tl_store *s, const tl_store_put_item *items, size_t n, int threads,
                                tl_error *err);

#endif
