/* The service's credentials and control plane, below HTTP: scrypt hashes in
 * the peer's format (a vector made with Python's hashlib.scrypt), token
 * comparisons, the sign-in throttle, object keys and the database's
 * migrations. */
#include <stdio.h>
#include <stdlib.h>

#include "api.h"
#include "auth.h"
#include "db.h"
#include "unit.h"

/* hashlib.scrypt(b"hunter22", salt=bytes(range(16)), n=1024, r=8, p=1, dklen=64) */
static const char VECTOR[] =
    "scrypt$1024$8$1$AAECAwQFBgcICQoLDA0ODw==$8GnOOkn5hPbrxI/DuDFoVPUKY/Oy5P9ZW2mbSsEOY8rLXKAWAmCSR"
    "hDqCLpppDxnkjahUmpDgq+4n9mHtlEnZg==";

static void test_verify_matches_python_scrypt(void)
{
    CHECK(password_verify("hunter22", VECTOR));
    CHECK(!password_verify("hunter23", VECTOR));
    CHECK(!password_verify("", VECTOR));
}

static void test_hash_round_trip_in_the_peers_format(void)
{
    char h[256], h2[256];
    CHECK_INT(password_hash("correct horse", h, sizeof h), 0);
    CHECK(strncmp(h, "scrypt$131072$8$1$", 18) == 0);
    CHECK(password_verify("correct horse", h));
    CHECK(!password_verify("correct horsf", h));
    CHECK_INT(password_hash("correct horse", h2, sizeof h2), 0);
    CHECK(strcmp(h, h2) != 0); /* a fresh salt each time */
    char why[160];
    CHECK_INT(password_hash_check(h, why, sizeof why), 0);
}

static void test_malformed_hashes_never_verify(void)
{
    static const char *const bad[] = {
        "",
        "scrypt",
        "bcrypt$1024$8$1$AAECAwQFBgcICQoLDA0ODw==$AAAA",
        "scrypt$1000$8$1$AAECAwQFBgcICQoLDA0ODw==$8GnOOkn5hPbrxI/DuDFoVPUKY/Oy5P9ZW2mbSsEOY8o=",
        "scrypt$4194304$8$1$AAECAwQFBgcICQoLDA0ODw==$8GnOOkn5hPbrxI/DuDFoVPUKY/Oy5P9ZW2mbSsEOY8o=",
        "scrypt$1024$8$1$!!!$8GnOOkn5hPbrxI/DuDFoVPUKY/Oy5P9ZW2mbSsEOY8o=",
        "scrypt$1024$8$1$AAECAwQFBgcICQoLDA0ODw==$AAAA",
        "scrypt$1024$0$1$AAECAwQFBgcICQoLDA0ODw==$8GnOOkn5hPbrxI/DuDFoVPUKY/Oy5P9ZW2mbSsEOY8o=",
        "scrypt$-1024$8$1$AAECAwQFBgcICQoLDA0ODw==$8GnOOkn5hPbrxI/DuDFoVPUKY/Oy5P9ZW2mbSsEOY8o="};
    char why[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(!password_verify("hunter22", bad[i]));
        CHECK_INT(password_hash_check(bad[i], why, sizeof why), -1);
    }
}

static void test_constant_time_equal(void)
{
    CHECK(ct_equal("secret-token", "secret-token"));
    CHECK(!ct_equal("secret-toke", "secret-token"));
    CHECK(!ct_equal("secret-tokens", "secret-token"));
    CHECK(!ct_equal("Secret-token", "secret-token"));
    CHECK(!ct_equal("", "x"));
}

