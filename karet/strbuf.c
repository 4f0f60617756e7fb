/* Growable strings and the quoting of SQL text. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timelake.h"

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

void ksql_double(kbuf *b, double v)
{
    char text[TL_DOUBLE_TEXT_SIZE];
    tl_double_text(v, text, sizeof text);
    kbuf_puts(b, "CAST(");
    ksql_string(b, text);
    kbuf_puts(b, " AS DOUBLE)");
}

void ksql_int(kbuf *b, long long v)
{
    kbuf_printf(b, "CAST(%lld AS BIGINT)", v);
}
