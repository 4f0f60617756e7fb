/* Parquet footers of data files carried in the head object (head.h), so a
 * cold filtered query plans its column-chunk reads from the head and reads
 * data in one batch, even from files of several row groups. A footer is
 * carried under "<data file URL>#footer": the last 8 + footer-length bytes of
 * that immutable, UUID-named file. Readers check it against the manifest
 * entry (remote_fetch.c) and read the file's tail instead on any doubt.
 *
 * Every live large file keeps its footer in each new head, within the head's
 * budget (TL_HEAD_MAX_BYTES): the files a commit writes (appends, all their
 * chunks, and maintenance rewrites) bring theirs from memory; the head the
 * handle read or wrote carries the older ones forward; and a footer neither
 * has (another writer's file whose head was replaced, a handle that read no
 * trusted head) is read from its file once while the commit uploads. */
#ifndef TL_TABLE_HEAD_FOOTER_H
#define TL_TABLE_HEAD_FOOTER_H

#include "table/append.h"
#include "table/head.h"
#include "table/table_internal.h"

#define TL_HEAD_FOOTER_SUFFIX "#footer"
/* Smaller data files are read whole by queries: their footers are not carried. */
#define TL_HEAD_FOOTER_MIN_FILE (UINT64_C(1) << 20)
/* A footer read from its file: one ranged read of this many last bytes. */
#define TL_HEAD_FOOTER_TAIL (UINT64_C(64) << 10)

/* The key of url's footer in the head, in buf; NULL when it does not fit. */
const char *tl_head_footer_url(const char *url, char *buf, size_t size);

/* Adds to o the footer of the data file at url, given all its bytes, when a
 * head carries it: a Parquet file of TL_HEAD_FOOTER_MIN_FILE bytes or more
 * of a table on an object store. Appends and rewrites both keep footers so,
 * while the bytes are at hand: reading them back later would cost a fetch. */
tl_status tl_head_footer_keep(const tl_table *t, const char *url, const void *data, size_t len,
                              tl_head_objects *o, tl_error *err);

/* Reads the footer of the data file at url, of `size` bytes as its manifest
 * entry says, from the store into out (empty), in one read of its last
 * TL_HEAD_FOOTER_TAIL bytes; a longer footer is refused (TL_ERR_INVALID).
 * For the footers of live files that no head or commit carried
 * (head_write.c). */
tl_status tl_head_footer_fetch(const tl_table *t, const char *url, uint64_t size, tl_buf *out,
                               tl_error *err);

/* Adds to o the footers of the commit's large data files: of those it
 * uploads (req->uploads), and those kept when earlier chunks went up
 * (req->footers). */
tl_status tl_head_footers_of_commit(const tl_table *t, const tl_commit_request *req,
                                    tl_head_objects *o, tl_error *err);

#endif
