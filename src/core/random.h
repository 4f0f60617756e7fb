/* Randomness for identifiers (snapshot ids, UUIDs, file names) and jitter.
 * Uses the kernel's CSPRNG so concurrent processes never collide; small
 * requests come from a per-thread buffer of it (one system call for many
 * ids), which a forked child does not share. */
#ifndef TL_CORE_RANDOM_H
#define TL_CORE_RANDOM_H

#include <stddef.h>
#include <stdint.h>

void tl_random_bytes(void *buf, size_t len);
uint64_t tl_random_u64(void);

#define TL_UUID_STR_LEN 36

/* Random (version 4) UUID as 36 characters plus NUL. */
void tl_uuid_v4(char out[TL_UUID_STR_LEN + 1]);
/* Time-ordered (version 7) UUID: file names sort by creation time. */
void tl_uuid_v7(char out[TL_UUID_STR_LEN + 1]);

#endif
