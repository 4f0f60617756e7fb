#include "core/forks.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_uint_fast64_t generation = 1;

/* Runs in the child, whose only thread is the one that forked. */
static void after_fork_child(void)
{
    atomic_fetch_add(&generation, 1);
}

static void register_handler(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

uint64_t tl_fork_generation(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_handler);
    return atomic_load(&generation);
}
