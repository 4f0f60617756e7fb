/* The local-disk backend. Every object is written to a temporary file, then
 * renamed into place (put_if_absent: unless there, see local_link.h), so a reader sees
 * the whole object or none of it; but a new object (put_new: a fresh name nothing
 * reads before a commit names it) is written in place. Durability: a put's file and directory are
 * fsynced at the latest by the next put_if_absent (the commit point; see
 * local_sync.h) before its link, and its own directory after it, before it
 * returns (put_if_absent_unsynced leaves that to the caller's sync, which
 * sync_begin may start on a pool thread meanwhile); a put_hint's file never
 * is (readers check a hint and do without).
 * Temporary files start with ".tmp-" and are never listed. */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/parallel.h"
#include "core/random.h"
#include "core/strlist.h"
#include "store/digest.h"
#include "store/local_link.h"
#include "store/local_sync.h"
#include "store/local_trash.h"
#include "store/store.h"

#define TMP_PREFIX ".tmp-"
#define MKDIR_TRIES 8

typedef struct local_store {
    tl_store base;
    char *root;           /* absolute directory path, no trailing slash */
    tl_sync_set unsynced; /* puts not yet known to be durable */
    tl_trash trash;       /* deletions nobody waits for */
    pthread_mutex_t begun_lock;
    tl_parallel_task *begun; /* a flush of unsynced begun by sync_begin, or NULL */
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
    return key[0] ? tl_strdup_cat3(ls->root, "/", key) : strdup(ls->root);
}

/* Remembers the directory of path for the next flush (a link into it). */
static tl_status add_dir_of(local_store *ls, const char *path, tl_error *err)
{
    char *dir = strdup(path);
    if (dir == NULL) return tl_error_nomem(err);
    char *slash = strrchr(dir, '/');
    if (slash != NULL) *slash = '\0';
    tl_status st = tl_sync_set_add_dir(&ls->unsynced, dir, err);
    free(dir);
    return st;
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
        tl_status st = rc == 0 ? tl_sync_set_add_dir(&ls->unsynced, path, err) : TL_OK;
        if (rc == 0 && st == TL_OK) st = add_dir_of(ls, path, err);
        *p = '/';
        if (st != TL_OK) return st;
        if (rc != 0 && e != EEXIST) {
            errno = e;
            return io_error(err, "creating directory for", path);
        }
    }
    return TL_OK;
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

/* One open file for every ranged read of a reader (store.h). */
typedef struct local_reader {
    tl_store_reader base;
    int fd;
    char *path;
} local_reader;

static tl_status local_reader_read(tl_store_reader *r, uint64_t offset, size_t len, uint8_t *dst,
                                   tl_error *err)
{
    local_reader *lr = (local_reader *)r;
    return read_fully(lr->fd, offset, dst, len, lr->path, err);
}

static void local_reader_close(tl_store_reader *r)
{
    local_reader *lr = (local_reader *)r;
    if (lr->fd >= 0) close(lr->fd);
    free(lr->path);
    free(lr);
}

static tl_status local_reader_open(tl_store *s, const char *key, tl_store_reader **out,
                                   tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_reader *lr = calloc(1, sizeof *lr);
    if (lr == NULL || (lr->path = path_of((local_store *)s, key)) == NULL) {
        free(lr);
        return tl_error_nomem(err);
    }
    lr->base.read = local_reader_read;
    lr->base.close = local_reader_close;
    lr->fd = open(lr->path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    tl_status st = TL_OK;
    if (lr->fd < 0 || fstat(lr->fd, &sb) != 0)
        st = io_error(err, "reading", lr->path);
    else if (S_ISDIR(sb.st_mode))
        st = tl_error_set(err, TL_ERR_NOT_FOUND, "reading %s: is a directory", lr->path);
    if (st != TL_OK) {
        local_reader_close(&lr->base);
        return st;
    }
    lr->base.size = (uint64_t)sb.st_size;
    *out = &lr->base;
    return TL_OK;
}

/* Creates the file `name` (O_EXCL) in the directory of `path` (and the
 * directories above it, when missing: most puts go where an earlier one
 * went, and a mkdir of each parent would cost a system call per level):
 * *fd_out is open for writing. *existed (may be NULL) says whether it
 * failed because `name` exists. */
static tl_status create_file(local_store *ls, char *path, const char *name, int *fd_out,
                             bool *existed, tl_error *err)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    /* A deletion that emptied the directory (the trash's, another writer's)
     * may remove it again between the mkdir and the open: retry. */
    for (int tries = 0; fd < 0 && errno == ENOENT && tries < MKDIR_TRIES; tries++) {
        TL_TRY(make_dirs(ls, path, err));
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    }
    if (existed) *existed = fd < 0 && errno == EEXIST;
    if (fd < 0) return io_error(err, "creating", name);
    *fd_out = fd;
    return TL_OK;
}

