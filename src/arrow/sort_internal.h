/* Shared by sort.c (packing and radix sorting) and sort_keys.c (encoding keys
 * into order-preserving codes). */
#ifndef TL_ARROW_SORT_INTERNAL_H
#define TL_ARROW_SORT_INTERNAL_H

#include "arrow/sort.h"

/* The composite key of every row, packed into 64-bit words. Subkeys are added
 * least significant first; each takes the bits its largest code needs. */
typedef struct tl_sort_plan {
    int64_t n;
    uint64_t **words; /* n codes each, least significant word first */
    int *bits;        /* bits used in each word */
    int n_words;
    int max_words;
    uint64_t *scratch; /* n codes of the subkey being built; see tl_sort_plan_scratch */
} tl_sort_plan;

/* The scratch codes array (allocated on first use, as tl_sort_plan_add hands
 * the previous one over to a word), or NULL when out of memory. */
uint64_t *tl_sort_plan_scratch(tl_sort_plan *p);

/* Adds the codes in plan->scratch, all <= max_code, as the next more
 * significant subkey. A constant subkey (max_code 0) adds nothing. */
tl_status tl_sort_plan_add(tl_sort_plan *p, uint64_t max_code, tl_error *err);

/* Encodes one key (1 to 3 subkeys) into the plan. */
tl_status tl_sort_encode_key(tl_sort_plan *p, const tl_sort_key *key, tl_error *err);

/* Sorts (keys[i], rows[i]) pairs by the low `bits` bits of the keys, stably. */
tl_status tl_sort_pairs(uint64_t *keys, uint32_t *rows, int64_t n, int bits, tl_error *err);

/* The distinct values of a string-like view (var-width or fixed_size_binary):
 * ids[i] is element i's value id (UINT32_MAX for nulls), rank[id] the value's
 * position among the n_distinct values in bytewise order. Both malloc'd. */
tl_status tl_sort_rank_values(const tl_array_view *elements, uint32_t **ids, uint32_t **rank,
                              uint32_t *n_distinct, tl_error *err);

/* Subkeys per key at most (class, high and low words of a wide decimal). */
#define TL_SORT_MAX_SUBKEYS 3

#endif
