/* The statements Timelake's SQL takes besides a query:
 *   SET [SESSION] timelake.<setting> { = | TO } value   (value DEFAULT resets)
 *   RESET timelake.<setting> | RESET ALL
 *     for the later queries of the lake and namespace (sql_session.h);
 *   SHOW ALL | SHOW TABLES | SHOW COLUMNS { FROM | IN } <table> |
 *   SHOW timelake.<setting> | DESCRIBE <table>
 *     as SELECTs of information_schema (sql_catalog.h);
 *   EXPLAIN [ANALYZE] <query>: what the query would read (sql_explain.h). */
#ifndef TL_QUERY_SQL_STATEMENT_H
#define TL_QUERY_SQL_STATEMENT_H

#include <stdbool.h>

#include "query/engine.h"

typedef enum tl_sql_statement_kind {
    TL_STMT_QUERY,   /* a query: `select` when it stands for SHOW or DESCRIBE */
    TL_STMT_DONE,    /* SET or RESET, done: the result is empty */
    TL_STMT_EXPLAIN, /* EXPLAIN of `query` */
} tl_sql_statement_kind;

typedef struct tl_sql_statement {
    tl_sql_statement_kind kind;
    bool analyze;      /* EXPLAIN ANALYZE */
    const char *query; /* the query to run or explain (into the text given) */
    char *select;      /* SHOW, DESCRIBE: the SELECT that answers it (malloc'd), else NULL */
} tl_sql_statement;

/* Reads (and for SET and RESET, runs) the statement `text` of namespace ns.
 * Errors are TL_ERR_QUERY, naming what was expected. */
tl_status tl_sql_statement_read(tl_query_engine *e, const char *ns, const char *text,
                                tl_sql_statement *out, tl_error *err);
void tl_sql_statement_free(tl_sql_statement *s);

#endif