/* Creates a fresh temporary file beside `path`: *fd_out is open for
 * writing, *tmp_out gets its name. */
static tl_status open_temp(local_store *ls, char *path, int *fd_out, char **tmp_out, tl_error *err)
{
    char *slash = strrchr(path, '/');
    char rnd[TL_UUID_STR_LEN + 1];
    tl_uuid_v4(rnd);
    *slash = '\0';
    char *tmp = tl_strdup_cat3(path, "/" TMP_PREFIX, rnd);
    *slash = '/';
    if (tmp == NULL) return tl_error_nomem(err);
    tl_status st = create_file(ls, path, tmp, fd_out, NULL, err);
    if (st != TL_OK) {
        free(tmp);
        return st;
    }
    *tmp_out = tmp;
    return TL_OK;
}

/* How a file written is made durable. */
typedef enum written {
    WRITTEN_HINT,     /* never: the kernel writes it back when it likes */
    WRITTEN_LATER,    /* by a later flush: its writeback starts now */
    WRITTEN_FLUSHING, /* by the flush that follows at once, which starts it */
} written;

/* Writes data to the file `name` just created (fd, taken); on failure the
 * file is removed. A file some flush syncs (not a hint) stays open for it
 * when the sync set has room (*fd_out, reserved there; else -1). */
static tl_status fill_file(local_store *ls, int fd, const char *name, const void *data, size_t len,
                           written how, int *fd_out, tl_error *err)
{
    tl_status st = write_fully(fd, data, len, name, err);
    if (st == TL_OK && how == WRITTEN_LATER) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    bool keep = st == TL_OK && fd_out && tl_sync_set_reserve_fd(&ls->unsynced);
    if (!keep && close(fd) != 0 && st == TL_OK) st = io_error(err, "closing", name);
    if (st != TL_OK) {
        unlink(name);
        return st;
    }
    if (fd_out) *fd_out = keep ? fd : -1;
    return TL_OK;
}

/* Writes data to a fresh temporary file beside `path`; *tmp_out gets its
 * name, *fd_out as fill_file. */
static tl_status write_temp(local_store *ls, char *path, const void *data, size_t len, written how,
                            char **tmp_out, int *fd_out, tl_error *err)
{
    int fd = -1;
    char *tmp = NULL;
    TL_TRY(open_temp(ls, path, &fd, &tmp, err));
    tl_status st = fill_file(ls, fd, tmp, data, len, how, fd_out, err);
    if (st != TL_OK) {
        free(tmp);
        return st;
    }
    *tmp_out = tmp;
    return TL_OK;
}

/* A hint (store.h) is a put that nothing waits for: it is not remembered for
 * the next commit's fsyncs. */
static tl_status put_renamed(tl_store *s, const char *key, const void *data, size_t len, bool hint,
                             tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_store *ls = (local_store *)s;
    char *path = path_of(ls, key), *tmp = NULL;
    if (path == NULL) return tl_error_nomem(err);
    int fd = -1;
    tl_status st = write_temp(ls, path, data, len, hint ? WRITTEN_HINT : WRITTEN_LATER, &tmp,
                              hint ? NULL : &fd, err);
    if (st == TL_OK && rename(tmp, path) != 0) {
        st = io_error(err, "renaming into", path);
        unlink(tmp);
        tl_sync_set_drop_fd(&ls->unsynced, fd);
    }
    if (st == TL_OK && !hint) st = tl_sync_set_add_file(&ls->unsynced, path, fd, err);
    free(tmp);
    free(path);
    return st;
}

static tl_status local_put(tl_store *s, const char *key, const void *data, size_t len,
                           tl_error *err)
{
    return put_renamed(s, key, data, len, false, err);
}

