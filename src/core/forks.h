/* Telling a forked child from its parent without a system call. State a
 * child must not share with its parent (buffered random bytes, a store's
 * deletion thread) remembers the generation it was made in and starts anew
 * when the generation has changed. getpid() answers the same question, but
 * it is a system call on every use (glibc no longer caches it). */
#ifndef TL_CORE_FORKS_H
#define TL_CORE_FORKS_H

#include <stdint.h>

/* A number that changes in the child of every fork() (pthread_atfork; a
 * child made by a raw clone system call, which runs no fork handlers, is
 * not seen). Never 0, so 0 can mean "not made yet". */
uint64_t tl_fork_generation(void);

#endif
