/* Parsing the time literals of WHERE clauses in C, as DuckDB casts them to
 * TIMESTAMPTZ in a UTC session, so that pruning a query by its time range
 * costs no round trip through DuckDB. Only the plain ISO 8601 forms are
 * taken; anything else is left to DuckDB. */
#ifndef TL_QUERY_SQL_PLAN_TIME_H
#define TL_QUERY_SQL_PLAN_TIME_H

#include <stdbool.h>
#include <stdint.h>

/* 'YYYY-MM-DD', optionally followed by ' ' or 'T', 'HH:MM[:SS[.ffffff]]'
 * and a zone 'Z', '+HH', '+HHMM' or '+HH:MM' (or '-'). On success *us is
 * microseconds since the Unix epoch (UTC when no zone is given). */
bool tl_sql_parse_time(const char *s, int64_t *us);

#endif