static tl_status local_put_hint(tl_store *s, const char *key, const void *data, size_t len,
                                tl_error *err)
{
    return put_renamed(s, key, data, len, true, err);
}

/* A new object (store.h: a fresh name that nothing reads before a commit
 * names it) is written under its own name, created with O_EXCL: no
 * temporary file and no rename, so one directory entry made instead of two
 * and one changed less (each a journal update on ext4). A temporary and a
 * rename give a reader the whole object or none; here no reader looks until
 * the commit, which makes the file durable before it names it. A writer
 * killed midway leaves the file partly written under its name, which no
 * version names: orphan cleanup ages it by the UUIDv7 in its name, as it
 * does the files of commits that failed. A name that exists after all is
 * replaced as by a put. */
static tl_status local_put_new(tl_store *s, const char *key, const void *data, size_t len,
                               tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_store *ls = (local_store *)s;
    char *path = path_of(ls, key);
    if (path == NULL) return tl_error_nomem(err);
    int fd = -1;
    bool existed = false;
    tl_status st = create_file(ls, path, path, &fd, &existed, err);
    if (st != TL_OK && existed) {
        free(path);
        return put_renamed(s, key, data, len, false, err);
    }
    if (st == TL_OK) st = fill_file(ls, fd, path, data, len, WRITTEN_LATER, &fd, err);
    if (st == TL_OK) st = tl_sync_set_add_file(&ls->unsynced, path, fd, err);
    free(path);
    return st;
}

/* Takes the lock of path's directory for a fenced create (local_link.h);
 * *fd_out stays -1 where the file system has none. */
static tl_status lock_dir_of(const char *path, int *fd_out, tl_error *err)
{
    size_t n = (size_t)(strrchr(path, '/') - path);
    char *dir = malloc(n + 1);
    if (dir == NULL) return tl_error_nomem(err);
    memcpy(dir, path, n);
    dir[n] = '\0';
    tl_status st = tl_local_lock_dir(dir, fd_out) == 0 ? TL_OK : io_error(err, "locking", dir);
    free(dir);
    return st;
}

/* Under the directory's lock (with a fence, where the file system has
 * locks): the fence, then the move of tmp to path, which fails with EEXIST
 * when another writer won (atomic). Without locks the fence still runs just
 * before the move, which narrows what it guards against to a few
 * microseconds. */
static tl_status move_fenced(const char *tmp, const char *path, tl_store_fence fence, void *ctx,
                             bool *moved, tl_error *err)
{
    int lock = -1;
    if (fence) TL_TRY(lock_dir_of(path, &lock, err));
    tl_status st = fence ? fence(ctx, err) : TL_OK;
    *moved = st == TL_OK && tl_local_move_new(tmp, path) == 0;
    if (st == TL_OK && !*moved)
        st = errno == EEXIST ? tl_error_set(err, TL_ERR_EXISTS, "%s exists already", path)
                             : io_error(err, "linking", path);
    if (lock >= 0) close(lock);
    return st;
}

/* The commit point: everything put before it is ordered before it (a
 * barrier: durable first, or on a journal that commits in order at least
 * written back), then the object is moved into place; its directory joins
 * the fsyncs pending, for `durable` to sync now or the caller's
 * tl_store_sync later. */
static tl_status link_new(tl_store *s, const char *key, const void *data, size_t len, bool durable,
                          tl_store_fence fence, void *ctx, tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_store *ls = (local_store *)s;
    char *path = path_of(ls, key), *tmp = NULL;
    if (path == NULL) return tl_error_nomem(err);
    int fd = -1;
    bool moved = false;
    tl_status st = write_temp(ls, path, data, len, WRITTEN_FLUSHING, &tmp, &fd, err);
    if (st == TL_OK) st = tl_sync_set_add_file(&ls->unsynced, tmp, fd, err);
    if (st == TL_OK) st = tl_sync_set_barrier(&ls->unsynced, err);
    if (st == TL_OK) st = move_fenced(tmp, path, fence, ctx, &moved, err);
    if (tmp && !moved) unlink(tmp);
    if (st == TL_OK) st = add_dir_of(ls, path, err);
    if (st == TL_OK && durable) st = tl_sync_set_flush(&ls->unsynced, err);
    free(tmp);
    free(path);
    return st;
}

