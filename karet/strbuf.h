/* A growable string, for SQL text, messages and paths. An allocation failure
 * sets `oom` and makes every later append a no-op, so callers check once. */
#ifndef KARET_STRBUF_H
#define KARET_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kbuf {
    char *data; /* NUL-terminated when len > 0 or after kbuf_cstr */
    size_t len, cap;
    bool oom;
} kbuf;

void kbuf_putn(kbuf *b, const char *s, size_t n);
void kbuf_puts(kbuf *b, const char *s);
void kbuf_putc(kbuf *b, char c);
void kbuf_printf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text so far ("" when empty); owned by the buffer. */
const char *kbuf_cstr(kbuf *b);
/* Hands the text to the caller (free it), leaving the buffer empty; NULL on oom. */
char *kbuf_take(kbuf *b);
void kbuf_free(kbuf *b);
void kbuf_truncate(kbuf *b, size_t len);

/* SQL text: a quoted identifier ("a""b"), a string literal ('it''s'), a DOUBLE
 * literal that reads back as exactly `v`, a BIGINT literal. */
void ksql_ident(kbuf *b, const char *name);
void ksql_string(kbuf *b, const char *s);
void ksql_double(kbuf *b, double v);
void ksql_int(kbuf *b, long long v);

#endif
