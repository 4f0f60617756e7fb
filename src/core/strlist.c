#include "core/grow.h"
#include "core/strlist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tl_strlist_push_owned(tl_strlist *l, char *s)
{
    if (s == NULL) return -1;
    if (TL_GROW(l->items, l->cap, l->len + 2, 8) != 0) return -1;
    l->items[l->len++] = s;
    l->items[l->len] = NULL;
    return 0;
}

int tl_strlist_push(tl_strlist *l, const char *s)
{
    char *copy = strdup(s);
    if (copy == NULL) return -1;
    if (tl_strlist_push_owned(l, copy) != 0) {
        free(copy);
        return -1;
    }
    return 0;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tl_strlist_sort(tl_strlist *l)
{
    if (l->len > 1) qsort(l->items, l->len, sizeof *l->items, compare_strings);
}

int tl_strlist_contains(const tl_strlist *l, const char *s)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->items[i], s) == 0) return 1;
    return 0;
}

void tl_strlist_free(tl_strlist *l)
{
    for (size_t i = 0; i < l->len; i++) free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->len = l->cap = 0;
}

char **tl_strlist_detach(tl_strlist *l)
{
    char **items = l->items;
    if (items == NULL) items = calloc(1, sizeof *items);
    l->items = NULL;
    l->len = l->cap = 0;
    return items;
}

char *tl_strdup_cat3(const char *a, const char *b, const char *c)
{
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char *s = malloc(na + nb + nc + 1);
    if (s == NULL) return NULL;
    memcpy(s, a, na);
    memcpy(s + na, b, nb);
    memcpy(s + na + nb, c, nc + 1);
    return s;
}

char *tl_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    if (s == NULL) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}
