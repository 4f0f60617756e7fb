#include "arrow/parse.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "arrow/parse_float.h"
#include "core/double_text.h"

static tl_status parse_error(const char *s, size_t len, const char *what, tl_error *err)
{
    if (err == NULL) return TL_ERR_INVALID;
    char quoted[80];
    tl_text_quote((const uint8_t *)s, (int64_t)len, quoted, sizeof quoted);
    return tl_error_set(err, TL_ERR_INVALID, "cannot parse %s as %s", quoted, what);
}

static tl_status range_error(const char *s, size_t len, const char *what, tl_error *err)
{
    if (err == NULL) return TL_ERR_INVALID;
    char quoted[80];
    tl_text_quote((const uint8_t *)s, (int64_t)len, quoted, sizeof quoted);
    return tl_error_set(err, TL_ERR_INVALID, "%s is out of range for %s", quoted, what);
}

static inline unsigned digit(char c)
{
    return (unsigned)((unsigned char)c - '0');
}

/* Unsigned digits only; returns false on a non-digit or overflow. */
static bool parse_digits_u64(const char *s, size_t len, uint64_t *out, bool *overflow)
{
    uint64_t v = 0;
    *overflow = false;
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned d = digit(s[i]);
        if (d > 9) return false;
        if (v > (UINT64_MAX - d) / 10) *overflow = true;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

tl_status tl_parse_int64(const char *s, size_t len, int64_t *out, tl_error *err)
{
    size_t i = len > 0 && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    bool neg = i == 1 && s[0] == '-', overflow;
    uint64_t v;
    if (!parse_digits_u64(s + i, len - i, &v, &overflow)) return parse_error(s, len, "int64", err);
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (overflow || v > limit) return range_error(s, len, "int64", err);
    *out = neg ? (int64_t)(~v + 1) : (int64_t)v;
    return TL_OK;
}

tl_status tl_parse_uint64(const char *s, size_t len, uint64_t *out, tl_error *err)
{
    size_t i = len > 0 && s[0] == '+' ? 1 : 0;
    bool overflow;
    if (len > 0 && s[0] == '-' && len > 1 && digit(s[1]) <= 9)
        return range_error(s, len, "uint64", err);
    if (!parse_digits_u64(s + i, len - i, out, &overflow))
        return parse_error(s, len, "uint64", err);
    if (overflow) return range_error(s, len, "uint64", err);
    return TL_OK;
}

/* Case-insensitive comparison of s[0, len) with the lowercase word. */
static bool word_is(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return false;
    }
    return true;
}

tl_status tl_parse_bool(const char *s, size_t len, bool *out, tl_error *err)
{
    if (word_is(s, len, "true") || word_is(s, len, "1")) {
        *out = true;
        return TL_OK;
    }
    if (word_is(s, len, "false") || word_is(s, len, "0")) {
        *out = false;
        return TL_OK;
    }
    return parse_error(s, len, "bool", err);
}

/* ---- Doubles ---- */

typedef struct tl_num_text {
    uint64_t mantissa; /* the first 19 significant digits */
    int64_t exp10;     /* value = mantissa * 10^exp10 when !truncated */
    bool truncated;    /* more than 19 significant digits */
    bool neg;
} tl_num_text;

static int64_t scan_exponent(const char *s, size_t len, size_t *i, bool *ok)
{
    size_t j = *i + 1;
    bool neg = false;
    if (j < len && (s[j] == '+' || s[j] == '-')) neg = s[j++] == '-';
    int64_t e = 0;
    size_t start = j;
    for (; j < len && digit(s[j]) <= 9; j++)
        if (e < 100000) e = e * 10 + digit(s[j]);
    *ok = j > start;
    *i = j;
    return neg ? -e : e;
}

/* Checks the grammar of a decimal number and gathers its leading digits:
 * any number of digits, one at a time. */
static bool scan_number_long(const char *s, size_t len, tl_num_text *t)
{
    size_t i = 0;
    int digits = 0, significant = 0;
    memset(t, 0, sizeof *t);
    if (i < len && (s[i] == '+' || s[i] == '-')) t->neg = s[i++] == '-';
    bool seen_point = false;
    for (; i < len; i++) {
        if (s[i] == '.' && !seen_point) {
            seen_point = true;
            continue;
        }
        unsigned d = digit(s[i]);
        if (d > 9) break;
        digits++;
        if (significant == 0 && d == 0) {
            if (seen_point) t->exp10--;
            continue;
        }
        if (significant < 19) {
            t->mantissa = t->mantissa * 10 + d;
            significant++;
            if (seen_point) t->exp10--;
        } else {
            t->truncated |= d != 0;
            if (!seen_point) t->exp10++;
        }
    }
    if (digits == 0) return false;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        bool ok;
        t->exp10 += scan_exponent(s, len, &i, &ok);
        if (!ok) return false;
    }
    return i == len;
}

