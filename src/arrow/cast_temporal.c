/* Casts among date32, date64 and timestamps, and among time32 and time64:
 * a change of unit. Finer units are overflow-checked; to a coarser unit only
 * values it holds exactly (a nanosecond timestamp into microseconds, a
 * timestamp with a time of day into a date would lose a part: an error); time
 * zones are labels on UTC values, so they never change a value. */
#include <stdio.h>
#include <string.h>

#include "arrow/cast_internal.h"
#include "arrow/parse.h"

/* Nanoseconds per tick of a temporal type. */
static int64_t tick_ns(const tl_arrow_type *t)
{
    static const int64_t unit_ns[] = {1000000000, 1000000, 1000, 1};
    switch (t->id) {
    case TL_ATYPE_DATE32:
        return 86400LL * 1000000000;
    case TL_ATYPE_DATE64:
        return 1000000;
    default:
        return unit_ns[t->unit];
    }
}

static bool is_narrow(tl_atype id)
{
    return id == TL_ATYPE_DATE32 || id == TL_ATYPE_TIME32;
}

static void load_ticks(const tl_array_view *v, int64_t start, int64_t n, int64_t *dst)
{
    if (is_narrow(v->type.id)) {
        const int32_t *p = (const int32_t *)v->values + v->offset + start;
        for (int64_t i = 0; i < n; i++) dst[i] = p[i];
    } else {
        memcpy(dst, (const int64_t *)v->values + v->offset + start, (size_t)n * sizeof *dst);
    }
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q - (a % b < 0);
}

/* exact[i]: nothing was dropped (compared modulo 2^64: the two differ by
 * less than D, and the product cannot overflow there). */
#define TL_FLOOR_DIV_LOOP(D)                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                              \
        int64_t q = floor_div(x[i], (D));                                                          \
        exact[i] = (uint64_t)q * (uint64_t)(D) == (uint64_t)x[i];                                  \
        x[i] = q;                                                                                  \
    }

/* x[i] = floor(x[i] / d), with the common divisors as constants (a division
 * by a constant is a multiplication). */
static void floor_div_chunk(int64_t *x, int64_t n, int64_t d, bool *exact)
{
    switch (d) {
    case 1000:
        TL_FLOOR_DIV_LOOP(1000);
        break;
    case 1000000:
        TL_FLOOR_DIV_LOOP(1000000);
        break;
    case 1000000000:
        TL_FLOOR_DIV_LOOP(1000000000);
        break;
    case 86400:
        TL_FLOOR_DIV_LOOP(86400);
        break;
    case 86400000:
        TL_FLOOR_DIV_LOOP(86400000);
        break;
    case 86400000000:
        TL_FLOOR_DIV_LOOP(86400000000);
        break;
    case 86400000000000:
        TL_FLOOR_DIV_LOOP(86400000000000);
        break;
    default:
        TL_FLOOR_DIV_LOOP(d);
        break;
    }
}

/* Converts x in place from ticks of `from` ns to ticks of `to` ns; ok[i] says
 * the result fits (int32 when narrow) and is exact. Returns true when all are. */
static bool rescale_chunk(int64_t *x, int64_t n, int64_t from, int64_t to, bool narrow, bool *ok)
{
    bool all = true;
    if (from > to) {
        int64_t f = from / to;
        for (int64_t i = 0; i < n; i++) {
            ok[i] = !__builtin_mul_overflow(x[i], f, &x[i]);
            all &= ok[i];
        }
    } else if (from < to) {
        floor_div_chunk(x, n, to / from, ok);
        for (int64_t i = 0; i < n; i++) all &= ok[i];
    } else {
        memset(ok, 1, (size_t)n * sizeof *ok);
    }
    if (narrow) {
        for (int64_t i = 0; i < n; i++) {
            ok[i] &= x[i] >= INT32_MIN && x[i] <= INT32_MAX;
            all &= ok[i];
        }
    }
    return all;
}

/* A date or instant as text for messages; times as a count of their unit. */
static void temporal_text(const tl_arrow_type *t, int64_t v, char *buf, size_t size)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    if (t->id == TL_ATYPE_TIME32 || t->id == TL_ATYPE_TIME64) {
        snprintf(buf, size, "%lld%s", (long long)v, units[t->unit]);
        return;
    }
    int64_t per_day = 86400LL * 1000000000 / tick_ns(t);
    int64_t days = floor_div(v, per_day), rest = v - days * per_day, year;
    int month, day;
    tl_civil_from_days(days, &year, &month, &day);
    if (t->id == TL_ATYPE_DATE32) {
        snprintf(buf, size, "%04lld-%02d-%02d", (long long)year, month, day);
        return;
    }
    int64_t per_sec = 1000000000 / tick_ns(t), secs = rest / per_sec, frac = rest % per_sec;
    int digits = per_sec == 1000 ? 3 : per_sec == 1000000 ? 6 : 9;
    char part[16] = "";
    if (frac) snprintf(part, sizeof part, ".%0*lld", digits, (long long)frac);
    snprintf(buf, size, "%04lld-%02d-%02dT%02d:%02d:%02d%s (%lld)", (long long)year, month, day,
             (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60), part, (long long)v);
}

/* What a cast to the coarser type t would drop of a value. */
static const char *lost_part(const tl_arrow_type *t)
{
    switch (tick_ns(t)) {
    case 86400LL * 1000000000:
        return "its time of day would be lost";
    case 1000000000:
        return "its part below a second would be lost";
    case 1000000:
        return "its part below a millisecond would be lost";
    default:
        return "its part below a microsecond would be lost";
    }
}

static void store_ticks(void *values, bool narrow, int64_t start, int64_t n, const int64_t *x,
                        const bool *ok)
{
    if (narrow) {
        int32_t *d = (int32_t *)values + start;
        for (int64_t i = 0; i < n; i++) d[i] = ok[i] ? (int32_t)x[i] : 0;
    } else {
        int64_t *d = (int64_t *)values + start;
        for (int64_t i = 0; i < n; i++) d[i] = ok[i] ? x[i] : 0;
    }
}

tl_status tl_cast_temporal(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    int64_t from = tick_ns(&v->type), to = tick_ns(c->to), x[TL_CAST_CHUNK];
    bool narrow = is_narrow(c->to->id), ok[TL_CAST_CHUNK];
    void *values;
    TL_TRY(tl_cast_begin(c, (size_t)v->length * (narrow ? 4 : 8), out, &values, err));
    for (int64_t start = 0; start < v->length; start += TL_CAST_CHUNK) {
        int64_t n = v->length - start < TL_CAST_CHUNK ? v->length - start : TL_CAST_CHUNK;
        load_ticks(v, start, n, x);
        bool all = rescale_chunk(x, n, from, to, narrow, ok);
        for (int64_t i = 0; !all && i < n; i++) {
            if (ok[i] || tl_view_is_null(v, start + i)) continue;
            int64_t orig;
            load_ticks(v, start + i, 1, &orig);
            char text[96];
            temporal_text(&v->type, orig, text, sizeof text);
            tl_array_release(out);
            if (from < to && orig % (to / from) != 0)
                return tl_cast_value_error(c, start + i, text, lost_part(c->to), err);
            return tl_cast_range_error(c, start + i, text, err);
        }
        store_ticks(values, narrow, start, n, x, ok);
    }
    return TL_OK;
}
