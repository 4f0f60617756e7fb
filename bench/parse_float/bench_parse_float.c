/* Parse rate of tl_parse_double over pyarrow-style CSV doubles: prints
 * million values per second for each text shape. Build against a Release
 * static library:
 *   cc -O2 -Isrc -Iinclude bench/parse_float/bench_parse_float.c build-rel/libtimelake_static.a -lm
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arrow/parse.h"

enum { N = 1000000, W = 32 };

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run(const char *name, const char *fmt, double scale)
{
    static char text[N][W];
    static size_t lens[N];
    for (int i = 0; i < N; i++) {
        double x = (double)(next() >> 11) / 9007199254740992.0 * scale;
        lens[i] = (size_t)snprintf(text[i], W, fmt, x);
    }
    double best = 1e9, sum = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (int i = 0; i < N; i++) {
            double v;
            if (tl_parse_double(text[i], lens[i], &v, NULL) != TL_OK) abort();
            sum += v;
        }
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("%-28s %7.1f M values/s  (%.1f ns/value, checksum %g)\n", name, N / best / 1e6,
           best / N * 1e9, sum);
}

int main(void)
{
    run("%.17g in [0,1)", "%.17g", 1.0);
    run("%.17g in [0,1e6)", "%.17g", 1e6);
    run("%.15g in [0,1)", "%.15g", 1.0);
    run("%.6f in [0,1e3) (fast path)", "%.6f", 1e3);
    run("%.17e in [0,1e300)", "%.17e", 1e300);
    return 0;
}
