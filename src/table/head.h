/* The head object: one object per table, rewritten after each commit, that
 * lets a cold reader answer in one round trip. It carries the exact bytes of
 * the newest vN.metadata.json and of the immutable objects that version
 * refers to (its manifest list, manifests and last-value index), keyed by the
 * URLs the metadata names them by.
 *
 * A head is trusted only when it provably describes the newest committed
 * version: the reader lists metadata/v* in parallel with the head's GET and
 * uses the head only when its version is the newest listed, its embedded
 * metadata has the listed size and MD5 of that vN.metadata.json (its
 * content, not only its number: see head_read.c), its own SHA-256 is intact
 * and its metadata belongs to this table. Otherwise the metadata is read as
 * before. A listing without digests never lets a head be trusted. The
 * carried objects are immutable (UUID-named), so their bytes are right
 * whatever the head's age. Writers PUT the head in parallel with their
 * conditional create (head_write.c).
 *
 * Ours is written as metadata/timelake-c-head, not the reference's
 * metadata/timelake-head: the reference's codecs (Arrow IPC or JSON
 * sections of per-file statistics, Parquet footers and last values in
 * arrow-rs's schema encoding) are its own, so it never reads ours by mistake,
 * and it detects the staleness of its own head after our commits by the same
 * listing. Local tables get no head: a round trip costs nothing there. */
#ifndef TL_TABLE_HEAD_H
#define TL_TABLE_HEAD_H

#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "iceberg/metadata.h"
#include "store/store.h"
#include "table/name.h"

#define TL_HEAD_NAME "timelake-c-head"
#define TL_HEAD_CODEC "tlc-objects"
/* Past this many bytes of carried objects, further manifests, then footers,
 * are left out (readers fetch those): a head stays one quick GET. Manifests
 * come first; data files' footers (head_footer.h) share what is left, the
 * newest files' first. */
#define TL_HEAD_MAX_BYTES (8u << 20)

typedef struct tl_head_object {
    char *url;
    tl_buf data;
} tl_head_object;

typedef struct tl_head_objects {
    tl_head_object *items;
    size_t n;
} tl_head_objects;

typedef struct tl_head {
    int64_t version; /* N of the vN.metadata.json it describes */
    tl_buf metadata; /* that file's bytes */
    tl_head_objects objects;
} tl_head;

/* Encodes: "TLHD", format 1, version (u64 LE), codec name (u8 length), then
 * the metadata (u64 length + bytes), the object count (u32), each object
 * (u32 URL length, URL, u64 length, bytes), and a SHA-256 of all before it. */
tl_status tl_head_encode(const tl_head *h, tl_buf *out, tl_error *err);
/* Decodes into out (cleared first). Any malformation, truncation or digest
 * mismatch is TL_ERR_INVALID with out left empty: never trusted, never a crash. */
tl_status tl_head_decode(const uint8_t *data, size_t len, tl_head *out, tl_error *err);
void tl_head_clear(tl_head *h);

/* Adds a copy of data under url (kept by the collection). */
tl_status tl_head_objects_add(tl_head_objects *o, const char *url, const void *data, size_t len,
                              tl_error *err);
/* Adds a copy of each of from's objects whose URL o does not have yet. */
tl_status tl_head_objects_add_all(tl_head_objects *o, const tl_head_objects *from, tl_error *err);
const tl_buf *tl_head_objects_find(const tl_head_objects *o, const char *url);
void tl_head_objects_clear(tl_head_objects *o);

/* Key of a table's head object. */
void tl_head_key(const tl_qname *name, char *buf, size_t size);

/* The newest version through the head: lists metadata/v* and GETs the head
 * at once. *version is the newest listed; *md (caller frees) and *objects
 * (caller frees with tl_head_objects_free) are set only when the head is
 * valid for that version, else left NULL (the caller reads vN itself); then
 * md_bytes (may be NULL; empty on entry) receives that vN.metadata.json's
 * exact bytes. TL_ERR_NOT_FOUND when no version exists. */
tl_status tl_head_load_latest(tl_store *store, const tl_qname *name, int64_t *version,
                              tl_ice_metadata **md, tl_head_objects **objects, tl_buf *md_bytes,
                              tl_error *err);
void tl_head_objects_free(tl_head_objects *o);

#endif
