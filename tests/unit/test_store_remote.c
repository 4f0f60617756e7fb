/* The object-store contract, run against a real server: pytest
 * (tests/py/test_store_backends.py) starts moto, Azurite or fake-gcs-server and
 * runs this program with TL_TEST_STORE_URL (a fresh bucket prefix) and
 * TL_TEST_STORE_OPTIONS ("key=value;key=value"). Without them (plain ctest)
 * every test returns at once: there is no server to talk to. */
#include <stdlib.h>

#include "core/random.h"
#include "store/cache.h"
#include "store/store.h"
#include "store_test_options.h"
#include "unit.h"

/* Opens the store under test with extra key/value options (a NULL-terminated
 * list) appended; NULL when not configured. */
static tl_store *open_store_with(const char *const *extra)
{
    const char *url = getenv("TL_TEST_STORE_URL");
    if (url == NULL) return NULL;
    char **opts = test_store_options();
    size_t n = 0;
    while (opts[n]) n++;
    for (size_t i = 0; extra && extra[i] && n < 62; i++) opts[n++] = strdup(extra[i]);
    tl_store *s = NULL;
    tl_error err;
    CHECK_OK(tl_store_open(url, (const char *const *)opts, &s, &err), &err);
    test_store_options_free(opts);
    return s;
}

static tl_store *open_store(const char *extra_key, const char *extra_value)
{
    const char *extra[] = {extra_key, extra_value, NULL};
    return open_store_with(extra_key ? extra : NULL);
}

static void test_basic_objects(void)
{
    tl_store *s = open_store("cache_memory", "0");
    if (s == NULL) return;
    tl_error err;
    CHECK_OK(tl_store_put(s, "basic/a/one.txt", "hello world", 11, &err), &err);
    CHECK_OK(tl_store_put(s, "basic/two.txt", "", 0, &err), &err);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "basic/a/one.txt", &b, &err), &err);
    CHECK(b.len == 11 && memcmp(b.data, "hello world", 11) == 0);
    CHECK_OK(tl_store_get(s, "basic/two.txt", &b, &err), &err);
    CHECK_INT(b.len, 0);
    uint8_t part[5];
    CHECK_OK(tl_store_get_range(s, "basic/a/one.txt", 6, 5, part, &err), &err);
    CHECK(memcmp(part, "world", 5) == 0);
    uint64_t size = 0;
    CHECK_OK(tl_store_size(s, "basic/a/one.txt", &size, &err), &err);
    CHECK_INT(size, 11);
    CHECK_INT(tl_store_get(s, "basic/missing", &b, &err), TL_ERR_NOT_FOUND);
    CHECK_INT(tl_store_size(s, "basic/missing", &size, &err), TL_ERR_NOT_FOUND);
    CHECK_INT(tl_store_get_range(s, "basic/missing", 0, 1, part, &err), TL_ERR_NOT_FOUND);
    tl_buf_free(&b);

    tl_strlist keys = {0};
    CHECK_OK(tl_store_list(s, "basic/", &keys, &err), &err);
    tl_strlist_sort(&keys);
    CHECK_INT(keys.len, 2);
    if (keys.len == 2) {
        CHECK_STR(keys.items[0], "basic/a/one.txt");
        CHECK_STR(keys.items[1], "basic/two.txt");
    }
    tl_strlist_free(&keys);
    CHECK_OK(tl_store_remove(s, "basic/a/one.txt", &err), &err);
    CHECK_OK(tl_store_remove(s, "basic/a/one.txt", &err), &err); /* missing: fine */
    CHECK_OK(tl_store_remove_prefix(s, "basic/", &err), &err);
    CHECK_OK(tl_store_list(s, "basic/", &keys, &err), &err);
    CHECK_INT(keys.len, 0);
    tl_strlist_free(&keys);
    tl_store_free(s);
}

static void test_odd_keys(void)
{
    tl_store *s = open_store(NULL, NULL);
    if (s == NULL) return;
    tl_error err;
    const char *key = "odd/a b+c=d&e%f~(1)/x\xc3\xa9.txt";
    CHECK_OK(tl_store_put(s, key, "x", 1, &err), &err);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, key, &b, &err), &err);
    CHECK(b.len == 1 && b.data[0] == 'x');
    tl_buf_free(&b);
    tl_strlist keys = {0};
    CHECK_OK(tl_store_list(s, "odd/", &keys, &err), &err);
    CHECK_INT(keys.len, 1);
    if (keys.len == 1) CHECK_STR(keys.items[0], key);
    tl_strlist_free(&keys);
    CHECK_OK(tl_store_remove(s, key, &err), &err);
    tl_store_free(s);
}

static void test_put_if_absent(void)
{
    tl_store *s = open_store(NULL, NULL);
    if (s == NULL) return;
    tl_error err;
    CHECK_OK(tl_store_put_if_absent(s, "cond/v1.metadata.json", "first", 5, &err), &err);
    CHECK_INT(tl_store_put_if_absent(s, "cond/v1.metadata.json", "second", 6, &err), TL_ERR_EXISTS);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "cond/v1.metadata.json", &b, &err), &err);
    CHECK(b.len == 5 && memcmp(b.data, "first", 5) == 0);
    tl_buf_free(&b);
    CHECK_OK(tl_store_remove_prefix(s, "cond/", &err), &err);
    tl_store_free(s);
}

/* Larger than the multipart threshold: goes up in 8 MiB parts (S3 multipart,
 * Azure block list, GCS compose). */
