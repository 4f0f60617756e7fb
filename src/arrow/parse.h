/* Text <-> value conversions shared by casts from strings and by the text
 * readers (CSV, NDJSON): strict parsers over byte ranges (no NUL needed, no
 * surrounding spaces allowed, locale independent) and the decimal and calendar
 * arithmetic they rest on. Every parser returns TL_ERR_INVALID with a message
 * quoting the text when it is not a value of the type; callers that want their
 * own message pass err = NULL (no formatting cost then). */
#ifndef TL_ARROW_PARSE_H
#define TL_ARROW_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arrow/arrow_type.h"

/* A 128-bit signed integer: the unscaled value of a decimal128. */
__extension__ typedef __int128 tl_i128;

/* [+-]digits. */
tl_status tl_parse_int64(const char *s, size_t len, int64_t *out, tl_error *err);
/* [+]digits. */
tl_status tl_parse_uint64(const char *s, size_t len, uint64_t *out, tl_error *err);
/* Decimal or scientific notation ("-1.5e-3", ".5", "5."), "nan", "inf",
 * "infinity" (any case, signed). Correctly rounded. Finite text beyond the
 * double range is an error, not infinity. */
tl_status tl_parse_double(const char *s, size_t len, double *out, tl_error *err);
/* Decimal or scientific text whose value is a whole number in the int64
 * range, exactly: "42", "-7", "42.0", "4.2e1", "1e3"; not "4.5" or "1e19". */
tl_status tl_parse_integral(const char *s, size_t len, int64_t *out, tl_error *err);
/* "true"/"false" (any case), "1"/"0". */
tl_status tl_parse_bool(const char *s, size_t len, bool *out, tl_error *err);
/* "YYYY-MM-DD" -> days since 1970-01-01. */
tl_status tl_parse_date32(const char *s, size_t len, int32_t *out, tl_error *err);
/* ISO 8601: "YYYY-MM-DD", optionally followed by 'T' or ' ' and "HH:MM",
 * "HH:MM:SS" or "HH:MM:SS.fffffffff" (1-9 digits), optionally followed by 'Z'
 * or an offset "+HH:MM" / "-HHMM" / "+HH". No offset means UTC. The result is
 * the instant in `unit` since the epoch. Non-zero digits finer than the unit
 * (".000000001" for microseconds) are TL_ERR_INVALID: they would be lost. */
tl_status tl_parse_timestamp(const char *s, size_t len, tl_time_unit unit, int64_t *out,
                             tl_error *err);
tl_status tl_parse_timestamp_us(const char *s, size_t len, int64_t *out, tl_error *err);
/* The date the last tl_parse_timestamp_memo read, and its days: a column's
 * timestamps mostly share their day, so a value whose first ten characters
 * are the same date reuses them. Zeroed before the first value. */
typedef struct tl_date_memo {
    char text[10];
    int64_t days;
    bool set;
} tl_date_memo;
/* tl_parse_timestamp, the date read through *memo (and kept in it). */
tl_status tl_parse_timestamp_memo(const char *s, size_t len, tl_time_unit unit, tl_date_memo *memo,
                                  int64_t *out, tl_error *err);
/* The same, dropping digits finer than the unit (rounding toward negative
 * infinity): for times that are not data (object listings), and to tell
 * whether text is a timestamp at all (inference). */
tl_status tl_parse_timestamp_floor(const char *s, size_t len, tl_time_unit unit, int64_t *out,
                                   tl_error *err);
/* [+-]digits[.digits] as the unscaled value of decimal128(precision, scale).
 * More fractional digits than `scale` are allowed only when they are zeros. */
tl_status tl_parse_decimal128(const char *s, size_t len, int32_t precision, int32_t scale,
                              tl_i128 *out, tl_error *err);

/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
int64_t tl_days_from_civil(int64_t year, int month, int day);
void tl_civil_from_days(int64_t days, int64_t *year, int *month, int *day);

/* 10^n for 0 <= n <= 38. */
tl_i128 tl_i128_pow10(int n);
/* Writes an unscaled decimal with `scale` fraction digits ("-12.340"). */
void tl_decimal128_format(tl_i128 value, int32_t scale, char *buf, size_t size);
/* Shortest text that reads back as the same double, laid out as %g lays out
 * that many digits ("0.1", "1e+300", "1e+05", "2"; "-0", "nan", "inf"). */
void tl_double_format(double value, char *buf, size_t size);
/* Copies up to 48 bytes of text for an error message, quoting it and
 * replacing control bytes, adding "..." when it is longer. */
void tl_text_quote(const uint8_t *s, int64_t len, char *buf, size_t size);

static inline tl_i128 tl_load_i128(const void *p)
{
    tl_i128 v;
    memcpy(&v, p, sizeof v); /* little-endian, as Arrow stores decimal128 */
    return v;
}

static inline void tl_store_i128(void *p, tl_i128 v)
{
    memcpy(p, &v, sizeof v);
}

#endif
