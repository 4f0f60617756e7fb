/* The notification server's pure parts: token check, body parsing, key checks
 * and routing. (The HTTP side is tested end to end in test_notify_server.py.) */
#include "../alloc_fail.h"
#include "../unit.h"

#include "../../../server/notify_auth.h"
#include "../../../server/notify_events.h"
#include "../../../server/notify_routes.h"

static void test_auth(void)
{
    CHECK(tl_notify_auth_ok("Bearer s3cret", "s3cret"));
    CHECK(!tl_notify_auth_ok("Bearer s3cre", "s3cret"));
    CHECK(!tl_notify_auth_ok("Bearer s3crett", "s3cret"));
    CHECK(!tl_notify_auth_ok("bearer s3cret", "s3cret"));
    CHECK(!tl_notify_auth_ok("s3cret", "s3cret"));
    CHECK(!tl_notify_auth_ok(NULL, "s3cret"));
    CHECK(!tl_notify_auth_ok("Bearer ", ""));
}

static void test_parse(void)
{
    const char *body = "{\"events\":[{\"eventName\":\"OBJECT_CREATED_PUT\",\"bucket\":\"land\","
                       "\"object\":{\"key\":\"a/1.csv\",\"size\":12,\"etag\":\"\\\"e\\\"\"}},"
                       "{\"eventName\":\"OBJECT_DELETED\",\"bucket\":\"land\","
                       "\"object\":{\"key\":\"a/2.csv\"}}]}";
    tl_notify_events ev;
    tl_error err;
    CHECK(tl_notify_events_parse(body, strlen(body), 10, &ev, &err) == TL_OK);
    CHECK(ev.n == 2);
    CHECK(ev.items[0].created && strcmp(ev.items[0].key, "a/1.csv") == 0);
    CHECK(ev.items[0].size == 12);
    CHECK(!ev.items[1].created && ev.items[1].size == -1);
    tl_notify_events_free(&ev);
    CHECK(tl_notify_events_parse(body, strlen(body), 1, &ev, &err) == TL_ERR_INVALID);
    CHECK(strstr(err.message, "at most 1") != NULL);
    const char *bad[] = {"",
                         "{",
                         "[]",
                         "{\"events\":{}}",
                         "{\"events\":[{\"bucket\":\"b\"}]}",
                         "{\"events\":[{\"eventName\":\"x\",\"bucket\":\"b\",\"object\":"
                         "{\"key\":\"k\",\"size\":\"big\"}}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(tl_notify_events_parse(bad[i], strlen(bad[i]), 10, &ev, &err) == TL_ERR_INVALID);
        CHECK(ev.n == 0 && ev.items == NULL);
    }
}

static void test_keys(void)
{
    tl_error err;
    CHECK(tl_notify_check_object("landing", "a/b/c..d.csv", &err) == TL_OK);
    CHECK(tl_notify_check_object("landing", "../x.csv", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("landing", "a/../x.csv", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("landing", "a/..", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("landing", "a/./x.csv", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("landing", "/x.csv", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("landing", "a//x.csv", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("landing", "a\nb.csv", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("landing", "", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("Landing", "x.csv", &err) == TL_ERR_INVALID);
    CHECK(tl_notify_check_object("a/b", "x.csv", &err) == TL_ERR_INVALID);
}

static void test_routes(void)
{
    tl_notify_route routes[] = {{"a/", "ns.a"}, {"a/b/", "ns.ab"}, {"c/", "ns.c"}};
    tl_notify_config cfg = {.routes = routes, .n_routes = 3, .default_table = "ns.d"};
    CHECK(strcmp(tl_notify_route_table(&cfg, "a/x.csv"), "ns.a") == 0);
    CHECK(strcmp(tl_notify_route_table(&cfg, "a/b/x.csv"), "ns.ab") == 0);
    CHECK(strcmp(tl_notify_route_table(&cfg, "c/x.csv"), "ns.c") == 0);
    CHECK(strcmp(tl_notify_route_table(&cfg, "z.csv"), "ns.d") == 0);
    cfg.default_table = NULL;
    CHECK(tl_notify_route_table(&cfg, "z.csv") == NULL);
}

/* Each allocation of a parse failed in turn: the events read exactly, or
 * out of memory, which the server answers 503 (retry), never invalid, which
 * it answers 400 and the sender drops for good. */
static void test_parse_out_of_memory(void)
{
    const char *body =
        "{\"events\":[{\"eventName\":\"OBJECT_CREATED_PUT\",\"bucket\":\"landing-zone\","
        "\"object\":{\"key\":\"metrics/cpu/2026/12/03/part-0001-\\u00e9t\\u00e9.csv\","
        "\"size\":123456,\"etag\":\"\\\"0f0e0d0c0b0a\\\"\"}},"
        "{\"eventName\":\"OBJECT_DELETED\",\"bucket\":\"landing-zone\","
        "\"object\":{\"key\":\"metrics/cpu/2026/12/03/part-0002.csv\"}}]}";
    const char *key0 = "metrics/cpu/2026/12/03/part-0001-\xc3\xa9t\xc3\xa9.csv";
    long failed = 0;
    for (long n = 1;; n++) {
        tl_notify_events ev;
        tl_error err = {0};
        alloc_fail_arm(n);
        tl_status st = tl_notify_events_parse(body, strlen(body), 10, &ev, &err);
        alloc_fail_disarm();
        bool fired = alloc_fail_fired();
        if (st == TL_OK) {
            CHECK(ev.n == 2 && strcmp(ev.items[0].key, key0) == 0 &&
                  strcmp(ev.items[1].key, "metrics/cpu/2026/12/03/part-0002.csv") == 0 &&
                  ev.items[0].size == 123456);
            tl_notify_events_free(&ev);
        } else {
            if (st != TL_ERR_NOMEM)
                unit_fail(__FILE__, __LINE__, "allocation %ld failed: %s", n, err.message);
            CHECK(ev.n == 0 && ev.items == NULL);
        }
        if (!fired) break;
        failed++;
    }
    CHECK(failed > 10);
}

UNIT_TESTS(UNIT(test_auth), UNIT(test_parse), UNIT(test_parse_out_of_memory), UNIT(test_keys),
           UNIT(test_routes))
