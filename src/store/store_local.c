/* The local-disk backend. Every object is written to a temporary file, then
 * renamed (put) or hard-linked (put_if_absent) into place, so a reader sees
 * the whole object or none of it. Durability: a put's file and directory are
 * fsynced at the latest by the next put_if_absent (the commit point; see
 * local_sync.h), which fsyncs its own file and directory before returning.
 * Temporary files start with ".tmp-" and are never listed. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/random.h"
#include "core/strlist.h"
#include "store/local_sync.h"
#include "store/store.h"

#define TMP_PREFIX ".tmp-"

typedef struct local_store {
    tl_store base;
    char *root;           /* absolute directory path, no trailing slash */
    tl_sync_set unsynced; /* puts not yet known to be durable */
} local_store;

static tl_status io_error(tl_error *err, const char *what, const char *path)
{
    int e = errno;
    if (e == ENOENT) return tl_error_set(err, TL_ERR_NOT_FOUND, "%s %s: no such file", what, path);
    return tl_error_set(err, TL_ERR_STORAGE, "%s %s: %s", what, path, strerror(e));
}

/* Keys come from metadata files and, later, from the network: refuse any that
 * could escape the root. */
static tl_status check_key(const char *key, tl_error *err)
{
    if (key[0] == '/' || strstr(key, "//") != NULL)
        return tl_error_set(err, TL_ERR_INVALID, "bad object key \"%s\"", key);
    for (const char *seg = key; seg != NULL;) {
        const char *next = strchr(seg, '/');
        size_t n = next ? (size_t)(next - seg) : strlen(seg);
        if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return tl_error_set(err, TL_ERR_INVALID, "bad object key \"%s\"", key);
        seg = next ? next + 1 : NULL;
    }
    return TL_OK;
}

static char *path_of(const local_store *ls, const char *key)
{
    return key[0] ? tl_strdup_printf("%s/%s", ls->root, key) : strdup(ls->root);
}

/* mkdir -p of every parent of path (modified and restored). A directory it
 * creates is an entry of its parent, which must reach the disk too. */
static tl_status make_dirs(local_store *ls, char *path, tl_error *err)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        int e = errno;
        tl_status st = rc == 0 ? tl_sync_set_add(&ls->unsynced, path, err) : TL_OK;
        *p = '/';
        if (st != TL_OK) return st;
        if (rc != 0 && e != EEXIST) {
            errno = e;
            return io_error(err, "creating directory for", path);
        }
    }
    return TL_OK;
}

static tl_status fsync_dir_of(const char *path, tl_error *err)
{
    char *dir = strdup(path);
    if (dir == NULL) return tl_error_nomem(err);
    char *slash = strrchr(dir, '/');
    if (slash != NULL) *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    tl_status st = TL_OK;
    if (fd < 0 || fsync(fd) != 0) st = io_error(err, "syncing directory", dir);
    if (fd >= 0) close(fd);
    free(dir);
    return st;
}

static tl_status read_fully(int fd, uint64_t offset, uint8_t *dst, size_t len, const char *path,
                            tl_error *err)
{
    while (len > 0) {
        ssize_t n = pread(fd, dst, len, (off_t)offset);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return io_error(err, "reading", path);
        if (n == 0)
            return tl_error_set(err, TL_ERR_STORAGE, "reading %s: unexpected end of file", path);
        dst += n;
        offset += (uint64_t)n;
        len -= (size_t)n;
    }
    return TL_OK;
}

static tl_status write_fully(int fd, const uint8_t *data, size_t len, const char *path,
                             tl_error *err)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return io_error(err, "writing", path);
        data += n;
        len -= (size_t)n;
    }
    return TL_OK;
}

static tl_status local_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    TL_TRY(check_key(key, err));
    char *path = path_of((local_store *)s, key);
    if (path == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        st = io_error(err, "reading", path);
    } else if (S_ISDIR(sb.st_mode)) {
        st = tl_error_set(err, TL_ERR_NOT_FOUND, "reading %s: is a directory", path);
    } else {
        out->len = 0;
        if (tl_buf_reserve(out, (size_t)sb.st_size) != 0) {
            st = tl_error_nomem(err);
        } else {
            st = read_fully(fd, 0, out->data, (size_t)sb.st_size, path, err);
            if (st == TL_OK) {
                out->len = (size_t)sb.st_size;
                out->data[out->len] = '\0';
            }
        }
    }
    if (fd >= 0) close(fd);
    free(path);
    return st;
}

