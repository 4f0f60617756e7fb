/* JSON Pointer paths and the list of config problems. */
#include "problems.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

size_t kpath_push(kpath *p, const char *segment)
{
    size_t old = p->len;
    char tmp[sizeof p->buf];
    size_t n = 0;
    tmp[n++] = '/';
    for (const char *s = segment; *s && n + 3 < sizeof tmp; s++) {
        if (*s == '~' || *s == '/') {
            tmp[n++] = '~';
            tmp[n++] = *s == '~' ? '0' : '1';
        } else {
            tmp[n++] = *s;
        }
    }
    if (p->len + n < sizeof p->buf) {
        memcpy(p->buf + p->len, tmp, n);
        p->len += n;
    }
    p->buf[p->len] = '\0';
    return old;
}

size_t kpath_push_index(kpath *p, size_t index)
{
    char s[32];
    snprintf(s, sizeof s, "%zu", index);
    return kpath_push(p, s);
}

void kpath_pop(kpath *p, size_t len)
{
    p->len = len;
    p->buf[len] = '\0';
}

static void add(kproblems *ps, const char *path, const char *kind, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (ps->list == NULL && (ps->list = json_array()) == NULL) {
        ps->oom = true;
        return;
    }
    json_t *m = json_string(msg);
    if (m == NULL) { /* cut inside a UTF-8 sequence (or bad bytes): drop the non-ASCII */
        for (char *c = msg; *c; c++)
            if ((unsigned char)*c >= 0x80) *c = '?';
        m = json_string(msg);
    }
    json_t *o = json_pack("{s:s, s:s, s:o}", "path", path, "kind", kind, "message", m);
    if (o == NULL || json_array_append_new(ps->list, o) != 0) ps->oom = true;
}

void kproblem(kproblems *ps, const kpath *path, const char *kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add(ps, path->len ? path->buf : "", kind, fmt, ap);
    va_end(ap);
}

void kproblem_at(kproblems *ps, kpath *path, const char *segment, const char *kind, const char *fmt,
                 ...)
{
    size_t old = kpath_push(path, segment);
    va_list ap;
    va_start(ap, fmt);
    add(ps, path->buf, kind, fmt, ap);
    va_end(ap);
    kpath_pop(path, old);
}