static void test_tokens_are_random_and_hashed(void)
{
    char a[64], b[64], ha[65], hb[65];
    CHECK_INT(random_token(a), 0);
    CHECK_INT(random_token(b), 0);
    CHECK_INT(strlen(a), 43);
    CHECK(strcmp(a, b) != 0);
    CHECK(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == 43);
    sha256_hex(a, ha);
    sha256_hex(b, hb);
    CHECK_INT(strlen(ha), 64);
    CHECK(strcmp(ha, hb) != 0);
    sha256_hex("abc", ha);
    CHECK_STR(ha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_throttle_buckets_and_global_cap(void)
{
    auth_throttle *t = throttle_new();
    int busy;
    for (int i = 0; i < 5; i++) {
        CHECK_INT(throttle_acquire(t, "1.2.3.4", 1000, &busy), 0);
        throttle_release(t);
    }
    int wait = throttle_acquire(t, "1.2.3.4", 1000, &busy);
    CHECK(wait >= 1 && wait <= 15 && !busy);
    CHECK_INT(throttle_acquire(t, "1.2.3.4", 1000 + 15000, &busy), 0); /* one back */
    throttle_release(t);
    /* Two verifications in flight: the third client waits, whoever it is. */
    CHECK_INT(throttle_acquire(t, "a", 0, &busy), 0);
    CHECK_INT(throttle_acquire(t, "b", 0, &busy), 0);
    CHECK(throttle_acquire(t, "c", 0, &busy) > 0 && busy);
    throttle_release(t);
    CHECK_INT(throttle_acquire(t, "c", 0, &busy), 0);
    throttle_release(t);
    throttle_release(t);
    throttle_reset(t, "1.2.3.4");
    CHECK_INT(throttle_acquire(t, "1.2.3.4", 16000, &busy), 0);
    throttle_release(t);
    throttle_free(t);
}

static void test_object_keys_and_slugs(void)
{
    static const char *const good[] = {"a", "pipelines/web/events/x.csv", "a b/c..d", ".hidden/x"};
    static const char *const bad[] = {"",     "/etc/passwd", "../x", "a/../b", "a/./b",
                                      "a//b", "a\\b",        "a\nb", "./a"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) CHECK(api_key_ok(good[i]));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(!api_key_ok(bad[i]));
    CHECK(api_slug_ok("web"));
    CHECK(api_slug_ok("a-b_c9"));
    CHECK(!api_slug_ok("Web"));
    CHECK(!api_slug_ok("-web"));
    CHECK(!api_slug_ok("a.b"));
    CHECK(!api_slug_ok(""));
}

static void test_database_migrates_and_reopens(void)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/karet.db", unit_tmpdir());
    karet_db *db = NULL;
    CHECK_INT(db_open(path, &db, err, sizeof err), DB_OK);
    CHECK_INT(db_schema_version(db), 2);
    CHECK_INT(db_exec(db, NULL, "INSERT INTO pipelines (slug, name, created_at) VALUES (?, ?, ?)",
                      "ssi", "web", "Web", (int64_t)5),
              DB_OK);
    CHECK_INT(db_exec(db, NULL, "INSERT INTO pipelines (slug, name, created_at) VALUES (?, ?, ?)",
                      "ssi", "web", "Again", (int64_t)6),
              DB_CONSTRAINT);
    db_close(db);
    CHECK_INT(db_open(path, &db, err, sizeof err), DB_OK);
    json_t *row =
        db_query_one(db, "SELECT name, created_at FROM pipelines WHERE slug = ?", "s", "web");
    CHECK(row != NULL);
    CHECK_STR(json_string_value(json_object_get(row, "name")), "Web");
    CHECK_INT(json_integer_value(json_object_get(row, "created_at")), 5);
    json_decref(row);
    json_t *mode = db_query_one(db, "PRAGMA journal_mode", "");
    CHECK_STR(json_string_value(json_object_get(mode, "journal_mode")), "wal");
    json_decref(mode);
    /* A database from a newer karet is refused rather than misread. */
    CHECK_INT(db_exec(db, NULL, "PRAGMA user_version = 99", ""), DB_OK);
    db_close(db);
    CHECK_INT(db_open(path, &db, err, sizeof err), DB_ERR);
    CHECK(strstr(err, "newer") != NULL);
}

UNIT_TESTS(UNIT(test_verify_matches_python_scrypt), UNIT(test_hash_round_trip_in_the_peers_format),
           UNIT(test_malformed_hashes_never_verify), UNIT(test_constant_time_equal),
           UNIT(test_tokens_are_random_and_hashed), UNIT(test_throttle_buckets_and_global_cap),
           UNIT(test_object_keys_and_slugs), UNIT(test_database_migrates_and_reopens))
