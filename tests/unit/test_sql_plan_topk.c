/* The top-k shape recogniser (sql_plan_topk.h) on queries parsed by the
 * embedded DuckDB: what it takes, with the direction, row counts and bucket
 * geometry it reads, and the near misses it must leave alone. */
#include <strings.h>

#include "query/sql_plan_topk.h"
#include "test_table_helpers.h"

static tl_status lookup(void *ctx, const char *schema, const char *table, const tl_sql_at *at,
                        tl_table **out, tl_error *err)
{
    (void)err, (void)at;
    *out = !*schema && strcasecmp(table, "cpu") == 0 ? ctx : NULL;
    return TL_OK;
}

typedef struct expect {
    const char *sql;
    bool shape;
    bool desc;
    int64_t limit, need, width_us, origin_us;
} expect;

#define MINUTE INT64_C(60000000)

static const expect cases[] = {
    {"SELECT time_bucket(INTERVAL '1 minute', time) AS minute, max(v) AS m FROM cpu WHERE time < "
     "TIMESTAMPTZ '2026-01-01 12:00:00+00' GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
     true, true, 5, 5, MINUTE, 0},
    {"SELECT max(v), time_bucket(INTERVAL 5 MINUTE, time) AS b FROM cpu GROUP BY b ORDER BY b "
     "LIMIT 3 OFFSET 4",
     true, false, 3, 7, 5 * MINUTE, 0},
    {"SELECT time_bucket(INTERVAL '1 hour', time, TIMESTAMPTZ '1970-01-01 00:30:00+00') AS h, k, "
     "count(*) FROM cpu GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY h DESC, k LIMIT 10",
     true, true, 10, 10, 60 * MINUTE, 30 * MINUTE},
    {"SELECT * FROM cpu WHERE k = 'a' ORDER BY time DESC LIMIT 2", true, true, 2, 2, 1, 0},
    {"SELECT c.k, c.time AS t FROM cpu c ORDER BY t ASC LIMIT 1", true, false, 1, 1, 1, 0},
    {"SELECT k, abs(v) AS a FROM cpu ORDER BY cpu.time DESC NULLS LAST LIMIT 8", true, true, 8, 8,
     1, 0},
    /* near misses */
    {"SELECT time FROM cpu ORDER BY time DESC", false, 0, 0, 0, 0, 0},
    {"SELECT time FROM cpu ORDER BY time DESC LIMIT 100000", false, 0, 0, 0, 0, 0},
    {"SELECT time FROM cpu ORDER BY time DESC LIMIT '5'", false, 0, 0, 0, 0, 0},
    {"SELECT time FROM cpu ORDER BY k, time DESC LIMIT 5", false, 0, 0, 0, 0, 0},
    {"SELECT DISTINCT time FROM cpu ORDER BY time DESC LIMIT 5", false, 0, 0, 0, 0, 0},
    {"SELECT v AS time FROM cpu ORDER BY time DESC LIMIT 5", false, 0, 0, 0, 0, 0},
    {"SELECT k, max(time) AS time FROM cpu GROUP BY k ORDER BY time DESC LIMIT 5", false, 0, 0, 0,
     0, 0},
    {"SELECT time_bucket(INTERVAL '1 minute', time) AS b, count(*) FROM cpu GROUP BY ROLLUP (b) "
     "ORDER BY b DESC LIMIT 5",
     false, 0, 0, 0, 0, 0},
    {"SELECT time_bucket(INTERVAL '1 month', time) AS b, count(*) FROM cpu GROUP BY 1 ORDER BY 1 "
     "DESC LIMIT 5",
     false, 0, 0, 0, 0, 0},
    {"SELECT time_bucket(INTERVAL '1 hour', time, INTERVAL '30 minutes') AS b, count(*) FROM cpu "
     "GROUP BY 1 ORDER BY 1 DESC LIMIT 5",
     false, 0, 0, 0, 0, 0},
    {"SELECT time_bucket(INTERVAL '1 hour', time) AS b, count(*) FROM cpu GROUP BY k, b ORDER BY "
     "time_bucket(INTERVAL '2 hours', time) DESC LIMIT 5",
     false, 0, 0, 0, 0, 0},
    {"SELECT time, sum(v) OVER (ORDER BY time) FROM cpu ORDER BY time DESC LIMIT 5", false, 0, 0, 0,
     0, 0},
    {"SELECT time FROM cpu WHERE v > (SELECT avg(v) FROM cpu) ORDER BY time DESC LIMIT 5", false, 0,
     0, 0, 0, 0},
    {"WITH c AS (SELECT * FROM cpu) SELECT time FROM c ORDER BY time DESC LIMIT 5", false, 0, 0, 0,
     0, 0},
    {"SELECT time FROM cpu USING SAMPLE 10 ORDER BY time DESC LIMIT 5", false, 0, 0, 0, 0, 0},
    {"SELECT time FROM cpu UNION ALL SELECT time FROM cpu ORDER BY time DESC LIMIT 5", false, 0, 0,
     0, 0, 0},
};

static void test_shapes(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "topk-shape", "cpu", "k", "u", true, NULL);
    tl_query_engine *e;
    tl_error err;
    CHECK_OK(tl_query_engine_get(lake, &e, &err), &err);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const expect *x = &cases[i];
        tl_sql_plan plan;
        CHECK_OK(tl_sql_plan_build(e, x->sql, false, lookup, t, &plan, &err), &err);
        tl_sql_topk k;
        bool shape = tl_sql_topk_shape(e, &plan, &k);
        if (shape != x->shape) fprintf(stderr, "shape %d for: %s\n", shape, x->sql);
        CHECK(shape == x->shape);
        if (shape && x->shape) {
            CHECK(k.desc == x->desc);
            CHECK(k.limit == x->limit && k.need == x->need);
            CHECK(k.width_us == x->width_us && k.origin_us == x->origin_us);
        }
        tl_sql_plan_free(&plan);
    }
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_shapes))
