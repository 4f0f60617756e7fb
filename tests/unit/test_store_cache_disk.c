/* The disk layer of the read cache: bounded (least recently used files go
 * first), byte ranges kept on disk for other processes, a file evicted
 * under a reader answered from the store instead; and batch reads
 * (tl_store_get_many) with per-item outcomes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/cache.h"
#include "store/store.h"
#include "unit.h"

static long long dir_bytes(const char *dir, int *files)
{
    DIR *d = opendir(dir);
    long long total = 0;
    *files = 0;
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.') continue;
        char p[1200];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (stat(p, &sb) == 0) total += sb.st_size, (*files)++;
    }
    if (d) closedir(d);
    return total;
}

static void fill(char *buf, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + (i * 7 + (size_t)seed) % 26);
}

static void test_disk_cache_is_bounded(void)
{
    char root[600], dir[600];
    snprintf(root, sizeof root, "%s/bound-store", unit_tmpdir());
    snprintf(dir, sizeof dir, "%s/bound-dir", unit_tmpdir());
    tl_error err;
    tl_store *local = NULL, *c = NULL;
    CHECK_OK(tl_store_local_open(root, &local, &err), &err);
    const long long limit = 200 << 10;
    CHECK_OK(tl_store_cache_wrap(local, 0, dir, limit, &c, &err), &err);
    static char data[40 << 10], got[40 << 10];
    /* 30 objects of 40 KiB through a 200 KiB directory. */
    for (int i = 0; i < 30; i++) {
        char key[64];
        snprintf(key, sizeof key, "t/data/f%02d.parquet", i);
        fill(data, sizeof data, i);
        CHECK_OK(tl_store_put(c, key, data, sizeof data, &err), &err);
        int files;
        /* At most one eighth of the limit is written between two looks. */
        CHECK(dir_bytes(dir, &files) <= limit + limit / 8 + (long long)sizeof data);
    }
    int files;
    long long total = dir_bytes(dir, &files);
    CHECK(total <= limit + limit / 8 + (long long)sizeof data);
    CHECK(files >= 3);
    /* Every object still reads back right: evicted ones from the store. */
    for (int i = 0; i < 30; i++) {
        char key[64];
        snprintf(key, sizeof key, "t/data/f%02d.parquet", i);
        fill(data, sizeof data, i);
        tl_buf b = {0};
        CHECK_OK(tl_store_get(c, key, &b, &err), &err);
        CHECK(b.len == sizeof data && memcmp(b.data, data, sizeof data) == 0);
        CHECK_OK(tl_store_get_range(c, key, 1000, 5000, (uint8_t *)got, &err), &err);
        CHECK(memcmp(got, data + 1000, 5000) == 0);
        tl_buf_free(&b);
    }
    /* An object larger than a quarter of the limit is not kept on disk. */
    static char big[60 << 10];
    CHECK_OK(tl_store_put(c, "t/data/big.parquet", big, sizeof big, &err), &err);
    tl_store_free(c);
}

/* A range read by one process is on disk for the next, even after the
 * object is gone from the store; a cached file removed under a reader (as by
 * another process's eviction) is fetched again. */
static void test_ranges_shared_and_eviction_fallback(void)
{
    char root[600], dir[600], path[1300];
    snprintf(root, sizeof root, "%s/range-store", unit_tmpdir());
    snprintf(dir, sizeof dir, "%s/range-dir", unit_tmpdir());
    tl_error err;
    tl_store *l1 = NULL, *l2 = NULL, *c1 = NULL, *c2 = NULL;
    CHECK_OK(tl_store_local_open(root, &l1, &err), &err);
    CHECK_OK(tl_store_local_open(root, &l2, &err), &err);
    char data[4096];
    fill(data, sizeof data, 3);
    CHECK_OK(tl_store_put(l1, "t/data/r.parquet", data, sizeof data, &err), &err);
    CHECK_OK(tl_store_cache_wrap(l1, 0, dir, 0, &c1, &err), &err);
    CHECK_OK(tl_store_cache_wrap(l2, 0, dir, 0, &c2, &err), &err);
    uint8_t a[100], b[100];
    CHECK_OK(tl_store_get_range(c1, "t/data/r.parquet", 3000, 100, a, &err), &err);
    snprintf(path, sizeof path, "%s/t/data/r.parquet", root);
    CHECK(unlink(path) == 0);
    CHECK_OK(tl_store_get_range(c2, "t/data/r.parquet", 3000, 100, b, &err), &err);
    CHECK(memcmp(a, data + 3000, 100) == 0 && memcmp(b, a, 100) == 0);
    /* A different range of the missing object is not made up. */
    CHECK_INT(tl_store_get_range(c2, "t/data/r.parquet", 0, 100, b, &err), TL_ERR_NOT_FOUND);

    /* Eviction under a reader: put it back, empty the directory, read again. */
    CHECK_OK(tl_store_put(l1, "t/data/r.parquet", data, sizeof data, &err), &err);
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    CHECK_OK(tl_store_get_range(c2, "t/data/r.parquet", 3000, 100, b, &err), &err);
    CHECK(memcmp(b, data + 3000, 100) == 0);
    tl_cache_stats s;
    CHECK(tl_store_cache_stats(c2, &s));
    CHECK_INT(s.hits, 1);
    CHECK_INT(s.misses, 2);
    tl_store_free(c1);
    tl_store_free(c2);
}

static void test_get_many(void)
{
    char root[600];
    snprintf(root, sizeof root, "%s/many-store", unit_tmpdir());
    tl_error err;
    tl_store *s = NULL;
    CHECK_OK(tl_store_local_open(root, &s, &err), &err);
    CHECK_OK(tl_store_put(s, "a", "0123456789", 10, &err), &err);
    CHECK_OK(tl_store_put(s, "b", "abcdef", 6, &err), &err);
    tl_store_get_item items[3] = {{.key = "a"}, {.key = "b", .offset = 2, .len = 3}, {.key = "c"}};
    CHECK_INT(tl_store_get_many(s, items, 3, &err), TL_ERR_NOT_FOUND);
    CHECK_INT(items[0].st, TL_OK);
    CHECK(items[0].out.len == 10 && memcmp(items[0].out.data, "0123456789", 10) == 0);
    CHECK_INT(items[1].st, TL_OK);
    CHECK(items[1].out.len == 3 && memcmp(items[1].out.data, "cde", 3) == 0);
    CHECK_INT(items[2].st, TL_ERR_NOT_FOUND);
    for (int i = 0; i < 3; i++) tl_buf_free(&items[i].out);
    tl_store_free(s);
}

UNIT_TESTS(UNIT(test_disk_cache_is_bounded), UNIT(test_ranges_shared_and_eviction_fallback),
           UNIT(test_get_many))
