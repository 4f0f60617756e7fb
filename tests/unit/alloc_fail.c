#include "alloc_fail.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);

static struct {
    atomic_int armed;
    atomic_long count;
    long target; /* 0: count only */
    atomic_int fired;
} A;

static bool fail_now(void)
{
    if (!atomic_load_explicit(&A.armed, memory_order_relaxed)) return false;
    long n = atomic_fetch_add(&A.count, 1) + 1;
    if (n != A.target) return false;
    atomic_store(&A.fired, 1);
    errno = ENOMEM;
    return true;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fail_now() ? NULL : __real_strndup(s, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return fail_now() ? NULL : __real_aligned_alloc(align, n);
}

void alloc_fail_arm(long target)
{
    atomic_store(&A.count, 0);
    atomic_store(&A.fired, 0);
    A.target = target;
    atomic_store(&A.armed, 1);
}

void alloc_fail_disarm(void)
{
    atomic_store(&A.armed, 0);
}

long alloc_fail_count(void)
{
    return atomic_load(&A.count);
}

bool alloc_fail_fired(void)
{
    return atomic_load(&A.fired) != 0;
}
