/* The in-memory store (memory://) against the store contract, the read
 * cache's aligned blocks over it, and the parse of the reference's option
 * names that have no server to show their effect here. */
#include <stdlib.h>

#include "store/cache.h"
#include "store/store.h"
#include "store/store_options.h"
#include "unit.h"

static tl_store *open_memory(void)
{
    tl_store *s = NULL;
    tl_error err;
    CHECK_OK(tl_store_open("memory:///scratch/", NULL, &s, &err), &err);
    return s;
}

static void test_memory_objects(void)
{
    tl_store *s = open_memory();
    tl_error err;
    CHECK_STR(s->url, "memory:///scratch");
    CHECK(tl_store_is_local(s) == false && s->read_only == false);
    CHECK_OK(tl_store_put(s, "a/b/one.txt", "hello", 5, &err), &err);
    CHECK_OK(tl_store_put(s, "a/two.txt", "x", 1, &err), &err);
    CHECK_OK(tl_store_put(s, "a/two.txt", "xy", 2, &err), &err); /* replaced */
    CHECK_OK(tl_store_put(s, "b.txt", "", 0, &err), &err);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "a/two.txt", &b, &err), &err);
    CHECK(b.len == 2 && memcmp(b.data, "xy", 2) == 0);
    uint8_t part[3];
    CHECK_OK(tl_store_get_range(s, "a/b/one.txt", 1, 3, part, &err), &err);
    CHECK(memcmp(part, "ell", 3) == 0);
    CHECK_INT(tl_store_get_range(s, "a/b/one.txt", 3, 3, part, &err), TL_ERR_STORAGE);
    CHECK_INT(tl_store_get(s, "a/missing", &b, &err), TL_ERR_NOT_FOUND);
    tl_buf_free(&b);
    CHECK_INT(tl_store_put_if_absent(s, "a/two.txt", "z", 1, &err), TL_ERR_EXISTS);
    CHECK_OK(tl_store_put_if_absent(s, "a/three.txt", "z", 1, &err), &err);

    tl_store_listing l = {0};
    CHECK_OK(tl_store_list_objects(s, "a/", false, &l, &err), &err);
    tl_store_listing_sort(&l);
    CHECK_INT(l.len, 3); /* a/b/ once, a/three.txt, a/two.txt */
    if (l.len == 3) {
        CHECK(strcmp(l.items[0].key, "a/b/") == 0 && l.items[0].is_folder);
        CHECK(strcmp(l.items[2].key, "a/two.txt") == 0 && l.items[2].size == 2);
        CHECK(l.items[2].etag != NULL);
    }
    tl_store_listing_free(&l);
    tl_store_listed one;
    CHECK_OK(tl_store_stat(s, "a/two.txt", &one, &err), &err);
    char *etag = strdup(one.etag);
    tl_store_listed_clear(&one);
    CHECK_OK(tl_store_put(s, "a/two.txt", "xy", 2, &err), &err);
    CHECK_OK(tl_store_stat(s, "a/two.txt", &one, &err), &err);
    CHECK(strcmp(etag, one.etag) != 0); /* a new write, a new tag */
    tl_store_listed_clear(&one);
    free(etag);

    CHECK_OK(tl_store_remove_prefix(s, "a/", &err), &err);
    tl_strlist keys = {0};
    CHECK_OK(tl_store_list(s, "", &keys, &err), &err);
    CHECK_INT(keys.len, 1);
    if (keys.len == 1) CHECK_STR(keys.items[0], "b.txt");
    tl_strlist_free(&keys);
    tl_store_free(s);

    /* Each store opened on the URL starts empty; no options are taken. */
    s = open_memory();
    CHECK_INT(tl_store_get(s, "b.txt", &b, &err), TL_ERR_NOT_FOUND);
    tl_store_free(s);
    const char *opts[] = {"timelake_cache", "memory", NULL};
    CHECK_INT(tl_store_open("memory://", opts, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "\"timelake_cache\"") != NULL);
}

/* Ranged reads through the cache in aligned blocks give the bytes asked for,
 * at any offset and length, and each block is fetched once. */
