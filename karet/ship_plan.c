/* Which files a pass of karet ship reads, oldest first: the log from the
 * saved offset; after a rotation by rename, the old file (found by inode among
 * the rotated files) from the offset, every file rotated after it, then the new
 * log from 0; after a truncation in place, the copy's tail when the copy is
 * there, then the log from 0. A file is recognised by its device, inode and the
 * bytes just before the offset, so a reused inode number is no match. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ship.h"

typedef struct candidate {
    char *path;
    struct stat st;
} candidate;

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "karet ship: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static bool is_gzip(const char *path)
{
    unsigned char m[2];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool gz = pread(fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b;
    close(fd);
    return gz;
}

/* A rotated file worth looking at: a plain (not compressed) regular file. */
static int add_candidate(candidate **list, size_t *len, const char *path, const struct stat *live)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (live && st.st_dev == live->st_dev && st.st_ino == live->st_ino) return 0;
    if (is_gzip(path)) return 0;
    candidate *l = realloc(*list, (*len + 1) * sizeof *l);
    if (l == NULL) return -1;
    *list = l;
    l[*len].path = strdup(path);
    l[*len].st = st;
    if (l[*len].path == NULL) return -1;
    (*len)++;
    return 0;
}

static int by_mtime(const void *a, const void *b)
{
    const struct stat *x = &((const candidate *)a)->st, *y = &((const candidate *)b)->st;
    if (x->st_mtim.tv_sec != y->st_mtim.tv_sec)
        return x->st_mtim.tv_sec < y->st_mtim.tv_sec ? -1 : 1;
    if (x->st_mtim.tv_nsec != y->st_mtim.tv_nsec)
        return x->st_mtim.tv_nsec < y->st_mtim.tv_nsec ? -1 : 1;
    return strcmp(((const candidate *)a)->path, ((const candidate *)b)->path);
}

/* The rotated files, oldest first: <log>.N ... <log>.1 (logrotate's numbers:
 * .1 is the newest), or the files matching the glob, by modification time. */
static int rotated_files(const ship_config *cfg, const struct stat *live, candidate **out,
                         size_t *len)
{
    *out = NULL, *len = 0;
    if (cfg->rotated == NULL) {
        char path[4200];
        int n = 0;
        for (int i = 1; i <= 1000; i++) {
            snprintf(path, sizeof path, "%s.%d", cfg->log, i);
            if (access(path, F_OK) != 0) break;
            n = i;
        }
        for (int i = n; i >= 1; i--) {
            snprintf(path, sizeof path, "%s.%d", cfg->log, i);
            if (add_candidate(out, len, path, live) != 0) return -1;
        }
        return 0;
    }
    glob_t g = {0};
    int rc = glob(cfg->rotated, 0, NULL, &g);
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
        if (add_candidate(out, len, g.gl_pathv[i], live) != 0) rc = -1;
    globfree(&g);
    if (rc == GLOB_NOMATCH) rc = 0;
    if (rc != 0) return -1;
    if (*len > 1) qsort(*out, *len, sizeof **out, by_mtime);
    return 0;
}

static void free_candidates(candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++) free(c[i].path);
    free(c);
}

int64_t ship_btime(int fd)
{
    struct statx x;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &x) != 0 || !(x.stx_mask & STATX_BTIME)) return 0;
    return (int64_t)x.stx_btime.tv_sec * 1000000000 + x.stx_btime.tv_nsec;
}

/* The file of the state: device and inode, and the birth time when the
 * filesystem keeps one (an inode number is reused once its file is deleted). */
static bool same_file(int fd, const struct stat *st, const ship_state *s)
{
    if ((uint64_t)st->st_dev != s->dev || (uint64_t)st->st_ino != s->ino) return false;
    int64_t b = ship_btime(fd);
    return b == 0 || s->btime_ns == 0 || b == s->btime_ns;
}

/* Whether the bytes before `offset` of the open file are the saved ones. */
static bool same_bytes(int fd, const ship_state *st)
{
    if (st->fp_len == 0) return true;
    if (st->offset < st->fp_len) return false;
    unsigned char buf[SHIP_FP_MAX];
    ssize_t n = pread(fd, buf, st->fp_len, (off_t)(st->offset - st->fp_len));
    return n == (ssize_t)st->fp_len && memcmp(buf, st->fp, st->fp_len) == 0;
}

static int add_segment(ship_plan *plan, const char *path, int fd, const struct stat *st,
                       uint64_t start, bool rotated)
{
    ship_segment *s = realloc(plan->segs, (plan->len + 1) * sizeof *s);
    if (s == NULL) return -1;
    plan->segs = s;
    s += plan->len;
    memset(s, 0, sizeof *s);
    s->path = strdup(path);
    s->fd = fd;
    s->dev = (uint64_t)st->st_dev, s->ino = (uint64_t)st->st_ino;
    s->btime_ns = ship_btime(fd);
    s->start = start, s->end = (uint64_t)st->st_size, s->rotated = rotated;
    if (s->path == NULL) return -1;
    plan->len++;
    return 0;
}

/* Opens path and adds it, reading from start. The fstat of the open file is
 * what counts (the name may move meanwhile). */
static int add_file(ship_plan *plan, const char *path, uint64_t start, bool rotated)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    if (add_segment(plan, path, fd, &st, start, rotated) != 0) {
        close(fd);
        return -1;
    }
    return 0;
}

