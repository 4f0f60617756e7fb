#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "arrow/parse.h"
#include "unit.h"

#define S(lit) lit, sizeof(lit) - 1

static void test_parse_int64(void)
{
    int64_t v;
    tl_error err;
    CHECK_OK(tl_parse_int64(S("0"), &v, &err), &err);
    CHECK_INT(v, 0);
    CHECK_OK(tl_parse_int64(S("-42"), &v, &err), &err);
    CHECK_INT(v, -42);
    CHECK_OK(tl_parse_int64(S("+7"), &v, &err), &err);
    CHECK_INT(v, 7);
    CHECK_OK(tl_parse_int64(S("9223372036854775807"), &v, &err), &err);
    CHECK(v == INT64_MAX);
    CHECK_OK(tl_parse_int64(S("-9223372036854775808"), &v, &err), &err);
    CHECK(v == INT64_MIN);
    CHECK_INT(tl_parse_int64(S("9223372036854775808"), &v, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "\"9223372036854775808\" is out of range for int64");
    CHECK_INT(tl_parse_int64(S("-9223372036854775809"), &v, &err), TL_ERR_INVALID);
    CHECK_INT(tl_parse_int64(S("99999999999999999999999"), &v, &err), TL_ERR_INVALID);
    const char *bad[] = {"", "-", "+", " 1", "1 ", "1.0", "1e3", "0x10", "abc", "1-"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_INT(tl_parse_int64(bad[i], strlen(bad[i]), &v, NULL), TL_ERR_INVALID);
    CHECK_INT(tl_parse_int64(S("abc"), &v, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "cannot parse \"abc\" as int64");
    /* Not NUL-terminated: only len bytes count. */
    CHECK_OK(tl_parse_int64("123456", 3, &v, &err), &err);
    CHECK_INT(v, 123);
}

static void test_parse_uint64(void)
{
    uint64_t v;
    CHECK_INT(tl_parse_uint64(S("18446744073709551615"), &v, NULL), TL_OK);
    CHECK(v == UINT64_MAX);
    CHECK_INT(tl_parse_uint64(S("18446744073709551616"), &v, NULL), TL_ERR_INVALID);
    CHECK_INT(tl_parse_uint64(S("-1"), &v, NULL), TL_ERR_INVALID);
    CHECK_INT(tl_parse_uint64(S(""), &v, NULL), TL_ERR_INVALID);
}

static void test_parse_double(void)
{
    struct {
        const char *text;
        double want;
    } ok[] = {
        {"0", 0.0},
        {"1.5", 1.5},
        {"-2.25", -2.25},
        {".5", 0.5},
        {"5.", 5.0},
        {"1e3", 1000.0},
        {"1E-3", 0.001},
        {"+3.0e+2", 300.0},
        {"0.1", 0.1},
        {"123456789012345678901234567890", 1.2345678901234568e29},
        {"2.2250738585072014e-308", 2.2250738585072014e-308},
        {"4.9e-324", 4.9e-324},
        {"1.7976931348623157e308", 1.7976931348623157e308},
        {"0.30000000000000004", 0.30000000000000004},
        {"9007199254740993", 9007199254740992.0}, /* ties to even */
        {"1e-400", 0.0},
        {"00000.000001", 1e-6},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double v = -1;
        tl_error err;
        CHECK_OK(tl_parse_double(ok[i].text, strlen(ok[i].text), &v, &err), &err);
        if (v != ok[i].want) unit_fail(__FILE__, __LINE__, "%s -> %.17g", ok[i].text, v);
    }
    double v;
    CHECK_INT(tl_parse_double(S("-0"), &v, NULL), TL_OK);
    CHECK(v == 0 && signbit(v));
    CHECK_INT(tl_parse_double(S("NaN"), &v, NULL), TL_OK);
    CHECK(isnan(v));
    CHECK_INT(tl_parse_double(S("-inf"), &v, NULL), TL_OK);
    CHECK(isinf(v) && v < 0);
    CHECK_INT(tl_parse_double(S("Infinity"), &v, NULL), TL_OK);
    CHECK(isinf(v) && v > 0);
    const char *bad[] = {"",   ".",     "e5",     "1e",  "1e+", "1.2.3", " 1",
                         "1 ", "0x1p3", "nan(1)", "1,5", "abc", "--1",   "inff"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tl_parse_double(bad[i], strlen(bad[i]), &v, NULL) != TL_ERR_INVALID)
            unit_fail(__FILE__, __LINE__, "\"%s\" parsed", bad[i]);
    tl_error err;
    CHECK_INT(tl_parse_double(S("1e400"), &v, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "\"1e400\" is out of range for float64");
}

static void test_parse_double_matches_strtod(void)
{
    /* Random decimal strings: our result must be strtod's, bit for bit. */
    uint64_t state = 12345;
    char text[64];
    for (int i = 0; i < 20000; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t m = state >> 11;
        int e = (int)((state >> 3) % 60) - 30, digits = (int)(state % 19) + 1;
        snprintf(text, sizeof text, "%.*llue%d", digits, (unsigned long long)m, e);
        size_t len = strlen(text);
        double want = strtod(text, NULL), got = 0;
        CHECK_INT(tl_parse_double(text, len, &got, NULL), TL_OK);
        if (got != want) {
            unit_fail(__FILE__, __LINE__, "%s -> %.17g, strtod %.17g", text, got, want);
            break;
        }
    }
}

static void test_parse_double_ignores_locale(void)
{
    /* A library must not depend on the process locale; skip if none is installed. */
    const char *old = setlocale(LC_NUMERIC, NULL);
    char saved[64];
    snprintf(saved, sizeof saved, "%s", old ? old : "C");
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") == NULL &&
        setlocale(LC_NUMERIC, "fr_FR.UTF-8") == NULL)
        return;
    double v = 0;
    CHECK_INT(tl_parse_double(S("1.00000000000000000000001"), &v, NULL), TL_OK);
    CHECK(v == 1.0);
    CHECK_INT(tl_parse_double(S("3.14159265358979323846"), &v, NULL), TL_OK);
    CHECK(v == 3.14159265358979323846);
    setlocale(LC_NUMERIC, saved);
}

static void test_parse_bool(void)
{
    bool b;
    CHECK_INT(tl_parse_bool(S("true"), &b, NULL), TL_OK);
    CHECK(b);
    CHECK_INT(tl_parse_bool(S("FALSE"), &b, NULL), TL_OK);
    CHECK(!b);
    CHECK_INT(tl_parse_bool(S("1"), &b, NULL), TL_OK);
    CHECK(b);
    CHECK_INT(tl_parse_bool(S("0"), &b, NULL), TL_OK);
    CHECK(!b);
    CHECK_INT(tl_parse_bool(S("yes"), &b, NULL), TL_ERR_INVALID);
    CHECK_INT(tl_parse_bool(S("t"), &b, NULL), TL_ERR_INVALID);
}

static void test_parse_date32(void)
{
    int32_t d;
    tl_error err;
    CHECK_OK(tl_parse_date32(S("1970-01-01"), &d, &err), &err);
    CHECK_INT(d, 0);
    CHECK_OK(tl_parse_date32(S("2026-01-02"), &d, &err), &err);
    CHECK_INT(d, 20455);
    CHECK_OK(tl_parse_date32(S("1969-12-31"), &d, &err), &err);
    CHECK_INT(d, -1);
    CHECK_OK(tl_parse_date32(S("2000-02-29"), &d, &err), &err);
    CHECK_INT(d, 11016);
    CHECK_OK(tl_parse_date32(S("0001-01-01"), &d, &err), &err);
    CHECK_INT(d, -719162);
    const char *bad[] = {"2023-02-29", "1900-02-29", "2026-13-01",       "2026-00-10", "2026-01-32",
                         "2026-1-02",  "2026/01/02", "2026-01-02T00:00", "26-01-02",   ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tl_parse_date32(bad[i], strlen(bad[i]), &d, NULL) != TL_ERR_INVALID)
            unit_fail(__FILE__, __LINE__, "\"%s\" parsed", bad[i]);
}

static void test_calendar_round_trip(void)
{
    for (int64_t days = -800000; days <= 3000000; days += 97) {
        int64_t y;
        int m, d;
        tl_civil_from_days(days, &y, &m, &d);
        if (tl_days_from_civil(y, m, d) != days) {
            unit_fail(__FILE__, __LINE__, "day %lld round trip", (long long)days);
            break;
        }
    }
}

/* Through a memo of the last date, a run of values gives what each gives
 * alone: the same day at other times, days that differ in their last or
 * first digit only, a bad date after a good one (an error, and not kept),
 * text shorter than a date, and an offset that moves the day. */
static void test_parse_timestamp_memo(void)
{
    static const char *const values[] = {
        "2026-01-01 00:00:00.010000Z", "2026-01-01 23:59:59.999999Z", "2026-01-02 00:00:00Z",
        "2026-01-01T12:00:00Z",        "1026-01-01T12:00:00Z",        "2026-01-01",
        "2026-02-30 00:00:00Z",        "2026-01-01 00:00:00Z",        "2026-01",
        "2026-01-01T00:30:00+01:00",   "2026-01-01X00:00:00Z",        "2026-12-31T23:00:00-02:00",
        "2026-12-31 23:00:00.5Z"};
    tl_date_memo memo = {0};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        int64_t want = 0, got = 0;
        tl_error err;
        size_t len = strlen(values[i]);
        tl_status a = tl_parse_timestamp(values[i], len, TL_UNIT_MICRO, &want, NULL);
        tl_status b = tl_parse_timestamp_memo(values[i], len, TL_UNIT_MICRO, &memo, &got, &err);
        CHECK_INT(b, a);
        if (a == TL_OK && got != want) unit_fail(__FILE__, __LINE__, "%s differs", values[i]);
    }
}

static void test_parse_timestamp(void)
{
    int64_t v;
    tl_error err;
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02T03:04:05.123456Z"), &v, &err), &err);
    CHECK_INT(v, 1767323045123456LL);
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02 03:04:05.123456"), &v, &err), &err);
    CHECK_INT(v, 1767323045123456LL);
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02T04:04:05.123456+01:00"), &v, &err), &err);
    CHECK_INT(v, 1767323045123456LL);
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02T01:34:05.123456-0130"), &v, &err), &err);
    CHECK_INT(v, 1767323045123456LL + 0);
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02T03:04:05.123456-01:30"), &v, &err), &err);
    CHECK_INT(v, 1767323045123456LL + 5400000000LL);
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02T03:04:05+05"), &v, &err), &err);
    CHECK_INT(v, 1767323045000000LL - 5 * 3600000000LL);
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02"), &v, &err), &err);
    CHECK_INT(v, 1767312000000000LL);
    CHECK_OK(tl_parse_timestamp_us(S("2026-01-02T03:04"), &v, &err), &err);
    CHECK_INT(v, 1767323040000000LL);
    /* Non-zero digits finer than the unit would be lost: an error; zeros are
     * not. The floor variant drops them toward negative infinity. */
    CHECK_INT(tl_parse_timestamp_us(S("2024-05-01T00:00:00.000000001Z"), &v, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "\"2024-05-01T00:00:00.000000001Z\" has digits below a microsecond, "
                           "which timestamp[us] cannot hold: they would be lost");
    CHECK_INT(tl_parse_timestamp(S("1969-12-31T23:59:59.5"), TL_UNIT_SECOND, &v, &err),
              TL_ERR_INVALID);
    CHECK_OK(tl_parse_timestamp_us(S("2024-05-01T00:00:00.123456000Z"), &v, &err), &err);
    CHECK_INT(v, 1714521600123456LL);
    CHECK_OK(tl_parse_timestamp_floor(S("1969-12-31T23:59:59.9999999Z"), TL_UNIT_MICRO, &v, &err),
             &err);
    CHECK_INT(v, -1);
    CHECK_OK(tl_parse_timestamp_floor(S("1969-12-31T23:59:59.5"), TL_UNIT_SECOND, &v, &err), &err);
    CHECK_INT(v, -1);
    CHECK_OK(tl_parse_timestamp(S("2026-01-02T03:04:05.123456789Z"), TL_UNIT_NANO, &v, &err), &err);
    CHECK_INT(v, 1767323045123456789LL);
    CHECK_OK(tl_parse_timestamp(S("2026-01-02T03:04:05.1Z"), TL_UNIT_MILLI, &v, &err), &err);
    CHECK_INT(v, 1767323045100LL);
    CHECK_INT(tl_parse_timestamp(S("2300-01-01T00:00:00"), TL_UNIT_NANO, &v, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "out of range for timestamp[ns]") != NULL);
    CHECK_OK(tl_parse_timestamp(S("2300-01-01T00:00:00"), TL_UNIT_MICRO, &v, &err), &err);
    const char *bad[] = {"2026-01-02T",
                         "2026-01-02T3:04",
                         "2026-01-02T24:00",
                         "2026-01-02T23:60",
                         "2026-01-02T23:59:60",
                         "2026-01-02T03:04:05.",
                         "2026-01-02T03:04:05.1234567890",
                         "2026-01-02T03:04:05+1",
                         "2026-01-02T03:04:05+24:00",
                         "2026-01-02T03:04:05ZZ",
                         "2026-01-02Z",
                         "2026-01-02x03:04",
                         "2026-02-30T00:00",
                         "2026-01-02T03:04:05 Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tl_parse_timestamp_us(bad[i], strlen(bad[i]), &v, NULL) != TL_ERR_INVALID)
            unit_fail(__FILE__, __LINE__, "\"%s\" parsed", bad[i]);
    CHECK_INT(tl_parse_timestamp_us(S("yesterday"), &v, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "cannot parse \"yesterday\" as timestamp[us]");
}

static void test_parse_decimal(void)
{
    tl_i128 v;
    tl_error err;
    char buf[64];
    CHECK_OK(tl_parse_decimal128(S("123.45"), 10, 2, &v, &err), &err);
    CHECK(v == 12345);
    CHECK_OK(tl_parse_decimal128(S("-0.5"), 10, 2, &v, &err), &err);
    CHECK(v == -50);
    CHECK_OK(tl_parse_decimal128(S("7"), 10, 3, &v, &err), &err);
    CHECK(v == 7000);
    CHECK_OK(tl_parse_decimal128(S("1.2300000"), 5, 2, &v, &err), &err);
    CHECK(v == 123);
    CHECK_OK(tl_parse_decimal128(S(".25"), 3, 2, &v, &err), &err);
    CHECK(v == 25);
    CHECK_OK(tl_parse_decimal128(S("99999999999999999999999999999999999999"), 38, 0, &v, &err),
             &err);
    tl_decimal128_format(v, 0, buf, sizeof buf);
    CHECK_STR(buf, "99999999999999999999999999999999999999");
    CHECK_INT(tl_parse_decimal128(S("1.234"), 10, 2, &v, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "too many decimal places") != NULL);
    CHECK_INT(tl_parse_decimal128(S("1000"), 5, 2, &v, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "\"1000\" is out of range for decimal128(5, 2)");
    CHECK_OK(tl_parse_decimal128(S("999.99"), 5, 2, &v, &err), &err);
    const char *bad[] = {"", ".", "-", "1e3", "1.2.3", "abc", " 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tl_parse_decimal128(bad[i], strlen(bad[i]), 10, 2, &v, NULL) != TL_ERR_INVALID)
            unit_fail(__FILE__, __LINE__, "\"%s\" parsed", bad[i]);
}

static void test_formatters(void)
{
    char buf[80];
    tl_decimal128_format(-1234, 2, buf, sizeof buf);
    CHECK_STR(buf, "-12.34");
    tl_decimal128_format(5, 3, buf, sizeof buf);
    CHECK_STR(buf, "0.005");
    tl_decimal128_format(-5, 3, buf, sizeof buf);
    CHECK_STR(buf, "-0.005");
    tl_decimal128_format(0, 0, buf, sizeof buf);
    CHECK_STR(buf, "0");
    tl_double_format(0.1, buf, sizeof buf);
    CHECK_STR(buf, "0.1");
    tl_double_format(1e300, buf, sizeof buf);
    CHECK_STR(buf, "1e+300");
    tl_double_format(1.0 / 3, buf, sizeof buf);
    CHECK_STR(buf, "0.3333333333333333");
    /* At a power of two the shortest text is not always the value rounded. */
    tl_double_format(ldexp(1, -44), buf, sizeof buf);
    CHECK_STR(buf, "5.684341886080802e-14");
    static const double other[] = {1e5, 123456.5, 1e16, 1.5e-5, 0.00012, -2.5, 1e22, 7};
    static const char *const as_g[] = {"1e+05",   "123456.5", "1e+16", "1.5e-05",
                                       "0.00012", "-2.5",     "1e+22", "7"};
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        tl_double_format(other[i], buf, sizeof buf);
        CHECK_STR(buf, as_g[i]);
    }
    tl_text_quote((const uint8_t *)"a\nb", 3, buf, sizeof buf);
    CHECK_STR(buf, "\"a?b\"");
    const char *longer = "0123456789012345678901234567890123456789012345678901234567890123456789";
    tl_text_quote((const uint8_t *)longer, 70, buf, sizeof buf);
    CHECK_STR(buf, "\"012345678901234567890123456789012345678901234567\"...");
    /* "é" is two bytes: a cut must not split it. */
    char utf[64];
    memset(utf, 'a', 47);
    memcpy(utf + 47, "\xc3\xa9xyz", 5);
    tl_text_quote((const uint8_t *)utf, 52, buf, sizeof buf);
    CHECK(strlen(buf) == 1 + 47 + 1 + 3);
}

/* Exact reference for tl_parse_integral on [+-]digits[.digits][e[+-]d]:
 * the value in 128 bits when it is whole and within int64. */
static bool integral_reference(const char *s, int64_t *out)
{
    const char *p = s;
    bool neg = *p == '-';
    if (*p == '+' || *p == '-') p++;
    char digits[96];
    int n = 0, frac = 0, any = 0;
    bool point = false;
    for (; *p && *p != 'e'; p++) {
        if (*p == '.') {
            point = true;
            continue;
        }
        any = 1;
        if (n == 0 && *p == '0') { /* leading zeros change nothing but the fraction count */
            frac += point;
            continue;
        }
        digits[n++] = *p;
        frac += point;
    }
    int e = *p == 'e' ? atoi(p + 1) : 0;
    if (!any) return false;
    int shift = e - frac;               /* value = digits * 10^shift */
    for (; shift < 0 && n > 0; shift++) /* drop trailing zeros; any other digit is a fraction */
        if (digits[--n] != '0') return false;
    if (n == 0) return *out = 0, true;
    if (n + shift > 19) return false;
    __int128 v = 0;
    for (int i = 0; i < n; i++) v = v * 10 + (digits[i] - '0');
    for (; shift > 0; shift--) v *= 10;
    if (neg) v = -v;
    if (v > INT64_MAX || v < INT64_MIN) return false;
    *out = (int64_t)v;
    return true;
}

static void check_integral(const char *text)
{
    int64_t want = 0, got = 0;
    bool ok = integral_reference(text, &want);
    tl_status st = tl_parse_integral(text, strlen(text), &got, NULL);
    if ((st == TL_OK) != ok || (ok && got != want))
        unit_fail(__FILE__, __LINE__, "\"%s\": status %d value %lld, expected %s %lld", text, st,
                  (long long)got, ok ? "ok" : "an error", (long long)want);
}

static void test_parse_integral(void)
{
    static const char *const cases[] = {
        "0",
        "-0",
        "+7",
        "42",
        "42.0",
        "4.2e1",
        "1e3",
        "4.5",
        "1e19",
        "1e18",
        "-1e18",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "-9223372036854775809",
        "9223372036854775807.0",
        "922337203685477580.7e1",
        "18446744073709551615",
        "18446744073709551616",
        "00000000000000000000042",
        "12345678",
        "1234567812345678",
        "123456781234567812",
        "0.00000000",
        ".5e1",
        "5.",
        "12345678.00000000",
        "99999999999999999999e-2",
        "1.00000000000000000001",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_integral(cases[i]);
    int64_t v;
    tl_error err = {0};
    CHECK_INT(tl_parse_integral("4.5", 3, &v, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "fraction") != NULL);
    /* Random digit strings, points and small exponents, 1 to 24 digits. */
    uint64_t state = 7;
    char buf[64];
    for (int i = 0; i < 200000; i++) {
        int digits = 1 + (int)(trand(&state) % 24), point = (int)(trand(&state) % (digits + 4));
        int zeros = trand(&state) % 3 == 0 ? (int)(trand(&state) % 10) : 0;
        size_t k = 0;
        if (trand(&state) % 3 == 0) buf[k++] = '-';
        for (int d = 0; d < digits; d++) {
            if (d == point) buf[k++] = '.';
            bool zero = d < zeros || (d > point && trand(&state) % 2);
            buf[k++] = zero ? '0' : (char)('0' + trand(&state) % 10);
        }
        if (trand(&state) % 4 == 0)
            k += (size_t)snprintf(buf + k, sizeof buf - k, "e%d", (int)(trand(&state) % 41) - 20);
        buf[k] = '\0';
        check_integral(buf);
        if (unit_failures > 10) return;
    }
}

static void test_parsers_survive_garbage(void)
{
    /* Random bytes of random lengths: never a crash, never an over-read (ASan). */
    uint64_t state = 99;
    for (int i = 0; i < 20000; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t len = (state >> 59);
        char *text = malloc(len ? len : 1);
        const char alphabet[] = "0123456789-+.:eETZ tnaif";
        for (size_t k = 0; k < len; k++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            text[k] = alphabet[(state >> 33) % (sizeof alphabet - 1)];
        }
        int64_t i64;
        uint64_t u64;
        double d;
        bool b;
        int32_t d32;
        tl_i128 dec;
        tl_error err;
        tl_parse_int64(text, len, &i64, &err);
        tl_parse_uint64(text, len, &u64, &err);
        tl_parse_double(text, len, &d, &err);
        tl_parse_integral(text, len, &i64, &err);
        tl_parse_bool(text, len, &b, &err);
        tl_parse_date32(text, len, &d32, &err);
        tl_parse_timestamp(text, len, TL_UNIT_NANO, &i64, &err);
        tl_parse_decimal128(text, len, 38, 10, &dec, &err);
        free(text);
    }
}

UNIT_TESTS(UNIT(test_parse_int64), UNIT(test_parse_uint64), UNIT(test_parse_double),
           UNIT(test_parse_double_matches_strtod), UNIT(test_parse_double_ignores_locale),
           UNIT(test_parse_bool), UNIT(test_parse_date32), UNIT(test_calendar_round_trip),
           UNIT(test_parse_timestamp), UNIT(test_parse_timestamp_memo), UNIT(test_parse_decimal),
           UNIT(test_formatters), UNIT(test_parse_integral), UNIT(test_parsers_survive_garbage))
