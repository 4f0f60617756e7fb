/* Karet's JSON text under allocation failures (alloc_fail.h): a pipeline's
 * config stored in SQLite, a run's record committed with its tables, a job's
 * summary: all of the text or none, whichever allocation fails. jansson's
 * json_dumps left out an object's key it could not write. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Set in the copy of this binary that test_json_parse_whole_or_none starts
 * for the other order of installing the guards. */
static bool karet_first(void)
{
    return getenv("KARET_TEST_GUARD_ORDER") != NULL;
}

static void test_json_text_whole_or_none(void)
{
    if (karet_first()) return; /* the copy's first parse is Karet's */
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

/* Strings whose closing quote is the byte their saved text grows for (16,
 * 32, 64), escapes, numbers: jansson's lexer, its allocations failed, read
 * and wrote past a string's buffers or returned one short of a character. */
static const char parse_doc[] =
    "{\"abcdefghijklmn\":\"abcdefghijklmnopqrstuvwxyz0123\","
    "\"k\":\"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\","
    "\"path_prefix\":\"pipelines/shop/events/2026-11-12T0310-0f0e0d0c.csv\","
    "\"escaped\":\"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00 the rest of a longer line\","
    "\"n\":[1,-2,3.5,1e3,9007199254740993],\"nested\":{\"k\":[{\"a\":\"x\\ty\"},null,true]}}";

typedef json_t *(*parse_fn)(json_error_t *e);

static json_t *karet_parse(json_error_t *e)
{
    return kjson_loadb(parse_doc, strlen(parse_doc), 0, e);
}

static json_t *library_parse(json_error_t *e)
{
    bool nomem;
    json_t *j = tl_json_loadb(parse_doc, strlen(parse_doc), 0, e, &nomem);
    if (j == NULL && nomem) e->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
    return j;
}

/* Each allocation of a parse failed in turn: the document read exactly, or
 * none and out of memory. */
static void sweep_parse(const char *who, parse_fn parse)
{
    json_error_t je;
    json_t *clean = parse(&je);
    CHECK(clean != NULL);
    long failed = 0;
    for (long n = 1;; n++) {
        alloc_fail_arm(n);
        json_t *j = parse(&je);
        alloc_fail_disarm();
        bool fired = alloc_fail_fired();
        bool nomem = j == NULL && json_error_code(&je) == json_error_out_of_memory;
        if (j ? !json_equal(j, clean) : !nomem)
            unit_fail(__FILE__, __LINE__, "%s parse, allocation %ld failed: %s", who, n,
                      j ? "read another document" : je.text);
        json_decref(j);
        if (!fired) break;
        failed++;
    }
    CHECK(failed > 20);
    json_decref(clean);
}

/* Karet's parses and the library's, through both guards: here the
 * library's installed first (the first test parsed with it), then Karet's
 * wrapping it; and in a fresh copy of this binary the other way round. */
static void test_json_parse_whole_or_none(void)
{
    sweep_parse("karet", karet_parse);
    sweep_parse("library", library_parse);
    if (karet_first()) return;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("KARET_TEST_GUARD_ORDER", "karet-first", 1);
        execl("/proc/self/exe", "test_karet_alloc", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
}

/* A missing text (a NULL column of SQLite) is no document, not a crash. */
static void test_json_parse_null_text(void)
{
    json_error_t je;
    CHECK(kjson_loads(NULL, 0, &je) == NULL);
    CHECK(json_error_code(&je) == json_error_invalid_argument);
    json_t *j = kjson_loads("{\"a\":1}", 0, NULL);
    CHECK(json_integer_value(json_object_get(j, "a")) == 1);
    json_decref(j);
}

UNIT_TESTS(UNIT(test_json_text_whole_or_none), UNIT(test_json_parse_whole_or_none),
           UNIT(test_json_parse_null_text))
