#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/clock.h"
#include "store/local_link.h"
#include "store/store.h"
#include "unit.h"

static tl_store *open_scratch(const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", unit_tmpdir(), name);
    tl_store *s = NULL;
    tl_error err;
    CHECK_OK(tl_store_open(path, NULL, &s, &err), &err);
    return s;
}

static void test_put_get_list_remove(void)
{
    tl_store *s = open_scratch("basic");
    tl_error err;
    CHECK_OK(tl_store_put(s, "a/b/one.txt", "hello", 5, &err), &err);
    CHECK_OK(tl_store_put(s, "a/two.txt", "x", 1, &err), &err);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "a/b/one.txt", &b, &err), &err);
    CHECK(b.len == 5 && memcmp(b.data, "hello", 5) == 0);
    uint8_t part[3];
    CHECK_OK(tl_store_get_range(s, "a/b/one.txt", 1, 3, part, &err), &err);
    CHECK(memcmp(part, "ell", 3) == 0);
    CHECK_INT(tl_store_get(s, "a/missing", &b, &err), TL_ERR_NOT_FOUND);
    tl_buf_free(&b);

    tl_strlist keys = {0};
    CHECK_OK(tl_store_list(s, "a/", &keys, &err), &err);
    tl_strlist_sort(&keys);
    CHECK_INT(keys.len, 2);
    if (keys.len == 2) {
        CHECK_STR(keys.items[0], "a/b/one.txt");
        CHECK_STR(keys.items[1], "a/two.txt");
    }
    tl_strlist_free(&keys);
    CHECK_OK(tl_store_list(s, "a/t", &keys, &err), &err);
    CHECK_INT(keys.len, 1);
    tl_strlist_free(&keys);

    CHECK_OK(tl_store_remove_prefix(s, "a/", &err), &err);
    CHECK_OK(tl_store_list(s, "", &keys, &err), &err);
    CHECK_INT(keys.len, 0);
    tl_strlist_free(&keys);
    CHECK_OK(tl_store_remove(s, "a/never-there", &err), &err);
    tl_store_free(s);
}

/* A reader: the size, ranged reads of the file it opened (still the file
 * read after the key is replaced, as an open file is), a read past the end
 * refused; a missing key is not found. The same through the generic reader
 * (memory store: ranged gets). */
static void check_reader(tl_store *s, bool keeps_file)
{
    tl_error err;
    CHECK_OK(tl_store_put(s, "r/f.bin", "0123456789", 10, &err), &err);
    tl_store_reader *r = NULL;
    CHECK_OK(tl_store_reader_open(s, "r/f.bin", &r, &err), &err);
    CHECK_INT(r->size, 10);
    uint8_t part[4];
    CHECK_OK(tl_store_reader_read(r, 6, 4, part, &err), &err);
    CHECK(memcmp(part, "6789", 4) == 0);
    CHECK_OK(tl_store_put(s, "r/f.bin", "abcdefghij", 10, &err), &err);
    CHECK_OK(tl_store_reader_read(r, 0, 2, part, &err), &err);
    CHECK(memcmp(part, keeps_file ? "01" : "ab", 2) == 0);
    CHECK(tl_store_reader_read(r, 8, 4, part, &err) != TL_OK);
    tl_store_reader_close(r);
    CHECK_INT(tl_store_reader_open(s, "r/missing", &r, &err), TL_ERR_NOT_FOUND);
    CHECK(r == NULL);
    tl_store_reader_close(NULL);
    CHECK_OK(tl_store_remove(s, "r/f.bin", &err), &err);
}

static void test_reader(void)
{
    tl_store *s = open_scratch("reader");
    check_reader(s, true);
    tl_store_free(s);
    tl_error err;
    CHECK_OK(tl_store_open("memory:///reader", NULL, &s, &err), &err);
    check_reader(s, false);
    tl_store_free(s);
}

/* Many at once: NULL entries skipped, a missing key counted as removed, the
 * rest gone, the others kept. */
