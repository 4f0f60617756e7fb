/* karet ship's state: the position in the log and what a later pass must know
 * (the last upload name, a pending run request), kept as a small JSON file
 * replaced atomically, so a crash leaves the old position or the new one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_text.h"
#include "ship.h"

void ship_state_clear(ship_state *st)
{
    free(st->log), free(st->to), free(st->host);
    memset(st, 0, sizeof *st);
}

static void hex(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = 0;
}

static int unhex(const char *s, unsigned char *out, size_t max, size_t *len)
{
    size_t n = strlen(s);
    if (n % 2 || n / 2 > max) return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
        out[i] = (unsigned char)v;
    }
    *len = n / 2;
    return 0;
}

json_t *ship_state_to_json(const ship_state *st)
{
    char fp[2 * SHIP_FP_MAX + 1];
    hex(st->fp, st->fp_len, fp);
    json_t *j =
        json_pack("{s:i, s:s?, s:s?, s:s?, s:b, s:b}", "version", 1, "log", st->log, "to", st->to,
                  "host", st->host, "run_pending", st->run_pending, "have_file", st->have_file);
    if (j == NULL) return NULL;
    if (st->have_file)
        json_object_set_new(j, "file",
                            json_pack("{s:I, s:I, s:I, s:I, s:s}", "dev", (json_int_t)st->dev,
                                      "ino", (json_int_t)st->ino, "btime_ns",
                                      (json_int_t)st->btime_ns, "offset", (json_int_t)st->offset,
                                      "fp", fp));
    if (st->have_name)
        json_object_set_new(j, "last_name",
                            json_pack("{s:I, s:I, s:I}", "first", (json_int_t)st->name_first,
                                      "last", (json_int_t)st->name_last, "seq",
                                      (json_int_t)st->name_seq));
    json_object_set_new(j, "seen", json_integer(st->seen_s));
    return j;
}

static char *dup_str(const json_t *j, const char *key)
{
    const char *s = json_string_value(json_object_get(j, key));
    return s ? strdup(s) : NULL;
}

int ship_state_from_json(const json_t *j, ship_state *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(j) || json_integer_value(json_object_get(j, "version")) != 1) {
        snprintf(err, errlen, "not a karet ship state (version 1)");
        return -1;
    }
    out->log = dup_str(j, "log"), out->to = dup_str(j, "to"), out->host = dup_str(j, "host");
    out->run_pending = json_is_true(json_object_get(j, "run_pending"));
    out->seen_s = json_integer_value(json_object_get(j, "seen"));
    const json_t *f = json_object_get(j, "file");
    if (f) {
        json_int_t dev, ino, off, btime = 0;
        const char *fp;
        if (json_unpack((json_t *)f, "{s:I, s:I, s?I, s:I, s:s}", "dev", &dev, "ino", &ino,
                        "btime_ns", &btime, "offset", &off, "fp", &fp) != 0 ||
            off < 0 || unhex(fp, out->fp, sizeof out->fp, &out->fp_len) != 0) {
            snprintf(err, errlen, "its \"file\" entry is malformed");
            ship_state_clear(out);
            return -1;
        }
        out->dev = (uint64_t)dev, out->ino = (uint64_t)ino, out->offset = (uint64_t)off;
        out->btime_ns = btime;
        out->have_file = true;
    }
    const json_t *n = json_object_get(j, "last_name");
    if (n) {
        json_int_t a, b, c;
        if (json_unpack((json_t *)n, "{s:I, s:I, s:I}", "first", &a, "last", &b, "seq", &c) != 0) {
            snprintf(err, errlen, "its \"last_name\" entry is malformed");
            ship_state_clear(out);
            return -1;
        }
        out->name_first = a, out->name_last = b, out->name_seq = c;
        out->have_name = true;
    }
    return 0;
}

int ship_state_load(const char *path, ship_state *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (errno == ENOENT) return 0;
        snprintf(err, errlen, "cannot read the state %s: %s", path, strerror(errno));
        return -1;
    }
    json_error_t je;
    json_t *j = json_loadf(f, 0, &je);
    fclose(f);
    char why[256] = "";
    if (j == NULL) snprintf(why, sizeof why, "not JSON (%s)", je.text);
    int rc = j ? ship_state_from_json(j, out, why, sizeof why) : -1;
    json_decref(j);
    if (rc != 0) {
        snprintf(err, errlen,
                 "the state %s is damaged: %s; move it away to start again (the next pass then "
                 "ships the whole log, or resumes from the copy in the destination)",
                 path, why);
        return -1;
    }
    return 1;
}

static int fsync_dir(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
             slash ? path : ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* mkdir -p of the folder holding path. */
static int make_parent(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return 0;
}

int ship_state_save(const char *path, const ship_state *st, char *err, size_t errlen)
{
    json_t *j = ship_state_to_json(st);
    char *text = j ? kjson_dumps(j, JSON_INDENT(1)) : NULL;
    json_decref(j);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = -1, ok = 0;
    if (text && make_parent(path) == 0 &&
        (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0) {
        size_t n = strlen(text), done = 0;
        while (done < n) {
            ssize_t w = write(fd, text + done, n - done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            done += (size_t)w;
        }
        ok = done == n && fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        ok = ok && rename(tmp, path) == 0 && fsync_dir(path) == 0;
    }
    if (!ok) {
        snprintf(err, errlen, "cannot save the state %s: %s", path,
                 text ? strerror(errno) : "out of memory");
        if (fd >= 0) unlink(tmp);
    }
    free(text);
    return ok ? 0 : -1;
}

char *ship_default_state_path(const char *log_abs)
{
    const char *home = getenv("HOME");
    if (home == NULL || home[0] == 0) home = ".";
    /* FNV-1a of the whole path: two logs of one name in two folders differ. */
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)log_abs; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    const char *base = strrchr(log_abs, '/');
    base = base ? base + 1 : log_abs;
    size_t len = strlen(home) + strlen(base) + 64;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s/.karet/ship/%s-%016llx.json", home, base, (unsigned long long)h);
    return out;
}

void ship_remote_state_key(const char *name, char *out, size_t size)
{
    snprintf(out, size, ".karet-ship/%s.state", name);
}
