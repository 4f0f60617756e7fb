/* Flooring a timestamp to a multiple of a bucket width, the arithmetic of
 * time_bucket (time_bucket.c). A 64-bit division costs tens of cycles and
 * was the largest share of the function; for the magnitudes timestamps have
 * (|v| < 2^52 microseconds, some 142 years around 1970) a multiplication by
 * the width's reciprocal gets the quotient within one or two of the truth,
 * and an exact correction of the remainder does the rest. */
#ifndef TL_QUERY_TIME_FLOOR_H
#define TL_QUERY_TIME_FLOOR_H

#include <stdbool.h>
#include <stdint.h>

/* DuckDB's infinite timestamps: passed through as they are. */
#define TL_TS_INFINITY INT64_MAX
#define TL_TS_NINFINITY (-INT64_MAX)

/* Beyond this, doubles no longer hold the operands exactly. */
#define TL_FLOOR_FAST_LIMIT (INT64_C(1) << 52)

/* *out = v floored to a multiple of w (w > 0), exactly, by integer
 * division; false when that falls below the smallest int64. */
static inline bool tl_time_floor_exact(int64_t v, int64_t w, int64_t *out)
{
    if (v == TL_TS_INFINITY || v == TL_TS_NINFINITY) {
        *out = v;
        return true;
    }
    int64_t r = v % w;
    if (r >= 0) {
        *out = v - r;
        return true;
    }
    return !__builtin_sub_overflow(v - r, w, out); /* v - r is a multiple of w above v */
}

/* The same, with inv = 1.0 / w precomputed by the caller. */
static inline bool tl_time_floor(int64_t v, int64_t w, double inv, int64_t *out)
{
    if (v <= -TL_FLOOR_FAST_LIMIT || v >= TL_FLOOR_FAST_LIMIT || w >= TL_FLOOR_FAST_LIMIT)
        return tl_time_floor_exact(v, w, out);
    int64_t q = (int64_t)((double)v * inv);
    int64_t r = v - q * w; /* |q * w| < 2^53: no overflow */
    while (r < 0) r += w;
    while (r >= w) r -= w;
    *out = v - r;
    return true;
}

#endif