static void test_remove_many(void)
{
    tl_store *s = open_scratch("many");
    tl_error err;
    char *keys[24] = {0};
    for (int i = 0; i < 20; i++) {
        char key[32];
        snprintf(key, sizeof key, "d%d/f%02d", i % 3, i);
        CHECK_OK(tl_store_put(s, key, "x", 1, &err), &err);
        if (i % 5 != 4) keys[i] = strdup(key); /* 16 to delete, 4 to keep */
    }
    keys[21] = strdup("d0/never-there");
    CHECK_INT(tl_store_remove_many(s, keys, 24), 17); /* a missing key succeeds too */
    CHECK_INT(tl_store_remove_many(s, keys, 0), 0);
    tl_strlist left = {0};
    CHECK_OK(tl_store_list(s, "", &left, &err), &err);
    tl_strlist_sort(&left);
    CHECK_INT(left.len, 4);
    if (left.len == 4) {
        CHECK_STR(left.items[0], "d0/f09");
        CHECK_STR(left.items[3], "d2/f14");
    }
    tl_strlist_free(&left);
    for (int i = 0; i < 24; i++) free(keys[i]);
    tl_store_free(s);
}

/* Every entry of a directory, temporaries included. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void put_if_absent_is_exclusive(const char *name)
{
    tl_store *s = open_scratch(name);
    tl_error err;
    CHECK_OK(tl_store_put_if_absent(s, "m/v1.json", "one", 3, &err), &err);
    CHECK_INT(tl_store_put_if_absent(s, "m/v1.json", "two", 3, &err), TL_ERR_EXISTS);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "m/v1.json", &b, &err), &err);
    CHECK(b.len == 3 && memcmp(b.data, "one", 3) == 0);
    tl_buf_free(&b);
    /* No temporary file may be left behind by the winner or the loser. */
    tl_strlist keys = {0};
    CHECK_OK(tl_store_list(s, "", &keys, &err), &err);
    CHECK_INT(keys.len, 1);
    tl_strlist_free(&keys);
    char dir[700];
    snprintf(dir, sizeof dir, "%s/%s/m", unit_tmpdir(), name);
    CHECK_INT(entries(dir), 1);
    tl_store_free(s);
}

static void test_put_if_absent_is_exclusive(void)
{
    put_if_absent_is_exclusive("excl");
}

/* Where the file system refuses renameat2(RENAME_NOREPLACE): link, unlink. */
static void test_put_if_absent_is_exclusive_without_renameat2(void)
{
    tl_local_move_new_fallback(true);
    put_if_absent_is_exclusive("excl-link");
    tl_local_move_new_fallback(false);
}

/* What a fence saw: whether another open of the folder could take its lock
 * then (it must not: the fence runs under it), and the status to return. */
typedef struct fence_probe {
    const char *dir;
    int calls;
    bool lock_was_free;
    tl_status answer;
} fence_probe;

static bool lock_is_free(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(fd >= 0);
    bool free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
    CHECK(free_now || errno == EWOULDBLOCK);
    close(fd);
    return free_now;
}

static tl_status probe_fence(void *ctx, tl_error *err)
{
    fence_probe *p = ctx;
    p->calls++;
    p->lock_was_free = lock_is_free(p->dir);
    return p->answer == TL_OK ? TL_OK : tl_error_set(err, p->answer, "fenced off");
}

/* The fence runs under the folder's lock, just before the create; what it
 * refuses creates nothing and leaves no temporary file; the lock is let go. */
static void test_fenced_create(void)
{
    tl_store *s = open_scratch("fenced");
    char dir[700];
    snprintf(dir, sizeof dir, "%s/fenced/m", unit_tmpdir());
    tl_error err;
    CHECK_OK(tl_store_put(s, "m/v1.json", "one", 3, &err), &err);
    fence_probe p = {dir, 0, true, TL_ERR_EXISTS};
    CHECK_INT(tl_store_put_if_absent_fenced(s, "m/v2.json", "two", 3, true, probe_fence, &p, &err),
              TL_ERR_EXISTS);
    CHECK_STR(err.message, "fenced off");
    CHECK(p.calls == 1 && !p.lock_was_free);
    CHECK_INT(entries(dir), 1); /* no v2, no temporary */
    CHECK(lock_is_free(dir));
    p = (fence_probe){dir, 0, true, TL_OK};
    for (int durable = 0; durable < 2; durable++) {
        const char *key = durable ? "m/v3.json" : "m/v2.json";
        CHECK_OK(tl_store_put_if_absent_fenced(s, key, "new", 3, durable, probe_fence, &p, &err),
                 &err);
        CHECK(!p.lock_was_free);
    }
    CHECK_OK(tl_store_sync(s, &err), &err);
    CHECK_INT(p.calls, 2);
    CHECK_INT(
        tl_store_put_if_absent_fenced(s, "m/v3.json", "again", 5, true, probe_fence, &p, &err),
        TL_ERR_EXISTS);
    CHECK_INT(entries(dir), 3);
    CHECK(lock_is_free(dir));
    tl_store_free(s);
}

