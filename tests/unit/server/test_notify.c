/* The notification server's pure parts: token check, body parsing, key checks
 * and routing. (The HTTP side is tested end to end in test_notify_server.py.) */
#include "../alloc_fail.h"
#include "../unit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../../server/notify_auth.h"
#include "../../../server/notify_events.h"
#include "../../../server/notify_parse.h"
#include "../../../server/notify_routes.h"
#include "arrow/array.h"
#include "core/buf.h"
#include "core/parallel.h"

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

/* ---- Parsing an object in halves ---- */

static const char *COLUMNS[] = {"time", "device", "temp", "n"};
static const char *FORMATS[] = {"tsu:UTC", "U", "g", "l"};

/* Every row of the parse, one line each, so two parses compare as text. */
static void render(struct ArrowSchema *schema, struct ArrowArray *batches, size_t n, tl_buf *out)
{
    for (size_t b = 0; b < n; b++) {
        tl_array_view v[4];
        for (int c = 0; c < 4; c++)
            CHECK(tl_array_view_init(&v[c], schema->children[c], batches[b].children[c], NULL) ==
                  TL_OK);
        for (int64_t r = 0; r < batches[b].length; r++) {
            for (int c = 0; c < 4; c++) {
                const tl_array_view *x = &v[c];
                int64_t len;
                if (tl_view_is_null(x, r))
                    tl_buf_append_str(out, "null");
                else if (c == 1) {
                    const uint8_t *bytes = tl_view_bytes(x, r, &len);
                    tl_buf_append(out, bytes, (size_t)len);
                } else if (c == 2)
                    tl_buf_printf(out, "%.17g", ((const double *)x->values)[x->offset + r]);
                else
                    tl_buf_printf(out, "%" PRId64, ((const int64_t *)x->values)[x->offset + r]);
                tl_buf_append_byte(out, c == 3 ? '\n' : '|');
            }
        }
        for (int c = 0; c < 4; c++) tl_array_view_free(&v[c]);
    }
}

/* Parses text as split_bytes says: the batches' count and the rows as text. */
static tl_status parse_text(const char *text, const char *format, const char *split_bytes,
                            size_t *n_batches, tl_buf *rows, tl_error *err)
{
    struct ArrowSchema target;
    tl_schema_init(&target, "+s", "", 0, 4, NULL);
    for (int i = 0; i < 4; i++)
        tl_schema_init(target.children[i], FORMATS[i], COLUMNS[i], ARROW_FLAG_NULLABLE, 0, NULL);
    setenv("TIMELAKE_NOTIFY_SPLIT_BYTES", split_bytes, 1);
    struct ArrowSchema schema;
    struct ArrowArray *batches = NULL;
    tl_status st = tl_notify_parse_memory((const uint8_t *)text, strlen(text), "s3://b/k.csv",
                                          format, &target, &schema, &batches, n_batches, err);
    unsetenv("TIMELAKE_NOTIFY_SPLIT_BYTES");
    tl_schema_release(&target);
    if (st != TL_OK) return st;
    render(&schema, batches, *n_batches, rows);
    for (size_t i = 0; i < *n_batches; i++) tl_array_release(&batches[i]);
    free(batches);
    tl_schema_release(&schema);
    return TL_OK;
}

/* rows rows of CSV (or TSV), `bad` (if not NULL) as row bad_row's text. */
static char *make_text(int rows, char sep, int bad_row, const char *bad, const char *quoted)
{
    tl_buf b = {0};
    tl_buf_printf(&b, "time%cdevice%ctemp%cn\n", sep, sep, sep);
    for (int i = 0; i < rows; i++) {
        if (i == bad_row) {
            tl_buf_printf(&b, "%s\n", bad);
            continue;
        }
        tl_buf_printf(&b, "2026-01-01T00:%02d:%02dZ%cdev-%d%c%s%c%d\n", i / 60 % 60, i % 60, sep,
                      i % 7, sep, i % 11 ? "1.25" : "", sep, i);
        if (quoted && i == rows - 2) tl_buf_printf(&b, "%s\n", quoted);
    }
    tl_buf_append_byte(&b, 0);
    return (char *)b.data;
}

static void test_parse_in_halves(void)
{
    tl_error err;
    struct {
        const char *format;
        char sep;
        const char *quoted;
        size_t batches; /* with the split at 1 KiB */
    } cases[] = {{"csv", ',', NULL, 2},
                 {"tsv", '\t', NULL, 2},
                 /* A quote anywhere (here near the end, its line end quoted): whole. */
                 {"csv", ',', "2026-01-01T00:00:00Z,\"a\nb\",1.5,7", 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *text = make_text(3000, cases[k].sep, -1, NULL, cases[k].quoted);
        size_t n_split = 0, n_whole = 0;
        tl_buf split = {0}, whole = {0};
        CHECK(parse_text(text, cases[k].format, "1024", &n_split, &split, &err) == TL_OK);
        CHECK(parse_text(text, cases[k].format, "0", &n_whole, &whole, &err) == TL_OK);
        CHECK_INT(n_split, tl_cpu_count() > 1 ? cases[k].batches : 1); /* a core to spare */
        CHECK_INT(n_whole, 1);
        CHECK(split.len == whole.len && memcmp(split.data, whole.data, split.len) == 0);
        CHECK(whole.len > 3000 * 20);
        tl_buf_free(&split);
        tl_buf_free(&whole);
        free(text);
    }
    /* A bad row in the second half: the whole's message (its line number),
     * nothing else. */
    char *text = make_text(3000, ',', 2500, "2026-01-01T00:00:00Z,d,not-a-number,1", NULL);
    size_t n = 0;
    tl_buf rows = {0};
    tl_error whole_err;
    CHECK(parse_text(text, "csv", "0", &n, &rows, &whole_err) == TL_ERR_INVALID);
    CHECK(parse_text(text, "csv", "1024", &n, &rows, &err) == TL_ERR_INVALID);
    CHECK_STR(err.message, whole_err.message);
    CHECK(strstr(err.message, "2502") != NULL); /* its line: the header is line 1 */
    CHECK(rows.len == 0);
    free(text);
}

UNIT_TESTS(UNIT(test_auth), UNIT(test_parse), UNIT(test_parse_out_of_memory), UNIT(test_keys),
           UNIT(test_routes), UNIT(test_parse_in_halves))
