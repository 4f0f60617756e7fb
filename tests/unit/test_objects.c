/* The public objects API (timelake.h, "Objects") on a local lake: listing
 * (recursive and one level), stat, get, put, delete, the streaming writer and
 * the key checks. The same calls on S3, Azure and GCS are exercised by
 * tests/py/test_objects.py against moto, Azurite and fake-gcs-server. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test_table_helpers.h"
#include "timelake.h"
#include "unit.h"

static tl_lake *open_lake(const char *name, char *dir, size_t size)
{
    snprintf(dir, size, "%s/%s", unit_tmpdir(), name);
    tl_lake *lake = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open(dir, NULL, &lake, &err), &err);
    return lake;
}

static void put(tl_lake *lake, const char *key, const char *text)
{
    tl_error err;
    CHECK_OK(tl_lake_put_object(lake, key, text, strlen(text), &err), &err);
}

/* The listing as "key:size" (folders "key") joined by spaces. */
static void listing(tl_lake *lake, const char *prefix, int recursive, char *buf, size_t size)
{
    tl_object *objs = NULL;
    size_t n = 0;
    tl_error err;
    buf[0] = '\0';
    CHECK_OK(tl_lake_list_objects(lake, prefix, recursive, &objs, &n, &err), &err);
    size_t used = 0;
    for (size_t i = 0; i < n && used < size; i++) {
        size_t klen = strlen(objs[i].key);
        bool folder = objs[i].key[klen - 1] == '/';
        CHECK(folder == (objs[i].etag == NULL));
        if (folder)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " " : "", objs[i].key);
        else
            used += (size_t)snprintf(buf + used, size - used, "%s%s:%llu", i ? " " : "",
                                     objs[i].key, (unsigned long long)objs[i].size);
    }
    tl_objects_free(objs, n);
}

static void test_put_get_list(void)
{
    char dir[600], got[1024];
    tl_lake *lake = open_lake("objects", dir, sizeof dir);
    put(lake, "pipelines/web/events/b.ndjson", "{\"a\":1}\n");
    put(lake, "pipelines/web/events/a.ndjson", "{}\n");
    put(lake, "pipelines/web/events/2026/x.ndjson", "x");
    put(lake, "pipelines/bank/s.csv", "a,b\n1,2\n");
    put(lake, "top.txt", "");
    put(lake, ".hidden", "h");

    listing(lake, NULL, 1, got, sizeof got);
    CHECK_STR(got, ".hidden:1 pipelines/bank/s.csv:8 pipelines/web/events/2026/x.ndjson:1 "
                   "pipelines/web/events/a.ndjson:3 pipelines/web/events/b.ndjson:8 top.txt:0");
    listing(lake, "", 0, got, sizeof got);
    CHECK_STR(got, ".hidden:1 pipelines/ top.txt:0");
    listing(lake, "pipelines/web/events/", 0, got, sizeof got);
    CHECK_STR(got, "pipelines/web/events/2026/ pipelines/web/events/a.ndjson:3 "
                   "pipelines/web/events/b.ndjson:8");
    /* A prefix is a plain key prefix, as on object stores. */
    listing(lake, "pipelines/web/events/a", 1, got, sizeof got);
    CHECK_STR(got, "pipelines/web/events/a.ndjson:3");
    listing(lake, "pipelines/we", 0, got, sizeof got);
    CHECK_STR(got, "pipelines/web/");
    listing(lake, "pipelines/web", 1, got, sizeof got);
    CHECK_STR(got, "pipelines/web/events/2026/x.ndjson:1 pipelines/web/events/a.ndjson:3 "
                   "pipelines/web/events/b.ndjson:8");
    listing(lake, "nothing/here/", 1, got, sizeof got);
    CHECK_STR(got, "");

    tl_error err;
    void *data = NULL;
    size_t len = 0;
    CHECK_OK(tl_lake_get_object(lake, "pipelines/bank/s.csv", &data, &len, &err), &err);
    CHECK(len == 8 && memcmp(data, "a,b\n1,2\n", 8) == 0);
    tl_free(data);
    CHECK_OK(tl_lake_get_object(lake, "top.txt", &data, &len, &err), &err);
    CHECK(data != NULL && len == 0);
    tl_free(data);
    CHECK_INT(tl_lake_get_object(lake, "pipelines/none.csv", &data, &len, &err), TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "pipelines/none.csv") != NULL);
    /* A folder is no object. */
    CHECK_INT(tl_lake_get_object(lake, "pipelines/web", &data, &len, &err), TL_ERR_NOT_FOUND);
    tl_object o = {0};
    CHECK_INT(tl_lake_stat_object(lake, "pipelines/web", &o, &err), TL_ERR_NOT_FOUND);
    tl_lake_close(lake);
}

