#include "core/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t tl_grow_capacity(size_t cap, size_t need, size_t elem, size_t min)
{
    size_t most = SIZE_MAX / (elem ? elem : 1);
    if (need > most) return 0;
    if (cap >= need) return cap;
    size_t c = cap ? cap : min ? min : 1;
    while (c < need) c = c > most / 2 ? most : c * 2;
    return c < most ? c : most;
}

/* The array pointer is read and written with memcpy: array points at a T *
 * of the caller's type, which a void ** may not alias. */
int tl_realloc_array(void *array, size_t n, size_t elem)
{
    if (elem && n > SIZE_MAX / elem) return -1;
    void *old;
    memcpy(&old, array, sizeof old);
    void *p = realloc(old, n * elem);
    if (p == NULL && n * elem != 0) return -1;
    memcpy(array, &p, sizeof p);
    return 0;
}

int tl_grow_realloc(void *array, size_t *cap, size_t need, size_t elem, size_t min)
{
    if (need <= *cap) return 0;
    size_t c = tl_grow_capacity(*cap, need, elem, min);
    if (c == 0 || tl_realloc_array(array, c, elem) != 0) return -1;
    *cap = c;
    return 0;
}
