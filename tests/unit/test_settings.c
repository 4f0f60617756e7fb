/* The settings API: the registry (tl_setting_at), a table's properties
 * (tl_table_properties, tl_table_set_properties) and session settings
 * (tl_sql_options.settings). Behaviour against the reference is in
 * tests/py/test_settings.py and package_contract.py. */
#include <stdlib.h>
#include <string.h>

#include "test_table_helpers.h"
#include "timelake.h"

static const char *property(char **kv, const char *key)
{
    for (size_t i = 0; kv[i]; i += 2)
        if (strcmp(kv[i], key) == 0) return kv[i + 1];
    return NULL;
}

static void test_registry(void)
{
    size_t n = 0;
    bool read_dedup = false;
    for (const tl_setting_info *s; (s = tl_setting_at(n)) != NULL; n++) {
        CHECK(s->name && s->values && s->default_value && s->levels && s->description);
        CHECK(strchr(s->name, '_') == NULL && strncmp(s->name, "timelake.", 9) != 0);
        if (strcmp(s->name, "read-dedup") == 0) {
            read_dedup = true;
            CHECK_STR(s->levels, "table,session");
            CHECK_STR(s->default_value, "true");
        }
    }
    CHECK(n > 20 && read_dedup);
    CHECK(tl_setting_at(n) == NULL && tl_setting_at((size_t)-1) == NULL);
}

static void test_set_properties(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "settings", "iot.t", "device", "u", true, NULL);
    tl_error err;
    const char *set[] = {"read_dedup", "FALSE", "timelake.Retention", "90 days", "owner.team",
                         "a",          NULL};
    CHECK_OK(tl_table_set_properties(t, set, &err), &err);
    CHECK_INT(tl_table_version(t), 2);
    char **kv = NULL;
    CHECK_OK(tl_table_properties(t, &kv, &err), &err);
    CHECK_STR(property(kv, "timelake.read-dedup"), "FALSE");
    CHECK_STR(property(kv, "timelake.retention"), "90 days");
    CHECK_STR(property(kv, "owner.team"), "a");
    CHECK_STR(property(kv, "timelake.time-column"), "time");
    tl_strings_free(kv);

    const char *unset[] = {"timelake.read-dedup", NULL, "owner.team", NULL, NULL};
    CHECK_OK(tl_table_set_properties(t, unset, &err), &err);
    CHECK_OK(tl_table_properties(t, &kv, &err), &err);
    CHECK(property(kv, "timelake.read-dedup") == NULL && property(kv, "owner.team") == NULL);
    CHECK_STR(property(kv, "timelake.retention"), "90 days");
    tl_strings_free(kv);

    /* Refused, and nothing committed. */
    const char *const bad[][3] = {{"read_dedup", "maybe", NULL},
                                  {"bogus", "1", NULL},
                                  {"time_column", "x", NULL},
                                  {"format-version", "1", NULL},
                                  {"timelake.dedup", NULL, NULL},
                                  {"retention", "1 month", NULL},
                                  {"compression_min_saving", "101", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *change[] = {bad[i][0], bad[i][1], NULL};
        CHECK_INT(tl_table_set_properties(t, change, &err), TL_ERR_INVALID);
        CHECK(strstr(err.message, "setting") || strstr(err.message, "timelake."));
        CHECK_INT(tl_table_version(t), 3);
    }
    const char *twice[] = {"read_dedup", "true", "timelake.read-dedup", "false", NULL};
    CHECK_INT(tl_table_set_properties(t, twice, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "given twice") != NULL);
    const char *none[] = {NULL};
    CHECK_OK(tl_table_set_properties(t, none, &err), &err); /* nothing to change: no commit */
    CHECK_INT(tl_table_version(t), 3);

    /* Another handle sees the change. */
    tl_table *again = NULL;
    CHECK_OK(tl_lake_open_table(lake, "iot.t", &again, &err), &err);
    CHECK_INT(tl_table_version(again), 3);
    tl_table_close(again);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_session_settings(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "session", "t", "device", "u", false, NULL);
    tl_table_close(t);
    tl_error err;
    struct ArrowArrayStream out;
    const char *good[] = {"read_dedup", "false", "timelake.newest-first", "False", NULL};
    tl_sql_options o = {.settings = good};
    CHECK_OK(tl_lake_query(lake, "SELECT count(*) FROM t", &o, &out, NULL, &err), &err);
    out.release(&out);
    const char *const bad[][3] = {{"read_dedup", "maybe", NULL},
                                  {"retention", "1d", NULL},
                                  {"bogus", "1", NULL},
                                  {"read_dedup", NULL, NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *s[] = {bad[i][0], bad[i][1], NULL, NULL}; /* the last: a name, no value */
        o.settings = s;
        CHECK_INT(tl_lake_query(lake, "SELECT count(*) FROM t", &o, &out, NULL, &err),
                  TL_ERR_INVALID);
    }
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_registry), UNIT(test_set_properties), UNIT(test_session_settings))