/* Where the file system has no flock, the fence still runs before the
 * create, and decides it. */
static void test_fenced_create_without_flock(void)
{
    tl_local_lock_dir_fallback(true);
    tl_store *s = open_scratch("fenced-nolock");
    char dir[700];
    snprintf(dir, sizeof dir, "%s/fenced-nolock/m", unit_tmpdir());
    tl_error err;
    CHECK_OK(tl_store_put(s, "m/v1.json", "one", 3, &err), &err);
    fence_probe p = {dir, 0, false, TL_ERR_EXISTS};
    CHECK_INT(tl_store_put_if_absent_fenced(s, "m/v2.json", "two", 3, true, probe_fence, &p, &err),
              TL_ERR_EXISTS);
    CHECK(p.calls == 1 && p.lock_was_free);
    CHECK_INT(entries(dir), 1);
    p.answer = TL_OK;
    CHECK_OK(tl_store_put_if_absent_fenced(s, "m/v2.json", "two", 3, true, probe_fence, &p, &err),
             &err);
    CHECK_INT(entries(dir), 2);
    tl_store_free(s);
    tl_local_lock_dir_fallback(false);
}

static void test_hostile_keys_are_refused(void)
{
    tl_store *s = open_scratch("keys");
    tl_error err;
    const char *bad[] = {"../escape", "a/../../b", "/abs", "a//b", "./a"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_INT(tl_store_put(s, bad[i], "x", 1, &err), TL_ERR_INVALID);
    tl_store_free(s);
}

static void test_location_normalized(void)
{
    tl_store *s = NULL;
    tl_error err;
    CHECK_OK(tl_store_open("file:///tmp/./x/../lake/", NULL, &s, &err), &err);
    CHECK_STR(s->url, "file:///tmp/lake");
    char *u = tl_store_url_of(s, "t/a.parquet");
    CHECK_STR(u, "file:///tmp/lake/t/a.parquet");
    CHECK_STR(tl_store_key_of(s, u), "t/a.parquet");
    CHECK(tl_store_key_of(s, "file:///tmp/lakeside/x") == NULL);
    free(u);
    tl_store_free(s);
    CHECK_INT(tl_store_open("s4://bucket", NULL, &s, &err), TL_ERR_INVALID);
    const char *opts[] = {"bogus", "1", NULL};
    CHECK_INT(tl_store_open("/tmp/x", opts, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "bogus") != NULL);
}

static void test_duration_parse(void)
{
    int64_t us = 0;
    tl_error err;
    const struct {
        const char *text;
        int64_t seconds;
    } good[] = {{"90d", 90 * 86400},     {"45s", 45},           {"1y", 365 * 86400},
                {"90 days", 90 * 86400}, {"1 week", 7 * 86400}, {"2 Weeks", 14 * 86400},
                {"12 HRS", 12 * 3600},   {" 5 mins ", 300},     {"1 year", 365 * 86400},
                {"3 seconds", 3},        {"01d", 86400},        {"0d", 0}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CHECK_OK(tl_duration_parse(good[i].text, &us, &err), &err);
        CHECK_INT(us, good[i].seconds * 1000000);
    }
    const char *bad[] = {"",   "d",       "-1d",  "10",     "1.5h", "1h30m",
                         "5q", "1 month", "1 yr", "1 d ay", "+1d",  "99999999999999999999d"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_INT(tl_duration_parse(bad[i], &us, &err), TL_ERR_INVALID);
}

static void test_duration_format(void)
{
    const struct {
        int64_t seconds;
        const char *text;
    } cases[] = {{90 * 86400, "90d"}, {7 * 86400, "7d"}, {36 * 3600, "36h"}, {7200, "2h"},
                 {90, "90s"},         {120, "2m"},       {0, "0s"},          {86401, "86401s"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        tl_duration_format(cases[i].seconds * 1000000, buf, sizeof buf);
        CHECK(strcmp(buf, cases[i].text) == 0);
    }
}

UNIT_TESTS(UNIT(test_put_get_list_remove), UNIT(test_remove_many), UNIT(test_reader),
           UNIT(test_put_if_absent_is_exclusive),
           UNIT(test_put_if_absent_is_exclusive_without_renameat2), UNIT(test_fenced_create),
           UNIT(test_fenced_create_without_flock), UNIT(test_hostile_keys_are_refused),
           UNIT(test_location_normalized), UNIT(test_duration_parse), UNIT(test_duration_format))
