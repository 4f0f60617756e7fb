#include "notify_parse.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/arrow_own.h"
#include "../cli/cli.h"

/* Below this, a second thread costs about what it saves. */
#define SPLIT_BYTES (256u << 10)

size_t tl_notify_parse_split_bytes(void)
{
    const char *v = getenv("TIMELAKE_NOTIFY_SPLIT_BYTES");
    return v && v[0] ? (size_t)strtoull(v, NULL, 10) : SPLIT_BYTES;
}

typedef struct part {
    const uint8_t *data;
    size_t len;
    const char *name;
    const tl_data_read_options *o;
    struct ArrowSchema schema;
    struct ArrowArray *batches;
    size_t n;
} part;

static void part_free(part *p)
{
    for (size_t i = 0; i < p->n; i++) cli_array_release(&p->batches[i]);
    free(p->batches);
    cli_schema_release(&p->schema);
    p->batches = NULL;
    p->n = 0;
}

/* A producer's failure (an errno value), named as it names it. */
static tl_status stream_error(struct ArrowArrayStream *in, int code, tl_error *err)
{
    if (code == ENOMEM) return cli_error_nomem(err);
    const char *why = in->get_last_error ? in->get_last_error(in) : NULL;
    return cli_error_set(err, TL_ERR_INVALID, "%s", why && why[0] ? why : strerror(code));
}

/* Reads a stream to its end into *schema and *batches (malloc'd, *n of
 * them, already holding *n), which are the caller's also on failure; the
 * stream is left to release. */
static tl_status collect(struct ArrowArrayStream *in, struct ArrowSchema *schema,
                         struct ArrowArray **batches, size_t *n, tl_error *err)
{
    int rc = in->get_schema(in, schema);
    if (rc != 0) return stream_error(in, rc, err);
    for (size_t cap = *n;;) {
        struct ArrowArray a;
        if ((rc = in->get_next(in, &a)) != 0) return stream_error(in, rc, err);
        if (a.release == NULL) return TL_OK;
        if (*n == cap) {
            size_t more_cap = cap ? cap * 2 : 4;
            struct ArrowArray *more = realloc(*batches, more_cap * sizeof *more);
            if (more == NULL) {
                a.release(&a);
                return cli_error_nomem(err);
            }
            *batches = more;
            cap = more_cap;
        }
        (*batches)[(*n)++] = a;
    }
}

/* The stream `opened` opened, read whole into p and released; on failure p
 * is left empty. */
static tl_status read_whole(tl_status opened, struct ArrowArrayStream *in, part *p, tl_error *err)
{
    if (opened != TL_OK) return opened;
    tl_status st = collect(in, &p->schema, &p->batches, &p->n, err);
    in->release(in);
    if (st != TL_OK) part_free(p);
    return st;
}

/* p's rows, handed to the caller's outputs. */
static void hand_over(part *p, struct ArrowSchema *schema, struct ArrowArray **batches, size_t *n)
{
    *schema = p->schema;
    *batches = p->batches;
    *n = p->n;
}

static tl_status parse_part(part *p, tl_error *err)
{
    struct ArrowArrayStream in;
    return read_whole(tl_data_read_memory(p->data, p->len, p->name, p->o, &in, err), &in, p, err);
}

/* Where the second half starts: after the first line end from the middle on,
 * or 0 when the bytes are not to be split. *header_len: the header line's
 * bytes, its line end included. */
static size_t split_point(const uint8_t *d, size_t len, const char *format, size_t *header_len)
{
    size_t min = tl_notify_parse_split_bytes();
    if (min == 0 || len < min || len < 2 ||
        (strcmp(format, "csv") != 0 && strcmp(format, "tsv") != 0))
        return 0;
    if (d[0] == 0x1f && d[1] == 0x8b) return 0; /* gzip */
    if (memchr(d, '"', len)) return 0;          /* a quoted field may hold a line end */
    const uint8_t *end = memchr(d, '\n', len);
    if (end == NULL) return 0;
    *header_len = (size_t)(end + 1 - d);
    size_t mid = len / 2 > *header_len ? len / 2 : *header_len;
    end = mid < len ? memchr(d + mid, '\n', len - mid) : NULL;
    return end && end + 1 < d + len ? (size_t)(end + 1 - d) : 0;
}

