/* Growing a heap array by doubling: the capacity check, the doubling, the
 * overflow check of capacity * element size and the realloc that code
 * otherwise writes out beside every array it fills.
 *
 * Ownership: the array stays the caller's (a malloc'd pointer, or NULL for
 * none yet), to free() as before. On failure nothing changes: the array, its
 * elements and its capacity are as they were, so the caller frees what it had. */
#ifndef TL_CORE_GROW_H
#define TL_CORE_GROW_H

#include <stddef.h>

/* The capacity, in elements, to grow to for room for need elements of elem
 * bytes: cap itself when it holds need, else cap (or min when cap is 0)
 * doubled until it does, no more than SIZE_MAX / elem. 0 when need elements of
 * elem bytes do not fit in a size_t. */
size_t tl_grow_capacity(size_t cap, size_t need, size_t elem, size_t min);

/* Resizes the array whose address is array (a T ** passed as void *) to n
 * elements of elem bytes. 0, or -1 when n * elem overflows or memory runs out
 * (the array unchanged). Arrays that share one capacity take
 * tl_grow_capacity's answer, each resized with this. */
int tl_realloc_array(void *array, size_t n, size_t elem);

/* The out-of-line part of tl_grow: reallocates. */
int tl_grow_realloc(void *array, size_t *cap, size_t need, size_t elem, size_t min);

/* Makes room for need elements in the array whose address is array, of
 * capacity *cap elements: nothing when *cap >= need, else the array is
 * reallocated to tl_grow_capacity(*cap, need, elem, min) elements and *cap set
 * to that. 0, or -1 (nothing changed) on overflow or when memory runs out.
 * Inline: callers check room per value they add. */
static inline int tl_grow(void *array, size_t *cap, size_t need, size_t elem, size_t min)
{
    return need <= *cap ? 0 : tl_grow_realloc(array, cap, need, elem, min);
}

/* tl_grow for a T *arr and its size_t cap, both lvalues: the element size
 * taken from arr's type. */
#define TL_GROW(arr, cap, need, min) tl_grow(&(arr), &(cap), (need), sizeof *(arr), (min))

#endif
