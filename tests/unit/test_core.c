#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arrow/array.h"
#include "core/buf.h"
#include "core/forks.h"
#include "core/grow.h"
#include "core/random.h"
#include "core/scratch.h"
#include "unit.h"

static void test_buf_grows_and_terminates(void)
{
    tl_buf b = {0};
    for (int i = 0; i < 1000; i++) CHECK(tl_buf_printf(&b, "%d,", i) == 0);
    CHECK(b.len > 1000);
    CHECK(b.data[b.len] == '\0');
    CHECK(strncmp((char *)b.data, "0,1,2,", 6) == 0);
    tl_buf_free(&b);
    CHECK(b.data == NULL);
}

/* tl_format_i64 writes what "%lld" writes, at the edges too. */
static void test_format_i64_as_printf(void)
{
    const int64_t values[] = {0,
                              7,
                              -7,
                              9,
                              10,
                              99,
                              100,
                              -100,
                              1,
                              11,
                              101,
                              999,
                              1000,
                              12345,
                              -123456,
                              4294967296LL,
                              1767225600000000LL,
                              1000000000000000000LL,
                              INT64_MAX,
                              INT64_MIN,
                              INT64_MIN + 1};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char want[32], got[21];
        snprintf(want, sizeof want, "%lld", (long long)values[i]);
        CHECK_INT(tl_format_i64(got, values[i]), strlen(want));
        CHECK_STR(got, want);
    }
    tl_buf b = {0};
    CHECK(tl_buf_append_i64(&b, -42) == 0 && tl_buf_append_i64(&b, 5) == 0);
    CHECK_STR((char *)b.data, "-425");
    tl_buf_free(&b);
}

/* A UUID string: 8-4-4-4-12 lowercase hex digits, version and variant set. */
static void test_uuid_form(void)
{
    char u[TL_UUID_STR_LEN + 1];
    for (int v = 4; v <= 7; v += 3) {
        if (v == 4)
            tl_uuid_v4(u);
        else
            tl_uuid_v7(u);
        CHECK_INT(strlen(u), TL_UUID_STR_LEN);
        for (int i = 0; i < TL_UUID_STR_LEN; i++)
            CHECK((i == 8 || i == 13 || i == 18 || i == 23)
                      ? u[i] == '-'
                      : strchr("0123456789abcdef", u[i]) && u[i] != 0);
        CHECK_INT(u[14], '0' + v);
        CHECK(strchr("89ab", u[19]) != NULL);
    }
}

static int cmp_uuid(const void *a, const void *b)
{
    return memcmp(a, b, TL_UUID_STR_LEN + 1);
}

/* Ids drawn in a row, some from the buffer, some past a refill, never repeat. */
static void test_random_ids_do_not_repeat(void)
{
    enum { N = 2000 };
    char(*ids)[TL_UUID_STR_LEN + 1] = malloc(N * sizeof *ids);
    for (int i = 0; i < N; i++) {
        if (i % 3 == 0) (void)tl_random_u64(); /* requests of other sizes between */
        tl_uuid_v4(ids[i]);
    }
    qsort(ids, N, sizeof *ids, cmp_uuid);
    for (int i = 1; i < N; i++) CHECK(strcmp(ids[i - 1], ids[i]) != 0);
    free(ids);
}

/* A forked child must not serve the random bytes its parent buffered: its
 * files would get the names the parent's next files get. */
static void test_forked_child_draws_other_ids(void)
{
    char parent[4][TL_UUID_STR_LEN + 1], child[4][TL_UUID_STR_LEN + 1];
    tl_uuid_v4(parent[0]); /* fills this thread's buffer */
    uint64_t generation = tl_fork_generation();
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        char ids[4][TL_UUID_STR_LEN + 1];
        for (int i = 0; i < 4; i++) tl_uuid_v4(ids[i]);
        ssize_t n = write(fds[1], ids, sizeof ids);
        if (tl_fork_generation() == generation) n = 0;
        _exit(n == (ssize_t)sizeof ids ? 0 : 1);
    }
    close(fds[1]);
    CHECK(pid > 0);
    for (int i = 0; i < 4; i++) tl_uuid_v4(parent[i]);
    CHECK_INT(read(fds[0], child, sizeof child), sizeof child);
    close(fds[0]);
    int status = -1;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_INT(tl_fork_generation(), generation); /* the parent's stays */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) CHECK(strcmp(parent[i], child[j]) != 0);
}

static void *draw_id(void *out)
{
    tl_uuid_v4(out);
    return NULL;
}

/* Each thread has its own buffer, filled on its own. */
static void test_threads_draw_other_ids(void)
{
    char ids[4][TL_UUID_STR_LEN + 1];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&th[i], NULL, draw_id, ids[i]) == 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) CHECK(strcmp(ids[i], ids[j]) != 0);
}

static void test_error_prefix_keeps_code(void)
{
    tl_error err;
    tl_error_set(&err, TL_ERR_INVALID, "bad %s", "thing");
    tl_error_prefix(&err, "reading %s", "x.parquet");
    CHECK_INT(err.code, TL_ERR_INVALID);
    CHECK_STR(err.message, "reading x.parquet: bad thing");
}

