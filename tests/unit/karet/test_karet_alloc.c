/* Karet's JSON text under allocation failures (alloc_fail.h): a pipeline's
 * config stored in SQLite, a run's record committed with its tables, a job's
 * summary: all of the text or none, whichever allocation fails. jansson's
 * json_dumps left out an object's key it could not write. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fail.h"
#include "core/json_text.h"
#include "json_text.h"
#include "unit.h"

/* A pipeline's config, as the API stores it. */
static const char config_text[] =
    "{\"name\":\"orders\",\"sources\":[{\"name\":\"raw\",\"prefix\":\"in/orders/\","
    "\"format\":\"csv\",\"columns\":[{\"name\":\"id\",\"type\":\"bigint\"},"
    "{\"name\":\"placed_at\",\"type\":\"timestamp\"},{\"name\":\"amount\",\"type\":\"double\"}]}],"
    "\"tables\":[{\"name\":\"daily\",\"from\":\"raw\",\"key\":[\"id\"],\"time\":\"placed_at\","
    "\"columns\":{\"total\":{\"op\":\"sum\",\"args\":[{\"col\":\"amount\"}]}}}]}";

static void test_json_text_whole_or_none(void)
{
    /* jansson allocates through the library's counting hook once the
     * library has read JSON, as it has in karet's service. */
    json_error_t je;
    bool nomem;
    json_decref(tl_json_loadb("{}", 2, 0, &je, &nomem));
    json_t *j = json_loads(config_text, 0, &je);
    CHECK(j != NULL);
    const size_t flags[] = {JSON_COMPACT, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII,
                            JSON_INDENT(1)};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        char *full = kjson_dumps(j, flags[f]);
        CHECK(full != NULL);
        long failed = 0;
        for (long n = 1;; n++) {
            alloc_fail_arm(n);
            char *text = kjson_dumps(j, flags[f]);
            alloc_fail_disarm();
            bool fired = alloc_fail_fired();
            if (text && strcmp(text, full) != 0)
                unit_fail(__FILE__, __LINE__, "flags %zu, allocation %ld failed: wrote %s",
                          flags[f], n, text);
            CHECK(text != NULL || fired);
            free(text);
            if (!fired) break;
            failed++;
        }
        CHECK(failed > 3);
        free(full);
    }
    json_decref(j);
}

UNIT_TESTS(UNIT(test_json_text_whole_or_none))
