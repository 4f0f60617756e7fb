/* Large buffers each thread keeps for its next use. Decoding a column chunk
 * wants buffers of about the same sizes row group after row group (the
 * pages read, the values decoded); from malloc, a buffer that large is a
 * fresh mapping each time (above glibc's mmap threshold), and the kernel
 * faults in and zeroes each of its pages again: 1,700 faults and 15% of the
 * CPU of a routed count over 1.38M rollup rows. A thread that frees one
 * keeps it instead, and its next allocation of at most that size takes it.
 *
 * Blocks are malloc's: tl_scratch_free takes any pointer malloc, aligned_alloc
 * or tl_scratch_alloc returned (a small or unaligned one is freed at once),
 * and a block from tl_scratch_alloc may be passed to free() instead. A thread
 * keeps at most 8 blocks and 32 MiB, all threads together 128 MiB; a
 * thread's are freed when it exits. */
#ifndef TL_CORE_SCRATCH_H
#define TL_CORE_SCRATCH_H

#include <stddef.h>

/* At least size bytes, 64-byte aligned: a block this thread kept, or a new
 * one. NULL when memory runs out. */
void *tl_scratch_alloc(size_t size);

/* Keeps p (NULL: nothing) for this thread's next tl_scratch_alloc, or frees it. */
void tl_scratch_free(void *p);

/* The blocks and bytes this thread keeps (tests). */
void tl_scratch_kept(size_t *blocks, size_t *bytes);
/* The bytes all threads keep (tests). */
size_t tl_scratch_kept_all(void);

#endif
