#include "query/local_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query/scan.h"
#include "store/digest.h"
#include "table/live_files.h"

static tl_status make_dir(tl_query_engine *e, tl_error *err)
{
    if (e->fetch_dir) return TL_OK;
    const char *tmp = getenv("TMPDIR");
    char *dir = tl_strdup_printf("%s/timelake-query-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (dir == NULL) return tl_error_nomem(err);
    if (mkdtemp(dir) == NULL) {
        tl_status st = tl_error_set(err, TL_ERR_STORAGE,
                                    "cannot create a directory %s for "
                                    "files fetched from the object store",
                                    dir);
        free(dir);
        return st;
    }
    e->fetch_dir = dir;
    return TL_OK;
}

/* Writes the bytes to a temporary name, then renames: a path DuckDB sees is
 * always complete. */
static tl_status write_file(const char *path, const tl_buf *b, tl_error *err)
{
    char *tmp = tl_strdup_printf("%s.part", path);
    if (tmp == NULL) return tl_error_nomem(err);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    bool ok = fd >= 0;
    for (size_t done = 0; ok && done < b->len;) {
        ssize_t w = write(fd, (const uint8_t *)b->data + done, b->len - done);
        ok = w > 0;
        if (ok) done += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) unlink(tmp);
    free(tmp);
    return ok ? TL_OK : tl_error_set(err, TL_ERR_STORAGE, "cannot write %s", path);
}

tl_status tl_query_local_file(tl_query_engine *e, const tl_table *t, const char *url, char **out,
                              tl_error *err)
{
    *out = tl_scan_local_path(url);
    if (*out) return TL_OK;
    TL_TRY(make_dir(e, err));
    uint8_t digest[32];
    char hex[65];
    tl_sha256(url, strlen(url), digest);
    tl_hex(digest, 16, hex);
    char *path = tl_strdup_printf("%s/%.32s.parquet", e->fetch_dir, hex);
    if (path == NULL) return tl_error_nomem(err);
    struct stat sb;
    if (stat(path, &sb) == 0) {
        *out = path;
        return TL_OK;
    }
    tl_buf b = {0};
    tl_status st = tl_table_read_url(t, url, &b, err);
    if (st == TL_OK) st = write_file(path, &b, err);
    tl_buf_free(&b);
    if (st != TL_OK) {
        free(path);
        return tl_error_prefix(err, "fetching %s", url);
    }
    *out = path;
    return TL_OK;
}

void tl_query_local_files_free(tl_query_engine *e)
{
    if (e->fetch_dir == NULL) return;
    DIR *d = opendir(e->fetch_dir);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.') continue;
        char *p = tl_strdup_printf("%s/%s", e->fetch_dir, de->d_name);
        if (p) unlink(p);
        free(p);
    }
    if (d) closedir(d);
    rmdir(e->fetch_dir);
    free(e->fetch_dir);
    e->fetch_dir = NULL;
}
