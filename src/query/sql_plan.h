/* Reading a query's syntax tree (DuckDB's json_serialize_sql) for what
 * Timelake must prepare before DuckDB runs it: the tables it references, and
 * for each reference the time range and series keys its WHERE clause
 * restricts it to (for file pruning), or whether it only asks for the newest
 * row of each series (answered from the last-value index). */
#ifndef TL_QUERY_SQL_PLAN_H
#define TL_QUERY_SQL_PLAN_H

#include <jansson.h>

#include "query/engine.h"
#include "core/strlist.h"
#include "query/scan.h"

typedef struct tl_sql_ref {
    char *schema; /* as written; "" when unqualified */
    char *table;
    tl_table *t;             /* from the lookup, which keeps ownership */
    tl_scan_filter *filters; /* one per reference of this table */
    size_t n_filters;
    bool all_latest;    /* every reference only needs the newest row per series */
    tl_strlist nonnull; /* ... provided these columns have no null in the index */
} tl_sql_ref;

typedef struct tl_sql_plan {
    tl_sql_ref *refs; /* distinct tables, in order of appearance */
    size_t n_refs;
    void *stmt; /* json_t: the statement's syntax tree (a reference), for shape recognisers */
    /* The query DuckDB must run instead (malloc'd), or NULL: with time
     * travel, each `t AT (...)` becomes the view of t as of its snapshot
     * (tl_query_view_name), under t's name as alias. */
    char *query;
} tl_sql_plan;

/* A reference's AT clause: FROM t AT (VERSION => v) or AT (TIMESTAMP => ts). */
typedef enum tl_sql_at_kind {
    TL_SQL_AT_NONE,
    TL_SQL_AT_VERSION,
    TL_SQL_AT_TIMESTAMP
} tl_sql_at_kind;
typedef struct tl_sql_at {
    tl_sql_at_kind kind;
    const char *version; /* VERSION: the value as text (a snapshot id, or a tag or branch) */
    int64_t us;          /* TIMESTAMP: Unix microseconds */
} tl_sql_at;

/* Parses `query` (exactly one SELECT statement) and collects its table
 * references. `lookup` resolves a reference to a lake table (NULL when the
 * name is not a lake table, e.g. a CTE), as of `at` (NULL: now; else a
 * handle pinned at the snapshot it names, time_travel.h, or an error naming
 * the table and the snapshots it has); its filters need that table's
 * contract, so resolution happens during the walk. own_namespace: DuckDB's
 * catalog functions (duckdb_tables() and the like), which list the views of
 * every namespace queried before, are refused. */
typedef tl_status (*tl_sql_lookup)(void *ctx, const char *schema, const char *table,
                                   const tl_sql_at *at, tl_table **out, tl_error *err);
tl_status tl_sql_plan_build(tl_query_engine *e, const char *query, bool own_namespace,
                            tl_sql_lookup lookup, void *ctx, tl_sql_plan *out, tl_error *err);
void tl_sql_plan_free(tl_sql_plan *plan);

/* The syntax tree of `query` (DuckDB's json_serialize_sql; a new reference,
 * which the caller must not change: copy it first). */
tl_status tl_sql_syntax_tree(tl_query_engine *e, const char *query, json_t **out, tl_error *err);

/* SQL text back from a syntax tree {"error": false, "statements": [...]}
 * (DuckDB's json_deserialize_sql), or "SELECT <exprs>" for an array of
 * expression nodes (borrowed); malloc'd, NULL on failure. The texts of
 * recent trees are kept by the engine. */
char *tl_sql_tree_text(tl_query_engine *e, const json_t *doc);
/* The same into *out, with why it failed: TL_ERR_NOMEM, or TL_ERR_QUERY when
 * DuckDB cannot write the tree as SQL. */
tl_status tl_sql_tree_sql(tl_query_engine *e, const json_t *doc, char **out, tl_error *err);
char *tl_sql_select_text(tl_query_engine *e, json_t *exprs);

/* The value of a time literal DuckDB would compare with a time column (a
 * string, or a string cast to DATE, TIMESTAMP or TIMESTAMPTZ), in Unix
 * microseconds, exact; false for any other expression or form. */
bool tl_sql_literal_time(const json_t *e, int64_t *us);

/* Frees the syntax trees the engine keeps of recent queries. */
void tl_sql_plan_cache_free(tl_query_engine *e);

#endif
