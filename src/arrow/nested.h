/* Kernels for nested columns (structs "+s", lists "+l"/"+L", fixed-size lists
 * "+w:N" as a cast source, maps "+m"): cast, concatenation, take and all-null
 * arrays, applied level by level down to the leaves, where the flat kernels
 * (cast.h, concat.h, take.h) do the work. Every output is an owned array with
 * offset 0 at every level, exact null counts and NULL validity when a level
 * has no null. Errors name the column path as Iceberg does ("tags.element",
 * "attrs.value", "point.x"). */
#ifndef TL_ARROW_NESTED_H
#define TL_ARROW_NESTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow/array.h"

/* Whether a field is nested (a struct, list, large list, fixed-size list or map). */
bool tl_arrow_is_nested(const struct ArrowSchema *field);

/* Casts `src` (of field `from`, any offsets) to the nested type of field `to`:
 * struct fields are matched by name (a missing nullable field becomes nulls, a
 * field `to` lacks is refused), a list or fixed-size list becomes a list, a map
 * a map, leaves cast as tl_arrow_cast casts; a null array ("n") becomes nulls.
 * A null under a non-nullable child of a valid parent is refused. `path` names
 * the column. */
tl_status tl_arrow_cast_nested(const struct ArrowSchema *from, const struct ArrowArray *src,
                               const struct ArrowSchema *to, const char *path,
                               struct ArrowArray *out, tl_error *err);

/* The rows of parts[0..n) (all of nested field `field`, any offsets) one after another. */
tl_status tl_arrow_concat_nested(const struct ArrowSchema *field, const struct ArrowArray *parts,
                                 size_t n, struct ArrowArray *out, tl_error *err);

/* out[i] = src[indices[i]]; an index of -1 gives a null. Indices must lie in
 * [0, src->length) (TL_ERR_INVALID otherwise). */
tl_status tl_arrow_take_nested(const struct ArrowSchema *field, const struct ArrowArray *src,
                               const int64_t *indices, int64_t n, struct ArrowArray *out,
                               tl_error *err);

/* `length` null rows of nested field `field`. */
tl_status tl_arrow_nulls_nested(const struct ArrowSchema *field, int64_t length,
                                struct ArrowArray *out, tl_error *err);

#endif
