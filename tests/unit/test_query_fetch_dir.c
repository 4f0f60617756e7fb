/* The engine's directory of fetched copies stays bounded: past its limit the
 * copies unused longest go first, but never one used recently (a query's
 * copies are in use while it is prepared). Sparse files stand in for big ones. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "query/local_file.h"
#include "unit.h"

static void make_copy(const char *dir, const char *name, long long size, time_t used)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0);
    struct timespec ts[2] = {{used, 0}, {used, 0}};
    CHECK(futimens(fd, ts) == 0);
    close(fd);
}

static bool present(const char *dir, const char *name)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static void test_fetch_dir_is_trimmed(void)
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/fetch-dir", unit_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    tl_query_engine e = {0};
    e.fetch_dir = dir;
    time_t now = time(NULL);
    const long long mib300 = 300LL << 20;
    make_copy(dir, "old1.parquet", mib300, now - 7200);
    make_copy(dir, "old2.parquet", mib300, now - 5000);
    make_copy(dir, "old3.parquet", mib300, now - 4000);
    make_copy(dir, "new1.parquet", mib300, now - 10);
    make_copy(dir, "new2.parquet", mib300, now);
    tl_query_fetch_dir_trim(&e); /* 1.5 GiB: the two oldest go */
    CHECK(!present(dir, "old1.parquet") && !present(dir, "old2.parquet"));
    CHECK(present(dir, "old3.parquet") && present(dir, "new1.parquet") &&
          present(dir, "new2.parquet"));
    /* Reuse marks a copy as used: it is then too recent to go. */
    char p[1200];
    snprintf(p, sizeof p, "%s/old3.parquet", dir);
    CHECK(tl_query_local_reuse(p));
    make_copy(dir, "new3.parquet", mib300, now);
    tl_query_fetch_dir_trim(&e); /* 1.2 GiB, all recent: nothing goes */
    CHECK(present(dir, "old3.parquet") && present(dir, "new3.parquet"));
    CHECK(!tl_query_local_reuse("/nonexistent/x.parquet"));
    e.fetch_dir = NULL;
    const char *names[] = {"old3.parquet", "new1.parquet", "new2.parquet", "new3.parquet"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

UNIT_TESTS(UNIT(test_fetch_dir_is_trimmed))
