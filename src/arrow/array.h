/* Owned Arrow arrays and schemas (allocated here, freed by their release
 * callback) and read-only views of any Arrow array. */
#ifndef TL_ARROW_ARRAY_H
#define TL_ARROW_ARRAY_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow/arrow_type.h"

/* ---- Owned arrays ----
 * tl_array_init allocates the buffers/children pointer arrays of *out and sets
 * a release callback that frees every buffer set through tl_array_set_buffer
 * (or allocated with tl_array_alloc_buffer) and releases every child and the
 * dictionary. Buffers start NULL, children start as released (zeroed) structs
 * owned by the parent. On failure *out is left released (release == NULL). */
tl_status tl_array_init(struct ArrowArray *out, int64_t n_buffers, int64_t n_children,
                        tl_error *err);

/* Gives buffer i to the array: it is freed with free() on release. */
void tl_array_set_buffer(struct ArrowArray *array, int64_t i, void *data);

/* Allocates `size` zeroed bytes (64-byte aligned) as buffer i and returns it, or NULL. */
void *tl_array_alloc_buffer(struct ArrowArray *array, int64_t i, size_t size);

/* The same, not zeroed: for a buffer whose every byte the caller writes
 * (zeroing a decoded column's values first was a pass over them for nothing). */
void *tl_array_alloc_buffer_uninit(struct ArrowArray *array, int64_t i, size_t size);

/* Releases an array if it is live, and marks it released. NULL-safe. */
void tl_array_release(struct ArrowArray *array);

/* Moves *src into *dst (dst must be released); src becomes released. */
void tl_array_move(struct ArrowArray *src, struct ArrowArray *dst);

/* A flat array (no children, no dictionary) sharing src's buffers, for rows
 * handed to a consumer that copies them anyway: valid only while src is
 * (whoever makes one keeps src alive until it is released); its release
 * frees its own block, nothing of src's. TL_ERR_INTERNAL for a nested or
 * dictionary array. */
tl_status tl_array_borrow_flat(const struct ArrowArray *src, struct ArrowArray *out, tl_error *err);

/* The bytes an owned array holds: what the allocator gave for its buffers and
 * its own block (malloc_usable_size), with its children and dictionary. -1
 * when it, or a part of it, is another producer's (whose allocations are not
 * known). For memory budgets. */
int64_t tl_array_memory(const struct ArrowArray *array);

/* ---- Owned schemas ----
 * tl_schema_init sets format, name (may be NULL) and flags, copying the
 * strings, and allocates n_children zeroed child structs owned by the parent. */
tl_status tl_schema_init(struct ArrowSchema *out, const char *format, const char *name,
                         int64_t flags, int64_t n_children, tl_error *err);

/* Copies `metadata` (Arrow's binary key/value encoding; may be NULL) into schema. */
tl_status tl_schema_set_metadata(struct ArrowSchema *schema, const char *metadata, tl_error *err);

/* Deep-copies a schema (any producer) into an owned one. */
tl_status tl_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out, tl_error *err);

void tl_schema_release(struct ArrowSchema *schema);
void tl_schema_move(struct ArrowSchema *src, struct ArrowSchema *dst);

/* Sets the schema's metadata to {"PARQUET:field_id": id}: how a field carries
 * its Iceberg field id. */
tl_status tl_schema_set_field_id(struct ArrowSchema *schema, int32_t id, tl_error *err);

/* The field id the schema's metadata carries ("PARQUET:field_id"); false when
 * it has none (or not a number in 0..INT32_MAX). */
bool tl_schema_field_id(const struct ArrowSchema *schema, int32_t *out);

/* Builds Arrow's binary metadata encoding from NULL-terminated key, value pairs.
 * Returns a malloc'd blob (free it) or NULL when out of memory. */
char *tl_metadata_encode(const char *const *pairs);

/* Looks up `key` in Arrow binary metadata. Returns a pointer into it and sets
 * *len, or NULL when absent. */
const char *tl_metadata_find(const char *metadata, const char *key, int32_t *len);

/* ---- Views ----
 * A view decodes the format string and resolves the buffers of one array so
 * kernels can read values without re-checking. The view borrows the array. */
typedef struct tl_array_view {
    tl_arrow_type type;
    int64_t length;
    int64_t offset; /* applies to validity, values and offsets */
    int64_t null_count;
    const uint8_t *validity; /* NULL when there are no nulls */
    const void *values;      /* fixed-width values, or the offsets of var-width types */
    const uint8_t *data;     /* bytes of var-width types */
    const struct ArrowArray *array;
    const struct ArrowSchema *schema;
    bool is_dictionary; /* values are indices (type `index_type`) into `dictionary` */
    tl_arrow_type index_type;
    struct tl_array_view *dictionary; /* owned by the view */
} tl_array_view;

/* Checks the array's shape against its schema (buffer count, offsets in range). */
tl_status tl_array_view_init(tl_array_view *view, const struct ArrowSchema *schema,
                             const struct ArrowArray *array, tl_error *err);
void tl_array_view_free(tl_array_view *view);

static inline bool tl_bit_get(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

static inline void tl_bit_set(uint8_t *bits, int64_t i)
{
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
}

static inline void tl_bit_clear(uint8_t *bits, int64_t i)
{
    bits[i >> 3] &= (uint8_t) ~(1u << (i & 7));
}

static inline bool tl_view_is_null(const tl_array_view *v, int64_t i)
{
    return v->validity != NULL && !tl_bit_get(v->validity, v->offset + i);
}

/* Element i of a view of signed integers of the given bit width (8 to 64),
 * for loops that look the width up once. */
static inline int64_t tl_view_int_of_width(const tl_array_view *v, int width, int64_t i)
{
    int64_t j = v->offset + i;
    switch (width) {
    case 8:
        return ((const int8_t *)v->values)[j];
    case 16:
        return ((const int16_t *)v->values)[j];
    case 32:
        return ((const int32_t *)v->values)[j];
    default:
        return ((const int64_t *)v->values)[j];
    }
}

/* Element i of a view of signed integers (or temporal values) of 8 to 64 bits. */
static inline int64_t tl_view_int(const tl_array_view *v, int64_t i)
{
    return tl_view_int_of_width(v, tl_arrow_type_bit_width(&v->type), i);
}

/* Start and length of element i of a var-width view. */
static inline const uint8_t *tl_view_bytes(const tl_array_view *v, int64_t i, int64_t *len)
{
    int64_t j = v->offset + i, start, end;
    if (tl_atype_is_large(v->type.id)) {
        start = ((const int64_t *)v->values)[j];
        end = ((const int64_t *)v->values)[j + 1];
    } else {
        start = ((const int32_t *)v->values)[j];
        end = ((const int32_t *)v->values)[j + 1];
    }
    *len = end - start;
    return v->data + start;
}

/* The first null row of a plain array (its validity bitmap), or -1. */
static inline int64_t tl_array_first_null(const struct ArrowArray *a)
{
    if (a->null_count == 0 || a->buffers[0] == NULL) return -1;
    const uint8_t *bits = a->buffers[0];
    for (int64_t i = 0; i < a->length; i++)
        if (!tl_bit_get(bits, a->offset + i)) return i;
    return -1;
}

/* Index of element i of a dictionary view into its dictionary. */
int64_t tl_view_dict_index(const tl_array_view *v, int64_t i);

#endif
