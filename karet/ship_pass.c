/* One pass of karet ship: read the planned files a chunk at a time, cut them
 * at record ends into upload files of at most max_file_size bytes (each CSV
 * file starting with the header), stream each to the destination, and save the
 * position after each upload; then ask for a run. Memory stays at a chunk (plus
 * the longest line and the store's upload buffer), whatever the backlog. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "json_text.h"
#include "ship.h"

#define CHUNK (1u << 20)
#define ZOUT (256u << 10)

typedef struct pass {
    const ship_config *cfg;
    ship_state st;   /* what is saved */
    bool have_state; /* a state (local or the destination's copy) was found */
    tl_lake *lake;
    int64_t first, last, seq; /* the name of the next upload */
    /* the upload being written */
    tl_object_writer *w;
    z_stream z;
    bool z_on;
    unsigned char *zbuf;
    char key[1200];
    uint64_t out_size, out_data;
    char *out_header;
    size_t out_header_len;
    /* how far what is uploaded or in the open upload reaches */
    const ship_segment *pos_seg;
    uint64_t pos_off;
    /* totals */
    uint64_t lines, bytes, files;
    char first_key[1200], last_key[1200];
    char err[2048];
} pass;

/* ---- records: lines, or CSV records (a newline inside quotes is data) ---- */

/* The length of the complete records at the start of p[0..n): 0 when none. */
static size_t records_end(const pass *ps, const char *p, size_t n)
{
    if (!ps->cfg->csv) {
        const char *nl = memrchr(p, '\n', n);
        return nl ? (size_t)(nl - p) + 1 : 0;
    }
    size_t end = 0;
    bool quoted = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"')
            quoted = !quoted;
        else if (p[i] == '\n' && !quoted)
            end = i + 1;
    }
    return end;
}

/* The length of the first record of p[0..n): 0 when it is not complete. */
static size_t first_record(const pass *ps, const char *p, size_t n)
{
    bool quoted = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"' && ps->cfg->csv)
            quoted = !quoted;
        else if (p[i] == '\n' && !quoted)
            return i + 1;
    }
    return 0;
}

/* ---- the destination ---- */

static int dest_fail(pass *ps, const char *what, const tl_error *e)
{
    snprintf(ps->err, sizeof ps->err,
             "cannot %s %s: %s. Nothing moved on: the next pass sends the same lines.", what,
             ps->cfg->to, e->message);
    return SHIP_ERR_DEST;
}

static int parse_name(const char *key, const char *stem, int64_t *first, int64_t *last,
                      int64_t *seq)
{
    size_t n = strlen(stem);
    if (strncmp(key, stem, n) != 0 || key[n] != '_') return -1;
    const char *r = key + n + 1;
    long long a, b, c;
    int used = 0;
    if (strlen(r) < 29 || sscanf(r, "%10lld_%10lld_%6lld.%n", &a, &b, &c, &used) != 3 || used != 29)
        return -1;
    *first = a, *last = b, *seq = c;
    return 0;
}

/* With no state at all, the names already in the destination say where the
 * next name must start, so that names keep growing and none is reused. */
static int names_from_listing(pass *ps)
{
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s_", ps->cfg->name);
    tl_object *objs = NULL;
    size_t n = 0;
    tl_error e = {0};
    if (tl_lake_list_objects(ps->lake, prefix, 0, &objs, &n, &e) != TL_OK)
        return dest_fail(ps, "list", &e);
    for (size_t i = 0; i < n; i++) {
        int64_t a, b, c;
        if (parse_name(objs[i].key, ps->cfg->name, &a, &b, &c) != 0) continue;
        if (!ps->st.have_name || a > ps->st.name_first ||
            (a == ps->st.name_first &&
             (b > ps->st.name_last || (b == ps->st.name_last && c > ps->st.name_seq)))) {
            ps->st.name_first = a, ps->st.name_last = b, ps->st.name_seq = c;
            ps->st.have_name = true;
        }
    }
    tl_objects_free(objs, n);
    return 0;
}

static int open_lake(pass *ps)
{
    if (ps->lake) return 0;
    tl_error e = {0};
    if (tl_lake_open(ps->cfg->to, (const char *const *)ps->cfg->storage_options, &ps->lake, &e) !=
        TL_OK)
        return dest_fail(ps, "open", &e);
    return 0;
}

