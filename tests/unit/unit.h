/* A minimal unit-test harness. A test file defines its tests and lists them:
 *
 *     static void test_parse(void) { CHECK(1 + 1 == 2); }
 *     UNIT_TESTS(UNIT(test_parse))
 *
 * unit.c provides main(), which runs them all, prints one line per failure and
 * a closing "N passed, N failed" line, and exits non-zero on any failure. */
#ifndef TL_UNIT_H
#define TL_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct unit_test {
    const char *name;
    void (*fn)(void);
} unit_test;

extern const unit_test unit_tests[];
extern int unit_failures; /* failed checks in the running test */

void unit_fail(const char *file, int line, const char *fmt, ...);

/* A scratch directory unique to this process, created on first use. */
const char *unit_tmpdir(void);

/* Appends the bytes of tests/data/<dir>/<name> to *out (the caller frees
 * it); -1 when the file cannot be read. */
struct tl_buf;
int unit_read_data(const char *dir, const char *name, struct tl_buf *out);

/* Appends one gzip member of the len bytes at data to *out; -1 on failure. */
int unit_gzip(const void *data, size_t len, struct tl_buf *out);

#define UNIT(fn)                                                                                   \
    {                                                                                              \
#fn, fn                                                                                    \
    }
/* A small deterministic generator (xorshift64*): a fixed sequence from a
 * non-zero seed, so a failing random case repeats run after run. */
static inline uint64_t trand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#define UNIT_TESTS(...) const unit_test unit_tests[] = {__VA_ARGS__, {NULL, NULL}};

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) unit_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                            \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) unit_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", #a, a_, b_);      \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                       \
            unit_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)", \
                      b_ ? b_ : "(null)");                                                         \
    } while (0)

/* Checks a tl_status call succeeded, printing the error message if not. */
#define CHECK_OK(call, errp)                                                                       \
    do {                                                                                           \
        tl_status st_ = (call);                                                                    \
        if (st_ != TL_OK) unit_fail(__FILE__, __LINE__, "%s failed: %s", #call, (errp)->message);  \
    } while (0)

#endif