/* Moves b's batches after a's; b is left empty. */
static tl_status join_parts(part *a, part *b, tl_error *err)
{
    struct ArrowArray *all = realloc(a->batches, (a->n + b->n + 1) * sizeof *all);
    if (all == NULL) return cli_error_nomem(err);
    a->batches = all;
    memcpy(all + a->n, b->batches, b->n * sizeof *all);
    a->n += b->n;
    free(b->batches);
    b->batches = NULL;
    b->n = 0;
    return TL_OK;
}

static void *parse_thread(void *arg)
{
    tl_error ignored = {0};
    part *p = arg;
    return parse_part(p, &ignored) == TL_OK ? p : NULL;
}

/* The halves, the second on a thread of its own: TL_OK with a's the rows of
 * both, or a failure of either (the caller parses the whole again). */
static tl_status parse_halves(part *a, part *b)
{
    tl_error ignored = {0};
    pthread_t thread;
    bool threaded = pthread_create(&thread, NULL, parse_thread, b) == 0;
    tl_status sa = parse_part(a, &ignored);
    void *done = NULL;
    tl_status sb = threaded ? (pthread_join(thread, &done), done ? TL_OK : TL_ERR_INVALID)
                            : parse_part(b, &ignored);
    tl_status st = sa != TL_OK ? sa : sb != TL_OK ? sb : join_parts(a, b, &ignored);
    part_free(b);
    if (st != TL_OK) part_free(a);
    return st;
}

static tl_status parse_memory(const uint8_t *data, size_t len, const char *name, const char *format,
                              bool may_split, const struct ArrowSchema *target,
                              struct ArrowSchema *schema, struct ArrowArray **batches, size_t *n,
                              tl_error *err)
{
    tl_data_read_options o = {.format = format, .columns = target};
    part whole = {.data = data, .len = len, .name = name, .o = &o};
    size_t header = 0, split = may_split ? split_point(data, len, format, &header) : 0;
    uint8_t *second = split ? malloc(header + len - split) : NULL;
    tl_status st = TL_ERR_INVALID;
    if (second) {
        memcpy(second, data, header);
        memcpy(second + header, data + split, len - split);
        part b = {.data = second, .len = header + len - split, .name = name, .o = &o};
        whole.len = split;
        st = parse_halves(&whole, &b);
        free(second);
        whole.len = len;
    }
    if (st != TL_OK) st = parse_part(&whole, err);
    if (st == TL_OK) hand_over(&whole, schema, batches, n);
    return st;
}

/* Parses under way in the server: an object is parsed in halves only while
 * every parse can have two cores (the others' would be slowed as much as
 * this one is sped up). */
static atomic_int parsing;

static size_t cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

tl_status tl_notify_parse_memory(const uint8_t *data, size_t len, const char *name,
                                 const char *format, const struct ArrowSchema *target,
                                 struct ArrowSchema *schema, struct ArrowArray **batches, size_t *n,
                                 tl_error *err)
{
    size_t now = (size_t)atomic_fetch_add(&parsing, 1) + 1;
    tl_status st = parse_memory(data, len, name, format, now * 2 <= cpu_count(), target, schema,
                                batches, n, err);
    atomic_fetch_sub(&parsing, 1);
    return st;
}

tl_status tl_notify_parse_file(const char *path, const char *format,
                               const struct ArrowSchema *target, struct ArrowSchema *schema,
                               struct ArrowArray **batches, size_t *n, tl_error *err)
{
    tl_data_read_options o = {.format = format, .columns = target};
    struct ArrowArrayStream in;
    part p = {0};
    CLI_TRY(read_whole(tl_data_read_file(path, &o, &in, err), &in, &p, err));
    hand_over(&p, schema, batches, n);
    return TL_OK;
}