/* No local state: resume from the copy in the destination, if it is ours. */
static int load_remote_state(pass *ps)
{
    char key[600];
    ship_remote_state_key(ps->cfg->name, key, sizeof key);
    void *data = NULL;
    size_t len = 0;
    tl_error e = {0};
    tl_status s = tl_lake_get_object(ps->lake, key, &data, &len, &e);
    if (s == TL_ERR_NOT_FOUND) return names_from_listing(ps);
    if (s != TL_OK) return dest_fail(ps, "read the state's copy in", &e);
    json_t *j = kjson_loadb(data, len, 0, NULL);
    tl_free(data);
    ship_state remote;
    char why[256] = "not JSON";
    int rc = j ? ship_state_from_json(j, &remote, why, sizeof why) : -1;
    json_decref(j);
    if (rc != 0) {
        snprintf(ps->err, sizeof ps->err,
                 "the state's copy %s in %s is damaged (%s): delete it, or give --name another "
                 "name",
                 key, ps->cfg->to, why);
        return SHIP_ERR_DEST;
    }
    if (!remote.log || strcmp(remote.log, ps->cfg->log) != 0 || !remote.host ||
        strcmp(remote.host, ps->st.host) != 0) {
        snprintf(ps->err, sizeof ps->err,
                 "%s already receives the log %s of host %s under the name \"%s\": give this "
                 "log its own --name, so that neither overwrites the other's files",
                 ps->cfg->to, remote.log ? remote.log : "?", remote.host ? remote.host : "?",
                 ps->cfg->name);
        ship_state_clear(&remote);
        return SHIP_ERR_USAGE;
    }
    if (!ps->cfg->quiet)
        fprintf(stderr, "karet ship: no state at %s: resuming from its copy in %s\n",
                ps->cfg->state_path, ps->cfg->to);
    free(remote.log), free(remote.to), free(remote.host);
    remote.log = ps->st.log, remote.to = ps->st.to, remote.host = ps->st.host;
    ps->st = remote;
    ps->have_state = true;
    return 0;
}

static void save_remote_state(pass *ps)
{
    char key[600];
    ship_remote_state_key(ps->cfg->name, key, sizeof key);
    json_t *j = ship_state_to_json(&ps->st);
    char *text = j ? kjson_dumps(j, JSON_INDENT(1)) : NULL;
    json_decref(j);
    tl_error e = {0};
    if (text == NULL || tl_lake_put_object(ps->lake, key, text, strlen(text), &e) != TL_OK)
        fprintf(stderr,
                "karet ship: could not update the state's copy %s in %s (%s); the local state "
                "is saved\n",
                key, ps->cfg->to, text ? e.message : "out of memory");
    free(text);
}

/* ---- upload files ---- */

static int out_write(pass *ps, const void *data, size_t n)
{
    tl_error e = {0};
    if (!ps->z_on) {
        if (tl_object_writer_write(ps->w, data, n, &e) != TL_OK)
            return dest_fail(ps, "upload to", &e);
        return 0;
    }
    ps->z.next_in = (unsigned char *)data;
    ps->z.avail_in = (uInt)n;
    while (ps->z.avail_in > 0) {
        ps->z.next_out = ps->zbuf, ps->z.avail_out = ZOUT;
        if (deflate(&ps->z, Z_NO_FLUSH) == Z_STREAM_ERROR) {
            snprintf(ps->err, sizeof ps->err, "gzip failed");
            return SHIP_ERR_DEST;
        }
        size_t have = ZOUT - ps->z.avail_out;
        if (have && tl_object_writer_write(ps->w, ps->zbuf, have, &e) != TL_OK)
            return dest_fail(ps, "upload to", &e);
    }
    return 0;
}

static int save_state(pass *ps);