static tl_status local_put_if_absent(tl_store *s, const char *key, const void *data, size_t len,
                                     tl_error *err)
{
    return link_new(s, key, data, len, true, NULL, NULL, err);
}

static tl_status local_put_if_absent_unsynced(tl_store *s, const char *key, const void *data,
                                              size_t len, tl_error *err)
{
    return link_new(s, key, data, len, false, NULL, NULL, err);
}

static tl_status local_put_if_absent_fenced(tl_store *s, const char *key, const void *data,
                                            size_t len, bool durable, tl_store_fence fence,
                                            void *ctx, tl_error *err)
{
    return link_new(s, key, data, len, durable, fence, ctx, err);
}

static tl_status flush_item(void *ctx, size_t i, tl_error *err)
{
    (void)i;
    return tl_sync_set_flush(&((local_store *)ctx)->unsynced, err);
}

/* One flush on a pool thread at a time: a second begin finds it running
 * and leaves the rest to the sync that waits for it. */
static void local_sync_begin(tl_store *s)
{
    local_store *ls = (local_store *)s;
    pthread_mutex_lock(&ls->begun_lock);
    if (ls->begun == NULL) ls->begun = tl_parallel_start(flush_item, ls);
    pthread_mutex_unlock(&ls->begun_lock);
}

/* Waits for the flush begun, if any. Its failure needs no passing on: a
 * failed flush fails every later one (local_sync.h), the caller's too. */
static void join_begun(local_store *ls)
{
    pthread_mutex_lock(&ls->begun_lock);
    tl_parallel_task *task = ls->begun;
    ls->begun = NULL;
    pthread_mutex_unlock(&ls->begun_lock);
    if (task) tl_parallel_join(task, flush_item, ls, NULL);
}

static tl_status local_sync(tl_store *s, tl_error *err)
{
    join_begun((local_store *)s);
    return tl_sync_set_flush(&((local_store *)s)->unsynced, err);
}

/* Opens the directory of key rel; *out stays NULL when there is none. */
static tl_status open_dir(const local_store *ls, const char *rel, DIR **out, tl_error *err)
{
    char *dir = path_of(ls, rel);
    if (dir == NULL) return tl_error_nomem(err);
    *out = opendir(dir);
    tl_status st =
        *out || errno == ENOENT || errno == ENOTDIR ? TL_OK : io_error(err, "listing", dir);
    free(dir);
    return st;
}