void ship_plan_free(ship_plan *plan)
{
    for (size_t i = 0; i < plan->len; i++) {
        free(plan->segs[i].path);
        if (plan->segs[i].fd >= 0) close(plan->segs[i].fd);
    }
    free(plan->segs);
    memset(plan, 0, sizeof *plan);
}

/* After a truncation in place: logrotate's copytruncate left the old content
 * in a copy (a rotated file); ship its lines past the offset when its bytes
 * before the offset are the saved ones. Newest copy first. */
static int tail_from_copy(ship_plan *plan, candidate *c, size_t n, const ship_state *st)
{
    for (size_t i = n; i-- > 0;) {
        if ((uint64_t)c[i].st.st_size < st->offset) continue;
        int fd = open(c[i].path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        if (same_bytes(fd, st)) {
            warn("found the lines written before the truncation in its copy %s: shipping them "
                 "first",
                 c[i].path);
            if (add_segment(plan, c[i].path, fd, &c[i].st, st->offset, true) != 0) {
                close(fd);
                return -1;
            }
            return 0;
        }
        close(fd);
    }
    warn("WARNING: no copy of its old content was found among the rotated files: lines written "
         "to it after the last pass (past byte %llu) may be lost",
         (unsigned long long)st->offset);
    return 0;
}

static int plan_rotated(const ship_config *cfg, const ship_state *st, candidate *c, size_t n,
                        ship_plan *plan)
{
    size_t k = n;
    for (size_t i = 0; i < n && k == n; i++)
        if ((uint64_t)c[i].st.st_dev == st->dev && (uint64_t)c[i].st.st_ino == st->ino &&
            (uint64_t)c[i].st.st_size >= st->offset) {
            int fd = open(c[i].path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0 && same_file(fd, &c[i].st, st) && same_bytes(fd, st)) {
                k = i;
                if (add_segment(plan, c[i].path, fd, &c[i].st, st->offset, true) != 0) {
                    close(fd);
                    return -1;
                }
            } else if (fd >= 0) {
                close(fd);
            }
        }
    if (k < n) {
        if (!cfg->quiet)
            fprintf(stderr, "karet ship: %s was rotated: finishing %s from byte %llu first\n",
                    cfg->log, c[k].path, (unsigned long long)st->offset);
        for (size_t i = k + 1; i < n; i++)
            if (add_file(plan, c[i].path, 0, true) != 0) return -1;
        return 0;
    }
    warn("WARNING: %s was rotated, and the old file (inode %llu, shipped up to byte %llu) can "
         "no longer be found among the rotated files (%s): lines written to it after the last "
         "pass may be lost. Going on with %s.",
         cfg->log, (unsigned long long)st->ino, (unsigned long long)st->offset,
         cfg->rotated ? cfg->rotated : "<log>.1, <log>.2, ...", cfg->log);
    /* The files rotated since the last pass were written after it. */
    for (size_t i = 0; i < n; i++)
        if (c[i].st.st_mtim.tv_sec >= st->seen_s && add_file(plan, c[i].path, 0, true) != 0)
            return -1;
    return 0;
}

int ship_plan_make(const ship_config *cfg, const ship_state *st, ship_plan *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    int live_fd = open(cfg->log, O_RDONLY | O_CLOEXEC);
    struct stat live;
    if (live_fd < 0 && errno != ENOENT) {
        snprintf(err, errlen, "cannot read the log %s: %s", cfg->log, strerror(errno));
        return SHIP_ERR_LOG;
    }
    if (live_fd >= 0 && (fstat(live_fd, &live) != 0 || !S_ISREG(live.st_mode))) {
        close(live_fd);
        snprintf(err, errlen, "the log %s is not a regular file", cfg->log);
        return SHIP_ERR_LOG;
    }
    out->log_missing = live_fd < 0;
    if (live_fd < 0 && (st == NULL || !st->have_file)) {
        snprintf(err, errlen, "the log %s does not exist", cfg->log);
        return SHIP_ERR_LOG;
    }
    candidate *c = NULL;
    size_t n = 0;
    int rc = 0;
    bool same = live_fd >= 0 && st && st->have_file && same_file(live_fd, &live, st);
    if (st && st->have_file && !same && rotated_files(cfg, live_fd >= 0 ? &live : NULL, &c, &n))
        rc = -1;
    uint64_t start = 0;
    if (rc == 0 && same) {
        if ((uint64_t)live.st_size < st->offset || !same_bytes(live_fd, st)) {
            warn("%s was truncated in place (copytruncate) since the last pass, or replaced: "
                 "starting again from its first byte",
                 cfg->log);
            if (rotated_files(cfg, &live, &c, &n) != 0 || tail_from_copy(out, c, n, st) != 0)
                rc = -1;
        } else {
            start = st->offset;
        }
    } else if (rc == 0 && st && st->have_file) {
        rc = plan_rotated(cfg, st, c, n, out);
    }
    if (rc == 0 && live_fd >= 0) {
        if (add_segment(out, cfg->log, live_fd, &live, start, false) == 0)
            live_fd = -1;
        else
            rc = -1;
    }
    if (live_fd >= 0) close(live_fd);
    free_candidates(c, n);
    if (rc != 0) {
        snprintf(err, errlen, "cannot read the rotated files of %s: %s", cfg->log,
                 strerror(errno ? errno : ENOMEM));
        ship_plan_free(out);
        return SHIP_ERR_LOG;
    }
    return 0;
}
