#include "query/local_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/random.h"
#include "query/scan.h"
#include "store/digest.h"
#include "table/live_files.h"

tl_status tl_query_fetch_dir_name(tl_query_engine *e, tl_error *err)
{
    if (e->fetch_dir) return TL_OK;
    const char *tmp = getenv("TMPDIR");
    char id[TL_UUID_STR_LEN + 1];
    tl_uuid_v4(id);
    e->fetch_dir = tl_strdup_printf("%s/timelake-query-%s", tmp && *tmp ? tmp : "/tmp", id);
    return e->fetch_dir ? TL_OK : tl_error_nomem(err);
}

tl_status tl_query_fetch_dir(tl_query_engine *e, tl_error *err)
{
    TL_TRY(tl_query_fetch_dir_name(e, err));
    if (e->fetch_dir_made) return TL_OK;
    /* A fresh name: one that exists already is someone else's, never used. */
    if (mkdir(e->fetch_dir, 0700) != 0)
        return tl_error_set(err, TL_ERR_STORAGE,
                            "cannot create a directory %s for files fetched from the object "
                            "store: %s",
                            e->fetch_dir, strerror(errno));
    e->fetch_dir_made = true;
    return TL_OK;
}

/* Writes the bytes to a temporary name, then renames: a path DuckDB sees is
 * always complete. */
tl_status tl_query_write_local(const char *path, const void *data, size_t len, tl_error *err)
{
    char *tmp = tl_strdup_printf("%s.part", path);
    if (tmp == NULL) return tl_error_nomem(err);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    bool ok = fd >= 0;
    for (size_t done = 0; ok && done < len;) {
        ssize_t w = write(fd, (const uint8_t *)data + done, len - done);
        ok = w > 0;
        if (ok) done += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    free(tmp);
    return ok ? TL_OK : tl_error_set(err, TL_ERR_STORAGE, "cannot write %s", path);
}

char *tl_query_local_name(const tl_query_engine *e, const char *url, const char *suffix)
{
    uint8_t digest[32];
    char hex[65];
    tl_sha256(url, strlen(url), digest);
    tl_hex(digest, 16, hex);
    return tl_strdup_printf("%s/%.32s%s.parquet", e->fetch_dir, hex, suffix ? suffix : "");
}

tl_status tl_query_local_file(tl_query_engine *e, const tl_table *t, const char *url, char **out,
                              tl_error *err)
{
    *out = tl_scan_local_path(t, url);
    if (*out) return TL_OK;
    TL_TRY(tl_query_fetch_dir(e, err));
    char *path = tl_query_local_name(e, url, NULL);
    if (path == NULL) return tl_error_nomem(err);
    if (tl_query_local_reuse(path)) {
        *out = path;
        return TL_OK;
    }
    tl_buf b = {0};
    tl_status st = tl_table_read_url(t, url, &b, err);
    if (st == TL_OK) st = tl_query_write_local(path, b.data, b.len, err);
    tl_buf_free(&b);
    if (st != TL_OK) {
        free(path);
        return tl_error_prefix(err, "fetching %s", url);
    }
    *out = path;
    return TL_OK;
}

bool tl_query_local_reuse(const char *path)
{
    return utimensat(AT_FDCWD, path, NULL, 0) == 0;
}

typedef struct local_copy {
    char *path;
    off_t size;
    time_t used;
} local_copy;

static int by_use(const void *a, const void *b)
{
    const local_copy *x = a, *y = b;
    return (x->used > y->used) - (x->used < y->used);
}

void tl_query_fetch_dir_trim(tl_query_engine *e)
{
    DIR *d = e->fetch_dir ? opendir(e->fetch_dir) : NULL;
    if (d == NULL) return;
    local_copy *c = NULL;
    size_t n = 0, cap = 0;
    long long total = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.') continue;
        char *p = tl_strdup_printf("%s/%s", e->fetch_dir, de->d_name);
        struct stat sb;
        if (TL_GROW(c, cap, n + 1, 64) != 0) {
            free(p);
            break;
        }
        if (p == NULL || stat(p, &sb) != 0) {
            free(p);
            continue;
        }
        c[n++] = (local_copy){p, sb.st_size, sb.st_mtime};
        total += sb.st_size;
    }
    closedir(d);
    if (c) qsort(c, n, sizeof *c, by_use);
    time_t now = time(NULL);
    for (size_t i = 0; i < n && total > TL_FETCH_DIR_MAX; i++)
        if (now - c[i].used >= TL_FETCH_DIR_MIN_AGE && unlink(c[i].path) == 0) total -= c[i].size;
    for (size_t i = 0; i < n; i++) free(c[i].path);
    free(c);
}

void tl_query_local_files_free(tl_query_engine *e)
{
    if (e->fetch_dir == NULL) return;
    char *spill = tl_strdup_printf("%s.spill", e->fetch_dir);
    if (spill) rmdir(spill); /* DuckDB's spill files are gone once it is closed */
    free(spill);
    DIR *d = e->fetch_dir_made ? opendir(e->fetch_dir) : NULL;
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.') continue;
        char *p = tl_strdup_printf("%s/%s", e->fetch_dir, de->d_name);
        if (p) unlink(p);
        free(p);
    }
    if (d) closedir(d);
    if (e->fetch_dir_made) rmdir(e->fetch_dir);
    e->fetch_dir_made = false;
    free(e->fetch_dir);
    e->fetch_dir = NULL;
}
