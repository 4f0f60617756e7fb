/* Fails one allocation of the code under test: the binaries that link
 * alloc_fail.c wrap malloc, calloc, realloc, strdup, strndup and
 * aligned_alloc at their link (ld --wrap, cmake/alloc_torture.cmake), so
 * the library's objects (and karet's) call the counter while the C library,
 * compression libraries and DuckDB keep their own allocator. jansson
 * allocates through the library's hook, which calls malloc: counted too. */
#ifndef TL_TEST_ALLOC_FAIL_H
#define TL_TEST_ALLOC_FAIL_H

#include <stdbool.h>

/* From now on, counts allocations and fails number `target` (0: counts
 * only), with errno ENOMEM as a real allocator. */
void alloc_fail_arm(long target);
void alloc_fail_disarm(void);
/* Allocations counted since the last arm. */
long alloc_fail_count(void);
/* Whether the target was reached since the last arm. */
bool alloc_fail_fired(void);

#endif
