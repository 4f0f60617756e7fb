/* tl_sql_parse_time against the values DuckDB gives for
 * epoch_us(CAST(s AS TIMESTAMPTZ)) in a UTC session. */
#include "query/sql_plan_time.h"
#include "unit.h"

static void test_values_match_duckdb(void)
{
    static const struct {
        const char *s;
        long long us;
    } cases[] = {
        {"2024-03-02", 1709337600000000LL},
        {"2024-03-02 10:00:00", 1709373600000000LL},
        {"2024-03-02T10:00:00Z", 1709373600000000LL},
        {"2024-03-02 10:00:00.5+02:30", 1709364600500000LL},
        {"1969-12-31 23:59:59.999999", -1LL},
        {"2000-02-29 12:34", 951827640000000LL},
        {"2024-03-02 00:00:00-08", 1709366400000000LL},
        {"1970-01-01 00:00:00+0530", -19800000000LL},
        {"0001-01-01 00:00:00", -62135596800000000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t us = 0;
        CHECK(tl_sql_parse_time(cases[i].s, &us));
        CHECK_INT(us, cases[i].us);
    }
}

static void test_other_forms_are_left_to_duckdb(void)
{
    static const char *const bad[] = {
        "2024-02-30",
        "2023-02-29 00:00:00",
        "2024-13-01",
        "2024-03-02 24:00:00",
        "2024-03-02 10:00:60",
        "2024-03-02 10:00:00.1234567",
        "24-03-02",
        "2024-03-02 10",
        "2024-03-02 UTC",
        "2024-03-02 10:00:00+16",
        "now",
        "",
        "2024-03-02 10:00:00.",
        "2024-3-2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t us;
        if (tl_sql_parse_time(bad[i], &us)) unit_fail(__FILE__, __LINE__, "parsed '%s'", bad[i]);
    }
}

UNIT_TESTS(UNIT(test_values_match_duckdb), UNIT(test_other_forms_are_left_to_duckdb))
