#include "store/xml.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static const struct {
    const char *name;
    char c;
} ENTITIES[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};

static int decode(tl_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '&') {
            size_t k;
            for (k = 0; k < sizeof ENTITIES / sizeof ENTITIES[0]; k++) {
                size_t m = strlen(ENTITIES[k].name);
                if (i + m <= n && strncmp(s + i, ENTITIES[k].name, m) == 0) {
                    if (tl_buf_append_byte(out, (uint8_t)ENTITIES[k].c) != 0) return -1;
                    i += m - 1;
                    break;
                }
            }
            if (k < sizeof ENTITIES / sizeof ENTITIES[0]) continue;
            if (i + 2 < n && s[i + 1] == '#') { /* &#NN; or &#xNN; (ASCII only) */
                char *e = NULL;
                long v = s[i + 2] == 'x' ? strtol(s + i + 3, &e, 16) : strtol(s + i + 2, &e, 10);
                if (e && *e == ';' && v > 0 && v < 128) {
                    if (tl_buf_append_byte(out, (uint8_t)v) != 0) return -1;
                    i = (size_t)(e - s);
                    continue;
                }
            }
        }
        if (tl_buf_append_byte(out, (uint8_t)s[i]) != 0) return -1;
    }
    return 0;
}

/* The bounds of the first <tag>…</tag>'s inner text: [*a, *b). */
static bool find_element(const char *doc, const char *tag, const char **a, const char **b,
                         const char **end)
{
    if (doc == NULL) return false;
    char open[80], close[80];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    *a = strstr(doc, open);
    if (*a == NULL) return false;
    *a += strlen(open);
    *b = strstr(*a, close);
    if (*b == NULL) return false;
    if (end) *end = *b + strlen(close);
    return true;
}

char *tl_xml_element(const char *doc, const char *tag, const char **end)
{
    const char *a, *b;
    return find_element(doc, tag, &a, &b, end) ? strndup(a, (size_t)(b - a)) : NULL;
}

char *tl_xml_text(const char *doc, const char *tag, const char **end)
{
    const char *a, *b, *e;
    if (!find_element(doc, tag, &a, &b, &e)) return NULL;
    tl_buf out = {0};
    if (decode(&out, a, (size_t)(b - a)) != 0 || tl_buf_reserve(&out, 1) != 0) {
        tl_buf_free(&out);
        return NULL;
    }
    out.data[out.len] = '\0';
    if (end) *end = e;
    return (char *)tl_buf_detach(&out, NULL);
}