static int out_open(pass *ps, const char *header, size_t header_len)
{
    int rc = open_lake(ps);
    if (rc) return rc;
    if (ps->seq > 999999) {
        snprintf(ps->err, sizeof ps->err,
                 "a million files in one second: stopping this pass (the next goes on)");
        return SHIP_ERR_DEST;
    }
    snprintf(ps->key, sizeof ps->key, "%s_%010lld_%010lld_%06lld.%s%s", ps->cfg->name,
             (long long)ps->first, (long long)ps->last, (long long)ps->seq,
             ps->cfg->csv ? "csv" : "ndjson", ps->cfg->gzip ? ".gz" : "");
    /* The name is taken before the upload: should this process die between
     * the upload and the position's save, the next pass still names its
     * upload (of the same lines) after this one, never over it. */
    ps->st.name_first = ps->first, ps->st.name_last = ps->last, ps->st.name_seq = ps->seq;
    ps->st.have_name = true;
    if ((rc = save_state(ps)) != 0) return rc;
    tl_error e = {0};
    if (tl_object_writer_open(ps->lake, ps->key, &ps->w, &e) != TL_OK)
        return dest_fail(ps, "upload to", &e);
    if (ps->cfg->gzip) {
        memset(&ps->z, 0, sizeof ps->z);
        if (ps->zbuf == NULL && (ps->zbuf = malloc(ZOUT)) == NULL) {
            snprintf(ps->err, sizeof ps->err, "out of memory");
            return SHIP_ERR_DEST;
        }
        if (deflateInit2(&ps->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            snprintf(ps->err, sizeof ps->err, "gzip failed to start");
            return SHIP_ERR_DEST;
        }
        ps->z_on = true;
    }
    ps->out_size = ps->out_data = 0;
    free(ps->out_header);
    ps->out_header = NULL, ps->out_header_len = 0;
    if (header_len) {
        if ((ps->out_header = malloc(header_len)) == NULL) {
            snprintf(ps->err, sizeof ps->err, "out of memory");
            return SHIP_ERR_DEST;
        }
        memcpy(ps->out_header, header, header_len);
        ps->out_header_len = header_len;
        ps->out_size = header_len;
        return out_write(ps, header, header_len);
    }
    return 0;
}

static void out_drop(pass *ps)
{
    tl_object_writer_abort(ps->w);
    ps->w = NULL;
    if (ps->z_on) deflateEnd(&ps->z);
    ps->z_on = false;
}

/* The state at the current position, with the bytes before it. */
static void state_at_pos(pass *ps)
{
    const ship_segment *s = ps->pos_seg;
    ps->st.have_file = true;
    ps->st.dev = s->dev, ps->st.ino = s->ino, ps->st.offset = ps->pos_off;
    ps->st.btime_ns = s->btime_ns;
    size_t k = ps->pos_off < SHIP_FP_MAX ? (size_t)ps->pos_off : SHIP_FP_MAX;
    ssize_t got = k ? pread(s->fd, ps->st.fp, k, (off_t)(ps->pos_off - k)) : 0;
    ps->st.fp_len = got == (ssize_t)k ? k : 0;
    ps->st.seen_s = time(NULL);
}

static int save_state(pass *ps)
{
    char why[600];
    if (ship_state_save(ps->cfg->state_path, &ps->st, why, sizeof why) != 0) {
        snprintf(ps->err, sizeof ps->err,
                 "%s. Nothing is lost: the next pass sends again the lines this one could not "
                 "record as shipped.",
                 why);
        return SHIP_ERR_LOG;
    }
    return 0;
}

/* Completes the open upload; then the position moves on (saved at once). */
static int out_finish(pass *ps)
{
    tl_error e = {0};
    if (ps->z_on) {
        ps->z.next_in = NULL, ps->z.avail_in = 0;
        int zr;
        do {
            ps->z.next_out = ps->zbuf, ps->z.avail_out = ZOUT;
            zr = deflate(&ps->z, Z_FINISH);
            size_t have = ZOUT - ps->z.avail_out;
            if (have && tl_object_writer_write(ps->w, ps->zbuf, have, &e) != TL_OK) {
                out_drop(ps);
                return dest_fail(ps, "upload to", &e);
            }
        } while (zr == Z_OK);
        deflateEnd(&ps->z);
        ps->z_on = false;
    }
    tl_object_writer *w = ps->w;
    ps->w = NULL;
    if (tl_object_writer_finish(w, &e) != TL_OK) return dest_fail(ps, "upload to", &e);
    ps->files++;
    ps->bytes += ps->out_data;
    if (ps->files == 1) snprintf(ps->first_key, sizeof ps->first_key, "%s", ps->key);
    snprintf(ps->last_key, sizeof ps->last_key, "%s", ps->key);
    ps->st.name_first = ps->first, ps->st.name_last = ps->last, ps->st.name_seq = ps->seq;
    ps->st.have_name = true;
    ps->seq++;
    if (ps->cfg->run_url) ps->st.run_pending = true;
    state_at_pos(ps);
    return save_state(ps);
}

static void count_lines(pass *ps, const char *p, size_t n)
{
    for (const char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++) ps->lines++;
}

/* Adds records p[0..n) (complete, read from seg at off; the first src_len
 * bytes come from the file, the rest was added) to the uploads, cutting at
 * record ends to keep each upload within max_file_size. */
static int emit(pass *ps, const char *p, size_t n, size_t src_len, const ship_segment *seg,
                uint64_t off, const char *header, size_t header_len)
{
    uint64_t max = ps->cfg->max_file_size;
    int rc;
    while (n > 0) {
        if (ps->w == NULL && (rc = out_open(ps, header, header_len)) != 0) return rc;
        uint64_t room = max > ps->out_size ? max - ps->out_size : 0;
        size_t cut = n <= room ? n : records_end(ps, p, (size_t)room);
        if (cut == 0 && ps->out_data > 0) {
            if ((rc = out_finish(ps)) != 0) return rc;
            continue;
        }
        if (cut == 0 && (cut = first_record(ps, p, n)) == 0) cut = n; /* one long record */
        if ((rc = out_write(ps, p, cut)) != 0) return rc;
        count_lines(ps, p, cut);
        ps->out_size += cut, ps->out_data += cut;
        size_t src = cut < src_len ? cut : src_len;
        ps->pos_seg = seg, ps->pos_off = off + src;
        if (cut < n && (rc = out_finish(ps)) != 0) return rc;
        p += cut, n -= cut, off += src, src_len -= src;
    }
    return 0;
}

/* ---- reading ---- */

typedef struct reader {
    char *buf;
    size_t cap, len; /* buf[0..len) holds the bytes from off on */
    uint64_t off;
} reader;

/* Reads more of seg after what buf holds (up to seg->end). 0 at the end. */
static ssize_t fill(reader *r, const ship_segment *seg)
{
    uint64_t at = r->off + r->len;
    if (at >= seg->end) return 0;
    if (r->len == r->cap) {
        size_t cap = r->cap * 2;
        char *b = realloc(r->buf, cap + 1);
        if (b == NULL) return -1;
        r->buf = b, r->cap = cap;
    }
    size_t want = r->cap - r->len;
    if (want > seg->end - at) want = (size_t)(seg->end - at);
    ssize_t got;
    do got = pread(seg->fd, r->buf + r->len, want, (off_t)at);
    while (got < 0 && errno == EINTR);
    if (got > 0) r->len += (size_t)got;
    return got;
}

static void consume(reader *r, size_t n)
{
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n, r->off += n;
}

/* The header of a CSV file read from the middle: its first record. */
static int read_header(pass *ps, const ship_segment *seg, char **out, size_t *out_len)
{
    reader r = {malloc(65536 + 1), 65536, 0, 0};
    ship_segment whole = *seg;
    whole.end = whole.end > seg->start ? seg->start : whole.end;
    size_t h = 0;
    ssize_t got = 1;
    while (r.buf && (h = first_record(ps, r.buf, r.len)) == 0 && (got = fill(&r, &whole)) > 0) {
    }
    if (h == 0) {
        free(r.buf);
        snprintf(ps->err, sizeof ps->err,
                 "cannot read the header line of %s (the file's first line)", seg->path);
        return SHIP_ERR_LOG;
    }
    *out = r.buf, *out_len = h;
    return 0;
}

/* A new header (another file's) starts a new upload. */
static int switch_header(pass *ps, const char *h, size_t n)
{
    if (ps->w && ps->out_data > 0 && (ps->out_header_len != n || memcmp(ps->out_header, h, n) != 0))
        return out_finish(ps);
    if (ps->w && ps->out_data == 0) out_drop(ps); /* reopened with the new header */
    return 0;
}

static int ship_segment_lines(pass *ps, const ship_segment *seg, reader *r)
{
    const ship_config *cfg = ps->cfg;
    char *header = NULL;
    size_t header_len = 0;
    bool need_header = cfg->csv && !cfg->header && seg->start == 0;
    int rc = 0;
    r->len = 0, r->off = seg->start;
    ps->pos_seg = seg, ps->pos_off = seg->start;
    if (cfg->csv && cfg->header) {
        header = strdup(cfg->header);
        header_len = strlen(cfg->header);
    } else if (cfg->csv && !need_header && (rc = read_header(ps, seg, &header, &header_len)) != 0) {
        return rc;
    }
    if (header && (rc = switch_header(ps, header, header_len)) != 0) goto done;
    ssize_t got;
    while ((got = fill(r, seg)) > 0) {
        if (need_header) {
            size_t h = first_record(ps, r->buf, r->len);
            if (h == 0) continue;
            header = malloc(h);
            if (header == NULL) goto oom;
            memcpy(header, r->buf, h);
            header_len = h;
            consume(r, h);
            ps->pos_off = r->off;
            need_header = false;
            if ((rc = switch_header(ps, header, header_len)) != 0) goto done;
        }
        size_t end = records_end(ps, r->buf, r->len);
        if (end == 0) continue;
        if ((rc = emit(ps, r->buf, end, end, seg, r->off, header, header_len)) != 0) goto done;
        consume(r, end);
    }
    if (got < 0) {
        snprintf(ps->err, sizeof ps->err, "cannot read %s: %s", seg->path, strerror(errno));
        rc = SHIP_ERR_LOG;
        goto done;
    }
    /* A rotated file is finished: its last line counts, newline or not. */
    if (seg->rotated && r->len > 0 && !need_header) {
        size_t n = r->len;
        r->buf[n] = '\n'; /* the buffer has a byte to spare */
        if (!cfg->quiet)
            fprintf(stderr,
                    "karet ship: %s ends without a newline: its last line is shipped as it is\n",
                    seg->path);
        rc = emit(ps, r->buf, n + 1, n, seg, r->off, header, header_len);
    }
done:
    free(header);
    return rc;
oom:
    free(header);
    snprintf(ps->err, sizeof ps->err, "out of memory");
    return SHIP_ERR_LOG;
}

/* ---- the pass ---- */

static void next_name(pass *ps)
{
    int64_t now = (int64_t)time(NULL);
    if (ps->st.have_name) {
        ps->first = ps->st.name_last;
        ps->last = now > ps->st.name_last ? now : ps->st.name_last;
        ps->seq = ps->first == ps->st.name_first && ps->last == ps->st.name_last
                      ? ps->st.name_seq + 1
                      : 0;
    } else {
        ps->first = ps->last = now, ps->seq = 0;
    }
}

static int check_owner(pass *ps)
{
    if (ps->st.log && strcmp(ps->st.log, ps->cfg->log) != 0) {
        snprintf(ps->err, sizeof ps->err,
                 "the state %s belongs to the log %s, not %s: give each log its own --state",
                 ps->cfg->state_path, ps->st.log, ps->cfg->log);
        return SHIP_ERR_USAGE;
    }
    if (ps->st.to && strcmp(ps->st.to, ps->cfg->to) != 0) {
        snprintf(ps->err, sizeof ps->err,
                 "the state %s ships %s to %s, not %s: give --state FILE to ship it to a second "
                 "place",
                 ps->cfg->state_path, ps->cfg->log, ps->st.to, ps->cfg->to);
        return SHIP_ERR_USAGE;
    }
    return 0;
}

static int load(pass *ps)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    int got = ship_state_load(ps->cfg->state_path, &ps->st, ps->err, sizeof ps->err);
    if (got < 0) return SHIP_ERR_LOG;
    ps->have_state = got == 1;
    int rc = check_owner(ps);
    if (rc) return rc;
    free(ps->st.log), free(ps->st.to), free(ps->st.host);
    ps->st.log = strdup(ps->cfg->log), ps->st.to = strdup(ps->cfg->to), ps->st.host = strdup(host);
    if (!ps->st.log || !ps->st.to || !ps->st.host) {
        snprintf(ps->err, sizeof ps->err, "out of memory");
        return SHIP_ERR_LOG;
    }
    if (!ps->have_state) {
        if ((rc = open_lake(ps)) != 0 || (rc = load_remote_state(ps)) != 0) return rc;
    }
    return 0;
}

