/* Offline checks of the remote-store building blocks: SigV4 against AWS's
 * published example, encodings, XML, storage options, retries, the cache. */
#include <stdlib.h>
#include <unistd.h>

#include "core/random.h"
#include "store/cache.h"
#include "store/digest.h"
#include "store/http.h"
#include "store/retry.h"
#include "store/sigv4.h"
#include "store/store.h"
#include "store/store_options.h"
#include "store/xml.h"
#include "unit.h"

/* "GET Object" example of the AWS SigV4 documentation (Authenticating
 * Requests: Using the Authorization Header, Example: GET Object). */
static void test_sigv4_matches_the_aws_example(void)
{
    char *range = "range: bytes=0-9";
    tl_strlist extra = {.items = &range, .len = 1, .cap = 1};
    tl_sigv4_request req = {
        .method = "GET",
        .host = "examplebucket.s3.amazonaws.com",
        .path = "/test.txt",
        .query = "",
        .payload_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        .amz_date = "20130524T000000Z",
        .region = "us-east-1",
        .service = "s3",
        .headers = &extra,
    };
    tl_aws_credentials cred = {"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                               NULL};
    tl_strlist out = {0};
    tl_error err;
    CHECK_OK(tl_sigv4_sign(&req, &cred, &out, &err), &err);
    CHECK_INT(out.len, 3);
    if (out.len == 3)
        CHECK_STR(out.items[2],
                  "Authorization: AWS4-HMAC-SHA256 "
                  "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                  "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                  "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    tl_strlist_free(&out);
}

static void test_session_token_is_signed_and_sent(void)
{
    tl_sigv4_request req = {"PUT",       "h",  "/b/k", "", "UNSIGNED-PAYLOAD", "20260101T000000Z",
                            "eu-west-1", "s3", NULL};
    tl_aws_credentials cred = {"id", "secret", "tok"};
    tl_strlist out = {0};
    tl_error err;
    CHECK_OK(tl_sigv4_sign(&req, &cred, &out, &err), &err);
    CHECK(tl_strlist_contains(&out, "x-amz-security-token: tok"));
    CHECK(out.len == 4 && strstr(out.items[3], "x-amz-security-token") != NULL);
    tl_strlist_free(&out);
}

static void test_encodings(void)
{
    tl_buf b = {0};
    CHECK(tl_http_encode(&b, "a b/c+é~", true) == 0);
    CHECK_STR((char *)b.data, "a%20b/c%2B%C3%A9~");
    b.len = 0;
    CHECK(tl_http_encode(&b, "a/b", false) == 0);
    CHECK_STR((char *)b.data, "a%2Fb");
    b.len = 0;
    CHECK(tl_base64_encode(&b, "any carnal pleas", 16, 0) == 0);
    CHECK_STR((char *)b.data, "YW55IGNhcm5hbCBwbGVhcw==");
    b.len = 0;
    CHECK(tl_base64_encode(&b, "\xfb\xff", 2, 1) == 0);
    CHECK_STR((char *)b.data, "-_8");
    b.len = 0;
    CHECK(tl_base64_decode(&b, "YW55IGNhcm5hbCBwbGVhcw==", 24) == 0);
    CHECK(b.len == 16 && memcmp(b.data, "any carnal pleas", 16) == 0);
    b.len = 0;
    CHECK(tl_base64_decode(&b, "abc", 3) != 0);
    tl_buf_free(&b);
}

static void test_xml_text(void)
{
    const char *doc = "<R><Key>a&amp;b&#x2F;c</Key><Key>two</Key><Empty></Empty></R>";
    const char *end = NULL;
    char *k = tl_xml_text(doc, "Key", &end);
    CHECK_STR(k, "a&b/c");
    free(k);
    k = tl_xml_text(end, "Key", NULL);
    CHECK_STR(k, "two");
    free(k);
    k = tl_xml_text(doc, "Empty", NULL);
    CHECK_STR(k, "");
    free(k);
    CHECK(tl_xml_text(doc, "Missing", NULL) == NULL);
    CHECK(tl_xml_text(NULL, "Key", NULL) == NULL);
}

static void test_options(void)
{
    const char *opts[] = {"AWS_REGION",   "eu-west-1", "endpoint", "http://h:9/", "allow_http",
                          "true",         "timeout",   "1500ms",   "max_retries", "3",
                          "cache_memory", "2m",        NULL};
    tl_store_config c;
    tl_error err;
    CHECK_OK(tl_store_config_parse("s3://bkt/a/b/", opts, &c, &err), &err);
    CHECK_STR(c.bucket, "bkt");
    CHECK_STR(c.prefix, "a/b");
    CHECK_STR(c.region, "eu-west-1");
    CHECK_STR(c.endpoint, "http://h:9");
    CHECK_INT(c.timeouts.total_ms, 1500);
    CHECK_INT(c.retry.max_retries, 3);
    CHECK_INT(c.cache_memory, 2 << 20);
    tl_store_config_clear(&c);
    const char *bad[] = {"aws_region", "x", "google_bucket", "y", NULL};
    CHECK_INT(tl_store_config_parse("s3://bkt", bad, &c, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "google_bucket") != NULL);
    const char *no_value[] = {"aws_region", NULL};
    CHECK_INT(tl_store_config_parse("s3://bkt", no_value, &c, &err), TL_ERR_INVALID);
    CHECK_INT(tl_store_config_parse("az://c", NULL, &c, &err), TL_OK);
    CHECK(c.kind == TL_STORE_AZURE && c.prefix[0] == '\0');
    tl_store_config_clear(&c);
}

static void test_retry_classification(void)
{
    tl_http_response r = {0};
    r.status = 503;
    CHECK(tl_retry_retryable(TL_OK, &r));
    r.status = 429;
    CHECK(tl_retry_retryable(TL_OK, &r));
    r.status = 412;
    CHECK(!tl_retry_retryable(TL_OK, &r));
    r.status = 404;
    CHECK(!tl_retry_retryable(TL_OK, &r));
    r.status = 400;
    tl_buf_append_str(&r.body, "<Error><Code>SlowDown</Code></Error>");
    CHECK(tl_retry_retryable(TL_OK, &r));
    tl_buf_free(&r.body);
    r.status = 0;
    snprintf(r.transport_error, sizeof r.transport_error, "Connection reset");
    CHECK(tl_retry_retryable(TL_ERR_STORAGE, &r));
    r.transport_error[0] = '\0';
    CHECK(!tl_retry_retryable(TL_ERR_NOMEM, &r));
    tl_retry_policy p = {.max_retries = 3, .base_ms = 1, .max_delay_ms = 2};
    tl_retry_sleep(&p, 30); /* capped, no overflow */
}

/* The cache in front of a local store: immutable objects come from memory
 * or disk (shared by a second cache, as another process would), mutable ones
 * always from the store. */
static void test_cache_layers(void)
{
    char root[600], dir[600];
    snprintf(root, sizeof root, "%s/cache-store", unit_tmpdir());
    snprintf(dir, sizeof dir, "%s/cache-dir", unit_tmpdir());
    tl_error err;
    tl_store *local = NULL, *c1 = NULL, *c2 = NULL;
    CHECK_OK(tl_store_local_open(root, &local, &err), &err);
    CHECK_OK(tl_store_cache_wrap(local, 1 << 20, dir, 0, &c1, &err), &err);
    CHECK_OK(tl_store_put(c1, "t/data/f.parquet", "PAR1 body PAR1", 14, &err), &err);
    CHECK_OK(tl_store_put(c1, "t/metadata/version-hint.text", "1", 1, &err), &err);

    /* A second cache over the same directory, as in another process. */
    tl_store *local2 = NULL;
    CHECK_OK(tl_store_local_open(root, &local2, &err), &err);
    CHECK_OK(tl_store_cache_wrap(local2, 1 << 20, dir, 0, &c2, &err), &err);
    /* Remove the object behind the caches' backs: only a cache can still answer. */
    char path[700];
    snprintf(path, sizeof path, "%s/t/data/f.parquet", root);
    CHECK(unlink(path) == 0);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(c2, "t/data/f.parquet", &b, &err), &err);
    CHECK(b.len == 14 && memcmp(b.data, "PAR1 body PAR1", 14) == 0);
    uint8_t four[4];
    CHECK_OK(tl_store_get_range(c1, "t/data/f.parquet", 10, 4, four, &err), &err);
    CHECK(memcmp(four, "PAR1", 4) == 0);
    uint64_t size = 0;
    CHECK_OK(tl_store_size(c1, "t/data/f.parquet", &size, &err), &err);
    CHECK_INT(size, 14);
    tl_cache_stats s1, s2;
    CHECK(tl_store_cache_stats(c1, &s1) && tl_store_cache_stats(c2, &s2));
    CHECK_INT(s1.hits, 1);
    CHECK_INT(s2.hits, 1);
    CHECK_INT(s1.misses + s2.misses, 0);
    CHECK(!tl_store_cache_stats(local, &s1)); /* not a cache */

    /* Mutable keys are never cached. */
    snprintf(path, sizeof path, "%s/t/metadata/version-hint.text", root);
    CHECK(unlink(path) == 0);
    CHECK_INT(tl_store_get(c1, "t/metadata/version-hint.text", &b, &err), TL_ERR_NOT_FOUND);

    /* A removed immutable object leaves both layers of this cache. */
    CHECK_OK(tl_store_remove(c1, "t/data/f.parquet", &err), &err);
    tl_store_free(c2);
    CHECK_OK(tl_store_local_open(root, &local2, &err), &err);
    CHECK_OK(tl_store_cache_wrap(local2, 0, dir, 0, &c2, &err), &err);
    CHECK_INT(tl_store_get(c2, "t/data/f.parquet", &b, &err), TL_ERR_NOT_FOUND);
    tl_buf_free(&b);
    tl_store_free(c1);
    tl_store_free(c2);
}

static void test_cache_memory_is_bounded(void)
{
    char root[600];
    snprintf(root, sizeof root, "%s/cache-bound", unit_tmpdir());
    tl_error err;
    tl_store *local = NULL, *c = NULL;
    CHECK_OK(tl_store_local_open(root, &local, &err), &err);
    CHECK_OK(tl_store_cache_wrap(local, 64 << 10, NULL, 0, &c, &err), &err);
    char data[10000];
    tl_random_bytes(data, sizeof data);
    for (int i = 0; i < 50; i++) {
        char key[64];
        snprintf(key, sizeof key, "d/%d.parquet", i);
        CHECK_OK(tl_store_put(c, key, data, sizeof data, &err), &err);
    }
    tl_cache_stats s;
    CHECK(tl_store_cache_stats(c, &s));
    CHECK(s.bytes_in_memory <= 64 << 10);
    CHECK(s.entries > 0 && s.entries < 50);
    tl_store_free(c);
}

UNIT_TESTS(UNIT(test_sigv4_matches_the_aws_example), UNIT(test_session_token_is_signed_and_sent),
           UNIT(test_encodings), UNIT(test_xml_text), UNIT(test_options),
           UNIT(test_retry_classification), UNIT(test_cache_layers),
           UNIT(test_cache_memory_is_bounded))