static tl_status local_get_range(tl_store *s, const char *key, uint64_t offset, size_t len,
                                 uint8_t *dst, tl_error *err)
{
    TL_TRY(check_key(key, err));
    char *path = path_of((local_store *)s, key);
    if (path == NULL) return tl_error_nomem(err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    tl_status st =
        fd < 0 ? io_error(err, "reading", path) : read_fully(fd, offset, dst, len, path, err);
    if (fd >= 0) close(fd);
    free(path);
    return st;
}

static tl_status local_size(tl_store *s, const char *key, uint64_t *out, tl_error *err)
{
    TL_TRY(check_key(key, err));
    char *path = path_of((local_store *)s, key);
    if (path == NULL) return tl_error_nomem(err);
    struct stat sb;
    tl_status st = TL_OK;
    if (stat(path, &sb) != 0)
        st = io_error(err, "reading", path);
    else
        *out = (uint64_t)sb.st_size;
    free(path);
    return st;
}

/* Writes data to a fresh temporary file beside `path` and starts its
 * writeback (the fsync comes later, see local_sync.h); *tmp_out gets its name. */
static tl_status write_temp(local_store *ls, char *path, const void *data, size_t len,
                            char **tmp_out, tl_error *err)
{
    TL_TRY(make_dirs(ls, path, err));
    char *slash = strrchr(path, '/');
    char rnd[TL_UUID_STR_LEN + 1];
    tl_uuid_v4(rnd);
    *slash = '\0';
    char *tmp = tl_strdup_printf("%s/" TMP_PREFIX "%s", path, rnd);
    *slash = '/';
    if (tmp == NULL) return tl_error_nomem(err);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        tl_status st = io_error(err, "creating", tmp);
        free(tmp);
        return st;
    }
    tl_status st = write_fully(fd, data, len, tmp, err);
    if (st == TL_OK) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    if (close(fd) != 0 && st == TL_OK) st = io_error(err, "closing", tmp);
    if (st != TL_OK) {
        unlink(tmp);
        free(tmp);
        return st;
    }
    *tmp_out = tmp;
    return TL_OK;
}

static tl_status local_put(tl_store *s, const char *key, const void *data, size_t len,
                           tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_store *ls = (local_store *)s;
    char *path = path_of(ls, key), *tmp = NULL;
    if (path == NULL) return tl_error_nomem(err);
    tl_status st = write_temp(ls, path, data, len, &tmp, err);
    if (st == TL_OK && rename(tmp, path) != 0) {
        st = io_error(err, "renaming into", path);
        unlink(tmp);
    }
    if (st == TL_OK) st = tl_sync_set_add(&ls->unsynced, path, err);
    free(tmp);
    free(path);
    return st;
}

static tl_status local_put_if_absent(tl_store *s, const char *key, const void *data, size_t len,
                                     tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_store *ls = (local_store *)s;
    char *path = path_of(ls, key), *tmp = NULL;
    if (path == NULL) return tl_error_nomem(err);
    /* Everything put before must be on disk before this object can be: it is
     * the commit that makes them part of the table. */
    tl_status st = write_temp(ls, path, data, len, &tmp, err);
    if (st == TL_OK) st = tl_sync_set_add(&ls->unsynced, tmp, err);
    if (st == TL_OK) st = tl_sync_set_flush(&ls->unsynced, err);
    if (st == TL_OK && link(tmp, path) != 0) /* EEXIST when another writer won: atomic */
        st = errno == EEXIST ? tl_error_set(err, TL_ERR_EXISTS, "%s exists already", path)
                             : io_error(err, "linking", path);
    if (tmp) unlink(tmp);
    if (st == TL_OK) st = fsync_dir_of(path, err);
    free(tmp);
    free(path);
    return st;
}

