/* A growable list of owned C strings. Zero-initialise to start empty. */
#ifndef TL_CORE_STRLIST_H
#define TL_CORE_STRLIST_H

#include <stddef.h>

typedef struct tl_strlist {
    char **items;
    size_t len;
    size_t cap;
} tl_strlist;

/* Each returns 0, or -1 when memory runs out (the list is unchanged). */
int tl_strlist_push(tl_strlist *l, const char *s); /* copies s */
int tl_strlist_push_owned(tl_strlist *l, char *s); /* takes s */
void tl_strlist_sort(tl_strlist *l);
int tl_strlist_contains(const tl_strlist *l, const char *s);
void tl_strlist_free(tl_strlist *l);
/* Hands over a NULL-terminated array (free each string and the array). */
char **tl_strlist_detach(tl_strlist *l);

/* malloc'd a, b and c joined (paths and keys: no printf, see tl_format_i64);
 * NULL when out of memory. */
char *tl_strdup_cat3(const char *a, const char *b, const char *c);
/* malloc'd printf; NULL when out of memory. */
char *tl_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
