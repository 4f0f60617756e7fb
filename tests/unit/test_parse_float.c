/* tl_parse_double (Clinger fast path, Eisel-Lemire, strtod fallback) checked
 * bit for bit against glibc strtod, the correctly rounded oracle. Iterations
 * per family default to 200k (a few seconds under ASan); set
 * TL_PARSE_FLOAT_ITERS=2000000 for a longer local run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/parse.h"
#include "arrow/parse_float.h"
#include "unit.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rng(void)
{
    return trand(&rng_state);
}

static long iterations(void)
{
    const char *env = getenv("TL_PARSE_FLOAT_ITERS");
    long n = env ? atol(env) : 0;
    return n > 0 ? n : 200000;
}

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static int mismatches;

/* One differential check: same bits as strtod, or an error exactly where
 * strtod overflows to infinity. */
static void check_text(const char *text)
{
    errno = 0;
    char *end;
    double want = strtod(text, &end);
    bool want_error = *end != '\0' || (errno == ERANGE && isinf(want));
    double got = 0;
    tl_status st = tl_parse_double(text, strlen(text), &got, NULL);
    bool ok = want_error ? st == TL_ERR_INVALID : st == TL_OK && bits_of(got) == bits_of(want);
    if (!ok && mismatches++ < 10)
        unit_fail(__FILE__, __LINE__, "\"%s\": got %a (status %d), strtod %a%s", text, got, st,
                  want, want_error ? " (error)" : "");
}

static double random_double(void)
{
    for (;;) {
        double v;
        uint64_t b = rng();
        if (b & 1) {
            v = (double)(b >> 11) / 9007199254740992.0; /* uniform in [0, 1) */
        } else {
            memcpy(&v, &b, sizeof v); /* any bit pattern: subnormals to huge */
        }
        if (isfinite(v)) return v;
    }
}

/* The shortest %.Ng that reads back (what repr and pyarrow write). */
static void format_shortest(double v, char *buf, size_t size)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static void test_random_doubles(void)
{
    static const char *const formats[] = {"%.17g", "%.16g", "%.15g", "%.6e"};
    char buf[64];
    long n = iterations();
    mismatches = 0;
    for (long i = 0; i < n; i++) {
        double v = random_double();
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
            snprintf(buf, sizeof buf, formats[f], v);
            check_text(buf);
        }
        format_shortest(v, buf, sizeof buf);
        check_text(buf);
    }
}

/* 1-19 random digits (sometimes with a point), exponent in [-350, 320]. */
static void test_random_digit_strings(void)
{
    char buf[64];
    long n = iterations();
    mismatches = 0;
    for (long i = 0; i < n; i++) {
        int digits = 1 + (int)(rng() % 19), point = (int)(rng() % (digits + 1));
        size_t k = 0;
        if (rng() & 1) buf[k++] = '-';
        for (int d = 0; d < digits; d++) {
            if (d == point && (rng() & 1)) buf[k++] = '.';
            buf[k++] = (char)('0' + rng() % 10);
        }
        snprintf(buf + k, sizeof buf - k, "e%d", (int)(rng() % 671) - 350);
        check_text(buf);
    }
}

/* Runs of every length on both sides of the point, ending at every place
 * of an eight-byte word, in texts shorter and longer than one, some with a
 * byte after them that is not a digit (next to '0' and '9', or high). */
static void test_digit_runs(void)
{
    static const char junk[] = {'/', ':', '.', 'x', ' ', '-', (char)0x80, (char)0xff};
    char buf[64];
    mismatches = 0;
    for (int whole = 0; whole <= 20; whole++)
        for (int frac = -1; frac <= 20; frac++)
            for (int variant = 0; variant < 3 + (int)sizeof junk; variant++) {
                if (whole + frac <= 0) continue; /* no digit: strtod takes "" for 0 */
                size_t k = 0;
                if (variant == 1) buf[k++] = '-';
                for (int d = 0; d < whole; d++) buf[k++] = (char)('0' + rng() % 10);
                if (frac >= 0) buf[k++] = '.';
                for (int d = 0; d < frac; d++) buf[k++] = (char)('0' + rng() % 10);
                if (variant >= 3) buf[k++] = junk[variant - 3];
                buf[k] = 0;
                check_text(buf);
            }
}

