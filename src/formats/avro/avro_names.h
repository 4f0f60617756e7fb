/* A hash table from names to pointers, so that name checks (duplicates,
 * references) stay linear on hostile schemas with huge numbers of names. */
#ifndef TL_FORMATS_AVRO_NAMES_H
#define TL_FORMATS_AVRO_NAMES_H

#include <stddef.h>

/* Zero-initialise to start empty. Keys are not copied: they must outlive the table. */
typedef struct tl_avro_names {
    const char **keys;
    void **values;
    size_t cap, count;
} tl_avro_names;

/* The value of `key`, or NULL. */
void *tl_avro_names_get(const tl_avro_names *t, const char *key);
/* Adds key -> value: returns 0, 1 when the key is already there (unchanged),
 * or -1 when memory runs out. */
int tl_avro_names_put(tl_avro_names *t, const char *key, void *value);
void tl_avro_names_free(tl_avro_names *t);

#endif
