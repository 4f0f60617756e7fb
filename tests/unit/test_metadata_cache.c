/* The lake's cache of parsed table metadata: handed out only for the exact
 * bytes it was parsed from, moved (not copied) to one holder at a time, and
 * taken back only from the holder of the entry's current token. */
#include "table/metadata_cache.h"
#include "unit.h"

static tl_ice_metadata *new_md(const char *location)
{
    tl_ice_field f = {1, "a", false, {.id = TL_ICE_INT}, NULL, NULL, 0};
    tl_ice_schema schema = {0, &f, 1, NULL, 0};
    tl_ice_metadata *md = NULL;
    tl_error err = {0};
    CHECK_OK(tl_ice_metadata_new("u", location, &schema, NULL, NULL, NULL, 1, &md, &err), &err);
    return md;
}

static tl_buf text(const char *s)
{
    tl_buf b = {0};
    CHECK(tl_buf_append_str(&b, s) == 0);
    return b;
}

static void test_hit_only_for_the_same_bytes(void)
{
    tl_md_cache *c = tl_md_cache_new();
    uint64_t token = 1;
    tl_buf v1 = text("{\"v\":1}"), same = text("{\"v\":1}"), other = text("{\"v\":2}");
    CHECK(tl_md_cache_take(c, "t/metadata/v1.metadata.json", &same, &token) == NULL);
    CHECK(token == 0);
    tl_ice_metadata *md = new_md("file:///a");
    tl_md_cache_remember(c, "t/metadata/v1.metadata.json", &v1, &token);
    CHECK(token != 0 && v1.data == NULL); /* the bytes are the cache's now */
    tl_md_cache_give_back(c, token, md);
    uint64_t t2 = 0;
    CHECK(tl_md_cache_take(c, "t/metadata/v1.metadata.json", &other, &t2) == NULL);
    CHECK(tl_md_cache_take(c, "t/metadata/v2.metadata.json", &same, &t2) == NULL);
    CHECK(tl_md_cache_take(c, "t/metadata/v1.metadata.json", &same, &t2) == md);
    CHECK(t2 == token);
    /* held: a second loader misses and parses for itself */
    uint64_t t3 = 0;
    CHECK(tl_md_cache_take(c, "t/metadata/v1.metadata.json", &same, &t3) == NULL);
    tl_md_cache_give_back(c, t2, md);
    CHECK(tl_md_cache_take(c, "t/metadata/v1.metadata.json", &same, &t3) == md);
    tl_md_cache_give_back(c, t3, md);
    tl_buf_free(&same);
    tl_buf_free(&other);
    tl_md_cache_free(c); /* frees md */
}

static void test_a_stale_holder_does_not_come_back(void)
{
    tl_md_cache *c = tl_md_cache_new();
    tl_buf old_bytes = text("old"), new_bytes = text("new"), probe = text("new");
    uint64_t old_token, new_token;
    tl_ice_metadata *old_md = new_md("file:///old"), *new_md_ = new_md("file:///new");
    tl_md_cache_remember(c, "k", &old_bytes, &old_token);
    tl_md_cache_remember(c, "k", &new_bytes, &new_token); /* the file changed meanwhile */
    CHECK(old_token != new_token);
    tl_md_cache_give_back(c, old_token, old_md); /* freed, not kept */
    tl_md_cache_give_back(c, new_token, new_md_);
    uint64_t t = 0;
    CHECK(tl_md_cache_take(c, "k", &probe, &t) == new_md_);
    tl_md_cache_give_back(c, 0, new_md_); /* token 0: freed */
    CHECK(tl_md_cache_take(c, "k", &probe, &t) == NULL);
    tl_buf_free(&probe);
    tl_md_cache_free(c);
}

static void test_least_recently_used_goes(void)
{
    tl_md_cache *c = tl_md_cache_new();
    char key[32];
    uint64_t tokens[TL_MD_CACHE_TABLES + 1];
    for (int i = 0; i <= TL_MD_CACHE_TABLES; i++) {
        snprintf(key, sizeof key, "t%d", i);
        tl_buf b = text(key);
        tl_md_cache_remember(c, key, &b, &tokens[i]);
        tl_md_cache_give_back(c, tokens[i], new_md("file:///x"));
    }
    uint64_t t = 0;
    tl_buf b0 = text("t0"), b1 = text("t1");
    CHECK(tl_md_cache_take(c, "t0", &b0, &t) == NULL); /* the oldest went */
    tl_ice_metadata *md = tl_md_cache_take(c, "t1", &b1, &t);
    CHECK(md != NULL);
    tl_md_cache_give_back(c, t, md);
    CHECK(tl_md_cache_ref(c) == c); /* a second holder: freed with the last */
    tl_md_cache_free(c);
    CHECK(tl_md_cache_take(c, "t1", &b1, &t) == md);
    tl_md_cache_give_back(c, t, md);
    tl_md_cache_free(c);
    tl_md_cache_free(NULL);
    CHECK(tl_md_cache_ref(NULL) == NULL);
    tl_buf_free(&b0);
    tl_buf_free(&b1);
}

UNIT_TESTS(UNIT(test_hit_only_for_the_same_bytes), UNIT(test_a_stale_holder_does_not_come_back),
           UNIT(test_least_recently_used_goes))
