/* Growable strings and the quoting of SQL text. */
#include "strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(kbuf *b, size_t extra)
{
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void kbuf_putn(kbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void kbuf_puts(kbuf *b, const char *s)
{
    kbuf_putn(b, s, strlen(s));
}

void kbuf_putc(kbuf *b, char c)
{
    kbuf_putn(b, &c, 1);
}

void kbuf_printf(kbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *kbuf_cstr(kbuf *b)
{
    return b->data && !b->oom ? b->data : "";
}

char *kbuf_take(kbuf *b)
{
    if (b->oom) {
        kbuf_free(b);
        return NULL;
    }
    char *s = b->data ? b->data : strdup("");
    memset(b, 0, sizeof *b);
    return s;
}

void kbuf_free(kbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void kbuf_truncate(kbuf *b, size_t len)
{
    if (len < b->len && b->data) {
        b->len = len;
        b->data[len] = '\0';
    }
}

static void quoted(kbuf *b, const char *s, char q)
{
    kbuf_putc(b, q);
    for (const char *p = s; *p; p++) {
        if (*p == q) kbuf_putc(b, q);
        kbuf_putc(b, *p);
    }
    kbuf_putc(b, q);
}

void ksql_ident(kbuf *b, const char *name)
{
    quoted(b, name, '"');
}

void ksql_string(kbuf *b, const char *s)
{
    quoted(b, s, '\'');
}

/* At a power of two, and only there, the doubles below are twice as close
 * as those above, so a decimal of q digits may read back as v although v
 * rounded to q digits does not: the next one up or down does. Writes it into out as %.*e would
 * (the nearer of the two when both do) and returns true; false when neither
 * reads back. */
static bool neighbour_reads_back(double v, int q, char *out, size_t size)
{
    char text[40];
    snprintf(text, sizeof text, "%.*e", q - 1, fabs(v));
    char *e = strchr(text, 'e');
    int exp = atoi(e + 1) - (q - 1); /* v ~ m * 10^exp */
    unsigned long long m = 0;
    for (const char *c = text; c < e; c++)
        if (*c != '.') m = m * 10 + (unsigned long long)(*c - '0');
    bool found = false;
    long double best = 0;
    for (int d = -1; d <= 1; d += 2) {
        if (m == 0 && d < 0) continue;
        unsigned long long c = m + (unsigned long long)d;
        snprintf(text, sizeof text, "%s%llue%d", v < 0 ? "-" : "", c, exp);
        long double off = fabsl(strtold(text, NULL) - (long double)v);
        if (strtod(text, NULL) != v || (found && off >= best)) continue;
        char digits[24];
        int n = snprintf(digits, sizeof digits, "%llu", c);
        snprintf(out, size, "%s%c%s%.*se%+03d", v < 0 ? "-" : "", digits[0], n > 1 ? "." : "",
                 n - 1, digits + 1, exp + n - 1);
        found = true;
        best = off;
    }
    return found;
}

void kfmt_double(char *out, size_t size, double v)
{
    if (v == 0) {
        snprintf(out, size, "0.0");
        return;
    }
    if (isnan(v) || isinf(v)) {
        snprintf(out, size, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    /* The fewest digits that v rounded to reads back with: more digits
     * never read back worse (the rounded shorter text is one of them), so
     * a binary search over 1 to 17 finds it. */
    char tmp[40];
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(tmp, sizeof tmp, "%.*e", mid - 1, v);
        if (strtod(tmp, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    int p = lo;
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
    int e2;
    bool power_of_two = frexp(fabs(v), &e2) == 0.5;
    while (power_of_two && p > 1 && neighbour_reads_back(v, p - 1, tmp, sizeof tmp)) p--;
    /* tmp is d.ddde[+-]XX: rewrite it as repr does (plain between 1e-4 and 1e16). */
    char *e = strchr(tmp, 'e');
    int exp = atoi(e + 1);
    *e = '\0';
    char digits[40];
    size_t nd = 0;
    bool neg = tmp[0] == '-';
    for (const char *p = tmp + neg; *p; p++)
        if (*p != '.') digits[nd++] = *p;
    digits[nd] = '\0';
    while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = '\0';
    kbuf b = {0};
    if (neg) kbuf_putc(&b, '-');
    if (exp >= 16 || exp < -4) {
        kbuf_putc(&b, digits[0]);
        if (nd > 1) {
            kbuf_putc(&b, '.');
            kbuf_puts(&b, digits + 1);
        }
        kbuf_printf(&b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp >= 0) {
        for (int i = 0; i <= exp; i++) kbuf_putc(&b, (size_t)i < nd ? digits[i] : '0');
        kbuf_putc(&b, '.');
        if ((size_t)exp + 1 < nd)
            kbuf_puts(&b, digits + exp + 1);
        else
            kbuf_putc(&b, '0');
    } else {
        kbuf_puts(&b, "0.");
        for (int i = 0; i < -exp - 1; i++) kbuf_putc(&b, '0');
        kbuf_puts(&b, digits);
    }
    snprintf(out, size, "%s", kbuf_cstr(&b));
    kbuf_free(&b);
}

void ksql_double(kbuf *b, double v)
{
    char text[48];
    kfmt_double(text, sizeof text, v);
    kbuf_puts(b, "CAST(");
    ksql_string(b, text);
    kbuf_puts(b, " AS DOUBLE)");
}

void ksql_int(kbuf *b, long long v)
{
    kbuf_printf(b, "CAST(%lld AS BIGINT)", v);
}
