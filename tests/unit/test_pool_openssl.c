/* OpenSSL used first on a pool thread: nothing of OpenSSL's may be left at
 * exit. Its first use registers its cleanup with atexit; on a pool thread
 * that came after the pool's own stop handler (core/parallel.c), so at exit
 * OpenSSL cleaned up first, and the pool threads stopped after it could not
 * free their per-thread error state (904 bytes each, which LeakSanitizer
 * reported). This binary must be its own process, with no OpenSSL call on
 * the main thread before the pool's: the check is LeakSanitizer's at exit
 * (the suite runs under ASan with detect_leaks=1). */
#include <pthread.h>

#include "core/parallel.h"
#include "store/digest.h"
#include "unit.h"

static pthread_barrier_t both;
static pthread_t main_thread;
static int pool_digests;

/* Both items wait for each other, so one runs on a pool thread. */
static tl_status digest_off_main(void *ctx, size_t i, tl_error *err)
{
    (void)ctx, (void)i, (void)err;
    pthread_barrier_wait(&both);
    if (pthread_equal(pthread_self(), main_thread)) return TL_OK;
    uint8_t md5[16];
    tl_md5("abc", 3, md5);
    pool_digests += md5[0] == 0x90; /* MD5("abc") starts 90 01 50 98 */
    return TL_OK;
}

static void test_openssl_first_on_a_pool_thread(void)
{
    main_thread = pthread_self();
    pthread_barrier_init(&both, NULL, 2);
    tl_error err;
    CHECK_OK(tl_parallel_run(2, 2, false, digest_off_main, NULL, &err), &err);
    pthread_barrier_destroy(&both);
    CHECK(pool_digests == 1);
}

UNIT_TESTS(UNIT(test_openssl_first_on_a_pool_thread))
