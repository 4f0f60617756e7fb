#include "core/clock.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

int64_t tl_now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * TL_MICROS_PER_SECOND + ts.tv_nsec / 1000;
}

int64_t tl_now_millis(void)
{
    return tl_now_micros() / 1000;
}

double tl_monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void tl_sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

tl_status tl_duration_parse(const char *text, int64_t *out_micros, tl_error *err)
{
    const char *p = text;
    if (!isdigit((unsigned char)*p))
        return tl_error_set(err, TL_ERR_INVALID, "bad duration \"%s\"", text);
    int64_t n = 0;
    for (; isdigit((unsigned char)*p); p++) {
        if (n > (INT64_MAX - 9) / 10)
            return tl_error_set(err, TL_ERR_INVALID, "duration \"%s\" is too long", text);
        n = n * 10 + (*p - '0');
    }
    int64_t unit;
    switch (*p) {
    case 's':
        unit = 1;
        break;
    case 'm':
        unit = 60;
        break;
    case 'h':
        unit = 3600;
        break;
    case 'd':
        unit = 86400;
        break;
    case 'w':
        unit = 7 * 86400;
        break;
    case 'y':
        unit = 365 * 86400;
        break;
    default:
        unit = 0;
        break;
    }
    if (unit == 0 || p[1] != '\0')
        return tl_error_set(err, TL_ERR_INVALID,
                            "bad duration unit in \"%s\" (use s, m, h, d, w, y)", text);
    if (n > INT64_MAX / (unit * TL_MICROS_PER_SECOND))
        return tl_error_set(err, TL_ERR_INVALID, "duration \"%s\" is too long", text);
    *out_micros = n * unit * TL_MICROS_PER_SECOND;
    return TL_OK;
}