static void human(uint64_t b, char *out, size_t size)
{
    if (b < 10000)
        snprintf(out, size, "%llu bytes", (unsigned long long)b);
    else if (b < 10000000)
        snprintf(out, size, "%.1f kB", (double)b / 1e3);
    else
        snprintf(out, size, "%.1f MB", (double)b / 1e6);
}

static int request_run(pass *ps)
{
    char job[128] = "", msg[1024] = "";
    long code =
        ship_request_run(ps->cfg->run_url, ps->cfg->token, job, sizeof job, msg, sizeof msg);
    if (code >= 200 && code < 300) {
        ps->st.run_pending = false;
        int rc = save_state(ps);
        if (!ps->cfg->quiet) printf("karet ship: run requested%s%s\n", job[0] ? ": " : "", job);
        return rc;
    }
    const char *later = "The data is in the lake; the run request is sent again on the next pass.";
    if (code == 401 || code == 403) {
        snprintf(ps->err, sizeof ps->err,
                 "%s refused the token (HTTP %ld): check KARET_WORKER_TOKEN. %s", ps->cfg->run_url,
                 code, later);
        return SHIP_ERR_TOKEN;
    }
    if (code < 0)
        snprintf(ps->err, sizeof ps->err, "cannot reach the run URL %s: %s. %s", ps->cfg->run_url,
                 msg, later);
    else
        snprintf(ps->err, sizeof ps->err, "the run URL %s answered HTTP %ld%s%s. %s",
                 ps->cfg->run_url, code, msg[0] ? ": " : "", msg, later);
    return SHIP_ERR_RUN;
}