/* More than 19 significant digits: the w / w+1 check or strtod. */
static void test_long_digit_strings(void)
{
    char buf[96];
    long n = iterations() / 4;
    mismatches = 0;
    for (long i = 0; i < n; i++) {
        int digits = 20 + (int)(rng() % 40);
        size_t k = 0;
        buf[k++] = (char)('1' + rng() % 9);
        buf[k++] = '.';
        for (int d = 1; d < digits; d++) buf[k++] = (char)('0' + rng() % 10);
        if (rng() & 1) /* a run of 9s or 0s tail: near a decision boundary */
            for (int d = 0; d < 8; d++) buf[k - 1 - d] = (rng() & 1) ? '9' : '0';
        snprintf(buf + k, sizeof buf - k, "e%d", (int)(rng() % 640) - 320);
        check_text(buf);
    }
}

static void test_hard_cases(void)
{
    static const char *const cases[] = {
        "9007199254740993",
        "9007199254740992",
        "9007199254740994",
        "9007199254740995",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "2.2250738585072014e-308",
        "2.225073858507201136057409796709131975934819546351645648e-308",
        "4.9406564584124654e-324",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "1.797693134862315807937289714053e308",
        "5e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "2.47032822920623272e-324",
        "0.1",
        "1e23",
        "8.98846567431158e307",
        "4.4501477170144023e-308",
        "1e-320",
        "2.2250738585072009e-308",
        "1e308",
        "1e309",
        "1e-400",
        "0.5e-323",
        "123456789e-330",
        "7.2057594037927933e16",
        "9007199254740993.0000000000000000001",
        "9007199254740992.9999999999999999999",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649"
        "017977587207096330286416692887910946555547851940402630657488671505820681908902000708383"
        "676273854845817711531764475730270069855571366959622842914819860834936475292719074168444"
        "365510704342711559699508093042880177904174497791.9999999999999999",
        "0",
        "-0",
        "+0",
        "0.0",
        "-0.0e10",
        "0e-400",
        "-0e400",
        "000000000000000000000000001",
        "-1.5",
        "+1.5",
        "-2.2250738585072011e-308",
        "-5e-324",
        "-1.7976931348623158e308",
        "3.14159265358979323846264338327950288",
        "1e22",
        "1e-22",
        "9999999999999999999e-19",
        "18446744073709551615",
        "18446744073709551616",
        "1e19",
        "12345678901234567e-17",
        "1234567812345678",
        "12345678.12345678",
        "0000000000000000001.5",
        ".12345678",
        "12345678.",
        "1234567a",
        "12345678a",
        "1234567812345678a",
        "12345678.1234567x",
        "1.2.3",
        ".",
        "-",
        "+.",
        "1e",
        "1e+",
        "12345678e5",
        "00000000.00000001",
        "9999999999999999999",
        "99999999999999999999",
        "0.3519064800030509",
        "0.9344124938468396",
        "0.08733985174717951",
        "1 ",
        "1_000",
    };
    mismatches = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_text(cases[i]);
}

/* The last one to seven digits of a field read as one word: with the eight
 * bytes before the end taking in the sign, the point or the integer part,
 * and a byte that is not a digit at each place among them (an exponent, a
 * second point, a letter), so the word test must send it byte by byte. */
static void test_field_tails(void)
{
    static const char bad[] = {'e', 'E', '.', 'z', '/', ':', '+', '-'};
    char buf[64];
    mismatches = 0;
    for (int whole = 0; whole <= 9; whole++)
        for (int frac = 1; frac <= 7; frac++)
            for (int sign = 0; sign < 2; sign++)
                for (int at = -1; at < whole + 1 + frac; at++)
                    for (size_t b = 0; b < (at < 0 ? 1 : sizeof bad); b++) {
                        size_t k = 0;
                        if (sign) buf[k++] = '-';
                        for (int d = 0; d < whole; d++) buf[k++] = (char)('0' + rng() % 10);
                        buf[k++] = '.';
                        for (int d = 0; d < frac; d++) buf[k++] = (char)('1' + rng() % 9);
                        buf[k] = '\0';
                        if (at >= 0) buf[(size_t)sign + (size_t)at] = bad[b];
                        check_text(buf);
                        snprintf(buf + k, sizeof buf - k, "e%d", (int)(rng() % 40) - 20);
                        check_text(buf);
                    }
}

