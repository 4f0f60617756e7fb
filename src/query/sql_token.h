/* A few tokens of SQL, for the statements Timelake reads itself
 * (sql_statement.h, rollup_sql.h) before DuckDB sees the rest. */
#ifndef TL_QUERY_SQL_TOKEN_H
#define TL_QUERY_SQL_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tl_sql_token {
    const char *p;
    size_t n;
    char kind; /* 'w' word, 'q' quoted identifier, 's' string, 'n' number, 'c' other, 0 end */
} tl_sql_token;

/* Skips blanks and comments. */
const char *tl_sql_skip_blanks(const char *p);
/* The token at *at, which moves past it. */
tl_sql_token tl_sql_next(const char **at);
bool tl_sql_is_word(tl_sql_token t, const char *w); /* any case */
bool tl_sql_is_char(tl_sql_token t, char c);
/* The text of a word, quoted identifier or string (unquoted), malloc'd. */
char *tl_sql_text_of(tl_sql_token t);
/* A dotted name (a.b.c, parts maybe quoted) into *out, malloc'd; false when
 * there is none, or out of memory (tl_sql_at_name tells them apart). */
bool tl_sql_read_name(const char **at, char **out);
/* Whether a name starts at p (a word or a quoted identifier). */
bool tl_sql_at_name(const char *p);
/* Whether only blanks and semicolons are left. */
bool tl_sql_at_end(const char *p);

#endif
