/* A guess, from the text alone, at the tables a query reads, so that they can
 * be loaded while DuckDB (which parses the query) is still starting. Only a
 * guess: what the parser finds is what counts (sql_plan.h). */
#ifndef TL_QUERY_SQL_GUESS_H
#define TL_QUERY_SQL_GUESS_H

#include "core/strlist.h"

/* Appends to out (up to `max` names, no repeats) each name written right
 * after FROM or JOIN as `table` or `schema.table` (plain or double-quoted
 * parts), skipping string literals, comments, table functions, subqueries
 * and the names of the query's common table expressions. Returns 0, or -1
 * when out of memory. */
int tl_sql_guess_tables(const char *query, size_t max, tl_strlist *out);

#endif