/* Fixed notation as CSV writers give it ("0.3519064800030509", "-12.5",
 * "0.000123"), with leading zeros and 1 to 25 digits: around the 8-digit
 * blocks and the 19 digits that are read without going digit by digit. */
static void test_fixed_notation(void)
{
    char buf[96];
    long n = iterations();
    mismatches = 0;
    for (long i = 0; i < n; i++) {
        int digits = 1 + (int)(rng() % 25), point = (int)(rng() % (digits + 2)) - 1;
        int zeros = rng() % 3 == 0 ? (int)(rng() % 12) : 0;
        size_t k = 0;
        if (rng() % 4 == 0) buf[k++] = rng() & 1 ? '-' : '+';
        for (int d = 0; d < digits; d++) {
            if (d == point) buf[k++] = '.';
            buf[k++] = d < zeros ? '0' : (char)('0' + rng() % 10);
        }
        if (point == digits || (point < 0 && rng() % 4 == 0)) buf[k++] = '.';
        buf[k] = '\0';
        check_text(buf);
        double v = random_double();
        snprintf(buf, sizeof buf, "%.*f", (int)(rng() % 20), fabs(v) < 1e30 ? v : 1 / v);
        check_text(buf);
    }
}

/* Subnormals and the normal/subnormal edge, every format. */
static void test_subnormals(void)
{
    char buf[64];
    mismatches = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t b = rng() >> (12 + rng() % 52);
        if (i % 2) b += 0x0010000000000000ULL - 5000 + rng() % 10000;
        double v;
        memcpy(&v, &b, sizeof v);
        snprintf(buf, sizeof buf, "%.17g", v);
        check_text(buf);
        format_shortest(v, buf, sizeof buf);
        check_text(buf);
    }
}

/* The algorithm decides nearly all 17-digit inputs itself (else this whole
 * file would only be testing strtod against itself). */
static void test_eisel_lemire_decides(void)
{
    double v = 0;
    CHECK(tl_eisel_lemire(12345678901234567ULL, -17, false, &v));
    CHECK(v == strtod("0.12345678901234567", NULL));
    CHECK(tl_eisel_lemire(17976931348623157ULL, 292, true, &v));
    CHECK(v == -1.7976931348623157e308);
    CHECK(!tl_eisel_lemire(17976931348623159ULL, 292, false, &v)); /* overflows */
    CHECK(!tl_eisel_lemire(5, -324, false, &v));                   /* subnormal */
    CHECK(!tl_eisel_lemire(1, -343, false, &v));                   /* beyond the table */
    long declined = 0, n = 100000;
    char buf[64];
    for (long i = 0; i < n; i++) {
        double x = (double)(rng() >> 11) / 9007199254740992.0 * 1e6 + 1e-3;
        snprintf(buf, sizeof buf, "%.16e", x);
        uint64_t m = (uint64_t)(buf[0] - '0');
        for (int d = 2; d < 18; d++) m = m * 10 + (uint64_t)(buf[d] - '0');
        int e = atoi(buf + 19) - 16;
        double got;
        if (!tl_eisel_lemire(m, e, false, &got))
            declined++;
        else if (bits_of(got) != bits_of(x))
            unit_fail(__FILE__, __LINE__, "%s: got %a want %a", buf, got, x);
    }
    CHECK(declined * 1000 < n);
}

UNIT_TESTS(UNIT(test_hard_cases), UNIT(test_digit_runs), UNIT(test_field_tails),
           UNIT(test_subnormals), UNIT(test_eisel_lemire_decides), UNIT(test_random_doubles),
           UNIT(test_random_digit_strings), UNIT(test_long_digit_strings),
           UNIT(test_fixed_notation))
