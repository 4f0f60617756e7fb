#include "core/random.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "core/clock.h"
#include "core/forks.h"

/* Small requests are served from a per-thread buffer refilled by one
 * getrandom: an append asked for 16 ids, each a system call. A forked
 * child drops what its parent left in the buffer (the same bytes would
 * name its files too). */
#define POOL_BYTES 512
#define POOLED_MAX 32

static _Thread_local struct {
    uint8_t bytes[POOL_BYTES];
    size_t left;         /* unserved bytes, at the end of bytes */
    uint64_t generation; /* tl_fork_generation when filled; 0: never */
} pool;

static void kernel_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n <= 0) continue; /* EINTR; getrandom does not fail otherwise once seeded */
        p += n;
        len -= (size_t)n;
    }
}

void tl_random_bytes(void *buf, size_t len)
{
    if (len > POOLED_MAX) {
        kernel_bytes(buf, len);
        return;
    }
    uint64_t generation = tl_fork_generation();
    if (pool.generation != generation || pool.left < len) {
        kernel_bytes(pool.bytes, POOL_BYTES);
        pool.left = POOL_BYTES;
        pool.generation = generation;
    }
    uint8_t *from = pool.bytes + POOL_BYTES - pool.left;
    memcpy(buf, from, len);
    pool.left -= len;
}

uint64_t tl_random_u64(void)
{
    uint64_t v;
    tl_random_bytes(&v, sizeof v);
    return v;
}

/* By hand, not snprintf: a commit names several files by uuid, and a process
 * that loaded libquadmath (numpy does) sends every printf down glibc's slow
 * positional path. */
static void uuid_format(const uint8_t b[16], char out[TL_UUID_STR_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = '\0';
}

void tl_uuid_v4(char out[TL_UUID_STR_LEN + 1])
{
    uint8_t b[16];
    tl_random_bytes(b, sizeof b);
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    uuid_format(b, out);
}

void tl_uuid_v7(char out[TL_UUID_STR_LEN + 1])
{
    uint8_t b[16];
    tl_random_bytes(b, sizeof b);
    uint64_t ms = (uint64_t)tl_now_millis();
    for (int i = 0; i < 6; i++) b[i] = (uint8_t)(ms >> (40 - 8 * i));
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x70);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    uuid_format(b, out);
}
