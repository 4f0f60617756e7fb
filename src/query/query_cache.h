/* What the engine keeps between queries of one lake, so that a query costs
 * DuckDB's work and little else: the live files of each table's current
 * snapshot, the body of each view as last registered, and the search path.
 *
 * Freshness: every query still loads the table's current metadata (one
 * small read, and how it learns of new commits); the live files are reused
 * only while its snapshot's manifest list is the one they were read from (a
 * manifest list is immutable and its URL unique to its snapshot), and a view
 * is recreated only when its body changes. */
#ifndef TL_QUERY_QUERY_CACHE_H
#define TL_QUERY_QUERY_CACHE_H

#include "query/engine.h"
#include "table/live_files.h"

typedef struct tl_query_cached {
    char *table;         /* full name */
    char *manifest_list; /* of the snapshot lf was read from ("" when empty) */
    tl_live_files lf;
    char *view; /* body of the view as last registered, NULL when none */
} tl_query_cached;

/* The name of t's view in its namespace's schema (malloc'd): the table's
 * name, or for a handle pinned at a snapshot (time travel) "<table>@<id>"
 * (no table can have that name: '@' is not allowed in one). */
char *tl_query_view_name(const tl_table *t);

/* The live files of t's current snapshot, owned by the engine and valid
 * until the next call for the same table. */
tl_status tl_query_live_files(tl_query_engine *e, const tl_table *t, const tl_live_files **out,
                              tl_error *err);

/* Creates or replaces t's view "namespace"."<view name>" as `body`, unless
 * it is that already. */
tl_status tl_query_register(tl_query_engine *e, const tl_table *t, const char *body, tl_error *err);
/* The same for view "namespace"."<view name><suffix>", kept apart from t's
 * own (rollup routing's narrowed view of a raw table, sql_route.c: both
 * stay as they are from one routed query to the next). */
tl_status tl_query_register_as(tl_query_engine *e, const tl_table *t, const char *suffix,
                               const char *body, tl_error *err);

/* Drops t's view and what the engine keeps of it (for the views of pinned
 * handles, which no later query may see). */
void tl_query_forget(tl_query_engine *e, const tl_table *t);

/* Sets DuckDB's search path to the namespace (creating its schema). */
tl_status tl_query_use_namespace(tl_query_engine *e, const char *ns, tl_error *err);

void tl_query_cache_free(tl_query_engine *e);

#endif