static int run_pass(pass *ps)
{
    int rc = load(ps);
    if (rc) return rc;
    ship_plan plan;
    rc = ship_plan_make(ps->cfg, ps->have_state ? &ps->st : NULL, &plan, ps->err, sizeof ps->err);
    if (rc) return rc;
    next_name(ps);
    reader r = {malloc(CHUNK + 1), CHUNK, 0, 0};
    if (r.buf == NULL) {
        ship_plan_free(&plan);
        snprintf(ps->err, sizeof ps->err, "out of memory");
        return SHIP_ERR_LOG;
    }
    for (size_t i = 0; i < plan.len && rc == 0; i++) rc = ship_segment_lines(ps, &plan.segs[i], &r);
    if (rc == 0 && ps->w) {
        if (ps->out_data > 0)
            rc = out_finish(ps);
        else
            out_drop(ps);
    }
    if (ps->w) out_drop(ps);
    free(r.buf);
    /* The position may have moved over what needs no upload (a header, an
     * empty rotated tail, a new log): keep it too. */
    if (rc == 0 && plan.len > 0) {
        bool moved = !ps->st.have_file || ps->st.dev != ps->pos_seg->dev ||
                     ps->st.btime_ns != ps->pos_seg->btime_ns || ps->st.ino != ps->pos_seg->ino ||
                     ps->st.offset != ps->pos_off;
        if (moved) {
            state_at_pos(ps);
            rc = save_state(ps);
        }
    }
    if (ps->files > 0) save_remote_state(ps);
    if (rc == 0 && !ps->cfg->quiet) {
        char size[64];
        human(ps->bytes, size, sizeof size);
        if (ps->files == 0)
            printf("karet ship: nothing new in %s\n", ps->cfg->log);
        else if (ps->files == 1)
            printf("karet ship: shipped %llu line%s (%s) of %s as %s\n",
                   (unsigned long long)ps->lines, ps->lines == 1 ? "" : "s", size, ps->cfg->log,
                   ps->last_key);
        else
            printf("karet ship: shipped %llu line%s (%s) of %s in %llu files, %s to %s\n",
                   (unsigned long long)ps->lines, ps->lines == 1 ? "" : "s", size, ps->cfg->log,
                   (unsigned long long)ps->files, ps->first_key, ps->last_key);
        if (plan.log_missing)
            printf("karet ship: %s is not there (yet): the next pass ships it once it is\n",
                   ps->cfg->log);
        fflush(stdout);
    }
    ship_plan_free(&plan);
    if (rc == 0 && ps->st.run_pending && ps->cfg->run_url) rc = request_run(ps);
    return rc;
}

int ship_pass(const ship_config *cfg)
{
    pass ps = {.cfg = cfg};
    int rc = run_pass(&ps);
    if (rc) fprintf(stderr, "karet ship: error: %s\n", ps.err);
    fflush(stdout);
    tl_lake_close(ps.lake);
    free(ps.zbuf), free(ps.out_header);
    ship_state_clear(&ps.st);
    return rc;
}
