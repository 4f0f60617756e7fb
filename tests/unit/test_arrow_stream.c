#include "arrow/stream.h"
#include "test_arrow_helpers.h"
#include "unit.h"

/* A batch: struct { v: int64 } with rows first..first+n-1. */
static void make_batch(struct ArrowArray *out, int64_t first, int64_t n)
{
    tl_error err;
    int64_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = first + i;
    tcol c;
    tcol_ints(&c, "l", v, NULL, n);
    free(v);
    CHECK_OK(tl_array_init(out, 1, 1, &err), &err);
    out->length = n;
    tl_array_move(&c.array, out->children[0]);
    tcol_free(&c);
}

static void make_schema(struct ArrowSchema *s)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, "+s", NULL, 0, 1, &err), &err);
    CHECK_OK(tl_schema_init(s->children[0], "l", "v", ARROW_FLAG_NULLABLE, 0, &err), &err);
}

static void test_stream_round_trip(void)
{
    struct ArrowSchema schema;
    struct ArrowArray batches[3];
    struct ArrowArrayStream stream;
    tl_error err;
    make_schema(&schema);
    make_batch(&batches[0], 0, 5);
    make_batch(&batches[1], 5, 0);
    make_batch(&batches[2], 5, 7);
    CHECK_OK(tl_stream_from_batches(&schema, batches, 3, &stream, &err), &err);
    CHECK(schema.release == NULL && batches[0].release == NULL && batches[2].release == NULL);

    struct ArrowSchema got_schema;
    struct ArrowArray *got;
    size_t n;
    CHECK_OK(tl_stream_collect(&stream, &got_schema, &got, &n, &err), &err);
    CHECK_INT(n, 3);
    CHECK_STR(got_schema.format, "+s");
    CHECK_STR(got_schema.children[0]->name, "v");
    int64_t expect = 0;
    for (size_t b = 0; b < n; b++) {
        tl_array_view v = tview("l", got[b].children[0]);
        for (int64_t i = 0; i < got[b].length; i++) CHECK_INT(tv_int(&v, i), expect++);
        tl_array_release(&got[b]);
    }
    CHECK_INT(expect, 12);
    free(got);
    tl_schema_release(&got_schema);
    /* The end stays the end, and the schema can be asked for again. */
    struct ArrowArray end;
    CHECK_INT(stream.get_next(&stream, &end), 0);
    CHECK(end.release == NULL);
    CHECK_INT(stream.get_schema(&stream, &got_schema), 0);
    tl_schema_release(&got_schema);
    stream.release(&stream);
    CHECK(stream.release == NULL);
}

static void test_stream_release_unread(void)
{
    /* Releasing a stream before reading it frees the batches it still holds (ASan). */
    struct ArrowSchema schema;
    struct ArrowArray batches[2];
    struct ArrowArrayStream stream;
    tl_error err;
    make_schema(&schema);
    make_batch(&batches[0], 0, 3);
    make_batch(&batches[1], 3, 3);
    CHECK_OK(tl_stream_from_batches(&schema, batches, 2, &stream, &err), &err);
    struct ArrowArray first;
    CHECK_INT(stream.get_next(&stream, &first), 0);
    tl_array_release(&first);
    stream.release(&stream);

    make_schema(&schema);
    CHECK_OK(tl_stream_from_batches(&schema, NULL, 0, &stream, &err), &err);
    struct ArrowSchema s;
    struct ArrowArray *got;
    size_t n;
    CHECK_OK(tl_stream_collect(&stream, &s, &got, &n, &err), &err);
    CHECK_INT(n, 0);
    CHECK(got == NULL);
    tl_schema_release(&s);
    stream.release(&stream);
}

/* A producer that fails after `good` batches. */
typedef struct failing {
    int calls;
    int good;
    bool fail_schema;
} failing;

static int failing_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    failing *f = s->private_data;
    if (f->fail_schema) return 5;
    make_schema(out);
    return 0;
}

static int failing_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    failing *f = s->private_data;
    if (f->calls++ >= f->good) return 22; /* EINVAL */
    make_batch(out, 0, 4);
    return 0;
}

static const char *failing_error(struct ArrowArrayStream *s)
{
    failing *f = s->private_data;
    return f->fail_schema ? NULL : "upstream exploded";
}

static void failing_release(struct ArrowArrayStream *s)
{
    s->release = NULL;
}

static void test_stream_producer_errors(void)
{
    failing f = {0, 2, false};
    struct ArrowArrayStream stream = {failing_schema, failing_next, failing_error, failing_release,
                                      &f};
    struct ArrowSchema schema;
    struct ArrowArray *got = (struct ArrowArray *)1;
    size_t n = 99;
    tl_error err;
    CHECK_INT(tl_stream_collect(&stream, &schema, &got, &n, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "stream get_next failed: upstream exploded (error 22)");
    CHECK(got == NULL && n == 0 && schema.release == NULL); /* everything read was released */
    CHECK(stream.release != NULL);                          /* not released by collect */
    stream.release(&stream);

    f = (failing){0, 0, true};
    stream =
        (struct ArrowArrayStream){failing_schema, failing_next, failing_error, failing_release, &f};
    CHECK_INT(tl_stream_collect(&stream, &schema, &got, &n, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "stream get_schema failed: ") == err.message);
    CHECK(strstr(err.message, "(error 5)") != NULL);
    stream.release(&stream);
    CHECK_INT(tl_stream_collect(&stream, &schema, &got, &n, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "stream is released");
}

UNIT_TESTS(UNIT(test_stream_round_trip), UNIT(test_stream_release_unread),
           UNIT(test_stream_producer_errors))