static void test_arrow_type_round_trip(void)
{
    const char *formats[] = {"b",    "c",      "L",   "g",   "u",    "Z",
                             "w:16", "d:10,2", "tdD", "ttu", "tsu:", "tsn:Europe/Paris",
                             "+s"};
    tl_error err;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        tl_arrow_type t;
        CHECK_OK(tl_arrow_type_parse(formats[i], &t, &err), &err);
        char buf[96];
        tl_arrow_type_format(&t, buf, sizeof buf);
        CHECK_STR(buf, formats[i]);
    }
    tl_arrow_type t;
    CHECK_INT(tl_arrow_type_parse("+m", &t, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "+m") != NULL);
}

static void test_metadata_encode_find(void)
{
    const char *pairs[] = {"PARQUET:field_id", "7", "k", "value", NULL};
    char *md = tl_metadata_encode(pairs);
    int32_t len = 0;
    const char *v = tl_metadata_find(md, "k", &len);
    CHECK(v != NULL && len == 5 && memcmp(v, "value", 5) == 0);
    CHECK(tl_metadata_find(md, "missing", &len) == NULL);
    free(md);
}

static void test_owned_array_releases_everything(void)
{
    tl_error err;
    struct ArrowArray a;
    CHECK_OK(tl_array_init(&a, 1, 2, &err), &err);
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tl_array_init(a.children[i], 2, 0, &err), &err);
        CHECK(tl_array_alloc_buffer(a.children[i], 1, 80) != NULL);
    }
    tl_array_release(&a);
    CHECK(a.release == NULL);
}

/* Doubling from the minimum, elements kept, and nothing done when there is room. */
static void test_grow_doubles_and_keeps(void)
{
    int64_t *a = NULL;
    size_t cap = 0;
    for (size_t n = 0; n < 100; n++) {
        CHECK(TL_GROW(a, cap, n + 1, 8) == 0);
        CHECK(cap >= n + 1);
        a[n] = (int64_t)n * 3;
    }
    CHECK_INT(cap, 128); /* 8, 16, 32, 64, 128 */
    int64_t *before = a;
    CHECK(TL_GROW(a, cap, 128, 8) == 0);
    CHECK(a == before && cap == 128);
    CHECK(TL_GROW(a, cap, 1000, 8) == 0); /* doubled until it holds 1000 */
    CHECK_INT(cap, 1024);
    for (size_t n = 0; n < 100; n++) CHECK_INT(a[n], (int64_t)n * 3);
    free(a);
    CHECK_INT(tl_grow_capacity(0, 1, 4, 0), 1);   /* no minimum: from 1 */
    CHECK_INT(tl_grow_capacity(5, 6, 4, 64), 10); /* a capacity under min still doubles */
    CHECK_INT(tl_grow_capacity(5, 5, 4, 64), 5);
}

/* A capacity whose size in bytes would wrap around size_t is refused before
 * any allocation, the array left as it was; doubling near the top stops at the
 * largest count that fits. */
static void test_grow_refuses_overflow(void)
{
    uint64_t *a = malloc(4 * sizeof *a);
    CHECK(a != NULL);
    a[3] = 42;
    size_t cap = 4;
    CHECK(TL_GROW(a, cap, SIZE_MAX / 8 + 1, 16) == -1);
    CHECK(cap == 4 && a[3] == 42);
    CHECK(TL_GROW(a, cap, SIZE_MAX, 16) == -1);
    CHECK(cap == 4 && a[3] == 42);
    CHECK(tl_realloc_array(&a, SIZE_MAX / 4, 8) == -1);
    CHECK(tl_realloc_array(&a, SIZE_MAX / 8 + 2, 8) == -1); /* would wrap to 8 bytes */
    CHECK(a[3] == 42);
    free(a);
    CHECK(tl_grow_capacity(0, SIZE_MAX / 8 + 1, 8, 16) == 0);
    CHECK(tl_grow_capacity(SIZE_MAX / 32 + 1, SIZE_MAX / 32 + 2, 16, 16) == SIZE_MAX / 16);
    CHECK(tl_grow_capacity(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 2, 1, 64) == SIZE_MAX);
    CHECK(tl_grow_capacity(0, 3, 2, SIZE_MAX) == SIZE_MAX / 2); /* a min beyond what fits */
}

/* A large block freed is kept by the thread and served again, aligned as an
 * Arrow buffer; small ones and very large ones go back to malloc; a thread
 * keeps its newest 8 blocks and 32 MiB at most. */