static tl_status list_dir(const local_store *ls, const char *rel, const char *prefix,
                          tl_strlist *out, tl_error *err)
{
    char *dir = path_of(ls, rel);
    if (dir == NULL) return tl_error_nomem(err);
    DIR *d = opendir(dir);
    if (d == NULL) {
        tl_status st = errno == ENOENT || errno == ENOTDIR ? TL_OK : io_error(err, "listing", dir);
        free(dir);
        return st;
    }
    tl_status st = TL_OK;
    struct dirent *e;
    while (st == TL_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue; /* ".", "..", temporary files */
        char *key = rel[0] ? tl_strdup_printf("%s/%s", rel, e->d_name) : strdup(e->d_name);
        if (key == NULL) {
            st = tl_error_nomem(err);
            break;
        }
        bool is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat sb;
            char *p = path_of(ls, key);
            is_dir = p && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
            free(p);
        }
        if (is_dir) {
            size_t n = strlen(key);
            /* Descend only where keys below can still match the prefix. */
            if (strncmp(key, prefix, n < strlen(prefix) ? n : strlen(prefix)) == 0)
                st = list_dir(ls, key, prefix, out, err);
            free(key);
        } else if (strncmp(key, prefix, strlen(prefix)) == 0) {
            if (tl_strlist_push_owned(out, key) != 0) {
                free(key);
                st = tl_error_nomem(err);
            }
        } else {
            free(key);
        }
    }
    closedir(d);
    free(dir);
    return st;
}

static tl_status local_list(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err)
{
    const local_store *ls = (const local_store *)s;
    /* Start at the deepest directory the prefix names. */
    char *rel = strdup(prefix);
    if (rel == NULL) return tl_error_nomem(err);
    char *slash = strrchr(rel, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        rel[0] = '\0';
    tl_status st = rel[0] ? check_key(rel, err) : TL_OK;
    if (st == TL_OK) st = list_dir(ls, rel, prefix, out, err);
    free(rel);
    return st;
}

static tl_status local_remove(tl_store *s, const char *key, tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_store *ls = (local_store *)s;
    char *path = path_of(ls, key);
    if (path == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    if (unlink(path) != 0 && errno != ENOENT) {
        st = io_error(err, "deleting", path);
    } else {
        /* Prune directories left empty, up to the root; rmdir refuses non-empty ones. */
        size_t root_len = strlen(ls->root);
        for (char *slash = strrchr(path, '/'); slash && (size_t)(slash - path) > root_len;
             slash = strrchr(path, '/')) {
            *slash = '\0';
            if (rmdir(path) != 0) break;
        }
    }
    free(path);
    return st;
}

static void local_free(tl_store *s)
{
    local_store *ls = (local_store *)s;
    tl_sync_set_destroy(&ls->unsynced);
    free(ls->root);
    free(ls->base.url);
    free(ls);
}

static const tl_store_ops local_ops = {
    .get = local_get,
    .get_range = local_get_range,
    .size = local_size,
    .put = local_put,
    .put_if_absent = local_put_if_absent,
    .list = local_list,
    .remove = local_remove,
    .free = local_free,
};

/* Makes path absolute and lexically normal ("a/./b/../c" -> "/cwd/a/c"). */
static char *normalize_path(const char *path)
{
    tl_buf b = {0};
    if (path[0] != '/') {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) == NULL) return NULL;
        tl_buf_append_str(&b, cwd);
    }
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0) break;
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            char *slash = b.data ? strrchr((char *)b.data, '/') : NULL;
            if (slash) b.len = (size_t)(slash - (char *)b.data);
        } else if (!(n == 1 && p[0] == '.')) {
            tl_buf_append_byte(&b, '/');
            tl_buf_append(&b, p, n);
        }
        p += n;
    }
    if (b.len == 0) tl_buf_append_byte(&b, '/');
    if (b.data) b.data[b.len] = '\0';
    return (char *)tl_buf_detach(&b, NULL);
}

tl_status tl_store_local_open(const char *path, tl_store **out, tl_error *err)
{
    local_store *ls = calloc(1, sizeof *ls);
    if (ls == NULL) return tl_error_nomem(err);
    ls->base.ops = &local_ops;
    tl_sync_set_init(&ls->unsynced);
    ls->root = normalize_path(path);
    ls->base.url =
        ls->root ? tl_strdup_printf("file://%s", strcmp(ls->root, "/") ? ls->root : "") : NULL;
    if (ls->base.url == NULL) {
        local_free(&ls->base);
        return tl_error_nomem(err);
    }
    *out = &ls->base;
    return TL_OK;
}