static tl_status list_dir(const local_store *ls, const char *rel, const char *prefix,
                          tl_strlist *out, tl_error *err)
{
    DIR *d = NULL;
    TL_TRY(open_dir(ls, rel, &d, err));
    if (d == NULL) return TL_OK;
    tl_status st = TL_OK;
    struct dirent *e;
    /* What a file's name here must begin with, when the prefix ends in this
     * directory (a table's metadata/v: most of metadata/ is skipped unread). */
    size_t off = rel[0] ? strlen(rel) + 1 : 0;
    const char *rest = strlen(prefix) > off ? prefix + off : "";
    size_t rest_len = strchr(rest, '/') ? 0 : strlen(rest);
    while (st == TL_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue; /* ".", "..", temporary files */
        if (e->d_type == DT_REG && rest_len && strncmp(e->d_name, rest, rest_len) != 0) continue;
        char *key = rel[0] ? tl_strdup_cat3(rel, "/", e->d_name) : strdup(e->d_name);
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

/* Removes the directories above path (modified) left empty, up to the root
 * (rmdir refuses non-empty ones). */
static void prune_dirs(const local_store *ls, char *path)
{
    size_t root_len = strlen(ls->root);
    for (char *slash = strrchr(path, '/'); slash && (size_t)(slash - path) > root_len;
         slash = strrchr(path, '/')) {
        *slash = '\0';
        if (rmdir(path) != 0) break;
    }
}

/* Unlinks path (modified), then prunes the directories left empty. A
 * missing file, or a folder (no object), is no error. */
static tl_status remove_path(const local_store *ls, char *path, tl_error *err)
{
    if (unlink(path) != 0 && errno != ENOENT && errno != EISDIR)
        return io_error(err, "deleting", path);
    prune_dirs(ls, path);
    return TL_OK;
}

static tl_status local_remove(tl_store *s, const char *key, tl_error *err)
{
    TL_TRY(check_key(key, err));
    char *path = path_of((local_store *)s, key);
    if (path == NULL) return tl_error_nomem(err);
    tl_status st = remove_path((local_store *)s, path, err);
    free(path);
    return st;
}

/* The trash's deletion (local_trash.h), on its thread. */
static void trash_remove(void *ctx, const char *path, bool remove, bool prune)
{
    if (remove) unlink(path);
    char *copy = prune ? strdup(path) : NULL;
    if (copy) prune_dirs(ctx, copy);
    free(copy);
}

static bool local_remove_later(tl_store *s, const char *key)
{
    local_store *ls = (local_store *)s;
    char *path = check_key(key, NULL) == TL_OK ? path_of(ls, key) : NULL;
    bool there = path && tl_trash_add(&ls->trash, path);
    free(path);
    return there;
}

static void local_settle(tl_store *s)
{
    tl_trash_settle(&((local_store *)s)->trash);
}

static void local_free(tl_store *s)
{
    local_store *ls = (local_store *)s;
    join_begun(ls);
    pthread_mutex_destroy(&ls->begun_lock);
    tl_trash_destroy(&ls->trash);
    tl_sync_set_destroy(&ls->unsynced);
    free(ls->root);
    free(ls->base.url);
    free(ls);
}

/* ---- Objects with their times and versions (tl_store_list_objects, stat) ---- */

/* A version tag that changes whenever the file is replaced (a put renames a
 * new inode into place) or rewritten in place (size or mtime change). */
static int local_etag(const struct stat *sb, tl_store_listed *e)
{
    int64_t fields[5] = {(int64_t)sb->st_dev, (int64_t)sb->st_ino, (int64_t)sb->st_size,
                         (int64_t)sb->st_mtim.tv_sec, (int64_t)sb->st_mtim.tv_nsec};
    uint8_t md5[16];
    tl_md5(fields, sizeof fields, md5);
    char hex[33];
    tl_hex(md5, sizeof md5, hex);
    return tl_store_listed_set_etag(e, hex);
}

static int64_t mtime_ms(const struct stat *sb)
{
    return (int64_t)sb->st_mtim.tv_sec * 1000 + sb->st_mtim.tv_nsec / 1000000;
}

static tl_store_listed *add_file(tl_store_listing *out, const char *key, const struct stat *sb)
{
    tl_store_listed *e = tl_store_listing_add(out, key, (uint64_t)sb->st_size, NULL);
    if (e == NULL) return NULL;
    e->modified_ms = mtime_ms(sb);
    return local_etag(sb, e) == 0 ? e : NULL;
}

static bool listable_name(const char *name)
{
    return strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
           strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0;
}

/* Does the directory hold an object anywhere below it? (An object store has
 * no empty folders: a folder is there while some key lies under it.) */
static bool has_objects(int dirfd)
{
    DIR *d = fdopendir(dirfd);
    if (d == NULL) {
        close(dirfd);
        return false;
    }
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (!listable_name(e->d_name)) continue;
        struct stat sb;
        if (fstatat(dirfd, e->d_name, &sb, 0) != 0) continue;
        if (S_ISREG(sb.st_mode)) found = true;
        if (S_ISDIR(sb.st_mode) && e->d_type != DT_LNK) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            found = sub >= 0 && has_objects(sub);
        }
    }
    closedir(d);
    return found;
}

typedef struct walk {
    local_store *ls;
    const char *prefix;
    size_t prefix_len;
    bool recursive;
    tl_store_listing *out;
} walk;

static tl_status walk_dir(walk *w, const char *rel, tl_error *err);

/* One directory entry of a walk: a file under the prefix, a directory to
 * descend into, or (one level) a folder. Symbolic links to directories are
 * not followed (no loops); to files they are objects. */
