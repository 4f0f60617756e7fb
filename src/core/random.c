#include "core/random.h"

#include <stdio.h>
#include <sys/random.h>

#include "core/clock.h"

void tl_random_bytes(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n <= 0) continue; /* EINTR; getrandom does not fail otherwise once seeded */
        p += n;
        len -= (size_t)n;
    }
}

uint64_t tl_random_u64(void)
{
    uint64_t v;
    tl_random_bytes(&v, sizeof v);
    return v;
}

static void uuid_format(const uint8_t b[16], char out[TL_UUID_STR_LEN + 1])
{
    snprintf(out, TL_UUID_STR_LEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
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
