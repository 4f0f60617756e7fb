/* information_schema over the lake, as the reference's (DataFusion's):
 * tables (the lake's, and these views), columns (each table's, with the SQL
 * type DuckDB reads it as; ordinal_position from 0, as the reference's),
 * schemata (the namespaces with tables) and df_settings (the settings a
 * session may set: name, the value in force, description). A query that
 * may read only its namespace sees only that namespace's tables. */
#ifndef TL_QUERY_SQL_CATALOG_H
#define TL_QUERY_SQL_CATALOG_H

#include <stdbool.h>

#include "query/engine.h"

/* What a query sees of the lake. */
typedef struct tl_sql_scope {
    tl_lake *lake;
    const char *ns;
    bool only_namespace;
    const char *const *settings; /* the session settings in force (sql_session.h) */
} tl_sql_scope;

/* The SELECT (malloc'd) of information_schema view `name`, its rows as they
 * are now; TL_ERR_NOT_FOUND for a view there is not. */
tl_status tl_sql_catalog_view(const tl_sql_scope *s, const char *name, char **out, tl_error *err);

#endif
