/* What an append or replace commits besides rows (timelake.h: summary and
 * tl_attachment): checking the user's summary entries and attachment names,
 * uploading attachments as immutable objects (metadata/att-<uuidv7>.bin), and
 * the summary entries that name them. The names of a snapshot's attachments
 * are in its summary key timelake.attachments (a JSON array); each name's own
 * key holds the object's URL. Every commit carries its parent's attachments
 * over, so they stay as long as any live snapshot names them.
 *
 * A commit of another writer (the reference's compaction) does not carry
 * them: the attachments of a snapshot are those of its nearest ancestor (itself
 * included) that lists any, its attachment source; expiry keeps the source of
 * every snapshot it keeps. */
#ifndef TL_TABLE_ATTACHMENTS_H
#define TL_TABLE_ATTACHMENTS_H

#include "core/strlist.h"
#include "store/store.h"
#include "table/table_internal.h"

#define TL_SUMMARY_ATTACHMENTS "timelake.attachments"

/* Checks the options' summary pairs and attachment names: valid UTF-8,
 * neither timelake.* nor one of Iceberg's keys, no key twice. */
tl_status tl_commit_extras_check(const tl_append_options *o, tl_error *err);

/* Attachments of one commit, ready to upload. */
typedef struct tl_attachment_uploads {
    const char **names;       /* borrowed from the options */
    char **keys, **urls;      /* object keys and their URLs */
    tl_store_put_item *items; /* keys and the options' bytes */
    size_t n;
} tl_attachment_uploads;

tl_status tl_attachments_prepare(const tl_table *t, const tl_attachment *a, size_t n,
                                 tl_attachment_uploads *out, tl_error *err);
/* Frees u; with remove, deletes its objects first (a commit that did not land). */
void tl_attachments_free(tl_table *t, tl_attachment_uploads *u, bool remove);

/* The snapshot whose summary lists the attachments of s (see above), or NULL
 * when no ancestor in md lists any. */
const tl_ice_snapshot *tl_attachments_source(const tl_ice_metadata *md, const tl_ice_snapshot *s);

/* The attachment source of every snapshot of md at once, in O(history):
 * (*out)[i] is the index in md->snapshots of snapshot i's source, or
 * SIZE_MAX when it has none. *out is the caller's to free. */
tl_status tl_attachments_sources(const tl_ice_metadata *md, size_t **out, tl_error *err);

/* Pushes onto kv the attachments of a new snapshot: own (may be NULL) and
 * those of parent's source (parent may be NULL) that own does not replace,
 * then the list key. */
tl_status tl_attachments_summary(const tl_ice_metadata *md, const tl_ice_snapshot *parent,
                                 const tl_attachment_uploads *own, tl_strlist *kv, tl_error *err);

/* Appends to urls the URLs of the attachments snapshot s names itself. */
tl_status tl_snapshot_attachment_urls(const tl_ice_snapshot *s, tl_strlist *urls, tl_error *err);

/* Whether a key names an attachment object (for orphan cleanup). */
bool tl_attachment_key(const char *base_name);

#endif