static void test_large_object(void)
{
    const char *extra[] = {
        "cache_memory", "0", "multipart_threshold", "8MiB", "multipart_part_size", "8MiB", NULL};
    tl_store *s = open_store_with(extra);
    if (s == NULL) return;
    size_t n = 19u << 20;
    uint8_t *data = malloc(n), *back = malloc(1 << 20);
    tl_random_bytes(data, n);
    tl_error err;
    CHECK_OK(tl_store_put(s, "large/blob.bin", data, n, &err), &err);
    uint64_t size = 0;
    CHECK_OK(tl_store_size(s, "large/blob.bin", &size, &err), &err);
    CHECK_INT(size, n);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "large/blob.bin", &b, &err), &err);
    CHECK(b.len == n && memcmp(b.data, data, n) == 0);
    /* A range across the first part boundary (8 MiB). */
    CHECK_OK(tl_store_get_range(s, "large/blob.bin", (8u << 20) - 1000, 1 << 20, back, &err), &err);
    CHECK(memcmp(back, data + (8u << 20) - 1000, 1 << 20) == 0);
    tl_buf_free(&b);
    CHECK_OK(tl_store_remove(s, "large/blob.bin", &err), &err);
    free(data);
    free(back);
    tl_store_free(s);
}

static void test_put_many(void)
{
    tl_store *s = open_store(NULL, NULL);
    if (s == NULL) return;
    enum { N = 24 };
    tl_store_put_item items[N];
    char keys[N][64], bodies[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "many/f-%02d.parquet", i);
        snprintf(bodies[i], sizeof bodies[i], "body %d", i);
        items[i] = (tl_store_put_item){keys[i], bodies[i], strlen(bodies[i])};
    }
    tl_error err;
    CHECK_OK(tl_store_put_many(s, items, N, &err), &err);
    tl_strlist listed = {0};
    CHECK_OK(tl_store_list(s, "many/", &listed, &err), &err);
    CHECK_INT(listed.len, N);
    tl_strlist_free(&listed);
    /* Read back through a fresh store (no cache) so the server's bytes are compared. */
    tl_store *fresh = open_store("cache_memory", "0");
    for (int i = 0; i < N; i++) {
        tl_buf b = {0};
        CHECK_OK(tl_store_get(fresh, keys[i], &b, &err), &err);
        CHECK(b.len == strlen(bodies[i]) && memcmp(b.data, bodies[i], b.len) == 0);
        tl_buf_free(&b);
    }
    tl_store_free(fresh);
    CHECK_OK(tl_store_remove_prefix(s, "many/", &err), &err);
    tl_store_free(s);
}

static void test_cache_serves_immutable_objects(void)
{
    tl_store *s = open_store(NULL, NULL);
    if (s == NULL) return;
    tl_error err;
    tl_cache_stats st0, st1;
    CHECK(tl_store_cache_stats(s, &st0));
    CHECK_OK(tl_store_put(s, "cache/x.parquet", "PAR1data", 8, &err), &err);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "cache/x.parquet", &b, &err), &err);
    uint8_t tail[4];
    CHECK_OK(tl_store_get_range(s, "cache/x.parquet", 4, 4, tail, &err), &err);
    CHECK(memcmp(tail, "data", 4) == 0);
    CHECK(tl_store_cache_stats(s, &st1));
    CHECK_INT(st1.hits - st0.hits, 2);
    CHECK_INT(st1.misses - st0.misses, 0);
    /* Mutable objects always go to the store. */
    CHECK_OK(tl_store_put(s, "cache/hint.text", "1", 1, &err), &err);
    CHECK_OK(tl_store_put(s, "cache/hint.text", "2", 1, &err), &err);
    CHECK_OK(tl_store_get(s, "cache/hint.text", &b, &err), &err);
    CHECK(b.len == 1 && b.data[0] == '2');
    tl_buf_free(&b);
    CHECK_OK(tl_store_remove_prefix(s, "cache/", &err), &err);
    tl_store_free(s);
}

/* The start of an object and its size in one call (one GET on S3). */
static void test_get_first(void)
{
    tl_store *s = open_store("cache_memory", "0");
    if (s == NULL) return;
    tl_error err;
    CHECK_OK(tl_store_put(s, "first/ten.txt", "0123456789", 10, &err), &err);
    CHECK_OK(tl_store_put(s, "first/empty.txt", "", 0, &err), &err);
    uint8_t buf[64];
    size_t got = 99;
    uint64_t total = 0;
    CHECK_OK(tl_store_get_first(s, "first/ten.txt", 4, buf, &got, &total, &err), &err);
    CHECK(got == 4 && total == 10 && memcmp(buf, "0123", 4) == 0);
    CHECK_OK(tl_store_get_first(s, "first/ten.txt", sizeof buf, buf, &got, &total, &err), &err);
    CHECK(got == 10 && total == 10 && memcmp(buf, "0123456789", 10) == 0);
    CHECK_OK(tl_store_get_first(s, "first/ten.txt", 10, buf, &got, &total, &err), &err);
    CHECK(got == 10 && total == 10);
    total = 7;
    CHECK_OK(tl_store_get_first(s, "first/empty.txt", sizeof buf, buf, &got, &total, &err), &err);
    CHECK(got == 0 && total == 0);
    CHECK_INT(tl_store_get_first(s, "first/missing", 4, buf, &got, &total, &err), TL_ERR_NOT_FOUND);
    CHECK_OK(tl_store_remove_prefix(s, "first/", &err), &err);
    tl_store_free(s);
}

UNIT_TESTS(UNIT(test_basic_objects), UNIT(test_get_first), UNIT(test_odd_keys),
           UNIT(test_put_if_absent), UNIT(test_large_object), UNIT(test_put_many),
           UNIT(test_cache_serves_immutable_objects))