static void test_stat_and_etag(void)
{
    char dir[600];
    tl_lake *lake = open_lake("objects-stat", dir, sizeof dir);
    int64_t before = (int64_t)time(NULL) * 1000;
    put(lake, "a/b.csv", "one");
    tl_object o = {0}, again = {0};
    tl_error err;
    CHECK_OK(tl_lake_stat_object(lake, "a/b.csv", &o, &err), &err);
    CHECK_STR(o.key, "a/b.csv");
    CHECK_INT(o.size, 3);
    CHECK(o.etag != NULL && strlen(o.etag) == 32);
    CHECK(o.modified_ms >= before - 2000 && o.modified_ms <= (int64_t)time(NULL) * 1000 + 2000);
    /* The listing says the same as stat. */
    tl_object *objs = NULL;
    size_t n = 0;
    CHECK_OK(tl_lake_list_objects(lake, "a/", 1, &objs, &n, &err), &err);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(objs[0].etag, o.etag);
        CHECK_INT(objs[0].modified_ms, o.modified_ms);
    }
    tl_objects_free(objs, n);
    /* Unchanged: the same etag. Replaced, even by the same bytes: another. */
    CHECK_OK(tl_lake_stat_object(lake, "a/b.csv", &again, &err), &err);
    CHECK_STR(again.etag, o.etag);
    tl_object_clear(&again);
    put(lake, "a/b.csv", "one");
    CHECK_OK(tl_lake_stat_object(lake, "a/b.csv", &again, &err), &err);
    CHECK(strcmp(again.etag, o.etag) != 0);
    tl_object_clear(&again);
    tl_object_clear(&o);
    CHECK(o.key == NULL && o.etag == NULL);
    tl_object_clear(NULL);
    tl_lake_close(lake);
}

static void test_delete(void)
{
    char dir[600], got[512];
    tl_lake *lake = open_lake("objects-delete", dir, sizeof dir);
    put(lake, "x/y/z.csv", "1");
    put(lake, "x/w.csv", "2");
    tl_error err;
    CHECK_OK(tl_lake_delete_object(lake, "x/y/z.csv", &err), &err);
    CHECK_OK(tl_lake_delete_object(lake, "x/y/z.csv", &err), &err); /* missing: fine */
    CHECK_OK(tl_lake_delete_object(lake, "x", &err), &err);         /* a folder: no object */
    listing(lake, "x/", 0, got, sizeof got);
    CHECK_STR(got, "x/w.csv:1"); /* the emptied folder is gone, as on object stores */
    /* An empty directory left on disk is no folder either. */
    char path[800];
    snprintf(path, sizeof path, "%s/x/empty", dir);
    CHECK(mkdir(path, 0755) == 0);
    listing(lake, "x/", 0, got, sizeof got);
    CHECK_STR(got, "x/w.csv:1");
    tl_lake_close(lake);
}

