/* The text form of expressions, as the pipeline editor shows them: the JSON
 * syntax tree of a mapping column, a `where` or a record filter written as
 * a formula, and read back. For every valid tree, reading its text gives
 * the same tree again (integers stay integers, reals reals; an absent
 * optional field stays absent).
 *
 *   status >= 500 and not contains(lower(path), "/health")
 *   concat(" ", upper(first), last)      if(amount < 0, "debit", "credit")
 *   cast(bytes, float64) / 1024          dim_ref(categories, description, "category")
 *   col("odd name")                      from_unix(ts, "ms")
 *
 * Operators, loosest first: or; and; not; = (also ==) != (also <>) < <= > >=
 * (not chained); + -; * /; a minus sign before a number. Every other kind is
 * written as a call named after it, with its fields in the order of
 * KARET.md: substring(x, start, length?), parse_date(x, "format"),
 * coalesce(a, ...), concat("sep", a, ...). A bare name is a column; a name
 * that is not an identifier, or is a keyword (and, or, not, true, false,
 * null), is written col("..."). Strings take double quotes with JSON's
 * escapes, or single quotes with '' for a quote. Text that starts with '{'
 * is read as the JSON tree itself. */
#ifndef KARET_EXPR_TEXT_H
#define KARET_EXPR_TEXT_H

#include <jansson.h>
#include <stddef.h>

/* The text of an expression tree (caller frees), or NULL with why in err
 * when the tree is not one (an unknown kind, a missing or unknown field, a
 * field of the wrong type). */
char *kexpr_to_text(const json_t *expr, char *err, size_t errlen);

/* The tree of a text (caller owns), or NULL with why in err and, in *pos,
 * where (in characters from the start of text). */
json_t *kexpr_from_text(const char *text, char *err, size_t errlen, size_t *pos);

#endif
