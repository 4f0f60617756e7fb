/* The newest version of each table this process knows, and when it learnt
 * it, so that queries may skip asking the store again (the
 * version-check-interval setting, default 1 s, as the reference's reader):
 * a version loaded or checked within the interval is used as it is, with no
 * request, though another process may have committed since. This process's
 * commits (through any lake handle) are noted as they land, so they are seen
 * at once; a drop forgets the table. Writers never use it: they always
 * check. Process-wide and safe from any thread. */
#ifndef TL_TABLE_VERSION_CACHE_H
#define TL_TABLE_VERSION_CACHE_H

#include "table/table_internal.h"

#define TL_VERSION_CHECK_DEFAULT_US INT64_C(1000000)

/* Notes that `version` is the newest version of t's table as of now (the
 * interval from t's metadata). */
void tl_version_cache_note(const tl_table *t, int64_t version);

/* Forgets a table (dropped). */
void tl_version_cache_forget(tl_lake *lake, const tl_qname *name);

/* Opens table `name` for a query: at the version noted within the interval
 * (the session's version-check-interval if set, else the table's as of that
 * note) when the lake's metadata cache holds its parse, with no request;
 * otherwise at the latest version, checked. */
tl_status tl_table_load_for_query(tl_lake *lake, const tl_qname *name, const char *const *session,
                                  tl_table **out, tl_error *err);

#endif
