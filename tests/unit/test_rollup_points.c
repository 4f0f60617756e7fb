/* m4 and time_weighted_mean rollups (query/rollup_sql.c, rollup_refresh.c):
 * the stored columns have the reference's types (m4: list<struct<time
 * timestamptz, value double>>; the time-weighted state: list<struct<...>>
 * with every struct field required, the list and its element optional), the
 * definition names the functions, the stored values merge back to the raw
 * answer, and a string column is refused by name with nothing created. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "query/rollup.h"
#include "table/rollup_def.h"
#include "test_table_helpers.h"

static void run_sql(tl_lake *lake, const char *sql)
{
    struct ArrowArrayStream s;
    tl_error err;
    CHECK_OK(tl_lake_sql(lake, sql, NULL, &s, NULL, &err), &err);
    s.release(&s);
}

/* 300 readings of two devices, a minute apart, every seventh value NULL. */
static void append_readings(tl_lake *lake, tl_table *t)
{
    struct ArrowArrayStream rows;
    tl_error err;
    CHECK_OK(tl_lake_query(lake,
                           "SELECT TIMESTAMPTZ '2024-05-01 10:00:00+00' + INTERVAL (i) MINUTE AS "
                           "time, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS device, CASE WHEN "
                           "i % 7 = 3 THEN NULL ELSE CAST((i * 37) % 101 AS DOUBLE) / 4 END AS v "
                           "FROM range(300) r(i)",
                           NULL, &rows, NULL, &err),
             &err);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    CHECK_OK(tl_table_append(t, &rows, &o, &r, &err), &err);
    CHECK_INT(r.rows, 300);
}

static const tl_ice_field *field(const tl_ice_schema *s, const char *name)
{
    for (size_t i = 0; i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return &s->fields[i];
    return NULL;
}

/* A list of structs with these field names, each required or not. */
static void check_points_list(const tl_ice_field *f, const char *const *names, size_t n,
                              bool fields_required)
{
    CHECK(f != NULL);
    CHECK(f->type.id == TL_ICE_LIST && !f->required && f->n_children == 1);
    const tl_ice_field *el = &f->children[0];
    CHECK(el->type.id == TL_ICE_STRUCT && !el->required);
    CHECK_INT((int64_t)el->n_children, (int64_t)n);
    for (size_t i = 0; i < n && i < el->n_children; i++) {
        CHECK(strcmp(el->children[i].name, names[i]) == 0);
        CHECK(el->children[i].required == fields_required);
    }
}

static void test_stored_types_and_values(void)
{
    tl_lake *lake;
    tl_table *raw = ttable_create(&lake, "rollup_points", "h.t", "device", "u", true, NULL);
    append_readings(lake, raw);
    run_sql(lake, "CREATE MATERIALIZED ROLLUP h.r AS SELECT device, time_bucket(INTERVAL "
                  "'1 hour', time) AS bucket, m4(time, v), time_weighted_mean(time, v) AS tw, "
                  "time_weighted_mean(time, v, 'linear') AS tl FROM h.t GROUP BY device, bucket");
    tl_table *r = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open_table(lake, "h.r", &r, &err), &err);
    const tl_ice_schema *s = tl_ice_metadata_current_schema(r->md);
    static const char *const m4[] = {"time", "value"};
    check_points_list(field(s, "m4_v"), m4, 2, false);
    const tl_ice_field *tw = field(s, "tw");
    check_points_list(tw,
                      (const char *const[]){"first_time", "first_value", "first_span", "last_time",
                                            "last_value", "last_span", "area"},
                      7, true);
    CHECK(field(s, "m4_v")->children[0].children[0].type.id == TL_ICE_TIMESTAMPTZ);
    CHECK(tw->children[0].children[0].type.id == TL_ICE_LONG);
    CHECK(tw->children[0].children[6].type.id == TL_ICE_DOUBLE);
    tl_rollup_def d;
    CHECK_OK(tl_rollup_def_parse(r->md, "h.r", &d, &err), &err);
    CHECK_INT((int64_t)d.n_aggs, 3);
    CHECK(d.aggs[0].fn == TL_ROLLUP_M4 && d.aggs[1].fn == TL_ROLLUP_TWM &&
          d.aggs[2].fn == TL_ROLLUP_TWM_LINEAR && strcmp(d.aggs[2].column, "v") == 0);
    /* Each stored row merges back to the raw group's answer (5 hours, 2
     * devices). */
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM h.r"), 10);
    CHECK_INT(ttable_sql_int64(
                  lake, "SELECT count(*) FROM (SELECT device, bucket, m4(m4_v) AS m, "
                        "time_weighted_mean(tw) AS a, time_weighted_mean(tl, 'linear') AS l FROM "
                        "h.r GROUP BY device, bucket) y JOIN (SELECT device, time_bucket(INTERVAL "
                        "'1 hour', time) AS b, m4(time, v) AS m, time_weighted_mean(time, v) AS "
                        "a, time_weighted_mean(time, v, 'linear') AS l FROM h.t GROUP BY device, "
                        "b) x ON y.device = x.device AND y.bucket = x.b WHERE y.m = x.m AND "
                        "abs(y.a - x.a) < 1e-9 AND abs(y.l - x.l) < 1e-9"),
              10);
    tl_rollup_def_free(&d);
    tl_table_close(r);
    tl_table_close(raw);
    tl_lake_close(lake);
}

static void test_a_string_column_is_refused(void)
{
    tl_lake *lake;
    tl_table *raw = ttable_create(&lake, "rollup_points_bad", "h.t", "device", "u", true, NULL);
    append_readings(lake, raw);
    struct ArrowArrayStream s;
    tl_error err;
    CHECK(tl_lake_sql(lake,
                      "CREATE MATERIALIZED ROLLUP h.bad AS SELECT device, time_bucket(INTERVAL "
                      "'1 hour', time) AS bucket, m4(time, device) AS m FROM h.t GROUP BY "
                      "device, bucket",
                      NULL, &s, NULL, &err) == TL_ERR_INVALID);
    CHECK(strstr(err.message, "needs a numeric column") != NULL);
    CHECK(strstr(err.message, "device is not one") != NULL);
    tl_table *t = NULL;
    CHECK(tl_lake_open_table(lake, "h.bad", &t, &err) == TL_ERR_NOT_FOUND);
    tl_table_close(raw);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_stored_types_and_values), UNIT(test_a_string_column_is_refused))
