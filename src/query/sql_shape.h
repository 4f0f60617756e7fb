/* Reading the shape of one SELECT over one lake table from its syntax tree
 * (json_serialize_sql): which expressions are the table's time column, a
 * time_bucket of it, what a GROUP BY or ORDER BY key stands for. Shared by
 * the recognisers of queries Timelake answers its own way (sql_plan_topk.h,
 * sql_route.h). */
#ifndef TL_QUERY_SQL_SHAPE_H
#define TL_QUERY_SQL_SHAPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "iceberg/schema.h"
#include "query/engine.h"

typedef struct tl_shape {
    tl_query_engine *e;
    const tl_ice_schema *s;
    const json_t *select;
    const char *alias; /* of the table in FROM */
    const char *time;  /* the time column's name */
} tl_shape;

/* Whether member `key` of o is missing or null. */
bool tl_shape_absent(const json_t *o, const char *key);
/* Whether a node of the tree, anywhere below `node`, has class `cls`. */
bool tl_shape_has_class(const json_t *node, const char *cls);
/* time_bucket or date_bin(<constant>, time [, <constant>]). */
bool tl_shape_is_bucket(const tl_shape *x, const json_t *e);
bool tl_shape_is_time(const tl_shape *x, const json_t *e);
/* Whether e is a reference to a column of the table (bare or qualified). */
bool tl_shape_is_table_column(const tl_shape *x, const json_t *e);
/* The expression an ORDER BY key stands for (ordinal, alias, itself); NULL
 * when ambiguous. */
const json_t *tl_shape_order_expr(const tl_shape *x, const json_t *e);
/* The expression a GROUP BY key stands for (ordinal, column, alias); NULL
 * when ambiguous. */
const json_t *tl_shape_group_expr(const tl_shape *x, const json_t *e);
/* The width of time_bucket `b` in microseconds, as our macro computes it
 * (engine.c), and its origin (the epoch unless given as a timestamp);
 * false for widths with months, non-positive ones, or other third
 * arguments. Evaluates the constants with DuckDB. */
bool tl_shape_bucket_geometry(const tl_shape *x, const json_t *b, int64_t *width, int64_t *origin);
/* One plain lake table in FROM (no sample, time travel or column aliases),
 * no CTE, sample, QUALIFY or window. */
bool tl_shape_plain_select(const json_t *select);

#endif
