/* Objects and arrays are laid out here exactly as jansson's dump.c lays them
 * out (separators, indentation, key order), so the only difference from
 * json_dump_callback is the text of reals; strings, integers and literals
 * are jansson's own, written by it. */
#include "json_write.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timelake.h"

typedef struct out {
    json_dump_callback_t cb;
    void *data;
    size_t flags;
} out;

static int put(const out *o, const char *s, size_t n)
{
    return o->cb(s, n, o->data) == 0 ? 0 : -1;
}

/* A line break and depth levels of indentation, or with no indentation the
 * space after a separator (space) that only non-compact text has. */
static int indent(const out *o, int depth, bool space)
{
    static const char blanks[] = "                                ";
    size_t width = o->flags & JSON_MAX_INDENT;
    if (width == 0) return space && !(o->flags & JSON_COMPACT) ? put(o, " ", 1) : 0;
    if (put(o, "\n", 1) != 0) return -1;
    for (size_t n = (size_t)depth * width; n > 0;) {
        size_t k = n < sizeof blanks - 1 ? n : sizeof blanks - 1;
        if (put(o, blanks, k) != 0) return -1;
        n -= k;
    }
    return 0;
}

void kjson_real_text(double v, char *text, size_t size)
{
    if (isfinite(v))
        tl_double_text(v, text, size);
    else
        snprintf(text, size, "null");
}

static int value(const out *o, const json_t *j, int depth);

static int key(const out *o, const char *k, size_t len)
{
    json_t *s = json_stringn_nocheck(k, len);
    int rc = s ? json_dump_callback(s, o->cb, o->data, o->flags | JSON_ENCODE_ANY) : -1;
    json_decref(s);
    return rc == 0 ? 0 : -1;
}

typedef struct entry {
    const char *key;
    size_t len;
    const json_t *value;
} entry;

/* Keys in byte order, a key before the longer keys it starts (as jansson). */
static int by_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int object(const out *o, const json_t *j, int depth)
{
    size_t n = json_object_size(j), i = 0;
    if (n == 0) return put(o, "{}", 2);
    entry *e = malloc(n * sizeof *e);
    if (e == NULL) return -1;
    for (void *it = json_object_iter((json_t *)j); it && i < n;
         it = json_object_iter_next((json_t *)j, it), i++)
        e[i] = (entry){json_object_iter_key(it), json_object_iter_key_len(it),
                       json_object_iter_value(it)};
    if (o->flags & JSON_SORT_KEYS) qsort(e, i, sizeof *e, by_key);
    bool compact = o->flags & JSON_COMPACT;
    int rc = put(o, "{", 1) || indent(o, depth + 1, false);
    for (size_t k = 0; rc == 0 && k < i; k++) {
        rc = key(o, e[k].key, e[k].len) || put(o, compact ? ":" : ": ", compact ? 1 : 2) ||
             value(o, e[k].value, depth + 1) ||
             (k + 1 < i ? put(o, ",", 1) || indent(o, depth + 1, true) : indent(o, depth, false));
    }
    free(e);
    return rc || put(o, "}", 1) ? -1 : 0;
}

static int array(const out *o, const json_t *j, int depth)
{
    size_t n = json_array_size(j);
    if (n == 0) return put(o, "[]", 2);
    int rc = put(o, "[", 1) || indent(o, depth + 1, false);
    for (size_t k = 0; rc == 0 && k < n; k++)
        rc = value(o, json_array_get(j, k), depth + 1) ||
             (k + 1 < n ? put(o, ",", 1) || indent(o, depth + 1, true) : indent(o, depth, false));
    return rc || put(o, "]", 1) ? -1 : 0;
}

static int value(const out *o, const json_t *j, int depth)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return object(o, j, depth);
    case JSON_ARRAY:
        return array(o, j, depth);
    case JSON_REAL: {
        char text[40];
        kjson_real_text(json_real_value(j), text, sizeof text);
        return put(o, text, strlen(text));
    }
    default:
        return json_dump_callback(j, o->cb, o->data, o->flags | JSON_ENCODE_ANY) == 0 ? 0 : -1;
    }
}

int kjson_dump_callback(const json_t *j, json_dump_callback_t cb, void *data, size_t flags)
{
    if (j == NULL || (!(flags & JSON_ENCODE_ANY) && !json_is_object(j) && !json_is_array(j)))
        return -1;
    out o = {cb, data, flags};
    return value(&o, j, 0);
}
