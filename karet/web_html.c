/* Writing HTML safely: escaping, a printf whose %s escapes, and the small
 * formats (times, sizes, counts) every page shares. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_text.h"
#include "web.h"
#include "web_assets.h"

void html_esc(kbuf *b, const char *s)
{
    if (s == NULL) return;
    const char *run = s;
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        }
        if (rep == NULL) continue;
        kbuf_putn(b, run, (size_t)(s - run));
        kbuf_puts(b, rep);
        run = s + 1;
    }
    kbuf_putn(b, run, (size_t)(s - run));
}

void url_esc(kbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            kbuf_putc(b, (char)c);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            kbuf_putn(b, e, 3);
        }
    }
}

/* JSON inside <script type="application/json">: nothing in it may read as
 * "</script" or start a comment, so <, > and & become \u escapes. */
static void json_script(kbuf *b, const json_t *j)
{
    char *text = kjson_dumps(j ? j : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
    for (const char *s = text; s && *s; s++) {
        if (*s == '<')
            kbuf_puts(b, "\\u003c");
        else if (*s == '>')
            kbuf_puts(b, "\\u003e");
        else if (*s == '&')
            kbuf_puts(b, "\\u0026");
        else
            kbuf_putc(b, *s);
    }
    free(text);
}

void html_vprintf(kbuf *b, const char *fmt, va_list ap)
{
    const char *run = fmt;
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') continue;
        kbuf_putn(b, run, (size_t)(f - run));
        switch (*++f) {
        case 's':
            html_esc(b, va_arg(ap, const char *));
            break;
        case 'R': {
            const char *raw = va_arg(ap, const char *);
            if (raw) kbuf_puts(b, raw);
            break;
        }
        case 'U':
            url_esc(b, va_arg(ap, const char *));
            break;
        case 'J':
            json_script(b, va_arg(ap, const json_t *));
            break;
        case 'd':
            kbuf_printf(b, "%d", va_arg(ap, int));
            break;
        case 'L':
            kbuf_printf(b, "%lld", va_arg(ap, long long));
            break;
        case '%':
            kbuf_putc(b, '%');
            break;
        default: /* a mistake in a format of this code: show it, never crash */
            kbuf_puts(b, "%?");
            if (*f == 0) return;
        }
        run = f + 1;
    }
    kbuf_puts(b, run);
}

void html_printf(kbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    html_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *asset_url(const char *name, char *buf, size_t len)
{
    const web_asset *a = web_asset_find(name);
    snprintf(buf, len, "/static/%s?v=%s", name, a ? a->version : "0");
    return buf;
}

static void time_element(kbuf *b, int64_t ms, const char *attrs)
{
    if (ms <= 0) return;
    char iso[40], shown[40];
    iso_time(ms, iso, sizeof iso);
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(shown, sizeof shown, "%Y-%m-%d %H:%M:%S UTC", &tm);
    html_printf(b, "<time datetime=\"%s\"%R>%s</time>", iso, attrs, shown);
}

void html_time(kbuf *b, int64_t ms)
{
    time_element(b, ms, "");
}

void html_time_ago(kbuf *b, int64_t ms)
{
    time_element(b, ms, " data-rel");
}

void html_bytes(kbuf *b, int64_t n)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1000 && u < 5) v /= 1000, u++;
    if (u == 0)
        kbuf_printf(b, "%lld B", (long long)n);
    else
        kbuf_printf(b, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

void html_count(kbuf *b, int64_t n)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", (long long)(n < 0 ? -n : n));
    if (n < 0) kbuf_putc(b, '-');
    size_t len = strlen(digits);
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) kbuf_puts(b, "\xe2\x80\xaf"); /* narrow no-break space */
        kbuf_putc(b, digits[i]);
    }
}

uint64_t html_hash(const kbuf *b, size_t start)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a: cheap, and only equality matters */
    for (size_t i = start; i < b->len; i++) h = (h ^ (unsigned char)b->data[i]) * 1099511628211ULL;
    return h;
}

void html_sign_as(kbuf *b, size_t start, uint64_t sig)
{
    if (b->oom || start >= b->len || b->data[start] != '<') return;
    char attr[32];
    size_t n =
        (size_t)snprintf(attr, sizeof attr, " data-sig=\"%016llx\"", (unsigned long long)sig);
    size_t tag = start + 1, old = b->len;
    while (tag < old && b->data[tag] != ' ' && b->data[tag] != '>') tag++;
    kbuf_putn(b, attr, n); /* room at the end, then moved into the opening tag */
    if (b->oom) return;
    memmove(b->data + tag + n, b->data + tag, old - tag);
    memcpy(b->data + tag, attr, n);
}

void html_sign(kbuf *b, size_t start)
{
    html_sign_as(b, start, html_hash(b, start));
}

const web_asset *web_asset_find(const char *name)
{
    for (const web_asset *a = WEB_ASSETS; name && a->name; a++)
        if (strcmp(a->name, name) == 0) return a;
    return NULL;
}

void web_static(service *svc, http_req *rq, http_resp *out)
{
    (void)svc;
    const web_asset *a = web_asset_find(rq->params[0]);
    if (a == NULL) {
        reply_error(out, 404, "not_found", "no such file");
        return;
    }
    const char *v = req_query(rq, "v");
    const char *inm = req_header(rq, "If-None-Match");
    char etag[32];
    snprintf(etag, sizeof etag, "\"%s\"", a->version);
    reply_header(out, "ETag", etag);
    /* A versioned URL never changes content; a bare one is checked each time. */
    reply_header(out, "Cache-Control",
                 v && strcmp(v, a->version) == 0 ? "public, max-age=31536000, immutable"
                                                 : "no-cache");
    if (inm && strcmp(inm, etag) == 0) {
        out->status = 304;
        out->raw = strdup("");
        out->raw_len = 0;
        return;
    }
    out->status = 200;
    out->raw = malloc(a->len ? a->len : 1);
    if (out->raw) memcpy(out->raw, a->data, a->len);
    out->raw_len = out->raw ? a->len : 0;
    out->content_type = a->content_type;
}
