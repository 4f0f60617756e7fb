/* Parquet footers of data files carried in the head object (head.h), so a
 * cold filtered query plans its column-chunk reads from the head and reads
 * data in one batch, even from files of several row groups. A footer is
 * carried under "<data file URL>#footer": the last 8 + footer-length bytes of
 * that immutable, UUID-named file. Readers check it against the manifest
 * entry (remote_fetch.c) and read the file's tail instead on any doubt. */
#ifndef TL_TABLE_HEAD_FOOTER_H
#define TL_TABLE_HEAD_FOOTER_H

#include "table/append.h"
#include "table/head.h"
#include "table/table_internal.h"

#define TL_HEAD_FOOTER_SUFFIX "#footer"
/* Smaller data files are read whole by queries: their footers are not carried. */
#define TL_HEAD_FOOTER_MIN_FILE (UINT64_C(1) << 20)

/* The key of url's footer in the head, in buf; NULL when it does not fit. */
const char *tl_head_footer_url(const char *url, char *buf, size_t size);

/* Adds to o the footers of the commit's large data files whose bytes it
 * still holds (req->uploads). Files uploaded earlier are left out. */
tl_status tl_head_footers_of_commit(const tl_table *t, const tl_commit_request *req,
                                    tl_head_objects *o, tl_error *err);

#endif
