#include "core/json_text.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jansson 2.14's lexer ignores a failed growth of a token's saved text: the
 * parse then succeeds with a character missing (a file name that names
 * nothing), and it resets errno itself around each number. So jansson
 * allocates through a hook counting this thread's failures, and a document
 * parsed while one failed is thrown away. The hook wraps the allocator that
 * was installed before it (a program's own, or another guard such as
 * Karet's), so each keeps working. */
static _Thread_local unsigned long json_alloc_failures;

/* While this thread parses, once an allocation failed every later one fails
 * too: the lexer unescapes a string's saved text up to its closing quote,
 * and with the quote lost it read and wrote past both buffers (a heap ASan
 * found damaged later) or hit an assert on a lost escape. The allocation
 * just before, of the string's value, then fails and the lexer stops. */
static _Thread_local bool parsing, parse_failed;

/* The allocator the hook wraps; NULL for jansson's default, which the hook
 * then calls as this object's own malloc and free (a test's ld --wrap
 * counts them). */
static json_malloc_t outer_malloc;
static json_free_t outer_free;

static void *json_counted_malloc(size_t n)
{
    void *p = parsing && parse_failed ? NULL : outer_malloc ? outer_malloc(n) : malloc(n);
    if (p == NULL) {
        json_alloc_failures++;
        parse_failed = parsing;
    }
    return p;
}

static void json_free(void *p)
{
    if (outer_free)
        outer_free(p);
    else
        free(p);
}

static pthread_once_t json_alloc_once = PTHREAD_ONCE_INIT;

/* Whether fn is the process's `name` as the dynamic linker resolves it:
 * jansson's default, even where this object's own calls are redirected (a
 * test's ld --wrap). */
static bool is_default(void (*fn)(void), const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    void (*def)(void) = NULL;
    memcpy(&def, &sym, sizeof def);
    return def != NULL && fn == def;
}

static void json_alloc_install(void)
{
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    bool by_default = (m == malloc || is_default((void (*)(void))m, "malloc")) &&
                      (f == free || is_default((void (*)(void))f, "free"));
    if (!by_default) {
        outer_malloc = m;
        outer_free = f;
    }
    json_set_alloc_funcs(json_counted_malloc, json_free);
}

json_t *tl_json_loadb(const char *json, size_t len, size_t flags, json_error_t *e, bool *nomem)
{
    pthread_once(&json_alloc_once, json_alloc_install);
    json_error_t ignored;
    if (e == NULL) e = &ignored;
    unsigned long failures = json_alloc_failures;
    errno = 0;
    parsing = true;
    parse_failed = false;
    json_t *j = json_loadb(json, len, flags, e);
    parsing = false;
    bool failed = json_alloc_failures != failures || errno == ENOMEM;
    if (failed) {
        json_decref(j);
        j = NULL;
    }
    *nomem = j == NULL && (failed || json_error_code(e) == json_error_out_of_memory);
    return j;
}

typedef struct sink {
    tl_buf *out;
    bool failed; /* a write failed: every later one fails too */
} sink;

static int write_text(const char *data, size_t size, void *ctx)
{
    sink *s = ctx;
    if (!s->failed && tl_buf_append(s->out, data, size) != 0) s->failed = true;
    return s->failed ? -1 : 0;
}

/* The double a real's text means, read from its digits and exponent alone:
 * the text without a decimal point reads the same in every locale. */
static double real_value(const char *t, size_t len)
{
    char text[64];
    size_t n = 0;
    long exp = 0, fraction = 0;
    bool point = false;
    for (size_t i = 0; i < len && n < 40; i++) {
        char c = t[i];
        if (c >= '0' && c <= '9') {
            text[n++] = c;
            fraction += point;
        } else if (c == '-' && i == 0) {
            text[n++] = c;
        } else if (c == '.') {
            point = true;
        } else if (c == 'e' || c == 'E') {
            exp = strtol(t + i + 1, NULL, 10); /* the token ends in digits: strtol stops there */
            break;
        }
    }
    snprintf(text + n, sizeof text - n, "e%ld", exp - fraction);
    return strtod(text, NULL);
}

/* Appends jansson's text with each real rewritten as the shortest text that
 * reads back as the same double: jansson writes 17 significant digits
 * ("0.10000000000000001"). Outside strings a number with a '.' or an
 * exponent is a real; jansson writes every real with one (1.0, 1e22) and no
 * integer with either. */
static int append_shortest_reals(tl_buf *out, const char *s, size_t len)
{
    size_t done = 0, i = 0;
    while (i < len) {
        if (s[i] == '"') {
            for (i++; i < len && s[i] != '"'; i++) i += s[i] == '\\';
            i++;
            continue;
        }
        if (s[i] != '-' && (s[i] < '0' || s[i] > '9')) {
            i++;
            continue;
        }
        size_t start = i;
        bool real = false;
        for (; i < len && strchr("0123456789+-.eE", s[i]) != NULL; i++)
            real |= s[i] == '.' || s[i] == 'e' || s[i] == 'E';
        if (!real) continue;
        char text[TL_DOUBLE_TEXT_SIZE];
        size_t n = tl_double_text(real_value(s + start, i - start), text, sizeof text);
        if (tl_buf_append(out, s + done, start - done) != 0 || tl_buf_append(out, text, n) != 0)
            return -1;
        done = i;
    }
    return tl_buf_append(out, s + done, len - done);
}

int tl_json_dump_buf(const json_t *j, size_t flags, tl_buf *out)
{
    size_t len = out->len;
    tl_buf text = {0};
    sink s = {&text, false};
    if (json_dump_callback(j, write_text, &s, flags) == 0 && !s.failed &&
        append_shortest_reals(out, (const char *)text.data, text.len) == 0) {
        tl_buf_free(&text);
        return 0;
    }
    tl_buf_free(&text);
    out->len = len;
    if (out->data) out->data[len] = '\0';
    return -1;
}

char *tl_json_dumps(const json_t *j, size_t flags)
{
    tl_buf b = {0};
    /* The NUL tl_buf keeps after the data ends the string; an empty dump
     * (none is) would have no buffer. */
    if (tl_json_dump_buf(j, flags, &b) != 0 || b.data == NULL) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}
