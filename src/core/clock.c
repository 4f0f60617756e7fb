#include "core/clock.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/* Unit words, matched without case: the reference's letters and their English
 * names ("90 days", "1 week", "12 hrs"). */
static const struct {
    const char *word;
    int64_t seconds;
} duration_units[] = {
    {"s", 1},
    {"sec", 1},
    {"secs", 1},
    {"second", 1},
    {"seconds", 1},
    {"m", 60},
    {"min", 60},
    {"mins", 60},
    {"minute", 60},
    {"minutes", 60},
    {"h", 3600},
    {"hr", 3600},
    {"hrs", 3600},
    {"hour", 3600},
    {"hours", 3600},
    {"d", 86400},
    {"day", 86400},
    {"days", 86400},
    {"w", 7 * 86400},
    {"week", 7 * 86400},
    {"weeks", 7 * 86400},
    {"y", 365 * 86400},
    {"year", 365 * 86400},
    {"years", 365 * 86400},
};

static int64_t unit_seconds(const char *word, size_t len)
{
    for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++)
        if (strlen(duration_units[i].word) == len &&
            strncasecmp(duration_units[i].word, word, len) == 0)
            return duration_units[i].seconds;
    return 0;
}

tl_status tl_duration_parse(const char *text, int64_t *out_micros, tl_error *err)
{
    const char *p = text;
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p))
        return tl_error_set(err, TL_ERR_INVALID, "bad duration \"%s\"", text);
    int64_t n = 0;
    for (; isdigit((unsigned char)*p); p++) {
        if (n > (INT64_MAX - 9) / 10)
            return tl_error_set(err, TL_ERR_INVALID, "duration \"%s\" is too long", text);
        n = n * 10 + (*p - '0');
    }
    while (isspace((unsigned char)*p)) p++;
    const char *word = p;
    while (isalpha((unsigned char)*p)) p++;
    size_t len = (size_t)(p - word);
    while (isspace((unsigned char)*p)) p++;
    int64_t unit = *p == '\0' ? unit_seconds(word, len) : 0;
    if (unit == 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "bad duration unit in \"%s\" (use s, m, h, d, w, y)", text);
    if (n > INT64_MAX / (unit * TL_MICROS_PER_SECOND))
        return tl_error_set(err, TL_ERR_INVALID, "duration \"%s\" is too long", text);
    *out_micros = n * unit * TL_MICROS_PER_SECOND;
    return TL_OK;
}

void tl_duration_format(int64_t micros, char *buf, size_t size)
{
    static const struct {
        char unit;
        int64_t seconds;
    } units[] = {{'d', 86400}, {'h', 3600}, {'m', 60}};
    int64_t s = micros / TL_MICROS_PER_SECOND;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (s != 0 && s % units[i].seconds == 0) {
            snprintf(buf, size, "%lld%c", (long long)(s / units[i].seconds), units[i].unit);
            return;
        }
    snprintf(buf, size, "%llds", (long long)s);
}