/* Eight ASCII digits at p, loaded as a little-endian word: whether they all
 * are digits, and their value (the SWAR method of simdjson and fast_float). */
static inline uint64_t load8(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline bool all8_digits(uint64_t v)
{
    return ((v & 0xF0F0F0F0F0F0F0F0ULL) |
            (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) == 0x3333333333333333ULL;
}

static inline uint64_t value8(uint64_t v)
{
    v -= 0x3030303030303030ULL;
    v = v * 10 + (v >> 8);
    return (((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
            (((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >>
           32;
}

/* The last 3 to 7 digits of a field, [p, end), as one word: the eight bytes
 * before end (inside the field, which starts at start) with those before p
 * made '0', which add nothing. False when they are not all digits (an
 * exponent follows, or the field is short) and for one or two digits, which
 * cost fewer instructions byte by byte: the caller goes byte by byte. */
static inline bool tail_into(const char *start, const char *p, const char *end, uint64_t *v)
{
    static const uint64_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    size_t k = (size_t)(end - p);
    if (k < 3 || k >= 8 || end - start < 8) return false;
    uint64_t keep = ~0ULL << (8 * (8 - k)); /* the high bytes are the last in memory */
    uint64_t w = (load8(end - 8) & keep) | (0x3030303030303030ULL & ~keep);
    if (!all8_digits(w)) return false;
    *v = *v * pow10[k] + value8(w);
    return true;
}

/* Digits from *p on, eight at a time while there are eight, into *v; a
 * run that ends the field takes its last 3 to 7 digits in one word too. */
static inline const char *digits_into(const char *start, const char *p, const char *end,
                                      uint64_t *v)
{
    while (end - p >= 8 && all8_digits(load8(p))) {
        *v = *v * 100000000 + value8(load8(p));
        p += 8;
    }
    if (tail_into(start, p, end, v)) return end;
    for (; p < end && digit(*p) <= 9; p++) *v = *v * 10 + digit(*p);
    return p;
}

/* Checks the grammar of a decimal number and gathers its leading digits.
 * Text of at most 19 digits (every number a double or an int64 writes
 * itself as) is read eight digits at a time: its value is the mantissa,
 * exact (below 10^19, so no overflow) and never truncated. Longer text
 * goes digit by digit (scan_number_long), the same result. */
static bool scan_number(const char *s, size_t len, tl_num_text *t)
{
    const char *p = s, *end = s + len;
    uint64_t v = 0;
    bool neg = p < end && *p == '-';
    if (p < end && (*p == '+' || *p == '-')) p++;
    const char *int_start = p;
    /* One digit before the point (0.123, the usual float) skips the word test. */
    if (end - p >= 2 && digit(p[0]) <= 9 && p[1] == '.')
        v = digit(*p++);
    else
        p = digits_into(s, p, end, &v);
    int64_t digits = p - int_start, fraction = 0;
    if (p < end && *p == '.') {
        const char *frac_start = ++p;
        p = digits_into(s, p, end, &v);
        fraction = p - frac_start;
        digits += fraction;
    }
    if (digits > 19) return scan_number_long(s, len, t);
    if (digits == 0) return false;
    t->mantissa = v;
    t->exp10 = -fraction;
    t->truncated = false;
    t->neg = neg;
    size_t i = (size_t)(p - s);
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        bool ok;
        t->exp10 += scan_exponent(s, len, &i, &ok);
        if (!ok) return false;
    }
    return i == len;
}

static bool parse_special(const char *s, size_t len, double *out)
{
    bool neg = len > 0 && s[0] == '-';
    size_t i = len > 0 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (word_is(s + i, len - i, "nan")) {
        *out = neg ? -NAN : NAN;
        return true;
    }
    if (word_is(s + i, len - i, "inf") || word_is(s + i, len - i, "infinity")) {
        *out = neg ? -INFINITY : INFINITY;
        return true;
    }
    return false;
}

/* strtod on a NUL-terminated copy whose decimal point is the locale's. */
static tl_status parse_double_slow(const char *s, size_t len, double *out, tl_error *err)
{
    char buf[1024];
    if (len >= sizeof buf) return parse_error(s, len, "float64 (too long)", err);
    memcpy(buf, s, len);
    buf[len] = '\0';
    const char *point = localeconv()->decimal_point;
    if (point && point[0] && point[0] != '.' && point[1] == '\0') {
        char *dot = memchr(buf, '.', len);
        if (dot) *dot = point[0];
    }
    errno = 0;
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end != buf + len) return parse_error(s, len, "float64", err);
    if (errno == ERANGE && isinf(v)) return range_error(s, len, "float64", err);
    *out = v;
    return TL_OK;
}

tl_status tl_parse_double(const char *s, size_t len, double *out, tl_error *err)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    tl_num_text t;
    if (!scan_number(s, len, &t)) {
        if (parse_special(s, len, out)) return TL_OK;
        return parse_error(s, len, "float64", err);
    }
    /* Exact operands and one correctly rounded operation (Clinger's fast path). */
    if (!t.truncated && t.mantissa <= (1ULL << 53) && t.exp10 >= -22 && t.exp10 <= 22) {
        double m = (double)t.mantissa;
        double v = t.exp10 < 0 ? m / pow10[-t.exp10] : m * pow10[t.exp10];
        *out = t.neg ? -v : v;
        return TL_OK;
    }
    if (t.mantissa == 0) {
        *out = t.neg ? -0.0 : 0.0;
        return TL_OK;
    }
    /* Eisel-Lemire. With digits dropped the value lies strictly between
     * mantissa and mantissa + 1 (times 10^exp10): decided when both agree. */
    double v;
    if (tl_eisel_lemire(t.mantissa, t.exp10, t.neg, &v)) {
        double v1;
        if (!t.truncated || (tl_eisel_lemire(t.mantissa + 1, t.exp10, t.neg, &v1) && v1 == v)) {
            *out = v;
            return TL_OK;
        }
    }
    return parse_double_slow(s, len, out, err);
}

/* ---- Calendar ---- */

int64_t tl_days_from_civil(int64_t y, int m, int d)
{
    /* Howard Hinnant's days_from_civil: years start in March so the leap day is last. */
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void tl_civil_from_days(int64_t z, int64_t *year, int *month, int *day)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (*month <= 2);
}

tl_status tl_parse_integral(const char *s, size_t len, int64_t *out, tl_error *err)
{
    tl_num_text t;
    if (!scan_number(s, len, &t)) return parse_error(s, len, "an integer", err);
    uint64_t v = t.mantissa;
    if (v != 0 && t.truncated) return range_error(s, len, "int64 (or not whole)", err);
    for (int64_t e = t.exp10; v != 0 && e < 0; e++) {
        if (v % 10 != 0) return parse_error(s, len, "an integer (it has a fraction)", err);
        v /= 10;
    }
    for (int64_t e = t.exp10; v != 0 && e > 0; e--) {
        if (v > UINT64_MAX / 10) return range_error(s, len, "int64", err);
        v *= 10;
    }
    uint64_t limit = t.neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (v > limit) return range_error(s, len, "int64", err);
    *out = t.neg ? (int64_t)(~v + 1) : (int64_t)v;
    return TL_OK;
}

static int days_in_month(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* Reads exactly n digits at s; -1 if any is not a digit. */
static int fixed_digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        unsigned d = digit(s[i]);
        if (d > 9) return -1;
        v = v * 10 + (int)d;
    }
    return v;
}

/* "YYYY-MM-DD" at the start of s (len >= 10). */
static bool scan_date(const char *s, size_t len, int64_t *days)
{
    if (len < 10 || s[4] != '-' || s[7] != '-') return false;
    int y = fixed_digits(s, 4), m = fixed_digits(s + 5, 2), d = fixed_digits(s + 8, 2);
    if (y < 0 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return false;
    *days = tl_days_from_civil(y, m, d);
    return true;
}

tl_status tl_parse_date32(const char *s, size_t len, int32_t *out, tl_error *err)
{
    int64_t days;
    if (len != 10 || !scan_date(s, len, &days)) return parse_error(s, len, "date32", err);
    *out = (int32_t)days;
    return TL_OK;
}

typedef struct tl_clock {
    int64_t seconds; /* of the day, before the offset */
    int64_t nanos;
    int64_t offset; /* seconds east of UTC */
} tl_clock;

/* "+HH", "+HHMM" or "+HH:MM" (or '-'), or 'Z'; the whole rest of the text. */
static bool scan_offset(const char *s, size_t len, int64_t *offset)
{
    if (len == 1 && (s[0] == 'Z' || s[0] == 'z')) return true;
    if (len < 3 || (s[0] != '+' && s[0] != '-')) return false;
    int h = fixed_digits(s + 1, 2), m = 0;
    if (len == 6 && s[3] == ':')
        m = fixed_digits(s + 4, 2);
    else if (len == 5)
        m = fixed_digits(s + 3, 2);
    else if (len != 3)
        return false;
    if (h < 0 || h > 23 || m < 0 || m > 59) return false;
    *offset = (s[0] == '-' ? -1 : 1) * (int64_t)(h * 3600 + m * 60);
    return true;
}

/* "HH:MM[:SS[.f{1,9}]][offset]": the whole text after the date separator. */
static bool scan_clock(const char *s, size_t len, tl_clock *c)
{
    if (len < 5 || s[2] != ':') return false;
    int h = fixed_digits(s, 2), m = fixed_digits(s + 3, 2), sec = 0;
    size_t i = 5;
    if (i < len && s[i] == ':') {
        if (len < i + 3 || (sec = fixed_digits(s + i + 1, 2)) < 0) return false;
        i += 3;
        if (i < len && s[i] == '.') {
            size_t start = ++i;
            int64_t scale = 100000000;
            for (; i < len && digit(s[i]) <= 9; i++, scale /= 10) {
                if (i - start == 9) return false;
                c->nanos += digit(s[i]) * scale;
            }
            if (i == start) return false;
        }
    }
    if (h < 0 || h > 23 || m < 0 || m > 59 || sec > 59) return false;
    c->seconds = h * 3600 + m * 60 + sec;
    return i == len || scan_offset(s + i, len - i, &c->offset);
}

static const int64_t units_per_second[] = {1, 1000, 1000000, 1000000000};

/* scan_date through a memo (may be NULL): the days depend on the first ten
 * characters only, and only a valid date is kept. */
static bool scan_date_memo(const char *s, size_t len, tl_date_memo *m, int64_t *days)
{
    if (m && m->set && len >= 10 && memcmp(s, m->text, 10) == 0) {
        *days = m->days;
        return true;
    }
    if (!scan_date(s, len, days)) return false;
    if (m) {
        memcpy(m->text, s, 10);
        m->days = *days;
        m->set = true;
    }
    return true;
}

static tl_status parse_timestamp(const char *s, size_t len, tl_time_unit unit, bool exact,
                                 tl_date_memo *memo, int64_t *out, tl_error *err)
{
    static const char *const names[] = {"timestamp[s]", "timestamp[ms]", "timestamp[us]",
                                        "timestamp[ns]"};
    static const char *const ticks[] = {"second", "millisecond", "microsecond", "nanosecond"};
    int64_t days;
    tl_clock c = {0, 0, 0};
    if (!scan_date_memo(s, len, memo, &days)) return parse_error(s, len, names[unit], err);
    if (len > 10) {
        char sep = s[10];
        if ((sep != 'T' && sep != 't' && sep != ' ') || !scan_clock(s + 11, len - 11, &c))
            return parse_error(s, len, names[unit], err);
    }
    int64_t per_sec = units_per_second[unit], secs = days * 86400 + c.seconds - c.offset, v;
    int64_t frac = c.nanos / (1000000000 / per_sec); /* nanos >= 0: this is a floor */
    if (exact && c.nanos % (1000000000 / per_sec) != 0) {
        if (err == NULL) return TL_ERR_INVALID;
        char quoted[80];
        tl_text_quote((const uint8_t *)s, (int64_t)len, quoted, sizeof quoted);
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s has digits below a %s, which %s cannot hold: they would be lost",
                            quoted, ticks[unit], names[unit]);
    }
    if (__builtin_mul_overflow(secs, per_sec, &v) || __builtin_add_overflow(v, frac, &v))
        return range_error(s, len, names[unit], err);
    *out = v;
    return TL_OK;
}

tl_status tl_parse_timestamp(const char *s, size_t len, tl_time_unit unit, int64_t *out,
                             tl_error *err)
{
    return parse_timestamp(s, len, unit, true, NULL, out, err);
}

tl_status tl_parse_timestamp_memo(const char *s, size_t len, tl_time_unit unit, tl_date_memo *memo,
                                  int64_t *out, tl_error *err)
{
    return parse_timestamp(s, len, unit, true, memo, out, err);
}

tl_status tl_parse_timestamp_floor(const char *s, size_t len, tl_time_unit unit, int64_t *out,
                                   tl_error *err)
{
    return parse_timestamp(s, len, unit, false, NULL, out, err);
}

tl_status tl_parse_timestamp_us(const char *s, size_t len, int64_t *out, tl_error *err)
{
    return tl_parse_timestamp(s, len, TL_UNIT_MICRO, out, err);
}

/* ---- Decimals ---- */

tl_i128 tl_i128_pow10(int n)
{
    tl_i128 v = 1;
    for (int i = 0; i < n; i++) v *= 10;
    return v;
}

tl_status tl_parse_decimal128(const char *s, size_t len, int32_t precision, int32_t scale,
                              tl_i128 *out, tl_error *err)
{
    char what[48];
    snprintf(what, sizeof what, "decimal128(%d, %d)", (int)precision, (int)scale);
    size_t i = len > 0 && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    bool neg = i == 1 && s[0] == '-';
    size_t int_start = i;
    while (i < len && digit(s[i]) <= 9) i++;
    size_t int_end = i, frac_start = i, frac_end = i;
    if (i < len && s[i] == '.') {
        frac_start = ++i;
        while (i < len && digit(s[i]) <= 9) i++;
        frac_end = i;
    }
    if (i != len || (int_end == int_start && frac_end == frac_start))
        return parse_error(s, len, what, err);
    /* Trailing zeros of the fraction do not change the value. */
    while (frac_end > frac_start && s[frac_end - 1] == '0') frac_end--;
    if ((int32_t)(frac_end - frac_start) > scale)
        return tl_error_set(err, TL_ERR_INVALID, "cannot parse %.*s as %s: too many decimal places",
                            (int)(len > 60 ? 60 : len), s, what);
    tl_i128 limit = tl_i128_pow10(precision), v = 0;
    for (size_t j = int_start; j < frac_end; j++) {
        if (j == int_end) j = frac_start;
        if (j >= frac_end) break;
        v = v * 10 + digit(s[j]);
        if (v >= limit) return range_error(s, len, what, err);
    }
    int32_t missing = scale - (int32_t)(frac_end - frac_start);
    if (v != 0 && v >= limit / tl_i128_pow10(missing)) return range_error(s, len, what, err);
    v *= tl_i128_pow10(missing);
    *out = neg ? -v : v;
    return TL_OK;
}

void tl_decimal128_format(tl_i128 value, int32_t scale, char *buf, size_t size)
{
    __extension__ unsigned __int128 u =
        value < 0 ? -(unsigned __int128)value : (unsigned __int128)value;
    char digits[48];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u != 0);
    while (n <= scale) digits[n++] = '0';
    char text[64];
    size_t t = 0;
    if (value < 0) text[t++] = '-';
    for (int i = n - 1; i >= 0; i--) {
        text[t++] = digits[i];
        if (i == scale && scale > 0) text[t++] = '.';
    }
    text[t] = '\0';
    snprintf(buf, size, "%s", text);
}

void tl_double_format(double value, char *buf, size_t size)
{
    if (!isfinite(value) || value == 0) {
        snprintf(buf, size, "%g", value);
        return;
    }
    char digits[TL_DOUBLE_DIGITS], text[TL_DOUBLE_TEXT_SIZE];
    int exp, nd = tl_double_digits(value, digits, &exp), n = 0;
    if (value < 0) text[n++] = '-';
    if (exp < -4 || exp >= nd) { /* as %g of nd digits: an exponent beyond them */
        n += snprintf(text + n, sizeof text - (size_t)n, "%c%s%se%+03d", digits[0],
                      nd > 1 ? "." : "", digits + 1, exp);
    } else if (exp >= 0) {
        n += snprintf(text + n, sizeof text - (size_t)n, "%.*s%s%s", exp + 1, digits,
                      nd > exp + 1 ? "." : "", digits + exp + 1);
    } else {
        n += snprintf(text + n, sizeof text - (size_t)n, "0.%.*s%s", -exp - 1, "0000", digits);
    }
    snprintf(buf, size, "%s", text);
}

void tl_text_quote(const uint8_t *s, int64_t len, char *buf, size_t size)
{
    char text[64];
    int64_t n = len > 48 ? 48 : len;
    /* Do not cut a UTF-8 sequence in half. */
    while (n < len && n > 0 && (s[n] & 0xC0) == 0x80) n--;
    for (int64_t i = 0; i < n; i++) text[i] = s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
    text[n] = '\0';
    snprintf(buf, size, "\"%s\"%s", text, n < len ? "..." : "");
}