static void test_cache_blocks(void)
{
    tl_store *inner = open_memory(), *s = NULL;
    tl_error err;
    enum { SIZE = 10000, BLOCK = 1024 };
    uint8_t *data = malloc(SIZE), got[3000];
    for (size_t i = 0; i < SIZE; i++) data[i] = (uint8_t)(i * 7 + i / 251);
    CHECK_OK(tl_store_put(inner, "t/f.parquet", data, SIZE, &err), &err);
    tl_cache_blocks blocks = {BLOCK, 2 * BLOCK};
    CHECK_OK(tl_store_cache_wrap_blocks(inner, 1 << 20, NULL, 0, &blocks, &s, &err), &err);
    const struct {
        uint64_t off;
        size_t len;
    } reads[] = {{0, 1},     {1000, 100},  {1020, 10}, {5000, 3000},
                 {9990, 10}, {9000, 1000}, {1, 2999},  {3000, 1500}};
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        memset(got, 0, sizeof got);
        CHECK_OK(tl_store_get_range(s, "t/f.parquet", reads[i].off, reads[i].len, got, &err), &err);
        CHECK(memcmp(got, data + reads[i].off, reads[i].len) == 0);
    }
    CHECK_INT(tl_store_get_range(s, "t/f.parquet", 9999, 2, got, &err), TL_ERR_STORAGE);
    /* Every block has been read now: removing the object from below shows
     * that the cache answers alone. */
    CHECK_OK(tl_store_remove(inner, "t/f.parquet", &err), &err);
    CHECK_OK(tl_store_get_range(s, "t/f.parquet", 4000, 3000, got, &err), &err);
    CHECK(memcmp(got, data + 4000, 3000) == 0);
    tl_cache_stats st;
    CHECK(tl_store_cache_stats(s, &st));
    CHECK(st.hits > 0);
    tl_store_free(s);
    free(data);
}

static tl_status parse(const char *url, const char *key, const char *value, tl_store_config *c,
                       tl_error *err)
{
    const char *opts[] = {key, value, NULL};
    return tl_store_config_parse(url, key ? opts : NULL, c, err);
}

static void test_option_names(void)
{
    tl_store_config c;
    tl_error err;
    CHECK_OK(parse("s3://b/p", "aws_endpoint_url_s3", "https://h:9/", &c, &err), &err);
    CHECK_STR(c.endpoint, "https://h:9");
    tl_store_config_clear(&c);
    CHECK_OK(parse("s3://b/p", "aws_server_side_encryption", "aws:KMS", &c, &err), &err);
    CHECK_STR(c.sse, "aws:kms");
    tl_store_config_clear(&c);
    CHECK_INT(parse("s3://b/p", "aws_server_side_encryption", "sse:kms", &c, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "aws_server_side_encryption") != NULL);
    CHECK_OK(parse("gs://b/p", "google_skip_signature", "true", &c, &err), &err);
    CHECK(c.skip_signature);
    tl_store_config_clear(&c);
    CHECK_INT(parse("gs://b/p", "aws_unsigned_payload", "true", &c, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "\"aws_unsigned_payload\"") != NULL);
    /* timelake_cache: off clears the sizes, memory the directory. */
    const char *off[] = {"timelake_cache", "off", "cache_dir", "/tmp/x", NULL};
    CHECK_OK(tl_store_config_parse("s3://b/p", off, &c, &err), &err);
    CHECK(c.cache_memory == 0 && c.cache_dir == NULL);
    tl_store_config_clear(&c);
    const char *mem[] = {"timelake_cache", "memory", "timelake_cache_dir", "/tmp/x", NULL};
    CHECK_OK(tl_store_config_parse("s3://b/p", mem, &c, &err), &err);
    CHECK(c.cache_memory > 0 && c.cache_dir == NULL);
    tl_store_config_clear(&c);
    CHECK_INT(parse("s3://b/p", "timelake_cache_memory_bytes", "1MiB", &c, &err), TL_ERR_INVALID);
    /* http(s): the host is the endpoint; versions go by the hint. */
    CHECK_OK(parse("https://cdn.example:8443/lakes/one/", NULL, NULL, &c, &err), &err);
    CHECK(c.kind == TL_STORE_HTTP && c.version_hint);
    CHECK_STR(c.endpoint, "https://cdn.example:8443");
    CHECK_STR(c.prefix, "lakes/one");
    tl_store_config_clear(&c);
    CHECK_INT(parse("http://h/x", "aws_region", "x", &c, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "\"aws_region\"") != NULL);
}

/* An http(s) warehouse refuses every write before any request, naming itself. */
static void test_http_store_is_read_only(void)
{
    tl_store *s = NULL;
    tl_error err;
    CHECK_OK(tl_store_open("http://127.0.0.1:9/lake", NULL, &s, &err), &err);
    CHECK(s->read_only && s->version_hint);
    CHECK_INT(tl_store_put(s, "a.txt", "x", 1, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "read-only") && strstr(err.message, "http://127.0.0.1:9/lake"));
    CHECK_INT(tl_store_check_writable(s, "append to x", &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "cannot append to x"));
    tl_store_free(s);
}

UNIT_TESTS(UNIT(test_memory_objects), UNIT(test_cache_blocks), UNIT(test_option_names),
           UNIT(test_http_store_is_read_only))
