/* Expressions: the JSON syntax tree of a mapping column, record filter or
 * where filter, type-checked and compiled to a DuckDB SQL expression. Column
 * names become quoted identifiers and literals typed SQL literals, so no user
 * text reaches the SQL unquoted. The semantics (nulls, division by zero,
 * substring indexes, casts...) are written in README.md ("Expressions"). */
#ifndef KARET_EXPR_H
#define KARET_EXPR_H

#include <stdbool.h>

#include "config.h"
#include "strbuf.h"

/* The columns an expression can name. */
typedef struct kscope {
    const kcolumn *columns;
    size_t ncolumns;
    const char *what; /* for messages: "source \"x\"", "table \"t\"" */
    /* The relation the columns are read from: every reference is qualified
     * with it, so that no name binds elsewhere (DuckDB binds "user" in a
     * subquery to current_user before an outer column). NULL: unqualified. */
    const char *relation;
} kscope;

typedef struct kexpr_ctx {
    const kconfig *config;
    kproblems *ps; /* where problems go; NULL: stop at the first (x->failed) */
    kpath path;    /* JSON Pointer of the node being compiled */
    const kscope *scope;
    bool *dims_used;       /* config->ndims flags: dimensions the SQL refers to */
    int depth, subqueries; /* recursion depth; dimension lookups so far (aliases) */
    bool failed;
} kexpr_ctx;

/* Compiles `node` into `out` (appended) and returns its type; problems go to
 * x->ps at x->path and set x->failed. */
ktype kexpr_compile(kexpr_ctx *x, const json_t *node, kbuf *out);

/* Whether a value of type `from` converts to `to` (cast, and a mapping
 * column's value into its table column). */
bool kexpr_can_convert(ktype from, ktype to);
/* Appends the SQL converting the SQL expression `sql` of type `from` to `to`. */
void kexpr_convert(kbuf *out, const char *sql, ktype from, ktype to);

/* The SQL name of a dimension's relation (a CTE the caller defines with
 * columns __karet_k, __karet_v0.., __karet_p, __karet_o: key, values, priority
 * and definition order). */
void kexpr_dim_relation(kbuf *out, const kdimension *d);

/* SQL of the whitespace characters trim and casts remove. */
#define KARET_SQL_WS "(' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13))"

#endif
