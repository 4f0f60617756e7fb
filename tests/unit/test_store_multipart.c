/* Multipart uploads. Offline: the part-size arithmetic and the options. Driven
 * by tests/py/test_store_multipart.py against a real server: with
 * TL_TEST_STORE_URL, TL_TEST_STORE_OPTIONS ("k=v;k=v"), TL_TEST_SIZES (object
 * sizes, comma-separated) and TL_TEST_OUT (a directory), it uploads random
 * objects mp/obj-<i>.bin through put_many, writes the same bytes to
 * TL_TEST_OUT/obj-<i>.bin for the test to compare with what the server holds,
 * and prints "upload: ok" or "upload: failed: <message>". */
#include <stdlib.h>

#include "core/random.h"
#include "store/multipart.h"
#include "store/store_options.h"
#include "store_test_options.h"
#include "unit.h"

static tl_status parse(const char *k, const char *v, tl_store_config *c, tl_error *err)
{
    const char *opts[] = {"aws_access_key_id", "a", "aws_secret_access_key", "b", k, v, NULL};
    return tl_store_config_parse("s3://bucket/prefix", opts, c, err);
}

static void test_options(void)
{
    tl_store_config c;
    tl_error err;
    CHECK_OK(parse("max_retries", "3", &c, &err), &err);
    CHECK_INT(c.multipart_threshold, 64LL << 20);
    CHECK_INT(c.multipart_part_size, 16LL << 20);
    CHECK_INT(c.multipart_concurrency, 4);
    tl_store_config_clear(&c);
    CHECK_OK(parse("multipart_threshold", "5MiB", &c, &err), &err);
    CHECK_INT(c.multipart_threshold, 5LL << 20);
    tl_store_config_clear(&c);
    CHECK_INT(parse("multipart_part_size", "0", &c, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "multipart_part_size") != NULL);
    CHECK_INT(parse("multipart_concurrency", "0", &c, &err), TL_ERR_INVALID);
    CHECK_INT(parse("multipart_threshold", "lots", &c, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "multipart_threshold") != NULL);
}

static void test_part_size(void)
{
    tl_remote r;
    memset(&r, 0, sizeof r);
    r.cfg.multipart_threshold = 100;
    r.cfg.multipart_part_size = 64;
    CHECK(!tl_multipart_wanted(&r, 100));
    CHECK(tl_multipart_wanted(&r, 101));
    CHECK_INT(tl_multipart_part_size(&r, 1000, 10000, 1), 64);
    /* 1000 bytes in at most 10 parts: parts of 100 bytes, then aligned to 256. */
    CHECK_INT(tl_multipart_part_size(&r, 1000, 10, 1), 100);
    CHECK_INT(tl_multipart_part_size(&r, 1000, 10, 256), 256);
    /* Never more parts than allowed. */
    size_t p = tl_multipart_part_size(&r, 1001, 10, 1);
    CHECK((1001 + p - 1) / p <= 10);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f == NULL) return;
    CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
}

static void test_upload_from_env(void)
{
    const char *url = getenv("TL_TEST_STORE_URL"), *sizes = getenv("TL_TEST_SIZES");
    const char *out = getenv("TL_TEST_OUT");
    if (url == NULL || sizes == NULL || out == NULL) return;
    char **opts = test_store_options();
    tl_store *s = NULL;
    tl_error err;
    CHECK_OK(tl_store_open(url, (const char *const *)opts, &s, &err), &err);
    test_store_options_free(opts);
    if (s == NULL) return;
    tl_store_put_item items[16];
    char keys[16][32];
    size_t n = 0;
    for (const char *p = sizes; *p && n < 16; n++) {
        char *end;
        size_t len = strtoull(p, &end, 10);
        uint8_t *data = malloc(len ? len : 1);
        tl_random_bytes(data, len);
        snprintf(keys[n], sizeof keys[n], "mp/obj-%zu.bin", n);
        items[n] = (tl_store_put_item){keys[n], data, len};
        p = *end == ',' ? end + 1 : end;
    }
    tl_status st = tl_store_put_many(s, items, n, &err);
    if (st == TL_OK)
        printf("upload: ok\n");
    else
        printf("upload: failed: %s\n", err.message);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/obj-%zu.bin", out, i);
        write_file(path, items[i].data, items[i].len);
        free((void *)items[i].data);
    }
    tl_store_free(s);
}

UNIT_TESTS(UNIT(test_options), UNIT(test_part_size), UNIT(test_upload_from_env))
