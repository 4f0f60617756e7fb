/* A dictionary of distinct byte strings for RLE_DICTIONARY encoding (and a
 * hash set of byte strings wherever one is needed). Entries are kept in
 * PLAIN layout (4-byte length + bytes), so the dictionary page is the buffer
 * as it stands. */
#ifndef TL_PARQUET_DICT_H
#define TL_PARQUET_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct tl_pq_dict {
    tl_buf plain;     /* the dictionary page's PLAIN bytes */
    size_t *offsets;  /* entry i's length prefix is at plain.data + offsets[i] */
    uint64_t *hashes; /* entry i's hash */
    uint32_t n, cap;  /* entries, capacity of offsets/hashes */
    uint32_t *slots;  /* open addressing: entry index + 1, 0 when empty */
    uint32_t n_slots; /* a power of two */
} tl_pq_dict;

/* Index of the value, adding it when new. 0, or -1 when out of memory. */
int tl_pq_dict_insert(tl_pq_dict *d, const uint8_t *data, size_t len, uint32_t *index);
/* Index of the value, or -1 when the dictionary does not hold it (safe from
 * several threads at once while nothing inserts). */
int64_t tl_pq_dict_find(const tl_pq_dict *d, const uint8_t *data, size_t len);
static inline const uint8_t *tl_pq_dict_value(const tl_pq_dict *d, uint32_t i, uint32_t *len)
{
    const uint8_t *p = d->plain.data + d->offsets[i];
    *len = tl_load_le32(p);
    return p + 4;
}
/* Empties the dictionary, keeping its memory. */
void tl_pq_dict_reset(tl_pq_dict *d);
void tl_pq_dict_free(tl_pq_dict *d);

#endif
