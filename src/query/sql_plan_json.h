/* Reading nodes of DuckDB's serialized syntax tree (json_serialize_sql). */
#ifndef TL_QUERY_SQL_PLAN_JSON_H
#define TL_QUERY_SQL_PLAN_JSON_H

#include <jansson.h>
#include <stdbool.h>

/* The string member `key` of o, "" when absent. */
const char *tl_js_str(const json_t *o, const char *key);

/* Whether o's "type" (or "class", for tl_js_is_class) is the given one. */
bool tl_js_is_type(const json_t *o, const char *type);
bool tl_js_is_class(const json_t *o, const char *cls);

/* Whether e is a reference to `column`, bare or qualified by `alias`
 * (case-insensitive, as DuckDB binds names). */
bool tl_js_names_column(const json_t *e, const char *alias, const char *column);

/* The text of a plain string or integer literal (NULL for anything else):
 * what CAST(literal AS VARCHAR) gives, without asking DuckDB. Malloc'd. */
char *tl_js_literal_text(const json_t *e);

/* Whether two expressions are the same but for where they were written and
 * their aliases. */
bool tl_js_same_expr(const json_t *a, const json_t *b);

/* Whether e is the integer literal `value`. */
bool tl_js_is_int(const json_t *e, long long value);

#endif