static tl_status walk_entry(walk *w, DIR *d, const char *rel, const struct dirent *e, tl_error *err)
{
    struct stat sb;
    if (fstatat(dirfd(d), e->d_name, &sb, 0) != 0) return TL_OK; /* gone meanwhile */
    char *key = rel[0] ? tl_strdup_cat3(rel, "/", e->d_name) : strdup(e->d_name);
    if (key == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    if (S_ISREG(sb.st_mode)) {
        if (strncmp(key, w->prefix, w->prefix_len) == 0 && add_file(w->out, key, &sb) == NULL)
            st = tl_error_nomem(err);
    } else if (S_ISDIR(sb.st_mode) && e->d_type != DT_LNK) {
        char *folder =
            tl_strdup_printf("%s/", key); /* compared with the prefix as far as both go */
        size_t n = folder ? strlen(folder) : 0;
        if (folder == NULL) {
            st = tl_error_nomem(err);
        } else if (strncmp(folder, w->prefix, n < w->prefix_len ? n : w->prefix_len) != 0) {
            /* outside the prefix */
        } else if (n <= w->prefix_len || w->recursive) {
            st = walk_dir(w, key, err);
        } else {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            tl_store_listed *f = NULL;
            if (sub >= 0 && has_objects(sub)) {
                f = tl_store_listing_add(w->out, folder, 0, NULL);
                if (f == NULL)
                    st = tl_error_nomem(err);
                else
                    f->is_folder = true;
            }
        }
        free(folder);
    }
    free(key);
    return st;
}

static tl_status walk_dir(walk *w, const char *rel, tl_error *err)
{
    DIR *d = NULL;
    TL_TRY(open_dir(w->ls, rel, &d, err));
    if (d == NULL) return TL_OK;
    tl_status st = TL_OK;
    struct dirent *e;
    while (st == TL_OK && (e = readdir(d)) != NULL)
        if (listable_name(e->d_name)) st = walk_entry(w, d, rel, e, err);
    closedir(d);
    return st;
}

static tl_status local_list_objects(tl_store *s, const char *prefix, bool recursive,
                                    tl_store_listing *out, tl_error *err)
{
    char *rel = strdup(prefix);
    if (rel == NULL) return tl_error_nomem(err);
    char *slash = strrchr(rel, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        rel[0] = '\0';
    walk w = {(local_store *)s, prefix, strlen(prefix), recursive, out};
    tl_status st = rel[0] ? check_key(rel, err) : TL_OK;
    if (st == TL_OK) st = walk_dir(&w, rel, err);
    free(rel);
    return st;
}

static tl_status local_stat(tl_store *s, const char *key, tl_store_listed *out, tl_error *err)
{
    TL_TRY(check_key(key, err));
    char *path = path_of((local_store *)s, key);
    if (path == NULL) return tl_error_nomem(err);
    struct stat sb;
    tl_status st = TL_OK;
    memset(out, 0, sizeof *out);
    if (stat(path, &sb) != 0)
        st = io_error(err, "reading", path);
    else if (!S_ISREG(sb.st_mode))
        st = tl_error_set(err, TL_ERR_NOT_FOUND, "reading %s: not a file", path);
    if (st == TL_OK) {
        out->size = (uint64_t)sb.st_size;
        out->modified_ms = mtime_ms(&sb);
        if ((out->key = strdup(key)) == NULL || local_etag(&sb, out) != 0) {
            tl_store_listed_clear(out);
            st = tl_error_nomem(err);
        }
    }
    free(path);
    return st;
}

/* ---- Streaming writes: a temporary file renamed into place at finish ---- */

typedef struct local_writer {
    tl_store_writer base;
    local_store *ls;
    char *path, *tmp;
    int fd;
} local_writer;

static void local_writer_free(local_writer *w, bool unlink_tmp)
{
    if (w->fd >= 0) close(w->fd);
    if (unlink_tmp && w->tmp) unlink(w->tmp);
    free(w->tmp);
    free(w->path);
    free(w);
}

static tl_status local_writer_write(tl_store_writer *w_, const void *data, size_t len,
                                    tl_error *err)
{
    local_writer *w = (local_writer *)w_;
    return write_fully(w->fd, data, len, w->tmp, err);
}

/* Durable when it returns: the file, then its directory (and any directory
 * made for it) are fsynced around the rename. */
static tl_status local_writer_finish(tl_store_writer *w_, tl_error *err)
{
    local_writer *w = (local_writer *)w_;
    tl_status st = fsync(w->fd) == 0 ? TL_OK : io_error(err, "syncing", w->tmp);
    if (close(w->fd) != 0 && st == TL_OK) st = io_error(err, "closing", w->tmp);
    w->fd = -1;
    if (st == TL_OK && rename(w->tmp, w->path) != 0) st = io_error(err, "renaming into", w->path);
    if (st == TL_OK) st = tl_sync_set_add_file(&w->ls->unsynced, w->path, -1, err);
    if (st == TL_OK) st = tl_sync_set_flush(&w->ls->unsynced, err);
    local_writer_free(w, st != TL_OK);
    return st;
}

static void local_writer_abort(tl_store_writer *w)
{
    local_writer_free((local_writer *)w, true);
}

static tl_status local_writer_open(tl_store *s, const char *key, tl_store_writer **out,
                                   tl_error *err)
{
    TL_TRY(check_key(key, err));
    local_writer *w = calloc(1, sizeof *w);
    if (w == NULL) return tl_error_nomem(err);
    w->base = (tl_store_writer){local_writer_write, local_writer_finish, local_writer_abort};
    w->ls = (local_store *)s;
    w->fd = -1;
    w->path = path_of(w->ls, key);
    tl_status st = w->path ? open_temp(w->ls, w->path, &w->fd, &w->tmp, err) : tl_error_nomem(err);
    if (st != TL_OK) {
        local_writer_free(w, true);
        return st;
    }
    *out = &w->base;
    return TL_OK;
}

static tl_status local_size(tl_store *s, const char *key, uint64_t *out, tl_error *err)
{
    tl_store_listed e;
    TL_TRY(local_stat(s, key, &e, err));
    *out = e.size;
    tl_store_listed_clear(&e);
    return TL_OK;
}

/* Removes the temporary files under the directory dirfd (taken over) old
 * enough, recursively; with no age, the directories left empty too. */
static void sweep_dir(int dirfd, int64_t cutoff_ms, bool all, int64_t *removed)
{
    DIR *d = fdopendir(dirfd);
    if (d == NULL) {
        close(dirfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat sb;
        if (fstatat(dirfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) sweep_dir(sub, cutoff_ms, all, removed);
            if (all) unlinkat(dirfd, e->d_name, AT_REMOVEDIR); /* refused unless empty */
        } else if (S_ISREG(sb.st_mode) && strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0 &&
                   (all || mtime_ms(&sb) <= cutoff_ms) && unlinkat(dirfd, e->d_name, 0) == 0) {
            (*removed)++;
        }
    }
    closedir(d);
}

/* The prefix's directory ("ns/t/" and "ns/t/x" both start at ns/t). Only a
 * writer's own temporaries go; with no age, empty directories up to the root
 * too (a writer racing this loses its put, as it would to the removal). */
static tl_status local_sweep(tl_store *s, const char *prefix, int64_t min_age_ms, int64_t *removed,
                             tl_error *err)
{
    local_store *ls = (local_store *)s;
    char *rel = strdup(prefix);
    if (rel == NULL) return tl_error_nomem(err);
    char *slash = strrchr(rel, '/');
    if (slash)
        *slash = '\0';
    else
        rel[0] = '\0';
    tl_status st = rel[0] ? check_key(rel, err) : TL_OK;
    char *path = st == TL_OK ? path_of(ls, rel) : NULL;
    if (st == TL_OK && path == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int64_t cutoff = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - min_age_ms;
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) sweep_dir(fd, cutoff, min_age_ms <= 0, removed);
        size_t root_len = strlen(ls->root);
        for (char *p = path + strlen(path); min_age_ms <= 0 && rel[0] && p;
             p = strrchr(path, '/')) {
            *p = '\0';
            if (strlen(path) <= root_len || rmdir(path) != 0) break;
        }
    }
    free(path);
    free(rel);
    return st;
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
    .list_objects = local_list_objects,
    .stat = local_stat,
    .writer_open = local_writer_open,
    .sweep = local_sweep,
    .remove_later = local_remove_later,
    .settle = local_settle,
    .put_hint = local_put_hint,
    .put_new = local_put_new,
    .put_if_absent_unsynced = local_put_if_absent_unsynced,
    .sync = local_sync,
    .sync_begin = local_sync_begin,
    .put_if_absent_fenced = local_put_if_absent_fenced,
    .reader_open = local_reader_open,
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
    pthread_mutex_init(&ls->begun_lock, NULL);
    tl_trash_init(&ls->trash, trash_remove, ls);
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