static void test_scratch_keeps_large_blocks(void)
{
    size_t blocks0, bytes0, blocks, bytes;
    tl_scratch_kept(&blocks0, &bytes0);
    uint8_t *p = tl_scratch_alloc(1 << 20);
    CHECK(p != NULL && ((uintptr_t)p & 63) == 0);
    memset(p, 7, 1 << 20);
    tl_scratch_free(p);
    tl_scratch_kept(&blocks, &bytes);
    CHECK(blocks == blocks0 + 1 && bytes >= bytes0 + (1 << 20));
    uint8_t *q = tl_scratch_alloc(1000000);
    CHECK(q == p);
    tl_scratch_kept(&blocks, &bytes);
    CHECK(blocks == blocks0 && bytes == bytes0);
    tl_scratch_free(q);
    void *small = tl_scratch_alloc(100);
    CHECK(small != NULL && ((uintptr_t)small & 63) == 0);
    tl_scratch_free(small);
    tl_scratch_free(tl_scratch_alloc(20 << 20));
    tl_scratch_kept(&blocks, &bytes);
    CHECK(blocks == blocks0 + 1);
    void *many[12];
    for (int i = 0; i < 12; i++) CHECK((many[i] = tl_scratch_alloc((size_t)(i + 1) << 20)) != NULL);
    for (int i = 0; i < 12; i++) tl_scratch_free(many[i]);
    tl_scratch_kept(&blocks, &bytes);
    CHECK(blocks <= 8 && bytes <= (32u << 20) && bytes >= (12u << 20)); /* the newest stay */
    /* An owned array's large buffer comes back on release. */
    struct ArrowArray a;
    CHECK(tl_array_init(&a, 2, 0, NULL) == TL_OK);
    void *values = tl_array_alloc_buffer(&a, 1, 256 << 10);
    CHECK(values != NULL);
    tl_array_release(&a);
    void *again = tl_scratch_alloc(256 << 10);
    CHECK(again == values);
    tl_scratch_free(again);
}

static void *scratch_thread(void *arg)
{
    (void)arg;
    tl_scratch_free(tl_scratch_alloc(4 << 20)); /* kept, then freed as the thread exits */
    size_t blocks, bytes;
    tl_scratch_kept(&blocks, &bytes);
    return (void *)(uintptr_t)blocks;
}

static void test_scratch_is_per_thread(void)
{
    size_t blocks0, bytes0, blocks, bytes;
    tl_scratch_kept(&blocks0, &bytes0);
    pthread_t th;
    void *kept = NULL;
    CHECK(pthread_create(&th, NULL, scratch_thread, NULL) == 0);
    CHECK(pthread_join(th, &kept) == 0);
    CHECK((uintptr_t)kept == 1);
    tl_scratch_kept(&blocks, &bytes);
    CHECK(blocks == blocks0 && bytes == bytes0);
}

/* Threads that each keep two blocks of 12 MiB (within their own 32 MiB),
 * all alive at once: together they keep no more than 128 MiB, and what a
 * thread kept is let go of when it exits. The blocks are never touched:
 * address space only. */
#define KEEPERS 8

static pthread_barrier_t kept_all, checked;

static void *keeping_thread(void *arg)
{
    (void)arg;
    void *a = tl_scratch_alloc(12 << 20), *b = tl_scratch_alloc(12 << 20);
    tl_scratch_free(a);
    tl_scratch_free(b);
    pthread_barrier_wait(&kept_all);
    pthread_barrier_wait(&checked); /* alive until the total is read */
    return NULL;
}

static void test_scratch_is_bounded_process_wide(void)
{
    size_t before = tl_scratch_kept_all();
    pthread_t th[KEEPERS];
    CHECK(pthread_barrier_init(&kept_all, NULL, KEEPERS + 1) == 0);
    CHECK(pthread_barrier_init(&checked, NULL, KEEPERS + 1) == 0);
    for (int i = 0; i < KEEPERS; i++)
        CHECK(pthread_create(&th[i], NULL, keeping_thread, NULL) == 0);
    pthread_barrier_wait(&kept_all);
    size_t all = tl_scratch_kept_all();
    CHECK(all <= (size_t)128 << 20);
    CHECK(all >= before + ((size_t)64 << 20)); /* still kept, up to the bound */
    pthread_barrier_wait(&checked);
    for (int i = 0; i < KEEPERS; i++) CHECK(pthread_join(th[i], NULL) == 0);
    CHECK(tl_scratch_kept_all() == before);
    pthread_barrier_destroy(&kept_all);
    pthread_barrier_destroy(&checked);
}

UNIT_TESTS(UNIT(test_scratch_keeps_large_blocks), UNIT(test_scratch_is_per_thread),
           UNIT(test_scratch_is_bounded_process_wide), UNIT(test_buf_grows_and_terminates),
           UNIT(test_grow_doubles_and_keeps), UNIT(test_grow_refuses_overflow),
           UNIT(test_format_i64_as_printf), UNIT(test_uuid_form),
           UNIT(test_random_ids_do_not_repeat), UNIT(test_forked_child_draws_other_ids),
           UNIT(test_threads_draw_other_ids), UNIT(test_error_prefix_keeps_code),
           UNIT(test_arrow_type_round_trip), UNIT(test_metadata_encode_find),
           UNIT(test_owned_array_releases_everything))
