/* The shortest decimal text that reads back as the same double: its digits
 * (core/double_text.h) and their layout as Python's repr (tl_double_text,
 * timelake.h). */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/double_text.h"

/* A positive decimal: the significant digits d1 d2 ... dn (d1 not zero)
 * times 10^(exp - n + 1), so exp is the power of ten of d1. */
typedef struct decimal {
    char digits[TL_DOUBLE_DIGITS];
    int nd;
    int exp;
} decimal;

/* |v| rounded to q significant digits, as %.*e rounds it. Only the digits
 * are taken from the text, so a locale's decimal comma changes nothing. */
static void rounded(double v, int q, decimal *d)
{
    char text[48];
    snprintf(text, sizeof text, "%.*e", q - 1, fabs(v));
    const char *e = strchr(text, 'e');
    d->nd = 0;
    for (const char *c = text; c < e; c++)
        if (isdigit((unsigned char)*c)) d->digits[d->nd++] = *c;
    d->digits[d->nd] = '\0';
    d->exp = atoi(e + 1);
}

/* The double the decimal (negated when neg) reads back as; the text has no
 * decimal point, so strtod reads it the same in every locale. */
static double value_of(const decimal *d, bool neg)
{
    char text[48];
    snprintf(text, sizeof text, "%s%se%d", neg ? "-" : "", d->digits, d->exp - d->nd + 1);
    return strtod(text, NULL);
}

/* At a power of two, and only there, the doubles below are twice as close
 * as those above, so a decimal of q digits may read back as v although v
 * rounded to q digits does not: the next decimal up or down does. Sets *d
 * to it (the nearer of the two when both do) and returns true; false when
 * neither reads back. */
static bool neighbour_reads_back(double v, int q, decimal *d)
{
    decimal r;
    rounded(v, q, &r);
    unsigned long long m = strtoull(r.digits, NULL, 10);
    int last = r.exp - q + 1; /* the power of ten of the last digit */
    bool found = false;
    long double best = 0;
    for (int step = -1; step <= 1; step += 2) {
        if (m == 0 && step < 0) continue;
        decimal c;
        c.nd = snprintf(c.digits, sizeof c.digits, "%llu", m + (unsigned long long)step);
        c.exp = last + c.nd - 1;
        if (value_of(&c, v < 0) != v) continue;
        char text[48];
        snprintf(text, sizeof text, "%se%d", c.digits, last);
        long double off = fabsl(strtold(text, NULL) - fabsl((long double)v));
        if (found && off >= best) continue;
        *d = c;
        found = true;
        best = off;
    }
    return found;
}

/* The fewest significant digits of a finite nonzero v that read back. */
static void shortest(double v, decimal *d)
{
    /* More digits never read back worse (the rounded shorter decimal is one
     * of them), so a binary search over 1 to 17 finds the fewest. */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        rounded(v, mid, d);
        if (value_of(d, v < 0) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    rounded(v, lo, d);
    int e2;
    if (frexp(fabs(v), &e2) == 0.5)
        for (int q = lo - 1; q >= 1 && neighbour_reads_back(v, q, d); q--) continue;
    while (d->nd > 1 && d->digits[d->nd - 1] == '0') d->digits[--d->nd] = '\0';
}

/* Lays the decimal out as repr does: plain from 1e-4 up to 1e16 (with ".0"
 * when whole), in exponent form outside ("1e+16", "1.5e-07"). */
static size_t layout(const decimal *d, bool neg, char *t)
{
    size_t n = 0;
    if (neg) t[n++] = '-';
    if (d->exp >= 16 || d->exp < -4) {
        t[n++] = d->digits[0];
        if (d->nd > 1) {
            t[n++] = '.';
            memcpy(t + n, d->digits + 1, (size_t)d->nd - 1);
            n += (size_t)d->nd - 1;
        }
        int e = d->exp < 0 ? -d->exp : d->exp;
        n += (size_t)snprintf(t + n, 8, "e%c%02d", d->exp < 0 ? '-' : '+', e);
    } else if (d->exp >= 0) {
        for (int i = 0; i <= d->exp; i++) t[n++] = i < d->nd ? d->digits[i] : '0';
        t[n++] = '.';
        if (d->exp + 1 < d->nd) {
            memcpy(t + n, d->digits + d->exp + 1, (size_t)(d->nd - d->exp - 1));
            n += (size_t)(d->nd - d->exp - 1);
        } else {
            t[n++] = '0';
        }
    } else {
        t[n++] = '0';
        t[n++] = '.';
        for (int i = 0; i < -d->exp - 1; i++) t[n++] = '0';
        memcpy(t + n, d->digits, (size_t)d->nd);
        n += (size_t)d->nd;
    }
    t[n] = '\0';
    return n;
}

int tl_double_digits(double v, char digits[TL_DOUBLE_DIGITS], int *exp10)
{
    decimal d;
    shortest(v, &d);
    memcpy(digits, d.digits, (size_t)d.nd + 1);
    *exp10 = d.exp;
    return d.nd;
}

size_t tl_double_text(double v, char *out, size_t size)
{
    char text[TL_DOUBLE_TEXT_SIZE];
    size_t n;
    if (isnan(v)) {
        n = (size_t)snprintf(text, sizeof text, "nan"); /* repr writes no sign */
    } else if (isinf(v)) {
        n = (size_t)snprintf(text, sizeof text, "%s", v < 0 ? "-inf" : "inf");
    } else if (v == 0) {
        n = (size_t)snprintf(text, sizeof text, "%s", signbit(v) ? "-0.0" : "0.0");
    } else {
        decimal d;
        shortest(v, &d);
        n = layout(&d, v < 0, text);
    }
    if (size > 0) {
        size_t k = n < size - 1 ? n : size - 1;
        memcpy(out, text, k);
        out[k] = '\0';
    }
    return n;
}
