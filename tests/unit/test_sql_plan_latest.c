/* The newest-row shapes on hostile syntax trees (found by fuzzing the SQL
 * entry point): a window partitioned by, or a GROUP BY of, millions of
 * expressions once sized an array on the stack by their count and overflowed
 * it. The trees are built here as DuckDB's json_serialize_sql writes them, so
 * the test needs no multi-megabyte query text. */
#include <jansson.h>
#include <stdio.h>

#include "query/sql_plan_latest.h"
#include "test_arrow_helpers.h"
#include "test_table_helpers.h"

/* More expressions than an 8 MB stack holds pointers to. */
#define HUGE_N (2u << 20)

static tl_table *make_table(tl_lake **lake, const char *name)
{
    char dir[300];
    snprintf(dir, sizeof dir, "latest-shape-%s", name);
    return ttable_create(lake, dir, name, "k", "u", false, NULL);
}

static json_t *column(const char *name)
{
    return json_pack("{s:s, s:[s]}", "class", "COLUMN_REF", "column_names", name);
}

/* An array holding n references to the key column (one object, shared). */
static json_t *many_keys(size_t n)
{
    json_t *a = json_array(), *k = column("k");
    for (size_t i = 0; i < n; i++) json_array_append(a, k);
    json_decref(k);
    return a;
}

/* row_number() OVER (PARTITION BY k, k, ... ORDER BY time DESC) */
static json_t *window(size_t n_partitions)
{
    return json_pack("{s:s, s:s, s:s, s:[], s:o, s:[{s:s, s:o}]}", "class", "WINDOW", "type",
                     "WINDOW_ROW_NUMBER", "alias", "rn", "children", "partitions",
                     many_keys(n_partitions), "orders", "type", "DESCENDING", "expression",
                     column("time"));
}

static void test_window_with_a_huge_partition_list(void)
{
    tl_lake *lake;
    tl_table *t = make_table(&lake, "window");
    for (size_t n = 1; n <= HUGE_N; n = n == 1 ? HUGE_N : n + 1) {
        json_t *select = json_pack("{s:s, s:[o], s:o}", "type", "SELECT_NODE", "select_list",
                                   window(n), "qualify", json_null());
        tl_strlist nonnull = {0};
        /* the key once is the shape (with QUALIFY rn = 1 from the reader) */
        CHECK(tl_sql_latest_shape(t, "window", select, "rn", &nonnull) == (n == 1));
        tl_strlist_free(&nonnull);
        json_decref(select);
    }
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_group_by_with_a_huge_list(void)
{
    tl_lake *lake;
    tl_table *t = make_table(&lake, "groups");
    json_t *groups = many_keys(HUGE_N);
    json_t *set = json_array();
    for (size_t i = 0; i < HUGE_N; i++) json_array_append_new(set, json_integer((json_int_t)i));
    json_t *select = json_pack("{s:s, s:[o], s:o, s:[o]}", "type", "SELECT_NODE", "select_list",
                               column("k"), "group_expressions", groups, "group_sets", set);
    tl_strlist nonnull = {0};
    CHECK(!tl_sql_latest_shape(t, "groups", select, NULL, &nonnull));
    tl_strlist_free(&nonnull);
    json_decref(select);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_window_with_a_huge_partition_list), UNIT(test_group_by_with_a_huge_list))
