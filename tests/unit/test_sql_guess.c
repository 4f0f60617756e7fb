/* The guess at a query's tables made before DuckDB has parsed it. */
#include "query/sql_guess.h"
#include "unit.h"

/* The guesses for q joined by spaces, into buf. */
static const char *guess(const char *q, size_t max, char *buf, size_t size)
{
    tl_strlist l = {0};
    buf[0] = 0;
    if (tl_sql_guess_tables(q, max, &l) != 0) return "(failed)";
    for (size_t i = 0; i < l.len; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? " " : "", l.items[i]);
    tl_strlist_free(&l);
    return buf;
}

#define GUESS(q, expect)                                                                           \
    do {                                                                                           \
        char b_[512];                                                                              \
        CHECK_STR(guess(q, 8, b_, sizeof b_), expect);                                             \
    } while (0)

static void test_names_after_from_and_join(void)
{
    GUESS("SELECT * FROM iot.r WHERE x = 1", "iot.r");
    GUESS("select a from r join other.s using (k) LEFT JOIN \"My\".\"T\" t on true",
          "r other.s My.T");
    GUESS("SELECT 1 FROM bench.q a, x.y b", "bench.q");
    GUESS("SELECT * FROM r UNION ALL SELECT * FROM r", "r");
}

static void test_what_is_no_table(void)
{
    GUESS("SELECT 1", "");
    GUESS("SELECT * FROM read_parquet('f.parquet')", "");
    GUESS("SELECT * FROM (SELECT 1) s", "");
    GUESS("SELECT * FROM c.s.t", "");
    GUESS("SELECT 'FROM fake.t' AS s -- FROM x.y\n /* JOIN z.w */ FROM real.t", "real.t");
    GUESS("SELECT \"FROM a.b\" FROM t2", "t2");
    GUESS("SELECT 'it''s FROM q.q' FROM ok", "ok");
    GUESS("SELECT * FROM \"a.b\".c", "");
    GUESS("SELECT * FROM", "");
    GUESS("SELECT * FROM 'unterminated", "");
}

static void test_common_table_expressions_are_not_tables(void)
{
    GUESS("WITH w AS (SELECT * FROM iot.r), v(a) AS (SELECT 1) SELECT * FROM w JOIN v ON true",
          "iot.r");
    GUESS("WITH w AS (SELECT 1) SELECT * FROM s.w", "s.w");
}

static void test_at_most_max(void)
{
    char b[256];
    CHECK_STR(guess("SELECT * FROM a JOIN b JOIN c JOIN d", 2, b, sizeof b), "a b");
}

UNIT_TESTS(UNIT(test_names_after_from_and_join), UNIT(test_what_is_no_table),
           UNIT(test_common_table_expressions_are_not_tables), UNIT(test_at_most_max))