static void test_bad_keys(void)
{
    char dir[600], got[512];
    tl_lake *lake = open_lake("objects-bad", dir, sizeof dir);
    const char *bad[] = {"",     "/abs", "a//b", "a/./b",     "../up", "a/..",
                         "a/b/", ".",    "a\nb", "tab\there", "a/."};
    tl_error err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_INT(tl_lake_put_object(lake, bad[i], "x", 1, &err), TL_ERR_INVALID);
        CHECK(strstr(err.message, "invalid object key") != NULL);
        void *data;
        size_t len;
        CHECK_INT(tl_lake_get_object(lake, bad[i], &data, &len, &err), TL_ERR_INVALID);
        tl_object o;
        CHECK_INT(tl_lake_stat_object(lake, bad[i], &o, &err), TL_ERR_INVALID);
        CHECK_INT(tl_lake_delete_object(lake, bad[i], &err), TL_ERR_INVALID);
        tl_object_writer *w;
        CHECK_INT(tl_object_writer_open(lake, bad[i], &w, &err), TL_ERR_INVALID);
    }
    CHECK_INT(tl_lake_put_object(lake, "a//b", "x", 1, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "\"a//b\"") != NULL);
    CHECK_INT(tl_lake_put_object(lake, NULL, "x", 1, &err), TL_ERR_INVALID);
    char long_key[1100];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    CHECK_INT(tl_lake_put_object(lake, long_key, "x", 1, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "1024") != NULL);
    tl_object *objs;
    size_t n;
    CHECK_INT(tl_lake_list_objects(lake, "/x", 1, &objs, &n, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "invalid object prefix \"/x\"") != NULL);
    CHECK_INT(tl_lake_list_objects(lake, "a/../", 0, &objs, &n, &err), TL_ERR_INVALID);
    listing(lake, NULL, 1, got, sizeof got);
    CHECK_STR(got, ""); /* nothing was written */
    tl_lake_close(lake);
}

/* Files in dir (recursively) whose names start with prefix. */
static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode))
            n += count_files(path, prefix);
        else if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    }
    closedir(d);
    return n;
}

static void test_writer(void)
{
    char dir[600], got[512];
    tl_lake *lake = open_lake("objects-writer", dir, sizeof dir);
    tl_error err;
    tl_object_writer *w = NULL;
    CHECK_OK(tl_object_writer_open(lake, "up/big.csv", &w, &err), &err);
    size_t total = 0;
    char chunk[1000];
    for (int i = 0; i < 300; i++) {
        memset(chunk, 'a' + i % 26, sizeof chunk);
        CHECK_OK(tl_object_writer_write(w, chunk, sizeof chunk, &err), &err);
        total += sizeof chunk;
    }
    CHECK_OK(tl_object_writer_write(w, NULL, 0, &err), &err);
    /* Nothing shows before finish. */
    listing(lake, NULL, 1, got, sizeof got);
    CHECK_STR(got, "");
    void *data = NULL;
    size_t len = 0;
    CHECK_INT(tl_lake_get_object(lake, "up/big.csv", &data, &len, &err), TL_ERR_NOT_FOUND);
    CHECK_OK(tl_object_writer_finish(w, &err), &err);
    CHECK_OK(tl_lake_get_object(lake, "up/big.csv", &data, &len, &err), &err);
    CHECK_INT(len, total);
    CHECK(len == total && ((char *)data)[0] == 'a' && ((char *)data)[299 * 1000] == 'a' + 299 % 26);
    tl_free(data);

    /* An aborted writer leaves the old object as it was, and no file behind. */
    CHECK_OK(tl_object_writer_open(lake, "up/big.csv", &w, &err), &err);
    CHECK_OK(tl_object_writer_write(w, "new", 3, &err), &err);
    tl_object_writer_abort(w);
    tl_object_writer_abort(NULL);
    tl_object o;
    CHECK_OK(tl_lake_stat_object(lake, "up/big.csv", &o, &err), &err);
    CHECK_INT(o.size, total);
    tl_object_clear(&o);
    CHECK_INT(count_files(dir, ".tmp-"), 0);

    /* A writer replaces the object at finish. */
    CHECK_OK(tl_object_writer_open(lake, "up/big.csv", &w, &err), &err);
    CHECK_OK(tl_object_writer_write(w, "new", 3, &err), &err);
    CHECK_OK(tl_object_writer_finish(w, &err), &err);
    CHECK_OK(tl_lake_get_object(lake, "up/big.csv", &data, &len, &err), &err);
    CHECK(len == 3 && memcmp(data, "new", 3) == 0);
    tl_free(data);
    /* An empty object. */
    CHECK_OK(tl_object_writer_open(lake, "up/empty", &w, &err), &err);
    CHECK_OK(tl_object_writer_finish(w, &err), &err);
    listing(lake, "up/", 0, got, sizeof got);
    CHECK_STR(got, "up/big.csv:3 up/empty:0");
    CHECK_INT(count_files(dir, ".tmp-"), 0);
    tl_lake_close(lake);
}

/* A lake with a table: the objects API sees the table's files too (it is
 * for everything in the lake), and objects beside them leave the table alone. */
static void test_beside_tables(void)
{
    tl_lake *lake = NULL;
    tl_table *t = ttable_create(&lake, "objects-tables", "iot.r", "k", "u", false, NULL);
    tl_error err;
    put(lake, "landing/a.csv", "t\n");
    char got[1024];
    listing(lake, NULL, 0, got, sizeof got);
    const char *want = "iot/ landing/ timelake-tables.json:"; /* then its size */
    CHECK(strncmp(got, want, strlen(want)) == 0);
    tl_object o = {0};
    CHECK_OK(tl_lake_stat_object(lake, "iot/r/metadata/v1.metadata.json", &o, &err), &err);
    CHECK(o.size > 100);
    tl_object_clear(&o);
    char **tables = NULL;
    CHECK_OK(tl_lake_list_tables(lake, &tables, &err), &err);
    CHECK(tables != NULL && tables[0] && strcmp(tables[0], "iot.r") == 0 && tables[1] == NULL);
    tl_strings_free(tables);
    tl_objects_free(NULL, 0);
    tl_table_close(t);
    tl_lake_close(lake);
}

/* Chunks from the start: the first read learns the size, the last is short,
 * then nothing; a missing object and a bad key are refused by name. */
static void test_reader(void)
{
    char dir[512];
    tl_lake *lake = open_lake("reader", dir, sizeof dir);
    put(lake, "in/ten.txt", "0123456789");
    put(lake, "in/empty.txt", "");
    tl_error err;
    tl_object_reader *r = NULL;
    CHECK_OK(tl_object_reader_open(lake, "in/ten.txt", &r, &err), &err);
    CHECK_INT(tl_object_reader_size(r), -1);
    char buf[4], got[16] = {0};
    size_t n = 0, at = 0;
    size_t want[] = {4, 4, 2, 0, 0};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        CHECK_OK(tl_object_reader_read(r, buf, sizeof buf, &n, &err), &err);
        CHECK_INT(n, want[i]);
        memcpy(got + at, buf, n);
        at += n;
        CHECK_INT(tl_object_reader_size(r), 10);
    }
    CHECK(strcmp(got, "0123456789") == 0);
    tl_object_reader_close(r);

    CHECK_OK(tl_object_reader_open(lake, "in/empty.txt", &r, &err), &err);
    CHECK_OK(tl_object_reader_read(r, buf, sizeof buf, &n, &err), &err);
    CHECK(n == 0 && tl_object_reader_size(r) == 0);
    tl_object_reader_close(r);

    CHECK_OK(tl_object_reader_open(lake, "in/none.txt", &r, &err), &err);
    CHECK_INT(tl_object_reader_read(r, buf, sizeof buf, &n, &err), TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "in/none.txt") != NULL && n == 0);
    CHECK_INT(tl_object_reader_read(r, buf, sizeof buf, &n, &err), TL_ERR_INVALID);
    tl_object_reader_close(r);
    CHECK_INT(tl_object_reader_open(lake, "../x", &r, &err), TL_ERR_INVALID);
    tl_object_reader_close(NULL);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_put_get_list), UNIT(test_stat_and_etag), UNIT(test_delete),
           UNIT(test_bad_keys), UNIT(test_writer), UNIT(test_beside_tables), UNIT(test_reader))
